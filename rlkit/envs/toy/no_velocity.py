"""Partially observed classic-control tasks: CartPole and Pendulum with their velocities removed.

``rlkit/CartPoleNoVel-v1`` observes the cart's position and the pole's angle (CartPole's indices
0 and 2; the two velocities are dropped), ``rlkit/PendulumNoVel-v1`` the cosine and sine of the
angle (Pendulum's indices 0 and 1; the angular velocity is dropped), as rl-baselines3-zoo and
sb3-contrib define these tasks for recurrent policies: a policy needs memory to infer the
velocities. Episode limits are the full tasks' (500 and 200 steps). The observation space is the
kept entries of the full task's space (sb3-contrib's ``CartPoleNoVelEnv`` bounds the cart's
position and the angle at twice the termination thresholds, which are the same numbers).

Example:
    >>> import gymnasium as gym
    >>> env = gym.make("rlkit/CartPoleNoVel-v1")
    >>> obs, _ = env.reset(seed=0)
    >>> obs.shape, env.observation_space.shape, env.spec.max_episode_steps
    ((2,), (2,), 500)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.envs.classic_control import CartPoleEnv, PendulumEnv

__all__ = ["NoVelocityObservation", "cartpole_no_velocity", "pendulum_no_velocity"]


class NoVelocityObservation(gym.ObservationWrapper):
    """Keep the observation entries ``keep`` of a ``Box`` observation (1-D), drop the others.

    Example:
        >>> env = NoVelocityObservation(CartPoleEnv(), keep=(0, 2))
        >>> env.observation_space.shape
        (2,)
    """

    def __init__(self, env: gym.Env, keep: Sequence[int]) -> None:
        super().__init__(env)
        space = env.observation_space
        if not isinstance(space, gym.spaces.Box) or len(space.shape) != 1:
            raise TypeError(
                f"NoVelocityObservation: the observation space must be a 1-D Box, got {space}"
            )
        keep = tuple(int(i) for i in keep)
        if not keep or any(not 0 <= i < space.shape[0] for i in keep):
            raise ValueError(
                f"NoVelocityObservation: keep must be indices in [0, {space.shape[0]}), got {keep}"
            )
        self.keep = keep
        self._index = np.array(keep)
        self.observation_space = gym.spaces.Box(
            space.low[self._index], space.high[self._index], dtype=space.dtype
        )

    def observation(self, observation: Any) -> np.ndarray:
        return np.asarray(observation)[self._index]


def cartpole_no_velocity(**kwargs: Any) -> gym.Env:
    """CartPole observing the cart's position and the pole's angle (indices 0 and 2).

    Example:
        >>> cartpole_no_velocity().observation_space.shape
        (2,)
    """
    return NoVelocityObservation(CartPoleEnv(**kwargs), keep=(0, 2))


def pendulum_no_velocity(**kwargs: Any) -> gym.Env:
    """Pendulum observing the cosine and sine of the angle (indices 0 and 1).

    Example:
        >>> pendulum_no_velocity().observation_space.shape
        (2,)
    """
    return NoVelocityObservation(PendulumEnv(**kwargs), keep=(0, 1))
