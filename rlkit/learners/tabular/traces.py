"""Eligibility traces (Sutton & Barto chapter 12): TD(lambda), true online TD(lambda), SARSA(lambda)
and the offline lambda-return algorithm, for tables and linear approximators.

A table is the linear case with one-hot features: ``TabularVApproximator`` is ``v(s) = w . x(s)``
with ``x(s)`` the indicator of ``s`` and ``w`` the (flattened) table, so one implementation
serves both. The weights are changed in place (``approximator.table`` / ``.weights``).

Per step, with ``x = x(S_t)`` (or ``x(S_t, A_t)``), ``delta = R + gamma v(S') - v(S)`` and the
trace ``z`` (zero at the start of every episode):

* accumulating: ``z = gamma lambda z + x``, then ``w += alpha delta z`` (TD(lambda), 12.2);
* replacing: ``z = max(gamma lambda z, x)`` elementwise (for binary features, section 12.3);
* dutch: ``z = gamma lambda z + (1 - alpha gamma lambda z.x) x`` (section 12.6);
* true online TD(lambda) (``true_online=True``, dutch trace, section 12.5):
  ``w += alpha (delta + v - v_old) z - alpha (v - v_old) x``, ``v_old = v(S')``;
* offline lambda-return (``method="lambda_return"``, section 12.1): nothing changes during the
  episode; at its end ``w += alpha (G^lambda_t - v(S_t)) x(S_t)`` for each step in order, the
  lambda-returns computed with the weights of the start of the episode.

Prediction (``method="td"``, state values) updates at PostAct; SARSA(lambda) (``method="sarsa"``,
action values) at the next PreAct, when ``A'`` is known, and at PostAct of the last step. At a
truncation there is no next action: SARSA(lambda) bootstraps with the expectation under the
behaviour policy's ``explorer.prob`` (as ``rk.TDLearner``'s SARSA).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...approximators.linear import LinearQApproximator, LinearVApproximator
from ...approximators.tabular import TabularQApproximator, TabularVApproximator
from ...core.checks import check_gamma, unit_interval
from ...core.dispatch import statistics, update
from ...core.interfaces import AbstractEnv, AbstractLearner
from ...core.stages import PostActStage, PreActStage, PreEpisodeStage
from ...trajectories.episodic import VectorSARTTrajectory

__all__ = ["TDLambdaLearner", "SARSALambdaLearner", "LambdaReturnLearner", "TRACES"]

TRACES = ("accumulating", "replacing", "dutch")


class _Features:
    """The linear view of an approximator: flat weights and ``x(state[, action])``."""

    def __init__(self, owner: str, approximator: Any, values: str) -> None:
        if values == "v":
            kinds: tuple[type, ...] = (TabularVApproximator, LinearVApproximator)
        else:
            kinds = (TabularQApproximator, LinearQApproximator)
        if not isinstance(approximator, kinds):
            names = " or ".join(k.__name__ for k in kinds)
            raise TypeError(
                f"{owner}: needs a {names} ({'state' if values == 'v' else 'action'} values), "
                f"got {type(approximator).__name__}: {approximator!r}"
            )
        if approximator.step_size is None:
            raise ValueError(
                f"{owner}: traces need a constant step size; the approximator has "
                f"step_size=None (sample averages)"
            )
        self.step_size = float(approximator.step_size)
        if isinstance(approximator, (TabularVApproximator, TabularQApproximator)):
            table = approximator.table
            self.weights = table.reshape(-1)  # a view: the table is C-contiguous
            assert np.shares_memory(self.weights, table)
            shape = table.shape
            if values == "v":
                self.x = lambda s: _one_hot(np.ravel_multi_index(_index(s), shape), table.size)
            else:
                self.x = lambda s, a: _one_hot(
                    np.ravel_multi_index((*_index(s), a), shape), table.size
                )
            self.n_actions = shape[-1] if values == "q" else 0
        else:
            self.weights = approximator.weights
            self.x = approximator.features
            self.n_actions = getattr(approximator, "n_actions", 0)

    def q(self, state: Any) -> np.ndarray:
        return np.array([self.weights @ self.x(state, a) for a in range(self.n_actions)])


def _index(state: Any) -> tuple:
    return tuple(state) if isinstance(state, (tuple, list)) else (int(state),)


def _one_hot(i: int, n: int) -> np.ndarray:
    x = np.zeros(n)
    x[i] = 1.0
    return x


class TDLambdaLearner(AbstractLearner):
    """TD(lambda) with eligibility traces (S&B chapter 12), tabular or linear.

    ``TDLambdaLearner(approximator, method=...)`` builds the method's class: ``"td"`` (this
    class: prediction of state values), ``"sarsa"`` (:class:`SARSALambdaLearner`) or
    ``"lambda_return"`` (:class:`LambdaReturnLearner`, the offline lambda-return algorithm).

    Args:
        approximator: ``TabularVApproximator`` or ``LinearVApproximator`` (``"td"``,
            ``"lambda_return"``); ``TabularQApproximator`` or ``LinearQApproximator``
            (``"sarsa"``). Its ``step_size`` is alpha; its values are changed in place.
        lambda_: the trace-decay parameter lambda in [0, 1].
        gamma: discount factor in [0, 1].
        trace: ``"accumulating"`` (default), ``"replacing"`` or ``"dutch"``.
        true_online: true online TD(lambda) / SARSA(lambda) (needs the dutch trace, the default
            then).
        explorer: for SARSA(lambda) at truncations (set by ``rk.QBasedPolicy``).

    With ``lambda_=0`` every variant is one-step TD(0) (or SARSA). ``learner(env)`` is
    ``v(env.state)`` (or the action values). ``learner.td_error`` is the last TD error.

    Example:
        >>> import rlkit as rk
        >>> env = rk.GymEnv("rlkit/RandomWalk1D-v0", seed=0, n_states=19, rewards=(-1.0, 1.0))
        >>> v = rk.TabularVApproximator(env.state_space, step_size=0.1)
        >>> learner = rk.TDLambdaLearner(v, lambda_=0.8, true_online=True)
        >>> learner
        TDLambdaLearner(TabularVApproximator(21, init=0.0, step_size=0.1), lambda_=0.8, gamma=1.0, trace='dutch', true_online=True)
        >>> agent = rk.Agent(rk.VBasedPolicy(learner, rk.RandomPolicy(seed=0)),
        ...                  rk.VectorSARTTrajectory())
        >>> _ = rk.run(agent, env, rk.StopAfterNEpisodes(10))
    """  # noqa: E501

    method = "td"
    _values = "v"

    def __new__(cls, *args: Any, method: str | None = None, **kwargs: Any) -> TDLambdaLearner:
        if cls is TDLambdaLearner and method is not None:
            cls = _method_class(method)
        return super().__new__(cls)

    def __init__(
        self,
        approximator: Any,
        *,
        method: str | None = None,
        lambda_: float = 0.9,
        gamma: float = 1.0,
        trace: str | None = None,
        true_online: bool = False,
        explorer: Any = None,
    ) -> None:
        name = type(self).__name__
        if method is not None and method != self.method:
            _method_class(method)
            raise ValueError(
                f"{name}: method must be {self.method!r} for this class, got {method!r} "
                f"(use TDLambdaLearner(approximator, method={method!r}))"
            )
        self.lambda_ = unit_interval(name, "lambda_", lambda_)
        self.gamma = check_gamma(name, gamma)
        if not isinstance(true_online, bool):
            raise TypeError(f"{name}: true_online must be a bool, got {true_online!r}")
        if trace is None:
            trace = "dutch" if true_online else "accumulating"
        if trace not in TRACES:
            raise ValueError(f"{name}: trace must be one of {list(TRACES)}, got {trace!r}")
        if true_online and trace != "dutch":
            raise ValueError(
                f"{name}: true online TD(lambda) uses the dutch trace, got trace={trace!r}"
            )
        if explorer is not None and not callable(getattr(explorer, "prob", None)):
            raise TypeError(
                f"{name}: explorer must have a prob(values, mask=None) method, got "
                f"{type(explorer).__name__}: {explorer!r}"
            )
        self.approximator = approximator
        self._f = _Features(name, approximator, self._values)
        self.trace = trace
        self.true_online = true_online
        self.explorer = explorer
        self.z = np.zeros_like(self._f.weights)
        self.v_old = 0.0
        self.td_error = 0.0

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.approximator!r}, lambda_={self.lambda_}, "
            f"gamma={self.gamma}, trace={self.trace!r}, true_online={self.true_online})"
        )

    def __call__(self, env: AbstractEnv) -> Any:
        return self.approximator(env.state)

    def reset_trace(self) -> None:
        """Forget the trace (done at the start of every episode)."""
        self.z[...] = 0.0
        self.v_old = 0.0

    # ---- one step: x = x(S_t[, A_t]), target = R + gamma v(S') (or R at the end) ----
    def _step(self, x: np.ndarray, reward: float, x_next: np.ndarray | None) -> None:
        w, z, alpha = self._f.weights, self.z, self._f.step_size
        decay = self.gamma * self.lambda_
        v = float(w @ x)
        v_next = 0.0 if x_next is None else float(w @ x_next)
        delta = reward + self.gamma * v_next - v
        if self.trace == "accumulating":
            z *= decay
            z += x
        elif self.trace == "replacing":
            np.maximum(z * decay, x, out=z)
        else:  # dutch: uses z_{t-1}.x_t
            zx = float(z @ x)
            z *= decay
            z += (1.0 - alpha * decay * zx) * x
        if self.true_online:
            w += alpha * (delta + v - self.v_old) * z
            w -= alpha * (v - self.v_old) * x
            self.v_old = v_next
        else:
            w += alpha * delta * z
        self.td_error = delta

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """Hyper-parameters, the trace and the approximator's state."""
        return {
            "method": self.method,
            "lambda_": self.lambda_,
            "gamma": self.gamma,
            "z": self.z.copy(),
            "v_old": self.v_old,
            "td_error": float(self.td_error),
            "approximator": self.approximator.state_dict(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a state saved by :meth:`state_dict` of a learner of the same method."""
        if not isinstance(state, dict) or state.get("method") != self.method:
            got = state.get("method") if isinstance(state, dict) else type(state).__name__
            raise ValueError(
                f"{type(self).__name__}: incompatible checkpoint: expected method "
                f"{self.method!r}, got {got!r}"
            )
        self.lambda_ = float(state["lambda_"])
        self.gamma = float(state["gamma"])
        self.approximator.load_state_dict(state["approximator"])
        self.z[...] = state["z"]
        self.v_old = float(state["v_old"])
        self.td_error = float(state["td_error"])


class SARSALambdaLearner(TDLambdaLearner):
    """SARSA(lambda) and true online SARSA(lambda) (``method="sarsa"``; S&B 12.7, 12.8).

    Example:
        >>> import rlkit as rk
        >>> env = rk.GymEnv("rlkit/WindyGridWorld-v0", seed=0)
        >>> q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.5)
        >>> learner = rk.TDLambdaLearner(q, method="sarsa", lambda_=0.9, trace="replacing")
        >>> type(learner).__name__
        'SARSALambdaLearner'
        >>> agent = rk.Agent(rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.1, seed=0)),
        ...                  rk.VectorSARTTrajectory())
        >>> _ = rk.run(agent, env, rk.StopAfterNEpisodes(3))
    """

    method = "sarsa"
    _values = "q"

    def __call__(self, env: AbstractEnv) -> Any:
        return self.approximator.q(env.state)


class LambdaReturnLearner(TDLambdaLearner):
    """The offline lambda-return algorithm (``method="lambda_return"``; S&B 12.1).

    Nothing changes during an episode; at its end the lambda-returns ``G^lambda_t = R_{t+1} +
    gamma ((1 - lambda) v(S_{t+1}) + lambda G^lambda_{t+1})`` are computed with the weights of
    the start of the episode, and then, for ``t = 0, 1, ...`` in order, ``w += alpha
    (G^lambda_t - v(S_t, w)) x(S_t)`` with the current weights (so ``lambda = 1`` is
    constant-alpha Monte Carlo applied at the end of the episode).

    Example:
        >>> import rlkit as rk
        >>> v = rk.TabularVApproximator(21, step_size=0.1)
        >>> rk.TDLambdaLearner(v, method="lambda_return", lambda_=0.8).method
        'lambda_return'
    """

    method = "lambda_return"

    def _episode_update(self, trajectory: VectorSARTTrajectory, env: AbstractEnv) -> None:
        f = self._f
        w = f.weights
        start, end = trajectory.episode_start, len(trajectory.reward)
        xs = [f.x(trajectory.state[t]) for t in range(start, end)]
        values = [float(w @ x) for x in xs]  # with the weights of the start of the episode
        last = trajectory.next_state[end - 1]
        g = 0.0 if trajectory.terminal[end - 1] else float(w @ f.x(last))
        v_next = g
        targets = [0.0] * len(xs)
        for i in range(len(xs) - 1, -1, -1):
            g = trajectory.reward[start + i] + self.gamma * (
                (1.0 - self.lambda_) * v_next + self.lambda_ * g
            )
            targets[i] = g
            v_next = values[i]
        alpha = f.step_size
        for x, target in zip(xs, targets, strict=True):  # in order, as the book's w_t
            error = target - float(w @ x)
            w += alpha * error * x
        self.td_error = error


METHODS: dict[str, type[TDLambdaLearner]] = {
    "td": TDLambdaLearner,
    "sarsa": SARSALambdaLearner,
    "lambda_return": LambdaReturnLearner,
}


def _method_class(method: Any) -> type[TDLambdaLearner]:
    cls = METHODS.get(method) if isinstance(method, str) else None
    if cls is None:
        raise ValueError(
            f"TDLambdaLearner: unknown method {method!r}; expected one of {sorted(METHODS)}"
        )
    return cls


def _episode_ended(trajectory: VectorSARTTrajectory) -> bool:
    return bool(trajectory.terminal[-1] or trajectory.truncated[-1])


# ---- PreEpisode: a new episode starts with an empty trace ----
@update.dispatch
def _(
    learner: TDLambdaLearner,
    trajectory: VectorSARTTrajectory,
    env: AbstractEnv,
    stage: PreEpisodeStage,
    /,
):
    learner.reset_trace()


# ---- PostAct: TD(lambda) prediction, one update per step ----
@update.dispatch
def _(
    learner: TDLambdaLearner,
    trajectory: VectorSARTTrajectory,
    env: AbstractEnv,
    stage: PostActStage,
    /,
):
    f = learner._f
    x_next = None if trajectory.terminal[-1] else f.x(trajectory.next_state[-1])
    learner._step(f.x(trajectory.state[-1]), trajectory.reward[-1], x_next)


# ---- PostAct: the offline lambda-return algorithm learns at the end of an episode ----
@update.dispatch
def _(
    learner: LambdaReturnLearner,
    trajectory: VectorSARTTrajectory,
    env: AbstractEnv,
    stage: PostActStage,
    /,
):
    if _episode_ended(trajectory):
        learner._episode_update(trajectory, env)


# ---- PreAct: SARSA(lambda) updates the previous step once its next action is known ----
@update.dispatch
def _(
    learner: SARSALambdaLearner,
    trajectory: VectorSARTTrajectory,
    env: AbstractEnv,
    stage: PreActStage,
    /,
):
    h = len(trajectory.reward)  # the action just recorded is action[h]
    if h - 1 >= trajectory.episode_start:
        f = learner._f
        learner._step(
            f.x(trajectory.state[h - 1], trajectory.action[h - 1]),
            trajectory.reward[h - 1],
            f.x(trajectory.state[h], trajectory.action[h]),
        )


# ---- PostAct: SARSA(lambda)'s last step of an episode ----
@update.dispatch
def _(
    learner: SARSALambdaLearner,
    trajectory: VectorSARTTrajectory,
    env: AbstractEnv,
    stage: PostActStage,
    /,
):
    if not _episode_ended(trajectory):
        return
    f = learner._f
    x = f.x(trajectory.state[-1], trajectory.action[-1])
    if trajectory.terminal[-1]:
        learner._step(x, trajectory.reward[-1], None)
        return
    # truncated: bootstrap with the expectation under the behaviour policy
    if learner.explorer is None:
        raise RuntimeError(
            "SARSALambdaLearner: needs the behaviour policy's explorer to bootstrap at a "
            "truncation; pass explorer= or use the learner in a rk.QBasedPolicy"
        )
    state = trajectory.next_state[-1]
    values = f.q(state)
    probs = learner.explorer.prob(values, env.legal_action_mask)
    x_next = sum(p * f.x(state, a) for a, p in enumerate(probs) if p > 0.0)
    learner._step(x, trajectory.reward[-1], np.asarray(x_next, dtype=np.float64))


# ---- statistics: the last TD error ----
@statistics.dispatch
def _(learner: TDLambdaLearner, /):
    return {"td_error": float(learner.td_error)}
