"""Action noise: the explorers of deterministic actors (DDPG, TD3).

A noise object is called as ``noise(n_envs, n_actions) -> np.ndarray`` of shape
``(n_envs, n_actions)`` and added to the actor's actions *in the scaled space* ``[-1, 1]`` before
they are clipped and rescaled to the ``Box`` bounds (Stable-Baselines3's ``_sample_action``).
``reset(indices)`` restarts the process of the sub-environments whose episode ended (all when
``indices`` is None). Each noise owns its generator: ``seed(seed)`` (the policy seeds it from its
own seed) and saves it, with its process state, in ``state_dict``.

Example:
    >>> noise = GaussianActionNoise(0.1, seed=0)
    >>> noise(2, 3).shape
    (2, 3)
    >>> ou = OrnsteinUhlenbeckActionNoise(0.2, seed=0)
    >>> a = ou(1, 1); ou.reset(); float(ou.state[0, 0])
    0.0
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from ..core.checks import finite_float
from ..core.state import generator_state, require_keys, set_generator_state

__all__ = ["ActionNoise", "GaussianActionNoise", "OrnsteinUhlenbeckActionNoise"]


def _scale(owner: str, name: str, value: Any) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64)
    if array.ndim > 1 or not np.all(np.isfinite(array)) or np.any(array < 0):
        raise ValueError(
            f"{owner}: {name} must be a non-negative finite number (or a 1-d array of them, one "
            f"per action dimension), got {value!r}"
        )
    return array


class ActionNoise(ABC):
    """Base class: ``noise(n_envs, n_actions)``, ``reset(indices=None)``, ``seed(seed)``.

    Example:
        >>> import numpy as np
        >>> import rlkit as rk
        >>> class ConstantNoise(rk.ActionNoise):
        ...     \"\"\"The same offset at every step.\"\"\"
        ...     def __call__(self, n_envs, n_actions):
        ...         return np.full((n_envs, n_actions), 0.1)
        >>> ConstantNoise(seed=0)(2, 1).tolist()
        [[0.1], [0.1]]
    """

    def __init__(self, seed: int | np.random.SeedSequence | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def seed(self, seed: int | np.random.SeedSequence) -> None:
        """Restart the generator from ``seed``."""
        self.rng = np.random.default_rng(seed)

    @abstractmethod
    def __call__(self, n_envs: int, n_actions: int) -> np.ndarray:
        """Noise for one step of every sub-environment, shape ``(n_envs, n_actions)``."""

    def reset(self, indices: Any = None) -> None:
        """Restart the process of the sub-environments ``indices`` (all when None); a noise
        without memory has nothing to restart."""
        return None

    def state_dict(self) -> dict[str, Any]:
        return {"rng": generator_state(self.rng)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        require_keys(type(self).__name__, state, "rng")
        set_generator_state(self.rng, state["rng"])


class GaussianActionNoise(ActionNoise):
    """Independent ``N(mean, sigma**2)`` noise at every step (SB3's ``NormalActionNoise``).

    Example:
        >>> GaussianActionNoise(0.0, seed=1)(1, 2).tolist()
        [[0.0, 0.0]]
    """

    def __init__(self, sigma: Any, *, mean: Any = 0.0, seed: Any = None) -> None:
        super().__init__(seed)
        self.sigma = _scale("GaussianActionNoise", "sigma", sigma)
        self.mean = np.asarray(
            finite_float("GaussianActionNoise", "mean", mean) if np.ndim(mean) == 0 else mean,
            dtype=np.float64,
        )

    def __repr__(self) -> str:
        return f"GaussianActionNoise(sigma={self.sigma.tolist()})"

    def __call__(self, n_envs: int, n_actions: int) -> np.ndarray:
        return self.mean + self.sigma * self.rng.standard_normal((n_envs, n_actions))


class OrnsteinUhlenbeckActionNoise(ActionNoise):
    """Temporally correlated noise (SB3's ``OrnsteinUhlenbeckActionNoise``):
    ``x <- x + theta * (mean - x) * dt + sigma * sqrt(dt) * N(0, 1)``, one process per
    sub-environment, restarted at ``initial_noise`` (zeros by default) by :meth:`reset`.

    Example:
        >>> ou = OrnsteinUhlenbeckActionNoise(0.3, theta=0.15, dt=0.01, seed=0)
        >>> x = ou(2, 1); ou.reset([0]); ou.state[0].tolist(), bool(ou.state[1, 0] == x[1, 0])
        ([0.0], True)
    """

    def __init__(
        self,
        sigma: Any,
        *,
        theta: float = 0.15,
        dt: float = 1e-2,
        mean: float = 0.0,
        initial_noise: float = 0.0,
        seed: Any = None,
    ) -> None:
        super().__init__(seed)
        owner = "OrnsteinUhlenbeckActionNoise"
        self.sigma = _scale(owner, "sigma", sigma)
        self.theta = finite_float(owner, "theta", theta, low=0)
        self.dt = finite_float(owner, "dt", dt, low=0, low_open=True)
        self.mean = finite_float(owner, "mean", mean)
        self.initial_noise = finite_float(owner, "initial_noise", initial_noise)
        self.state: np.ndarray | None = None

    def __repr__(self) -> str:
        return (
            f"OrnsteinUhlenbeckActionNoise(sigma={self.sigma.tolist()}, theta={self.theta}, "
            f"dt={self.dt})"
        )

    def __call__(self, n_envs: int, n_actions: int) -> np.ndarray:
        if self.state is None or self.state.shape != (n_envs, n_actions):
            self.state = np.full((n_envs, n_actions), self.initial_noise)
        x = self.state
        noise = self.rng.standard_normal((n_envs, n_actions))
        self.state = (
            x + self.theta * (self.mean - x) * self.dt + self.sigma * np.sqrt(self.dt) * noise
        )
        return self.state.copy()

    def reset(self, indices: Any = None) -> None:
        if self.state is None:
            return
        if indices is None:
            self.state[...] = self.initial_noise
        else:
            self.state[np.asarray(indices)] = self.initial_noise

    def state_dict(self) -> dict[str, Any]:
        state = None if self.state is None else self.state.copy()
        return {**super().state_dict(), "state": state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        saved = state.get("state")
        self.state = None if saved is None else np.array(saved, dtype=np.float64)
