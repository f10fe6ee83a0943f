"""Learning from fixed CartPole datasets made in the test by a scripted controller: BC matches
the expert's return, DiscreteCQL passes Tianshou's offline CI bar (>= 170 after 5,000 updates)
from a mixed dataset (the controller with random actions half the time)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.approximators.neural import q_network


def controller(obs: np.ndarray) -> int:
    """A hand-written CartPole controller: push toward where the pole falls."""
    x, v, theta, omega = obs
    return int(theta + 0.5 * omega + 0.01 * x + 0.1 * v > 0)


def collect(n_episodes: int, epsilon: float, seed: int) -> tuple[rk.Dataset, float]:
    env = gym.make("CartPole-v1")
    rng = np.random.default_rng(seed)
    rows: dict[str, list] = {k: [] for k in ("o", "a", "r", "te", "tr", "no")}
    returns = []
    for episode in range(n_episodes):
        obs, _ = env.reset(seed=seed + episode)
        done, total = False, 0.0
        while not done:
            action = int(rng.integers(2)) if rng.random() < epsilon else controller(obs)
            next_obs, reward, terminated, truncated, _ = env.step(action)
            values = (obs, action, reward, terminated, truncated, next_obs)
            for key, value in zip(rows, values, strict=True):
                rows[key].append(value)
            obs, done, total = next_obs, terminated or truncated, total + reward
        returns.append(total)
    dataset = rk.Dataset.from_arrays(
        observations=np.array(rows["o"], np.float32), actions=np.array(rows["a"], np.int64),
        rewards=np.array(rows["r"], np.float32), terminations=np.array(rows["te"]),
        truncations=np.array(rows["tr"]), next_observations=np.array(rows["no"], np.float32),
        observation_space=env.observation_space, action_space=env.action_space,
        policy_description=f"controller, epsilon={epsilon}", seed=seed,
    )  # fmt: skip
    return dataset, float(np.mean(returns))


def test_bc_matches_the_expert_within_ten_percent():
    dataset, expert = collect(10, 0.0, seed=0)
    env = rk.OfflineEnv(dataset, batch_size=100, seed=0)
    policy = rk.BC(env, seed=0)
    rk.run(policy, env, rk.StopAfterNSteps(1000))
    result = rk.evaluate(rk.greedy(policy), rk.GymEnv("CartPole-v1", seed=100), 10, seed=100)
    assert result.mean >= 0.9 * expert, (result.mean, expert)


@pytest.mark.slow
def test_discrete_cql_reaches_170_after_5000_updates_from_mixed_data():
    dataset, behaviour = collect(40, 0.6, seed=1)
    approx = rk.NeuralNetworkApproximator(
        q_network(dataset.observation_space, dataset.action_space, (64, 64), seed=0),
        lambda p: torch.optim.Adam(p, lr=1e-3),
    )
    learner = rk.DiscreteCQL(approx, target=rk.TargetNetwork(approx, sync_every=500))
    policy = rk.QBasedPolicy(learner, rk.GreedyExplorer(seed=0))
    env = rk.OfflineEnv(dataset, batch_size=64, seed=0)
    rk.run(policy, env, rk.StopAfterNSteps(5000))
    assert learner.gradient_steps == 5000
    result = rk.evaluate(policy, rk.GymEnv("CartPole-v1", seed=100), 10, seed=100)
    assert behaviour < 170 <= result.mean, (behaviour, result.mean)
