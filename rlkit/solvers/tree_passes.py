"""The two passes over a tabulated game tree (rlkit/envs/games/tree.py) that CFR and the best
response share, vectorised by depth: reach probabilities top-down, values bottom-up.

The order of every floating-point sum follows OpenSpiel's recursive algorithms (children in
depth-first order), so the numbers match theirs closely.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..envs.games.tree import CHANCE, DECISION, GameTree

__all__ = ["TreeIndex", "tree_index", "edge_probabilities", "reach_probabilities", "values"]


@dataclass(frozen=True)
class TreeIndex:
    """Arrays derived once from a :class:`GameTree`: the nodes of each depth, who moves on the
    edge into each node (0, 1 or 2 for chance), the information state and action of that
    edge, and per player the decision nodes with their children (``-1``: illegal action)."""

    levels: tuple[np.ndarray, ...]
    mover: np.ndarray
    edge_infoset: np.ndarray
    edge_action: np.ndarray
    decisions: tuple[np.ndarray, np.ndarray]
    children: tuple[np.ndarray, np.ndarray]


_INDEXES: dict[int, tuple[GameTree, TreeIndex]] = {}


def tree_index(tree: GameTree) -> TreeIndex:
    """The :class:`TreeIndex` of ``tree`` (computed once per tree object).

    Example:
        >>> import rlkit as rk
        >>> index = tree_index(rk.GameTree.from_game("rlkit/KuhnPoker-v0"))
        >>> len(index.levels), [len(d) for d in index.decisions]
        (5, [12, 12])
    """
    cached = _INDEXES.get(id(tree))
    if cached is not None and cached[0] is tree:
        return cached[1]
    n = tree.n_nodes
    parent = np.maximum(tree.parent, 0)
    parent_kind = tree.kind[parent]
    mover = np.where(parent_kind == CHANCE, 2, tree.player[parent]).astype(np.int64)
    mover[0] = 2
    edge_infoset = np.where(parent_kind == DECISION, tree.infoset[parent], 0)
    edge_infoset[0] = 0
    edge_action = np.where(parent_kind == DECISION, tree.action, 0)
    edge_action[0] = 0
    order = np.argsort(tree.depth, kind="stable")
    bounds = np.searchsorted(tree.depth[order], np.arange(1, tree.depth.max() + 2))
    levels = tuple(order[bounds[d] : bounds[d + 1]] for d in range(len(bounds) - 1))
    decisions, children = [], []
    for p in (0, 1):
        nodes = np.flatnonzero((tree.kind == DECISION) & (tree.player == p))
        table = np.full((len(nodes), max(tree.num_actions, 1)), n, np.int64)  # n: value 0
        for row, node in enumerate(nodes):
            for child in tree.children[node]:
                table[row, tree.action[child]] = child
        decisions.append(nodes)
        children.append(table)
    index = TreeIndex(
        levels=tuple(lv for lv in levels if len(lv)),
        mover=mover,
        edge_infoset=edge_infoset,
        edge_action=edge_action,
        decisions=(decisions[0], decisions[1]),
        children=(children[0], children[1]),
    )
    _INDEXES[id(tree)] = (tree, index)
    return index


def edge_probabilities(tree: GameTree, index: TreeIndex, policy: np.ndarray) -> np.ndarray:
    """The probability of the edge into each node: the chance probability, or the acting
    player's ``policy[infoset, action]`` (``policy``: ``[n_infosets, num_actions]``); 1 at
    the root."""
    p = policy[index.edge_infoset, index.edge_action]
    p = np.where(index.mover == 2, tree.chance_prob, p)
    p[0] = 1.0
    return p


def reach_probabilities(tree: GameTree, index: TreeIndex, edge: np.ndarray) -> np.ndarray:
    """``[n_nodes, 3]``: each node's reach probability by player 0, player 1 and chance."""
    reach = np.ones((tree.n_nodes, 3))
    rows = None
    for level in index.levels:
        if level[0] == 0:  # the root
            continue
        r = reach[tree.parent[level]]
        rows = np.arange(len(level)) if rows is None or len(rows) < len(level) else rows
        r[rows[: len(level)], index.mover[level]] *= edge[level]
        reach[level] = r
    return reach


def values(tree: GameTree, index: TreeIndex, edge: np.ndarray) -> np.ndarray:
    """Player 0's expected return from each node when every edge is taken with ``edge``'s
    probability; one extra entry (index ``n_nodes``) holds 0 for illegal actions."""
    v = np.zeros(tree.n_nodes + 1)
    v[: tree.n_nodes] = np.where(tree.kind == 0, tree.utility, 0.0)
    for level in reversed(index.levels):
        if level[0] == 0:
            continue
        np.add.at(v, tree.parent[level], edge[level] * v[level])
    return v
