"""The generators of an environment's action and observation spaces, derived from its seed.

gymnasium seeds a space's generator from the operating system's entropy the first time it is
used (``space.sample()``) unless ``space.seed(s)`` was called, so ``env.action_space.sample()``
and an environment that samples its own spaces (random frames, random goals) differ from run to
run. ``rk.GymEnv(id, seed=s)`` and each sub-env of ``rk.VectorGymEnv(id, n, seed=s)`` (with its
own seed, :func:`rlkit.envs.vector.sub_env_seeds`) seed their spaces at construction with
:func:`space_seeds`, so the same seed gives the same samples on every vector backend
(docs/how-to/vector-envs.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["space_seeds", "seed_spaces"]


def space_seeds(seed: int) -> tuple[int, int]:
    """The seeds of the action space and of the observation space of an env seeded with ``seed``.

    The rule: ``numpy.random.SeedSequence(seed).generate_state(2)`` (two 32-bit integers), so
    neither space draws the stream of the env's own generator (``reset(seed=seed)``).

    Example:
        >>> action, observation = space_seeds(0)
        >>> action != observation, space_seeds(0) == (action, observation)
        (True, True)
    """
    action, observation = np.random.SeedSequence(int(seed)).generate_state(2)
    return int(action), int(observation)


def seed_spaces(env: Any, seed: int | None) -> None:
    """Seed ``env.action_space`` and ``env.observation_space`` with :func:`space_seeds` of
    ``seed``; a space whose generator is already set (``space.seed(...)`` called, or sampled
    before) keeps it, and ``seed=None`` changes nothing.

    Example:
        >>> import gymnasium as gym
        >>> a, b = gym.make("CartPole-v1"), gym.make("CartPole-v1")
        >>> seed_spaces(a, 3); seed_spaces(b, 3)
        >>> [a.action_space.sample() for _ in range(8)] == [
        ...     b.action_space.sample() for _ in range(8)]
        True
    """
    if seed is None:
        return
    spaces = (env.action_space, env.observation_space)
    for space, space_seed in zip(spaces, space_seeds(seed), strict=True):
        if getattr(space, "_np_random", None) is None:
            space.seed(space_seed)
