"""Temporal-difference learners: TD(0) prediction, SARSA, Expected SARSA, Q-learning and double
Q-learning, all with n-step returns (Sutton & Barto chapters 6 and 7).

``TDLearner(approximator, method=...)`` returns an instance of the method's own subclass
(:class:`TD0Learner`, :class:`SARSALearner`, :class:`ExpectedSARSALearner`,
:class:`QLearningLearner`, :class:`DoubleQLearningLearner`), each a :class:`TDLearner`, so every
method has its own dispatched ``update`` methods per stage and ``rk.explain`` names it.

When updates happen (``T`` = transitions recorded so far, ``e`` = ``trajectory.episode_start``):

* TD(0), Expected SARSA, Q-learning, double Q-learning: at **PostAct**, transition ``T - n`` (once
  its n-step window ``[T - n, T)`` lies inside the current episode);
* SARSA: at **PreAct** of the next step (it needs the next action), transition ``T - n``;
* at the end of an episode (PostAct of the step that made ``env.done``) every remaining
  transition of the episode is updated with its truncated window. Nothing is left for PostEpisode.

The learner keeps no per-episode bookkeeping: which transition to update follows from the
trajectory's length and ``episode_start``; it never reads across episodes, so it must see every
step of the episodes it learns from (use it in an ``Agent``).

Bootstrapping: a window ending in a *terminated* transition adds nothing; any other window adds
``gamma**len(window)`` times the value of the state after the window, ``next_state`` of its last
transition (at truncation the real final observation). That state is always ``env.state`` at the
time of the update, so ``env.legal_action_mask`` restricts the max / argmax / expectation to its
legal actions.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from ...approximators.linear import LinearQApproximator, LinearVApproximator
from ...approximators.tabular import TabularQApproximator, TabularVApproximator
from ...core.checks import check_gamma, positive_int
from ...core.dispatch import statistics, update
from ...core.interfaces import AbstractEnv, AbstractLearner
from ...core.stages import PostActStage, PreActStage
from ...trajectories.episodic import VectorSARTTrajectory

__all__ = [
    "TDLearner",
    "TD0Learner",
    "SARSALearner",
    "ExpectedSARSALearner",
    "QLearningLearner",
    "DoubleQLearningLearner",
    "METHODS",
]


class TDLearner(AbstractLearner):
    """Tabular temporal-difference learning with n-step returns.

    ``TDLearner(approximator, method=...)`` builds the method's subclass; the subclasses can
    also be constructed directly (``QLearningLearner(approximator, gamma=0.9)``).

    Args:
        approximator: a ``TabularVApproximator`` for ``"td0"``, a ``TabularQApproximator`` for the
            control methods (Q1 for double Q-learning). A ``LinearVApproximator`` /
            ``LinearQApproximator`` plugs in the same way (semi-gradient TD(0), n-step
            semi-gradient TD, semi-gradient SARSA, ...; S&B chapters 9 and 10).
        method: ``"td0"`` (TD prediction of V), ``"sarsa"``, ``"expected_sarsa"``,
            ``"qlearning"`` (default) or ``"double_qlearning"``.
        gamma: discount factor in [0, 1].
        n: number of steps of the n-step return (integer >= 1). n-step Expected SARSA bootstraps
            with the expectation under ``explorer.prob``, n-step (double) Q-learning with the max
            (as in Rainbow, no importance sampling).
        explorer: the behaviour policy's explorer, needed for Expected SARSA and for SARSA at a
            truncation (there is no next action there, so SARSA bootstraps with the expectation
            under ``explorer.prob``). ``QBasedPolicy`` fills it in with its own explorer when None.
        second_approximator: Q2 for ``"double_qlearning"`` (default: a copy of ``approximator``).
        seed: seed of the coin that picks which of Q1/Q2 a double Q-learning update changes
            (unused by the other methods).

    ``learner(env)`` returns what the behaviour policy acts on: ``V(s)`` for TD(0), the row
    ``Q(s, .)`` for the control methods and ``Q1(s, .) + Q2(s, .)`` for double Q-learning.
    ``learner.td_error`` is the error of the last update (reported by ``rk.statistics``).

    Example:
        >>> import rlkit as rk
        >>> env = rk.GymEnv("CliffWalking-v1", seed=0)
        >>> q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.5)
        >>> learner = rk.TDLearner(q, method="sarsa", gamma=1.0)
        >>> type(learner).__name__
        'SARSALearner'
        >>> agent = rk.Agent(rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.1, seed=0)),
        ...                  rk.VectorSARTTrajectory())
        >>> _ = rk.run(agent, env, rk.StopAfterNEpisodes(10))
    """

    method: str = ""
    _values = "q"  # "v": needs a TabularVApproximator, "q": a TabularQApproximator

    def __new__(cls, *args: Any, method: str | None = None, **kwargs: Any) -> TDLearner:
        if cls is TDLearner:
            cls = _method_class("TDLearner", "qlearning" if method is None else method)
        return super().__new__(cls)

    def __init__(
        self,
        approximator: TabularQApproximator | TabularVApproximator,
        *,
        method: str | None = None,
        gamma: float = 1.0,
        n: int = 1,
        explorer: Any = None,
        second_approximator: TabularQApproximator | None = None,
        seed: int | np.random.SeedSequence | np.random.Generator | None = None,
    ) -> None:
        name = type(self).__name__
        if method is not None and method != self.method:
            _method_class(name, method)  # unknown names get the list of known ones
            raise ValueError(
                f"{name}: method must be {self.method!r} for this class, got {method!r} "
                f"(use TDLearner(approximator, method={method!r}))"
            )
        gamma = check_gamma(name, gamma)
        n = positive_int(name, "n", n)
        if explorer is not None and not callable(getattr(explorer, "prob", None)):
            raise TypeError(
                f"{name}: explorer must have a prob(values, mask=None) method (e.g. "
                f"rk.EpsilonGreedyExplorer), got {type(explorer).__name__}: {explorer!r}"
            )
        if second_approximator is not None and not isinstance(self, DoubleQLearningLearner):
            raise TypeError(
                f"{name}: second_approximator is only used by method='double_qlearning', "
                f"not {self.method!r}"
            )
        self.approximator = _check_approximator(name, self.method, self._values, approximator)
        self.gamma = float(gamma)
        self.n = int(n)
        self.explorer = explorer
        self.td_error = 0.0

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.approximator!r}, gamma={self.gamma}, n={self.n})"

    def __call__(self, env: AbstractEnv) -> Any:
        approximator = self.approximator
        if type(approximator) is TabularQApproximator:
            return approximator.table[env.state]  # = approximator.q(env.state), one call less
        return approximator.q(env.state)

    # ---- one n-step update: transition tau with the window [tau, h) of the trajectory ----
    def _update_window(
        self, trajectory: VectorSARTTrajectory, env: AbstractEnv, tau: int, h: int
    ) -> None:
        g, discount = _window_return(trajectory.reward, tau, h, self.gamma)
        if not trajectory.terminal[h - 1]:
            g += discount * self._bootstrap(trajectory, env, h)
        self.td_error = self.approximator.update(trajectory.state[tau], trajectory.action[tau], g)

    def _bootstrap(self, trajectory: VectorSARTTrajectory, env: AbstractEnv, h: int) -> float:
        """Value of ``trajectory.next_state[h - 1]``, the state after the window ending at ``h``
        (= ``env.state``, whose ``legal_action_mask`` applies)."""
        raise NotImplementedError  # pragma: no cover - every method class defines it

    def _expected_value(self, values: np.ndarray, mask: np.ndarray | None) -> float:
        if self.explorer is None:
            raise RuntimeError(
                f"{type(self).__name__}: needs the behaviour policy's explorer to bootstrap with "
                f"the expectation under explorer.prob; pass explorer= or use the learner in a "
                f"rk.QBasedPolicy (which sets it)"
            )
        return float(np.dot(self.explorer.prob(values, mask), values))

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """Method, hyper-parameters, the approximator's state and the last TD error."""
        return {
            "method": self.method,
            "gamma": self.gamma,
            "n": self.n,
            "td_error": float(self.td_error),
            "approximator": self.approximator.state_dict(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a state saved by :meth:`state_dict` of a learner of the same method."""
        name = type(self).__name__
        if not isinstance(state, dict) or state.get("method") != self.method:
            got = state.get("method") if isinstance(state, dict) else type(state).__name__
            raise ValueError(
                f"{name}: incompatible checkpoint: expected method {self.method!r}, got {got!r}"
            )
        self.gamma = float(state["gamma"])
        self.n = int(state["n"])
        self.td_error = float(state["td_error"])
        self.approximator.load_state_dict(state["approximator"])


class TD0Learner(TDLearner):
    """n-step TD prediction of state values (``method="td0"``; S&B 6.1 and 7.1).

    Example:
        >>> import rlkit as rk
        >>> env = rk.GymEnv("rlkit/RandomWalk1D-v0", seed=0)
        >>> v = rk.TabularVApproximator(env.state_space, init=0.5, step_size=0.1)
        >>> agent = rk.Agent(rk.VBasedPolicy(rk.TDLearner(v, method="td0"),
        ...                                  rk.RandomPolicy(seed=0)), rk.VectorSARTTrajectory())
        >>> _ = rk.run(agent, env, rk.StopAfterNEpisodes(5))
    """

    method = "td0"
    _values = "v"

    def __call__(self, env: AbstractEnv) -> Any:
        return self.approximator(env.state)

    def _update_window(
        self, trajectory: VectorSARTTrajectory, env: AbstractEnv, tau: int, h: int
    ) -> None:
        g, discount = _window_return(trajectory.reward, tau, h, self.gamma)
        if not trajectory.terminal[h - 1]:
            g += discount * float(self.approximator(trajectory.next_state[h - 1]))
        self.td_error = self.approximator.update(trajectory.state[tau], g)


class SARSALearner(TDLearner):
    """n-step SARSA (``method="sarsa"``; S&B 6.4 and 7.2). Updates at the next PreAct, when the
    next action is known; at a truncation it bootstraps with the expectation under
    ``explorer.prob`` (there is no next action).

    Example:
        >>> import rlkit as rk
        >>> q = rk.TabularQApproximator(48, 4, step_size=0.5)
        >>> rk.TDLearner(q, method="sarsa", n=2)
        SARSALearner(TabularQApproximator(48, 4, init=0.0, step_size=0.5), gamma=1.0, n=2)
    """

    method = "sarsa"

    def _bootstrap(self, trajectory: VectorSARTTrajectory, env: AbstractEnv, h: int) -> float:
        values = self.approximator.q(trajectory.next_state[h - 1])
        if h < len(trajectory.action):  # the next action is known (PreAct)
            return float(values[trajectory.action[h]])
        return self._expected_value(values, env.legal_action_mask)  # truncated: no next action


class ExpectedSARSALearner(TDLearner):
    """n-step Expected SARSA (``method="expected_sarsa"``; S&B 6.6 and 7.2): bootstraps with
    ``sum_a explorer.prob(Q(s', .))[a] * Q(s', a)``.

    Example:
        >>> import rlkit as rk
        >>> q = rk.TabularQApproximator(48, 4, step_size=0.5)
        >>> learner = rk.TDLearner(q, method="expected_sarsa",
        ...                        explorer=rk.EpsilonGreedyExplorer(0.1, seed=0))
    """

    method = "expected_sarsa"

    def _bootstrap(self, trajectory: VectorSARTTrajectory, env: AbstractEnv, h: int) -> float:
        values = self.approximator.q(trajectory.next_state[h - 1])
        return self._expected_value(values, env.legal_action_mask)


class QLearningLearner(TDLearner):
    """n-step Q-learning (``method="qlearning"``; S&B 6.5; n-step with a max bootstrap as in
    Rainbow). The one-step update with a constant step size is the lean hot path: it reads the
    last transition and changes ``approximator.table`` in place.

    Example:
        >>> import rlkit as rk
        >>> q = rk.TabularQApproximator(48, 4, step_size=0.5)
        >>> rk.TDLearner(q, gamma=0.99)
        QLearningLearner(TabularQApproximator(48, 4, init=0.0, step_size=0.5), gamma=0.99, n=1)
    """

    method = "qlearning"

    def _bootstrap(self, trajectory: VectorSARTTrajectory, env: AbstractEnv, h: int) -> float:
        values = self.approximator.q(trajectory.next_state[h - 1])
        mask = env.legal_action_mask
        return float(values.max() if mask is None or not mask.any() else values[mask].max())


class DoubleQLearningLearner(TDLearner):
    """Double Q-learning (``method="double_qlearning"``; S&B 6.7), n-step with a max bootstrap.

    Each update flips a coin (``seed=``): with probability 1/2 it changes Q1 (``approximator``)
    toward ``G + gamma^n Q2(s', argmax_a Q1(s', a))``, else Q2 (``second_approximator``) with the
    roles swapped. ``learner(env)`` is ``Q1(s) + Q2(s)`` (act epsilon-greedily on the sum).

    Example:
        >>> import rlkit as rk
        >>> q1 = rk.TabularQApproximator(3, 10, step_size=0.1)
        >>> learner = rk.TDLearner(q1, method="double_qlearning", seed=0)
        >>> learner.second_approximator is not q1
        True
    """

    method = "double_qlearning"

    def __init__(
        self,
        approximator: TabularQApproximator,
        *,
        second_approximator: TabularQApproximator | None = None,
        seed: int | np.random.SeedSequence | np.random.Generator | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(approximator, **kwargs)
        name = type(self).__name__
        if not isinstance(self.approximator, TabularQApproximator):
            raise TypeError(
                f"{name}: method 'double_qlearning' needs a TabularQApproximator, got "
                f"{type(self.approximator).__name__}: {self.approximator!r}"
            )
        if second_approximator is None:
            second_approximator = copy.deepcopy(self.approximator)
        second = _check_approximator(name, self.method, "q", second_approximator)
        if second is self.approximator:
            raise ValueError(f"{name}: second_approximator must be a different object than Q1")
        if second.table.shape != self.approximator.table.shape:
            raise ValueError(
                f"{name}: second_approximator's table has shape {second.table.shape}, expected "
                f"the shape of approximator's table {self.approximator.table.shape}"
            )
        self.second_approximator = second
        self.rng = np.random.default_rng(seed)

    def __call__(self, env: AbstractEnv) -> Any:
        return self.approximator.q(env.state) + self.second_approximator.q(env.state)

    def _update_window(
        self, trajectory: VectorSARTTrajectory, env: AbstractEnv, tau: int, h: int
    ) -> None:
        this, other = self.approximator, self.second_approximator
        if self.rng.random() >= 0.5:
            this, other = other, this
        g, discount = _window_return(trajectory.reward, tau, h, self.gamma)
        if not trajectory.terminal[h - 1]:
            state = trajectory.next_state[h - 1]
            values = this.q(state)
            mask = env.legal_action_mask
            if mask is None or not mask.any():
                best = int(np.argmax(values))
            else:
                legal = np.flatnonzero(mask)
                best = int(legal[np.argmax(values[legal])])
            g += discount * float(other.q(state)[best])
        self.td_error = this.update(trajectory.state[tau], trajectory.action[tau], g)

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        state["second_approximator"] = self.second_approximator.state_dict()
        state["rng"] = self.rng.bit_generator.state
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.second_approximator.load_state_dict(state["second_approximator"])
        self.rng.bit_generator.state = state["rng"]


METHODS: dict[str, type[TDLearner]] = {
    "td0": TD0Learner,
    "sarsa": SARSALearner,
    "expected_sarsa": ExpectedSARSALearner,
    "qlearning": QLearningLearner,
    "double_qlearning": DoubleQLearningLearner,
}


def _method_class(owner: str, method: Any) -> type[TDLearner]:
    cls = METHODS.get(method) if isinstance(method, str) else None
    if cls is None:
        raise ValueError(f"{owner}: unknown method {method!r}; expected one of {sorted(METHODS)}")
    return cls


def _check_approximator(owner: str, method: str, values: str, approximator: Any) -> Any:
    if values == "v":
        expected: tuple[type, ...] = (TabularVApproximator, LinearVApproximator)
    else:
        expected = (TabularQApproximator, LinearQApproximator)
    if not isinstance(approximator, expected):
        raise TypeError(
            f"{owner}: method {method!r} needs a {' or '.join(e.__name__ for e in expected)} "
            f"({'state' if values == 'v' else 'action'} values), got "
            f"{type(approximator).__name__}: {approximator!r}"
        )
    return approximator


def _window_return(rewards: list, tau: int, h: int, gamma: float) -> tuple[float, float]:
    """``(sum_{k=tau}^{h-1} gamma^(k-tau) r_k, gamma^(h-tau))``."""
    g, discount = 0.0, 1.0
    for k in range(tau, h):
        g += discount * rewards[k]
        discount *= gamma
    return g, discount


def _update_completed(learner: TDLearner, trajectory: VectorSARTTrajectory, env: AbstractEnv):
    """After a step: update the transition whose n-step window just completed, and at the end of
    an episode every remaining one. Every window ends at the last recorded transition."""
    end = len(trajectory.reward)
    first = max(trajectory.episode_start, end - learner.n)
    if trajectory.terminal[-1] or trajectory.truncated[-1]:
        for tau in range(first, end):
            learner._update_window(trajectory, env, tau, end)
    elif end - learner.n == first:
        learner._update_window(trajectory, env, first, end)


# ---- PostAct: TD(0), Expected SARSA, double Q-learning (n-step windows and episode ends) ----
@update.dispatch
def _(
    learner: TD0Learner | ExpectedSARSALearner | DoubleQLearningLearner,
    trajectory: VectorSARTTrajectory,
    env: AbstractEnv,
    stage: PostActStage,
    /,
):
    _update_completed(learner, trajectory, env)


# ---- PostAct: Q-learning (the one-step update is the hot path of tabular control) ----
@update.dispatch
def _(
    learner: QLearningLearner,
    trajectory: VectorSARTTrajectory,
    env: AbstractEnv,
    stage: PostActStage,
    /,
):
    approximator = learner.approximator
    alpha = approximator.step_size
    if (
        learner.n != 1
        or alpha is None
        or env.legal_action_mask is not None
        or type(approximator) is not TabularQApproximator
    ):
        _update_completed(learner, trajectory, env)
        return
    # Same arithmetic as approximator.update, with Python floats: max() of a short list and
    # row.item() are several times cheaper than ndarray.max() and numpy scalars.
    table = approximator.table
    row = table[trajectory.state[-1]]
    action = trajectory.action[-1]
    if trajectory.terminal[-1]:
        target = trajectory.reward[-1]
    else:
        target = trajectory.reward[-1] + learner.gamma * max(
            table[trajectory.next_state[-1]].tolist()
        )
    old = row.item(action)
    error = target - old
    row[action] = old + alpha * error
    learner.td_error = error


# ---- PreAct: SARSA updates the transition whose window the new action completes ----
@update.dispatch
def _(
    learner: SARSALearner,
    trajectory: VectorSARTTrajectory,
    env: AbstractEnv,
    stage: PreActStage,
    /,
):
    h = len(trajectory.reward)  # the action just recorded is action[h]
    tau = h - learner.n
    if tau >= trajectory.episode_start:
        learner._update_window(trajectory, env, tau, h)


# ---- PostAct: SARSA flushes the rest of the episode when it ends ----
@update.dispatch
def _(
    learner: SARSALearner,
    trajectory: VectorSARTTrajectory,
    env: AbstractEnv,
    stage: PostActStage,
    /,
):
    if trajectory.terminal[-1] or trajectory.truncated[-1]:
        end = len(trajectory.reward)
        for tau in range(max(trajectory.episode_start, end - learner.n), end):
            learner._update_window(trajectory, env, tau, end)


# ---- statistics: the last TD error ----
@statistics.dispatch
def _(learner: TDLearner, /):
    return {"td_error": float(learner.td_error)}
