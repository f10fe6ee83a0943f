"""``NegamaxQLearner``: tabular action values of a two-player zero-sum game whose players
alternate, one table for both seats, learned with negamax targets (docs/how-to/multi-agent.md).

Each player sees the board from its own side, so one table ``Q(s, a)`` serves both. Plain
Q-learning treats the opponent as part of the environment: a step runs from the mover's action
to its next turn and bootstraps with ``max Q(s'', .)`` after the opponent's actual reply, so
the values it learns are those against the opponent as it plays in training, exploration
included, and each position's value is refreshed only when that move is taken there again. A
self-play table then meets, against an unusual opponent, positions whose values are stale or
never learned.

Here every position ``s`` a player meets in a game has *all* its legal moves updated, from the
game's rule for one move (``successors``, a deterministic model of one's own move: the
afterstates of Sutton & Barto 6.8), with the negamax target (the sampled, asynchronous form of
minimax value iteration, as real-time dynamic programming updates the states it visits)::

    for every legal move b of s, (s_b, legal_b, r_b, done_b) = successors(s)[b]:
        Q(s, b) <- Q(s, b) + alpha * (target_b - Q(s, b))
        target_b = r_b                                    if the move ends the game
                   r_b - gamma * max_{a' in legal_b} Q(s_b, a')   otherwise

``s_b`` is the position the opponent faces after move ``b``, seen from its side, so a move is
worth minus the best the opponent can then do. The values learned are the game's minimax
values, whatever the players explore; what the players actually do only decides which
positions are updated. With ``step_size=1`` each update is an exact one-ply backup.

``successors(state) -> (actions, opponent_states, opponent_legal_masks, rewards, dones)``:
the legal moves of ``state`` (an int array) and, for each, the opponent's state, its legal-action
mask (a bool row), the mover's reward and whether the move ends the game.

Example:
    >>> import gymnasium as gym, numpy as np, rlkit as rk
    >>> # take-away: s stones, take 1 or 2; who takes the last stone wins (+1)
    >>> def successors(s):
    ...     actions = np.array([a for a in (0, 1) if a + 1 <= s])
    ...     left = s - (actions + 1)
    ...     legal = np.stack([left >= 1, left >= 2], axis=1)
    ...     return actions, left, legal, (left == 0).astype(float), left == 0
    >>> q = rk.TabularQApproximator(gym.spaces.Discrete(4), 2, step_size=1.0)
    >>> learner = rk.NegamaxQLearner(q, successors)
    >>> for s in (1, 2, 3):
    ...     learner.backup(s)
    >>> q.table[1:].tolist()  # 3 stones: a lost position, whatever one takes
    [[1.0, 0.0], [-1.0, 1.0], [-1.0, -1.0]]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...approximators.tabular import TabularQApproximator
from ...core.checks import check_callable, check_gamma
from ...core.dispatch import statistics, update
from ...core.interfaces import AbstractEnv, AbstractLearner
from ...core.stages import PostActStage
from ...trajectories.episodic import VectorSARTTrajectory

__all__ = ["NegamaxQLearner"]


class NegamaxQLearner(AbstractLearner):
    """The action values of an alternating two-player zero-sum game by negamax updates of
    every legal move of each position met (see the module's docstring), one
    ``TabularQApproximator`` shared by both seats.

    Args:
        approximator: the table, indexed by the mover's state (its ``step_size`` is alpha).
        successors: the game's rule, ``successors(state) -> (actions, opponent_states,
            opponent_legal_masks, rewards, dones)``.
        gamma: discount factor in [0, 1] (1 for board games).

    Use it in one ``rk.Agent`` shared by both seats (``rk.MultiAgentPolicy.shared``): at the
    end of each of a player's steps, the position it moved from is backed up.

    Example:
        >>> import gymnasium as gym, numpy as np, rlkit as rk
        >>> q = rk.TabularQApproximator(gym.spaces.Discrete(4), 2)
        >>> rk.NegamaxQLearner(q, lambda s: ([], [], [], [], []))
        NegamaxQLearner(TabularQApproximator(4, 2, init=0.0, step_size=0.1), gamma=1.0)
    """

    def __init__(
        self,
        approximator: TabularQApproximator,
        successors: Callable[[Any], tuple[Any, Any, Any, Any, Any]],
        gamma: float = 1.0,
    ) -> None:
        if not isinstance(approximator, TabularQApproximator) or approximator.step_size is None:
            raise TypeError(
                f"NegamaxQLearner: approximator must be an rk.TabularQApproximator with a "
                f"step_size, got {type(approximator).__name__}: {approximator!r:.80}"
            )
        self.approximator = approximator
        self.successors = check_callable(
            "NegamaxQLearner",
            "successors",
            successors,
            "(state) -> (actions, opponent_states, opponent_legal_masks, rewards, dones)",
        )
        self.gamma = check_gamma("NegamaxQLearner", gamma)
        self.td_error = 0.0

    def __repr__(self) -> str:
        return f"NegamaxQLearner({self.approximator!r}, gamma={self.gamma})"

    def __call__(self, env: AbstractEnv) -> Any:
        return self.approximator.q(env.state)

    def targets(self, state: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(actions, targets)``: the negamax target of every legal move of ``state``."""
        actions, opponents, legal, rewards, dones = self.successors(state)
        actions = np.asarray(actions, dtype=np.int64)
        rewards = np.asarray(rewards, dtype=np.float64)
        dones = np.asarray(dones, dtype=bool)
        if not actions.size:
            return actions, rewards
        table = self.approximator.table
        values = np.where(np.asarray(legal, dtype=bool), table[np.asarray(opponents)], -np.inf)
        best = values.max(axis=1)
        stuck = ~dones & ~np.isfinite(best)
        if stuck.any():
            raise ValueError(
                f"NegamaxQLearner: successors({state!r}) leaves the opponent no legal action "
                f"after move {int(actions[stuck][0])}, but says the game goes on"
            )
        return actions, np.where(dones, rewards, rewards - self.gamma * np.where(dones, 0, best))

    def backup(self, state: Any) -> None:
        """Move every legal move's value in ``state`` towards its negamax target."""
        self.approximator.check_state(state)
        actions, targets = self.targets(state)
        if not actions.size:
            return
        row = self.approximator.table[state]
        errors = targets - row[actions]
        row[actions] += self.approximator.step_size * errors
        self.td_error = float(np.abs(errors).max())

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """The table's state, gamma and the last TD error (``successors`` is code: rebuilt)."""
        return {
            "gamma": self.gamma,
            "td_error": float(self.td_error),
            "approximator": self.approximator.state_dict(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`."""
        self.gamma = float(state["gamma"])
        self.td_error = float(state["td_error"])
        self.approximator.load_state_dict(state["approximator"])


# ---- PostAct: the mover's step ended (at its next turn or the game's end) ----
@update.dispatch
def _(
    learner: NegamaxQLearner,
    trajectory: VectorSARTTrajectory,
    env: AbstractEnv,
    stage: PostActStage,
    /,
):
    learner.backup(trajectory.state[-1])


@statistics.dispatch
def _(learner: NegamaxQLearner, /):
    return {"td_error": float(learner.td_error)}
