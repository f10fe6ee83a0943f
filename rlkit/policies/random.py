"""``RandomPolicy``: uniformly random legal actions."""

from __future__ import annotations

import copy
from typing import Any

import gymnasium as gym
import numpy as np

from .base import AbstractPolicy

__all__ = ["RandomPolicy"]


class RandomPolicy(AbstractPolicy):
    """Choose uniformly among the legal actions of the env's action space.

    Args:
        seed: seed of the policy's own generator (an int, a ``SeedSequence`` or a
            ``numpy.random.Generator``); nothing reads global random state.

    Example:
        >>> import rlkit as rk
        >>> policy = rk.RandomPolicy(seed=0)
        >>> env = rk.GymEnv("CliffWalking-v1", seed=0); env.reset()
        >>> policy(env) in range(4)
        True
    """

    def __init__(self, seed: int | np.random.SeedSequence | np.random.Generator | None = None):
        self.rng = np.random.default_rng(seed)
        self._spaces: dict[int, gym.Space] = {}

    def __repr__(self) -> str:
        return "RandomPolicy()"

    def act(self, env: Any) -> Any:
        space = env.action_space
        mask = env.legal_action_mask
        if type(space) is gym.spaces.Discrete:
            if mask is None:
                return space.start + self.rng.integers(space.n)
            return space.start + self.rng.choice(np.flatnonzero(mask))
        return (
            self._own_copy(space).sample(mask=mask)
            if mask is not None
            else (self._own_copy(space).sample())
        )

    def _own_copy(self, space: gym.Space) -> gym.Space:
        """A copy of ``space`` seeded from this policy's generator (the env's stays untouched)."""
        own = self._spaces.get(id(space))
        if own is None:
            own = copy.deepcopy(space)
            own.seed(int(self.rng.integers(2**63 - 1)))
            self._spaces[id(space)] = own
        return own
