"""Learning on a "medium" Pendulum dataset (rlkit/learners/offline/: CQL, IQL, TD3+BC): the
bundled SAC_Pendulum recipe trained briefly (2,500 steps: its greedy policy returns about
-520, the random policy about -1,250, a trained one about -150), then 20 episodes of its
stochastic policy recorded (4,000 transitions, mean return about -630). Tianshou's offline CI
is the floor: CQL and TD3+BC >= -1,200 on Pendulum after 2,500 updates (IQL too); TD3+BC also
beats the dataset's mean return on at least 4 of seeds 0-4 (measured: all 5, -505, -539, -403,
-271, -270 against -631). CQL (64-unit layers; d3rlpy's defaults otherwise) measured -950 and
-1161 on seeds 0 and 1, IQL (d3rlpy's defaults, beta 3) -984 on seed 0: after 2,500 updates
neither beats this dataset yet. The greedy policy is evaluated on 10 episodes. About 3 minutes
on one free core."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from pendulum_data import rollouts

import rlkit as rk

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def medium() -> rk.Dataset:
    experiment = rk.make_experiment("SAC_Pendulum", seed=0, total_steps=2500)
    rk.run(experiment)
    sac = experiment.policy.policy
    generator = torch.Generator().manual_seed(0)

    def act(obs: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            scaled = sac.sample_scaled(torch.as_tensor(obs[None], dtype=torch.float32), generator)
        return 2.0 * scaled.numpy()[0]  # Pendulum's torque bounds are [-2, 2]

    return rollouts(act, 20, seed=1000)


def _train(dataset: rk.Dataset, name: str, steps: int, seed: int = 0, **config) -> float:
    env = rk.OfflineEnv(dataset, batch_size=256, seed=seed)
    policy = getattr(rk, name)(env, seed=seed, **config)
    rk.run(policy, env, rk.StopAfterNSteps(steps))
    return rk.evaluate(policy, rk.GymEnv("Pendulum-v1"), 10, seed=100).mean


def test_the_dataset_is_medium(medium):
    returns = medium.episode_returns()
    assert len(medium) == 4000 and len(returns) == 20
    assert -1000 < returns.mean() < -300  # between the random policy and a trained one


def test_td3bc_passes_tianshous_floor_and_beats_the_dataset_on_4_of_5_seeds(medium):
    results = [_train(medium, "TD3BC", 2500, seed=seed) for seed in range(5)]
    assert min(results) >= -1200, results
    better = sum(r > medium.episode_returns().mean() for r in results)
    assert better >= 4, (results, medium.episode_returns().mean())


def test_cql_passes_tianshous_floor(medium):
    # two 64-unit layers instead of 256 (the test's time; Tianshou's CI uses 64 too)
    assert _train(medium, "CQL", 2500, hidden=(64, 64)) >= -1200


def test_iql_passes_tianshous_floor(medium):
    assert _train(medium, "IQL", 2500) >= -1200
