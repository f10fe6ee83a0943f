"""``NegamaxQLearner``: tabular Q-learning of a two-player zero-sum game whose players alternate,
one table for both seats (docs/how-to/multi-agent.md).

Each player sees the board from its own side, so one table ``Q(s, a)`` serves both. Plain
Q-learning treats the opponent as part of the environment: a step runs from the mover's action
to its next turn and bootstraps with ``max Q(s'', .)`` after the opponent's reply, so the
values it learns are those against the opponent as it plays now, exploration included, and a
position is learned only when it is reached again at the mover's own turn. The negamax target
(the sampled form of minimax value iteration) bootstraps from the position the opponent faces
right after the move, the *afterstate* seen from the other side (Sutton & Barto 6.8)::

    Q(s, a) <- Q(s, a) + alpha * (target - Q(s, a))
    target = r                                        if the step ended the game
             r - gamma * max_{a' legal} Q(s_opp, a')  otherwise, (s_opp, legal) = afterstate(s, a)

so the values learned are the game's minimax values, whatever the players explore, and every
move either seat makes teaches the other seat's positions too. ``afterstate(state, action)``
is the game's own (deterministic) rule for one move: the opponent's state and its legal-action
mask. The target is for games whose rewards come when they end (board games): a step that is
not the last and brings a reward is refused, naming it.

Example:
    >>> import gymnasium as gym, numpy as np, rlkit as rk
    >>> # a take-away game: 3 stones, take 1 or 2, who takes the last one wins
    >>> def afterstate(stones, take):
    ...     left = stones - (take + 1)
    ...     return left, np.array([left >= 1, left >= 2])
    >>> q = rk.TabularQApproximator(gym.spaces.Discrete(4), 2, step_size=1.0)
    >>> learner = rk.NegamaxQLearner(q, afterstate)
    >>> q.table[1] = [1.0, -1.0]  # one stone left: taking it wins
    >>> learner.target(3, 1, 0.0, terminal=False)  # take 2 from 3: the opponent takes the last
    -1.0
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
    """Q-learning of an alternating two-player zero-sum game with the negamax target (see the
    module's docstring), one ``TabularQApproximator`` shared by both seats.

    Args:
        approximator: the table, indexed by the mover's state.
        afterstate: ``afterstate(state, action) -> (opponent_state, opponent_legal_mask)``,
            the position the opponent faces after the move (the game's own rule).
        gamma: discount factor in [0, 1] (1 for board games).

    Use it in one ``rk.Agent`` shared by both seats (``rk.MultiAgentPolicy.shared``): each
    seat records its own moves, every move updates the shared table at the end of its step.

    Example:
        >>> import gymnasium as gym, numpy as np, rlkit as rk
        >>> q = rk.TabularQApproximator(gym.spaces.Discrete(4), 2)
        >>> rk.NegamaxQLearner(q, lambda s, a: (s - a - 1, np.ones(2, bool)))
        NegamaxQLearner(TabularQApproximator(4, 2, init=0.0, step_size=0.1), gamma=1.0)
    """

    def __init__(
        self,
        approximator: TabularQApproximator,
        afterstate: Callable[[Any, int], tuple[Any, np.ndarray]],
        gamma: float = 1.0,
    ) -> None:
        if not isinstance(approximator, TabularQApproximator):
            raise TypeError(
                f"NegamaxQLearner: approximator must be an rk.TabularQApproximator, got "
                f"{type(approximator).__name__}: {approximator!r:.80}"
            )
        self.approximator = approximator
        self.afterstate = check_callable(
            "NegamaxQLearner", "afterstate", afterstate, "(state, action) -> (state, mask)"
        )
        self.gamma = check_gamma("NegamaxQLearner", gamma)
        self.td_error = 0.0

    def __repr__(self) -> str:
        return f"NegamaxQLearner({self.approximator!r}, gamma={self.gamma})"

    def __call__(self, env: AbstractEnv) -> Any:
        return self.approximator.q(env.state)

    def target(self, state: Any, action: int, reward: float, *, terminal: bool) -> float:
        """The negamax target of the move ``action`` in ``state`` (module docstring)."""
        if terminal:
            return float(reward)
        if reward != 0:
            raise ValueError(
                f"NegamaxQLearner: the move {action} in state {state!r} brought reward "
                f"{reward!r} before the game ended; the negamax target expects rewards only "
                f"when the game ends (board games)"
            )
        opponent, mask = self.afterstate(state, action)
        values = np.asarray(self.approximator.q(opponent))[np.asarray(mask, dtype=bool)]
        if not values.size:
            raise ValueError(
                f"NegamaxQLearner: afterstate({state!r}, {action}) leaves the opponent no legal "
                f"action, but the game did not end"
            )
        return float(reward) - self.gamma * float(values.max())

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """The table's state, gamma and the last TD error (``afterstate`` is code: rebuilt)."""
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
    state, action = trajectory.state[-1], trajectory.action[-1]
    target = learner.target(
        state,
        action,
        trajectory.reward[-1],
        terminal=bool(trajectory.terminal[-1]),
    )
    learner.td_error = learner.approximator.update(state, action, target)


@statistics.dispatch
def _(learner: NegamaxQLearner, /):
    return {"td_error": float(learner.td_error)}
