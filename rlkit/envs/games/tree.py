"""The whole tree of a small two-player zero-sum game, tabulated once from its PettingZoo AEC
environment, for the exact solvers (``rk.CFR``, ``rk.exploitability``;
docs/how-to/game-solvers.md).

The tree is enumerated by copying the env (``copy_game``, rlkit/envs/games/infostate.py) at
every node and stepping each copy with one legal action. Chance events are enumerated when
the env follows the chance protocol of the bundled games: ``reset(options={"explicit_chance":
True})``, then ``chance_outcomes()`` and ``apply_chance(outcome)`` on ``env.unwrapped`` (see
rlkit/envs/games/_card_game.py). An env without it is taken as deterministic (its ``reset``
must then always start the same game, as board games do). The information state of the agent
to act is ``env.unwrapped.information_state(agent)`` when the env has that method, else the
agent's observation (its ``"observation"`` array as bytes): right for boards, where the
observation is the whole position.

Nodes are numbered in depth-first order (children in the order of their actions or chance
outcomes, as OpenSpiel's algorithms visit them), and held in numpy arrays.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .infostate import copy_game, information_state, legal_actions

__all__ = ["GameTree", "TERMINAL", "CHANCE", "DECISION", "game_tree"]

TERMINAL, CHANCE, DECISION = 0, 1, 2
#: the default limit on the number of nodes (a bigger game is refused, not enumerated forever)
MAX_NODES = 2_000_000


@dataclass
class _Builder:
    """The lists the depth-first enumeration fills, turned into arrays by :class:`GameTree`."""

    name: str
    agents: list[str]
    max_nodes: int
    kind: list[int] = field(default_factory=list)
    player: list[int] = field(default_factory=list)
    infoset: list[int] = field(default_factory=list)
    parent: list[int] = field(default_factory=list)
    action: list[int] = field(default_factory=list)
    chance_prob: list[float] = field(default_factory=list)
    utility: list[float] = field(default_factory=list)
    depth: list[int] = field(default_factory=list)
    children: list[list[int]] = field(default_factory=list)
    keys: list[Hashable] = field(default_factory=list)
    index: dict[Hashable, int] = field(default_factory=dict)
    infoset_player: list[int] = field(default_factory=list)
    legal: list[tuple[int, ...]] = field(default_factory=list)
    num_actions: int = 0

    def add(self, parent: int, action: int, prob: float, depth: int) -> int:
        n = len(self.kind)
        if n >= self.max_nodes:
            raise ValueError(
                f"GameTree: the game {self.name} has more than max_nodes={self.max_nodes} "
                f"nodes; the exact solvers are for small games (raise max_nodes if it fits)"
            )
        for lst, value in (
            (self.kind, TERMINAL),
            (self.player, -1),
            (self.infoset, -1),
            (self.parent, parent),
            (self.action, action),
            (self.chance_prob, prob),
            (self.utility, 0.0),
            (self.depth, depth),
        ):
            lst.append(value)
        self.children.append([])
        if parent >= 0:
            self.children[parent].append(n)
        return n

    def infoset_of(self, key: Any, player: int, legal: tuple[int, ...], where: str) -> int:
        try:
            hash(key)
        except TypeError:
            raise TypeError(
                f"GameTree: the information state of {self.agents[player]} in {self.name} "
                f"({where}) is a {type(key).__name__}, which is not hashable: "
                f"information_state(agent) must return a hashable key (a str, a tuple, ...), "
                f"got {key!r}"
            ) from None
        i = self.index.get(key)
        if i is None:
            i = self.index[key] = len(self.keys)
            self.keys.append(key)
            self.infoset_player.append(player)
            self.legal.append(legal)
        elif self.infoset_player[i] != player or self.legal[i] != legal:
            raise ValueError(
                f"GameTree: the information state {key!r} of {self.name} is reached by "
                f"{self.agents[self.infoset_player[i]]} with legal actions {list(self.legal[i])} "
                f"and by {self.agents[player]} with {list(legal)} ({where}); an information "
                f"state must belong to one agent and fix its legal actions"
            )
        return i


class GameTree:
    """The tabulated tree of a two-player zero-sum game (see the module docstring).

    Arrays by node (``n_nodes``, depth-first order, root 0): ``kind`` (``TERMINAL``, ``CHANCE``,
    ``DECISION``), ``player`` (0 or 1 at decisions, else -1), ``infoset`` (index into
    ``infosets``, -1 when not a decision), ``parent``, ``action`` (the action or chance outcome
    index that leads from the parent), ``chance_prob`` (the probability of that chance outcome,
    else NaN), ``utility`` (player 0's return at terminals; player 1's is its negative),
    ``depth``; ``children`` (lists). By information state: ``infosets`` (the keys),
    ``infoset_player``, ``legal`` (bool ``[n_infosets, num_actions]``).

    Example:
        >>> import rlkit as rk
        >>> tree = rk.GameTree.from_game("rlkit/KuhnPoker-v0")
        >>> tree.n_nodes, len(tree.infosets), tree.infosets[:3]
        (58, 12, ['0', '1p', '0pb'])
    """

    def __init__(self, builder: _Builder) -> None:
        b = builder
        self.name = b.name
        self.agents = list(b.agents)
        self.num_actions = b.num_actions
        self.kind = np.array(b.kind, np.int8)
        self.player = np.array(b.player, np.int8)
        self.infoset = np.array(b.infoset, np.int64)
        self.parent = np.array(b.parent, np.int64)
        self.action = np.array(b.action, np.int64)
        self.chance_prob = np.array(b.chance_prob, np.float64)
        self.utility = np.array(b.utility, np.float64)
        self.depth = np.array(b.depth, np.int64)
        self.children = b.children
        self.infosets = list(b.keys)
        self.infoset_index = dict(b.index)
        self.infoset_player = np.array(b.infoset_player, np.int8)
        self.legal = np.zeros((len(b.keys), max(b.num_actions, 1)), bool)
        for i, legal in enumerate(b.legal):
            self.legal[i, list(legal)] = True

    @property
    def n_nodes(self) -> int:
        """The number of nodes (histories), terminals and chance nodes included."""
        return len(self.kind)

    def __repr__(self) -> str:
        return f"GameTree({self.name}: {self.n_nodes} nodes, {len(self.infosets)} infosets)"

    @classmethod
    def from_game(cls, game: Any, *, max_nodes: int = MAX_NODES) -> GameTree:
        """The tree of ``game``: a bundled game's id (``"rlkit/KuhnPoker-v0"``), a PettingZoo
        AEC env (copied, never changed), or a ``GameTree`` (returned as it is).

        Raises ``ValueError`` for a game that is not two-player or not zero-sum, ``TypeError``
        for an information state that is not hashable.

        Example:
            >>> import rlkit as rk
            >>> rk.GameTree.from_game(rk.make_game("rlkit/LeducPoker-v0")).n_nodes
            9457
        """
        if isinstance(game, GameTree):
            return game
        env = _env_of(game)
        name = _game_name(game, env)
        agents = list(getattr(env, "possible_agents", []))
        if len(agents) != 2:
            raise ValueError(
                f"GameTree: {name} has agents {agents}; the exact solvers (rk.CFR, "
                f"rk.exploitability) are for two-player zero-sum games"
            )
        root = copy_game(env)
        try:
            root.reset(seed=0, options={"explicit_chance": True})
        except TypeError:  # an env whose reset takes no options
            root.reset(seed=0)
        builder = _Builder(name, agents, max_nodes)
        _expand(builder, root, -1, -1, float("nan"), 0, np.zeros(2), "the root")
        return cls(builder)


def game_tree(game: Any) -> GameTree:
    """``GameTree.from_game(game)``, cached on a bundled game's id (the trees never change).

    Example:
        >>> game_tree("rlkit/KuhnPoker-v0") is game_tree("rlkit/KuhnPoker-v0")
        True
    """
    if isinstance(game, str):
        if game not in _CACHE:
            _CACHE[game] = GameTree.from_game(game)
        return _CACHE[game]
    return GameTree.from_game(game)


_CACHE: dict[str, GameTree] = {}


def _env_of(game: Any) -> Any:
    if isinstance(game, str):
        from . import make_game

        return make_game(game)
    if not all(hasattr(game, a) for a in ("possible_agents", "step", "observe", "reset")):
        raise TypeError(
            f"GameTree: expected a bundled game's id ('rlkit/KuhnPoker-v0'), a PettingZoo AEC "
            f"env or a GameTree, got {game!r}"
        )
    return game


def _game_name(game: Any, env: Any) -> str:
    if isinstance(game, str):
        return game
    metadata = getattr(env, "metadata", None) or {}
    return str(metadata.get("name", type(env).__name__))


def _done(env: Any) -> bool:
    if not env.agents:
        return True
    agent = env.agent_selection
    return bool(env.terminations.get(agent, False) or env.truncations.get(agent, False))


def _expand(
    b: _Builder,
    env: Any,
    parent: int,
    action: int,
    prob: float,
    depth: int,
    returns: np.ndarray,
    where: str,
) -> None:
    n = b.add(parent, action, prob, depth)
    chance = getattr(env.unwrapped, "chance_outcomes", None)
    outcomes = chance() if callable(chance) else []
    if outcomes:
        b.kind[n] = CHANCE
        for i, (outcome, p) in enumerate(outcomes):
            child = copy_game(env)
            child.apply_chance(outcome)
            _expand(b, child, n, i, float(p), depth + 1, returns, f"{where}, chance {outcome!r}")
        return
    if _done(env):
        if abs(returns[0] + returns[1]) > 1e-9:
            raise ValueError(
                f"GameTree: {b.name} is not zero-sum: at {where} the returns are "
                f"{dict(zip(b.agents, returns.tolist(), strict=True))}; the exact solvers "
                f"(rk.CFR, rk.exploitability) are for two-player zero-sum games"
            )
        b.utility[n] = float(returns[0])
        return
    agent = env.agent_selection
    player = b.agents.index(agent)
    legal = tuple(legal_actions(env, agent))
    b.num_actions = max(b.num_actions, int(env.action_space(agent).n))
    b.kind[n], b.player[n] = DECISION, player
    b.infoset[n] = b.infoset_of(information_state(env, agent), player, legal, where)
    for a in legal:
        child = copy_game(env)
        child.step(a)
        gained = np.array([float(child.rewards.get(ag, 0.0)) for ag in b.agents])
        _expand(b, child, n, a, float("nan"), depth + 1, returns + gained, f"{where}, {agent}: {a}")
