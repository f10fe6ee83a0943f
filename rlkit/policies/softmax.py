"""``LinearSoftmaxPolicy``: a parameterised policy, softmax in linear action preferences
(Sutton & Barto section 13.1), for the policy-gradient learners."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.checks import check_callable, positive_int
from ..core.interfaces import AbstractPolicy
from ..core.state import generator_state, set_generator_state

__all__ = ["LinearSoftmaxPolicy"]


class LinearSoftmaxPolicy(AbstractPolicy):
    """``pi(a | s) = exp(theta . x(s, a)) / sum_b exp(theta . x(s, b))``.

    Args:
        features: ``features(state, action) -> vector`` of ``n_features`` numbers.
        n_features: the number of parameters ``theta``.
        n_actions: the number of (discrete) actions.
        init: initial ``theta``, a number or a vector of ``n_features``.
        seed: seed of the policy's generator (its action draws).

    ``prob(state)`` is the vector of action probabilities, ``act(env)`` draws from it and
    ``grad_log(state, action)`` is ``grad_theta ln pi(action | state) = x(s, a) - sum_b
    pi(b | s) x(s, b)``. Learners change ``theta`` in place (``rk.ReinforceLearner``,
    ``rk.ActorCriticLearner``).

    Example:
        >>> import numpy as np
        >>> import rlkit as rk
        >>> policy = rk.LinearSoftmaxPolicy(lambda s, a: np.eye(2)[a], 2, 2, init=[0.0, np.log(3)])
        >>> policy.prob(0).round(2).tolist()
        [0.25, 0.75]
        >>> policy.grad_log(0, 1).round(2).tolist()
        [-0.25, 0.25]
    """

    def __init__(
        self,
        features: Callable[[Any, int], np.ndarray],
        n_features: int,
        n_actions: int,
        *,
        init: float | np.ndarray = 0.0,
        seed: int | np.random.SeedSequence | np.random.Generator | None = None,
    ) -> None:
        owner = "LinearSoftmaxPolicy"
        self.features_fn = check_callable(owner, "features", features, "features(state, action)")
        self.n_features = positive_int(owner, "n_features", n_features)
        self.n_actions = positive_int(owner, "n_actions", n_actions)
        theta = np.broadcast_to(np.asarray(init, dtype=np.float64), (self.n_features,)).copy() \
            if np.ndim(init) == 0 else np.array(init, dtype=np.float64)
        if theta.shape != (self.n_features,) or not np.isfinite(theta).all():
            raise ValueError(
                f"{owner}: init must be a finite number or a vector of n_features="
                f"{self.n_features} numbers, got {init!r}"
            )
        self.theta = theta
        self.rng = np.random.default_rng(seed)

    def __repr__(self) -> str:
        return f"LinearSoftmaxPolicy(n_features={self.n_features}, n_actions={self.n_actions})"

    def features(self, state: Any) -> np.ndarray:
        """The feature vectors of every action in ``state``, shape ``(n_actions, n_features)``."""
        xs = np.array([self.features_fn(state, a) for a in range(self.n_actions)], dtype=float)
        if xs.shape != (self.n_actions, self.n_features):
            raise ValueError(
                f"LinearSoftmaxPolicy: features(state, action) returned vectors of shape "
                f"{xs.shape[1:]}, expected ({self.n_features},): one feature per parameter"
            )
        return xs

    def prob(self, state: Any) -> np.ndarray:
        """The probabilities of the actions in ``state``."""
        h = self.features(state) @ self.theta
        e = np.exp(h - h.max())
        return e / e.sum()

    def grad_log(self, state: Any, action: int) -> np.ndarray:
        """``grad_theta ln pi(action | state)``."""
        xs = self.features(state)
        h = xs @ self.theta
        e = np.exp(h - h.max())
        return xs[action] - (e / e.sum()) @ xs

    def act(self, env: Any) -> int:
        p = self.prob(env.state)
        return int(min(np.searchsorted(np.cumsum(p), self.rng.random(), side="right"),
                       self.n_actions - 1))

    def state_dict(self) -> dict[str, Any]:
        """``theta`` and the generator state."""
        return {"theta": self.theta.copy(), "rng": generator_state(self.rng)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.theta[...] = state["theta"]
        set_generator_state(self.rng, state["rng"])
