"""Monte Carlo learning from whole episodes (Sutton & Barto chapter 5).

``MonteCarloLearner`` learns at **PostEpisode** from the episode that just finished (the
transitions from ``trajectory.episode_start`` on): it walks the episode backwards computing the
returns ``G_t = r_t + gamma * G_{t+1}`` and moves the value of each visited state (a
``TabularVApproximator``: prediction) or state-action pair (a ``TabularQApproximator``: prediction
of Q or, in a ``QBasedPolicy`` with an epsilon-greedy explorer, on-policy control) toward its
return. Exploring starts are a property of the environment's reset, not of the learner: it learns
from whatever episodes it is given.

Truncated episodes: Monte Carlo cannot bootstrap, so the return of every step of a truncated
episode is the discounted sum of the rewards *observed* up to the cut; those (biased, too short)
returns are used like any other. Prefer termination, or a time limit long enough not to matter.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ...approximators.tabular import TabularQApproximator, TabularVApproximator
from ...core.checks import check_gamma
from ...core.dispatch import statistics, update
from ...core.interfaces import AbstractEnv, AbstractLearner
from ...core.stages import PostEpisodeStage
from ...trajectories.episodic import VectorSARTTrajectory

__all__ = ["MonteCarloLearner"]

_KINDS = ("first_visit", "every_visit")
_SAMPLINGS = (None, "ordinary", "weighted")


class MonteCarloLearner(AbstractLearner):
    """First- or every-visit Monte Carlo prediction and control, on- or off-policy.

    Args:
        approximator: a ``TabularVApproximator`` (state values) or a ``TabularQApproximator``
            (action values). Its ``step_size`` decides the averaging: ``None`` gives sample
            averages (the classic Monte Carlo estimate), a number constant-alpha Monte Carlo.
        kind: ``"first_visit"`` (only the first visit of a state / pair in an episode counts) or
            ``"every_visit"``.
        gamma: discount factor in [0, 1].
        sampling: ``None`` (on-policy), or off-policy with importance sampling (S&B 5.5-5.6):
            ``"ordinary"`` moves the estimate toward ``rho * G`` with the approximator's own
            step size (``None``: the average of ``rho * G``, S&B eq. 5.5); ``"weighted"``
            keeps cumulative weights ``C`` and steps by ``W / C`` (S&B eq. 5.6 and the
            incremental algorithm of 5.6); it needs an approximator with ``step_size=None``.
            ``rho`` is the product of ``target_prob / behaviour_prob`` over the actions from the
            visit on (for Q, from the action after the pair on).
        target_prob: ``target_prob(state, action) -> float``, the target policy's probabilities
            (required with ``sampling``).
        behaviour_prob: ``behaviour_prob(state, action) -> float``, the probabilities of the
            policy that generated the episodes (required with ``sampling``; must be > 0 for
            every action taken).

    ``learner(env)`` is ``V(s)`` or the row ``Q(s, .)``; ``learner.episode_return`` is the
    return of the last episode from its first step (reported by ``rk.statistics``).

    Example:
        >>> import rlkit as rk
        >>> env = rk.GymEnv("rlkit/RandomWalk1D-v0", seed=0)
        >>> v = rk.TabularVApproximator(env.state_space, init=0.5, step_size=None)
        >>> learner = rk.MonteCarloLearner(v, kind="every_visit")
        >>> agent = rk.Agent(rk.VBasedPolicy(learner, rk.RandomPolicy(seed=0)),
        ...                  rk.VectorSARTTrajectory())
        >>> _ = rk.run(agent, env, rk.StopAfterNEpisodes(20))
    """

    def __init__(
        self,
        approximator: TabularVApproximator | TabularQApproximator,
        *,
        kind: str = "first_visit",
        gamma: float = 1.0,
        sampling: str | None = None,
        target_prob: Callable[[Any, Any], float] | None = None,
        behaviour_prob: Callable[[Any, Any], float] | None = None,
    ) -> None:
        name = type(self).__name__
        if not isinstance(approximator, (TabularVApproximator, TabularQApproximator)):
            raise TypeError(
                f"{name}: approximator must be a TabularVApproximator or a TabularQApproximator, "
                f"got {type(approximator).__name__}: {approximator!r}"
            )
        if kind not in _KINDS:
            raise ValueError(f"{name}: kind must be one of {list(_KINDS)}, got {kind!r}")
        gamma = check_gamma(name, gamma)
        if sampling not in _SAMPLINGS:
            raise ValueError(
                f"{name}: sampling must be one of {list(_SAMPLINGS)}, got {sampling!r}"
            )
        if sampling is None:
            if target_prob is not None or behaviour_prob is not None:
                raise ValueError(
                    f"{name}: target_prob and behaviour_prob are only used with "
                    f"sampling='ordinary' or 'weighted' (sampling is None)"
                )
        else:
            for label, prob in (("target_prob", target_prob), ("behaviour_prob", behaviour_prob)):
                if not callable(prob):
                    raise TypeError(
                        f"{name}: sampling={sampling!r} needs {label}, a callable "
                        f"prob(state, action) -> float, got {prob!r}"
                    )
        if sampling == "weighted" and approximator.step_size is not None:
            raise ValueError(
                f"{name}: sampling='weighted' steps by W / C (S&B 5.6) and needs an approximator "
                f"with step_size=None, got step_size={approximator.step_size!r}"
            )
        self.approximator = approximator
        self.kind = kind
        self.gamma = float(gamma)
        self.sampling = sampling
        self.target_prob = target_prob
        self.behaviour_prob = behaviour_prob
        self._q = isinstance(approximator, TabularQApproximator)
        # cumulative importance weights C(s) / C(s, a) of weighted importance sampling
        self.weights = np.zeros_like(approximator.table) if sampling == "weighted" else None
        self.episode_return = 0.0

    def __repr__(self) -> str:
        return (
            f"MonteCarloLearner({self.approximator!r}, kind={self.kind!r}, gamma={self.gamma}, "
            f"sampling={self.sampling!r})"
        )

    def __call__(self, env: AbstractEnv) -> Any:
        if self._q:
            return self.approximator.q(env.state)
        return self.approximator(env.state)

    # ---- learning from one finished episode ----
    def learn(self, states: list, actions: list, rewards: list) -> None:
        """Learn from one episode given as lists (``rewards[t]`` follows ``actions[t]`` taken in
        ``states[t]``); what PostEpisode does with the trajectory's current episode.

        The whole episode is checked before the table changes: a state outside the table or a
        reward that is not finite raises ``ValueError`` naming it."""
        self._check_episode(states, rewards)
        first = self._first_visits(states, actions) if self.kind == "first_visit" else None
        gamma, g, w = self.gamma, 0.0, 1.0
        for t in range(len(rewards) - 1, -1, -1):
            g = gamma * g + rewards[t]
            state, action = states[t], actions[t]
            if self.sampling is None:
                if first is None or first[t]:
                    self._move(state, action, g)
                continue
            if w == 0.0 and self.sampling == "weighted":
                continue  # every earlier update has weight 0 (S&B 5.6 breaks here)
            ratio = self.target_prob(state, action) / self.behaviour_prob(state, action)
            if not self._q:  # V: rho_{t:T-1} includes the action taken at t
                w *= ratio
            if first is None or first[t]:
                if self.sampling == "ordinary":
                    self._move(state, action, w * g)
                else:
                    self._weighted(state, action, g, w)
            if self._q:  # Q: the pair's own action is given, the weight starts after it
                w *= ratio
        self.episode_return = g

    def _check_episode(self, states: list, rewards: list) -> None:
        for t, reward in enumerate(rewards):
            if not math.isfinite(reward):
                raise ValueError(
                    f"{type(self).__name__}: reward {reward!r} at step {t} of the episode is "
                    f"not finite; the table is unchanged"
                )
        for state in states[: len(rewards)]:
            self.approximator.check_state(state)

    def _first_visits(self, states: list, actions: list) -> list[bool]:
        seen: set = set()
        first = []
        for state, action in zip(states, actions, strict=True):
            key = _key(state, action) if self._q else _key(state)
            first.append(key not in seen)
            seen.add(key)
        return first

    def _move(self, state: Any, action: Any, target: float) -> None:
        if self._q:
            self.approximator.update(state, action, target)
        else:
            self.approximator.update(state, target)

    def _weighted(self, state: Any, action: Any, g: float, w: float) -> None:
        if w == 0.0:
            return
        table = self.approximator.table
        if self._q:
            c_row, row = self.weights[state], table[state]
            c_row[action] += w
            row[action] += w / c_row[action] * (g - row[action])
        else:
            self.weights[state] += w
            table[state] += w / self.weights[state] * (g - table[state])

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """Hyper-parameters, the approximator's state and the cumulative weights."""
        return {
            "kind": self.kind,
            "gamma": self.gamma,
            "sampling": self.sampling,
            "episode_return": float(self.episode_return),
            "weights": None if self.weights is None else self.weights.copy(),
            "approximator": self.approximator.state_dict(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a state saved by :meth:`state_dict` of a learner with the same settings."""
        name = type(self).__name__
        for key in ("kind", "sampling"):
            if not isinstance(state, dict) or state.get(key) != getattr(self, key):
                got = state.get(key) if isinstance(state, dict) else type(state).__name__
                raise ValueError(
                    f"{name}: incompatible checkpoint: expected {key} {getattr(self, key)!r}, "
                    f"got {got!r}"
                )
        weights = state["weights"]
        if self.weights is not None:
            weights = np.asarray(weights, dtype=np.float64)
            if weights.shape != self.weights.shape:
                raise ValueError(
                    f"{name}: incompatible checkpoint: weights of shape {weights.shape}, "
                    f"expected {self.weights.shape}"
                )
            self.weights = weights.copy()
        self.gamma = float(state["gamma"])
        self.episode_return = float(state["episode_return"])
        self.approximator.load_state_dict(state["approximator"])


def _key(*values: Any) -> tuple:
    """A hashable key of a state (and action): arrays become tuples."""
    return tuple(v.tolist() if isinstance(v, np.ndarray) else v for v in values)


# ---- PostEpisode: learn from the episode that just ended ----
@update.dispatch
def _(
    learner: MonteCarloLearner,
    trajectory: VectorSARTTrajectory,
    env: AbstractEnv,
    stage: PostEpisodeStage,
    /,
):
    start = trajectory.episode_start
    learner.learn(trajectory.state[start:], trajectory.action[start:], trajectory.reward[start:])


# ---- statistics: the return of the last episode ----
@statistics.dispatch
def _(learner: MonteCarloLearner, /):
    return {"episode_return": float(learner.episode_return)}
