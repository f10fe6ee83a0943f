"""Pendulum datasets for the continuous offline learners' tests (CQL, IQL, TD3+BC), imported by
name (``from pendulum_data import ...``; ``tests`` is on pytest's ``pythonpath``)."""

from __future__ import annotations

from collections.abc import Callable

import gymnasium as gym
import numpy as np
import torch

import rlkit as rk


def rollouts(act: Callable[[np.ndarray], np.ndarray], n_episodes: int, seed: int = 0) -> rk.Dataset:
    """``n_episodes`` of Pendulum-v1 (200 steps each, truncated) acted by ``act(obs)``, the
    env reset with seeds ``seed, seed + 1, ...``, as an ``rk.Dataset``."""
    env = gym.make("Pendulum-v1")
    rows: dict[str, list] = {k: [] for k in ("obs", "act", "rew", "term", "trunc", "next")}
    for episode in range(n_episodes):
        obs, _ = env.reset(seed=seed + episode)
        done = False
        while not done:
            action = np.asarray(act(obs), dtype=np.float32).reshape(1)
            next_obs, reward, terminated, truncated, _ = env.step(action)
            for key, value in zip(
                rows, (obs, action, reward, terminated, truncated, next_obs), strict=True
            ):
                rows[key].append(value)
            obs, done = next_obs, terminated or truncated
    return rk.Dataset.from_arrays(
        observations=np.array(rows["obs"], dtype=np.float32),
        actions=np.array(rows["act"], dtype=np.float32),
        rewards=np.array(rows["rew"], dtype=np.float32),
        terminations=np.array(rows["term"]),
        truncations=np.array(rows["trunc"]),
        next_observations=np.array(rows["next"], dtype=np.float32),
        observation_space=env.observation_space,
        action_space=env.action_space,
        policy_description="tests/pendulum_data.py",
        seed=seed,
    )


def random_dataset(n_episodes: int = 2, seed: int = 0) -> rk.Dataset:
    """Uniformly random actions."""
    rng = np.random.default_rng(seed)
    return rollouts(lambda obs: rng.uniform(-2.0, 2.0, size=1), n_episodes, seed)


def random_batch(n: int = 16, seed: int = 0) -> rk.Batch:
    """A batch as an off-policy actor-critic reads it (actions scaled to [-1, 1])."""
    g = torch.Generator().manual_seed(seed)
    return rk.Batch(
        state=torch.randn(n, 3, generator=g),
        action=torch.rand(n, 1, generator=g) * 2 - 1,
        reward=torch.randn(n, generator=g),
        terminal=(torch.rand(n, generator=g) < 0.2).float(),
        next_state=torch.randn(n, 3, generator=g),
    )


def pendulum() -> rk.GymEnv:
    return rk.GymEnv("Pendulum-v1", seed=0)
