"""The generators of an environment's action and observation spaces, derived from its seed.

gymnasium seeds a space's generator from the operating system's entropy the first time it is
used (``space.sample()``) unless ``space.seed(s)`` was called, so ``env.action_space.sample()``
and an environment that samples its own spaces (random frames, random goals) differ from run to
run. ``rk.GymEnv(id, seed=s)`` and each sub-env of ``rk.VectorGymEnv(id, n, seed=s)`` (with its
own seed, :func:`rlkit.envs.vector.sub_env_seeds`) seed their spaces at construction with
:func:`space_seeds`, so the same seed gives the same samples on every vector backend
(docs/how-to/vector-envs.md). The PettingZoo adapters (``rk.PettingZooEnv``,
``rk.PettingZooParallelEnv``, ``rk.PettingZooVectorEnv``) seed each agent's spaces the same
way, agent ``i``'s with ``space_seeds(seed, i)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["space_seeds", "seed_spaces", "seed_space_pair"]


def space_seeds(seed: int, agent: int | None = None) -> tuple[int, int]:
    """The seeds of the action space and of the observation space of an env seeded with ``seed``
    (of agent number ``agent``'s spaces, for a multi-agent env).

    The rule: ``numpy.random.SeedSequence(seed).generate_state(2)`` (two 32-bit integers), so
    neither space draws the stream of the env's own generator (``reset(seed=seed)``); agent
    ``i``'s: ``SeedSequence(seed, spawn_key=(i,))``'s.

    Example:
        >>> action, observation = space_seeds(0)
        >>> action != observation, space_seeds(0) == (action, observation)
        (True, True)
        >>> space_seeds(0, 0) != space_seeds(0, 1) != space_seeds(0)
        True
    """
    key = () if agent is None else (int(agent),)
    action, observation = np.random.SeedSequence(int(seed), spawn_key=key).generate_state(2)
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
    seed_space_pair(env.action_space, env.observation_space, seed)


def seed_space_pair(
    action_space: Any, observation_space: Any, seed: int | None, agent: int | None = None
) -> None:
    """Seed ``action_space`` and ``observation_space`` with :func:`space_seeds` of ``seed``
    (and ``agent``); a space already seeded (or sampled) keeps its generator, and ``seed=None``
    changes nothing.

    Example:
        >>> import gymnasium as gym
        >>> a, b = gym.spaces.Discrete(9), gym.spaces.Discrete(9)
        >>> seed_space_pair(a, gym.spaces.Discrete(2), 5, agent=1)
        >>> seed_space_pair(b, gym.spaces.Discrete(2), 5, agent=1)
        >>> [a.sample() for _ in range(8)] == [b.sample() for _ in range(8)]
        True
    """
    if seed is None:
        return
    spaces = (action_space, observation_space)
    for space, space_seed in zip(spaces, space_seeds(seed, agent), strict=True):
        if getattr(space, "_np_random", None) is None:
            space.seed(space_seed)
