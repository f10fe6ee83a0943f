"""Linear value functions over feature functions (Sutton & Barto chapters 9 and 10).

``v(s) = w . x(s)`` and ``q(s, a) = w . x(s, a)``: the feature function ``x`` is any callable
returning a vector of ``n_features`` numbers (``StateAggregation``, a ``TileCoder``, a
polynomial, ...). ``update`` makes the semi-gradient step ``w += step_size * (target - v) * x``
(the gradient of a linear function is its feature vector), so a linear approximator plugs into
``rk.TDLearner`` where a table did: semi-gradient TD(0), n-step semi-gradient TD and SARSA.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.checks import check_callable, finite_float, positive_int
from ..core.interfaces import AbstractApproximator

__all__ = ["LinearVApproximator", "LinearQApproximator", "StateAggregation"]


def _check_step_size(owner: str, step_size: Any) -> float:
    return finite_float(owner, "step_size", step_size, low=0.0, high=1.0, low_open=True)


def _check_init(owner: str, init: Any, n_features: int) -> np.ndarray:
    if isinstance(init, (int, float, np.integer, np.floating)) and not isinstance(init, bool):
        if not math.isfinite(init):
            raise ValueError(f"{owner}: init must be finite, got {init!r}")
        return np.full(n_features, float(init))
    weights = np.array(init, dtype=np.float64)
    if weights.shape != (n_features,):
        raise ValueError(
            f"{owner}: init must be a number or a vector of n_features={n_features} weights, "
            f"got shape {weights.shape}"
        )
    if not np.isfinite(weights).all():
        raise ValueError(f"{owner}: init weights must be finite")
    return weights


class _Linear(AbstractApproximator):
    """Weights, the feature check and checkpoints shared by the two linear approximators."""

    weights: np.ndarray
    n_features: int
    step_size: float
    _arity = 1

    def _setup(self, features: Any, n_features: Any, step_size: Any, init: Any) -> None:
        owner = type(self).__name__
        signature = "features(state)" if self._arity == 1 else "features(state, action)"
        self.features_fn = check_callable(owner, "features", features, signature)
        self.n_features = positive_int(owner, "n_features", n_features)
        self.step_size = _check_step_size(owner, step_size)
        self.weights = _check_init(owner, init, self.n_features)

    def _checked(self, x: Any, call: str) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        if x.shape != (self.n_features,):
            raise ValueError(
                f"{type(self).__name__}: {call} returned a feature vector of shape {x.shape}, "
                f"expected ({self.n_features},): one feature per weight (n_features="
                f"{self.n_features})"
            )
        return x

    def state_dict(self) -> dict[str, Any]:
        """The weights, for checkpoints."""
        return {"weights": self.weights.copy()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore weights saved by :meth:`state_dict`, in place."""
        weights = np.asarray(state["weights"], dtype=np.float64)
        if weights.shape != self.weights.shape:
            raise ValueError(
                f"{type(self).__name__}: checkpoint weights have shape {weights.shape}, "
                f"expected {self.weights.shape}"
            )
        self.weights[...] = weights


class LinearVApproximator(_Linear):
    """A linear state-value function ``v(s) = weights . features(s)``.

    Args:
        features: ``features(state) -> vector`` of ``n_features`` numbers.
        n_features: the number of weights.
        step_size: the constant step size alpha in (0, 1] of :meth:`update`.
        init: initial weights, a number or a vector of ``n_features``.

    ``update(state, target)`` makes the semi-gradient step ``w += alpha (target - v(s)) x(s)``
    and returns the error ``target - v(s)`` from before the step.

    Example:
        >>> import rlkit as rk
        >>> agg = rk.StateAggregation(n_states=10, n_groups=2)
        >>> v = rk.LinearVApproximator(agg, agg.n_features, step_size=0.5)
        >>> float(v.update(3, 2.0))
        2.0
        >>> float(v(0)), float(v(9))
        (1.0, 0.0)
    """

    def __init__(
        self,
        features: Callable[[Any], np.ndarray],
        n_features: int,
        *,
        step_size: float = 0.01,
        init: float | np.ndarray = 0.0,
    ) -> None:
        self._setup(features, n_features, step_size, init)

    def __repr__(self) -> str:
        return f"LinearVApproximator(n_features={self.n_features}, step_size={self.step_size})"

    def features(self, state: Any) -> np.ndarray:
        """The feature vector ``x(state)`` (checked against the number of weights)."""
        return self._checked(self.features_fn(state), "features(state)")

    def __call__(self, state: Any) -> float:
        return float(self.weights @ self.features(state))

    def update(self, state: Any, target: float) -> float:
        """Semi-gradient step towards ``target``; return the error before the step."""
        x = self.features(state)
        error = float(target) - float(self.weights @ x)
        self.weights += self.step_size * error * x
        return error


