"""``rk.CFR``: counterfactual regret minimisation (Zinkevich et al. 2007) and CFR+ (Tammelin
2014) on the tabulated tree of a two-player zero-sum game (docs/how-to/game-solvers.md).

Semantics are OpenSpiel's ``CFRSolver`` and ``CFRPlusSolver``
(open_spiel/python/algorithms/cfr.py): alternating updates (player 0's regrets are updated and
its current policy recomputed before player 1's pass), regret matching (uniform where no regret
is positive); CFR+ adds regret matching+ (cumulative regrets floored at 0 after each pass) and
linear averaging (iteration ``t`` weighs the average policy by ``t``). The average policy,
``average_policy()``, is what converges to a Nash equilibrium. Unlike OpenSpiel's recursive
traversal, the passes are vectorised over the nodes of each depth (rlkit/solvers/tree_passes.py).

In a run (``rk.run(cfr, rk.GameTreeEnv(game), rk.StopAfterNSteps(n))``) each step is one
iteration: ``update(CFR, GameTreeEnv, PostActStage)`` below.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.dispatch import statistics, update
from ..core.interfaces import AbstractPolicy
from ..core.stages import PostActStage
from ..core.state import generator_state, set_generator_state
from ..envs.games.solver_env import GameTreeEnv
from ..envs.games.tree import GameTree, game_tree
from ..policies.tabular_game import TabularPolicy
from .exploitability import exploitability
from .tree_passes import edge_probabilities, reach_probabilities, tree_index, values

__all__ = ["CFR"]


class CFR(AbstractPolicy):
    """Tabular CFR (``plus=False``) or CFR+ (``plus=True``) on a two-player zero-sum game.

    Args:
        game: a bundled game's id (``"rlkit/KuhnPoker-v0"``), a PettingZoo AEC env whose
            information states are hashable, or an ``rk.GameTree``.
        plus: CFR+ (regret matching+ and linear averaging) instead of vanilla CFR.
        seed: seed of the generator that samples actions when the solver acts (with its
            average policy) in a game.

    ``iterate(n)`` runs ``n`` iterations; ``average_policy()`` and ``current_policy()`` are
    :class:`~rlkit.TabularPolicy` objects; ``state_dict()`` holds the regret and strategy
    tables (a checkpointed run resumes bit-exactly).

    Example:
        >>> import rlkit as rk
        >>> cfr = rk.CFR("rlkit/KuhnPoker-v0")
        >>> cfr.iterate(300)
        >>> round(rk.exploitability(cfr.average_policy(), "rlkit/KuhnPoker-v0"), 3)
        0.003
    """

    def __init__(self, game: Any, plus: bool = False, seed: Any = None) -> None:
        if not isinstance(plus, bool):
            raise TypeError(f"CFR: plus must be True or False, got {plus!r}")
        self.tree: GameTree = game_tree(game)
        self.plus = plus
        self.iteration = 0
        self.index = tree_index(self.tree)
        shape = (len(self.tree.infosets), max(self.tree.num_actions, 1))
        self.cumulative_regret = np.zeros(shape)
        self.cumulative_policy = np.zeros(shape)
        self.strategy = _regret_matching(self.cumulative_regret, self.tree.legal)
        self.rng = np.random.default_rng(seed)
        self._average: TabularPolicy | None = None

    def __repr__(self) -> str:
        kind = "CFR+" if self.plus else "CFR"
        return f"CFR({self.tree.name}, {kind}, iteration {self.iteration})"

    # ---- solving ----
    def iterate(self, n: int = 1) -> None:
        """Run ``n`` CFR iterations (each: one pass per player, alternating)."""
        for _ in range(int(n)):
            self.iteration += 1
            for player in (0, 1):
                self._update_player(player)
                if self.plus:
                    np.maximum(self.cumulative_regret, 0.0, out=self.cumulative_regret)
                self.strategy = _regret_matching(self.cumulative_regret, self.tree.legal)
        self._average = None

    def _update_player(self, p: int) -> None:
        tree, index = self.tree, self.index
        edge = edge_probabilities(tree, index, self.strategy)
        reach = reach_probabilities(tree, index, edge)
        v = values(tree, index, edge)
        sign = 1.0 if p == 0 else -1.0
        nodes, children = index.decisions[p], index.children[p]
        if len(nodes) == 0:
            return
        infosets = tree.infoset[nodes]
        cf_reach = reach[nodes, 1 - p] * reach[nodes, 2]
        legal = tree.legal[infosets]
        regret = cf_reach[:, None] * (sign * v[children] - (sign * v[nodes])[:, None])
        np.add.at(self.cumulative_regret, infosets, np.where(legal, regret, 0.0))
        own_reach = reach[nodes, p]
        weight = self.iteration * own_reach if self.plus else own_reach
        np.add.at(self.cumulative_policy, infosets, weight[:, None] * self.strategy[infosets])

    # ---- policies ----
    def average_policy(self) -> TabularPolicy:
        """The average policy (normalised cumulative strategy; uniform where it is zero)."""
        if self._average is None:
            self._average = TabularPolicy.from_arrays(
                self.tree.infosets, _normalised(self.cumulative_policy, self.tree.legal)
            )
        return self._average

    def current_policy(self) -> TabularPolicy:
        """The current policy (regret matching on the cumulative regrets)."""
        return TabularPolicy.from_arrays(self.tree.infosets, self.strategy)

    def act(self, env: Any) -> int:
        average = self.average_policy()
        average.rng = self.rng
        return average.act(env)

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """The iteration, the regret and strategy tables and the acting generator."""
        return {
            "iteration": self.iteration,
            "plus": self.plus,
            "n_infosets": len(self.tree.infosets),
            "cumulative_regret": self.cumulative_regret.copy(),
            "cumulative_policy": self.cumulative_policy.copy(),
            "rng": generator_state(self.rng),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a state saved by :meth:`state_dict` of a solver of the same game."""
        regret = np.asarray(state["cumulative_regret"], dtype=np.float64)
        if regret.shape != self.cumulative_regret.shape or bool(state["plus"]) != self.plus:
            raise ValueError(
                f"CFR: the saved state (tables {regret.shape}, plus={state['plus']}) does not "
                f"fit {self!r} (tables {self.cumulative_regret.shape}, plus={self.plus})"
            )
        self.iteration = int(state["iteration"])
        self.cumulative_regret = regret.copy()
        self.cumulative_policy = np.asarray(state["cumulative_policy"], np.float64).copy()
        self.strategy = _regret_matching(self.cumulative_regret, self.tree.legal)
        set_generator_state(self.rng, state["rng"])
        self._average = None


def _regret_matching(regret: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Positive regrets normalised per information state; uniform over the legal actions where
    none is positive."""
    positive = np.where(legal, np.maximum(regret, 0.0), 0.0)
    return _normalised(positive, legal)


def _normalised(x: np.ndarray, legal: np.ndarray) -> np.ndarray:
    total = x.sum(axis=1, keepdims=True)
    uniform = legal / legal.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, x / np.where(total > 0, total, 1.0), uniform)


# ---- PostAct: one iteration per step of a run on a GameTreeEnv ----
@update.dispatch
def _(policy: CFR, env: GameTreeEnv, stage: PostActStage, /):
    env.sample()
    policy.iterate(1)


@statistics.dispatch
def _(solver: CFR, /):
    return {
        "iteration": float(solver.iteration),
        "exploitability": exploitability(solver.average_policy(), solver.tree),
    }