class LinearQApproximator(_Linear):
    """A linear action-value function ``q(s, a) = weights . features(s, a)``.

    Args:
        features: ``features(state, action) -> vector`` of ``n_features`` numbers (e.g. a
            ``TileCoder`` with the action as an integer coordinate).
        n_features: the number of weights.
        n_actions: the number of (discrete) actions.
        step_size: the constant step size alpha in (0, 1] of :meth:`update`.
        init: initial weights, a number or a vector of ``n_features``.

    ``q(state)`` (also ``approximator(state)``) is the vector of the ``n_actions`` values;
    ``update(state, action, target)`` makes the semi-gradient step
    ``w += alpha (target - q(s, a)) x(s, a)`` and returns the error before it.

    Example:
        >>> import numpy as np
        >>> import rlkit as rk
        >>> def one_hot(state, action):
        ...     x = np.zeros(6); x[3 * action + state] = 1.0; return x
        >>> q = rk.LinearQApproximator(one_hot, 6, 2, step_size=0.5)
        >>> float(q.update(1, 1, 4.0))
        4.0
        >>> q(1).tolist()
        [0.0, 2.0]
    """

    _arity = 2

    def __init__(
        self,
        features: Callable[[Any, int], np.ndarray],
        n_features: int,
        n_actions: int,
        *,
        step_size: float = 0.01,
        init: float | np.ndarray = 0.0,
    ) -> None:
        self._setup(features, n_features, step_size, init)
        self.n_actions = positive_int(type(self).__name__, "n_actions", n_actions)

    def __repr__(self) -> str:
        return (
            f"LinearQApproximator(n_features={self.n_features}, n_actions={self.n_actions}, "
            f"step_size={self.step_size})"
        )

    def features(self, state: Any, action: int) -> np.ndarray:
        """The feature vector ``x(state, action)`` (checked against the number of weights)."""
        return self._checked(self.features_fn(state, action), "features(state, action)")

    def q(self, state: Any) -> np.ndarray:
        """The values of every action in ``state`` (a new array)."""
        w = self.weights
        return np.array([w @ self.features(state, a) for a in range(self.n_actions)])

    def __call__(self, state: Any) -> np.ndarray:
        return self.q(state)

    def update(self, state: Any, action: int, target: float) -> float:
        """Semi-gradient step towards ``target``; return the error before the step."""
        x = self.features(state, action)
        error = float(target) - float(self.weights @ x)
        self.weights += self.step_size * error * x
        return error


class StateAggregation:
    """Features of state aggregation (S&B section 9.3): states ``first .. first + n_states - 1``
    fall into ``n_groups`` groups of consecutive states; the feature vector is the one-hot
    vector of the state's group, so each group shares one value. States outside the range (the
    terminal ends of a random walk) have the zero vector, value 0.

    Example:
        >>> import rlkit as rk
        >>> agg = rk.StateAggregation(n_states=1000, n_groups=10, first=1)
        >>> agg(1).argmax(), agg(1000).argmax(), agg(0).sum()
        (np.int64(0), np.int64(9), np.float64(0.0))
    """

    def __init__(self, n_states: int, n_groups: int, *, first: int = 0) -> None:
        self.n_states = positive_int("StateAggregation", "n_states", n_states)
        self.n_groups = positive_int("StateAggregation", "n_groups", n_groups)
        if self.n_groups > self.n_states:
            raise ValueError(
                f"StateAggregation: n_groups must be at most n_states={self.n_states}, "
                f"got {n_groups!r}"
            )
        if isinstance(first, bool) or not isinstance(first, (int, np.integer)):
            raise ValueError(f"StateAggregation: first must be an integer, got {first!r}")
        self.first = int(first)
        self.n_features = self.n_groups

    def __repr__(self) -> str:
        return f"StateAggregation(n_states={self.n_states}, n_groups={self.n_groups})"

    def group(self, state: Any) -> int | None:
        """The group of ``state``, None outside the aggregated states."""
        i = int(state) - self.first
        if not 0 <= i < self.n_states:
            return None
        return i * self.n_groups // self.n_states

    def __call__(self, state: Any) -> np.ndarray:
        x = np.zeros(self.n_groups)
        g = self.group(state)
        if g is not None:
            x[g] = 1.0
        return x
