"""Continuous-control recipes (experiments/continuous.py): registration, settings, vector envs,
the MuJoCo requirement, and SAC learning Pendulum within a small budget."""

from __future__ import annotations

import importlib.util

import pytest
import torch
from rlkit.experiments import continuous

import rlkit as rk

RECIPES = [
    "SAC_Pendulum",
    "TD3_Pendulum",
    "DDPG_Pendulum",
    "TD3_MountainCarContinuous",
    "SAC_HalfCheetah",
    "TD3_HalfCheetah",
]


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_recipes_are_registered():
    assert set(RECIPES) <= set(rk.list_experiments())


def test_td3_pendulum_has_the_zoo_settings():
    exp = rk.make_experiment("TD3_Pendulum", seed=0)
    policy = exp.policy.policy
    c = policy.config
    assert (c["gamma"], c["buffer_size"], c["learning_starts"], c["lr"]) == (
        0.98,
        200_000,
        10_000,
        1e-3,
    )
    assert tuple(c["hidden"]) == (400, 300) and exp.stop_condition.n == 20_000
    assert isinstance(policy.noise, rk.GaussianActionNoise) and policy.noise.sigma == 0.1
    assert isinstance(exp.policy.trajectory, rk.CircularArraySARTTrajectory)


@pytest.mark.parametrize("name", ["SAC_Pendulum", "TD3_Pendulum", "DDPG_Pendulum"])
def test_recipes_run_on_vector_envs(name):
    exp = rk.make_experiment(
        name, seed=1, total_steps=40, n_envs=2, learning_starts=20, batch_size=8, hidden=(8,)
    )
    rk.run(exp)
    policy = exp.policy.policy
    assert policy.transitions == 40 and policy.gradient_steps == 10


def test_mujoco_recipes_name_the_package_when_it_is_missing(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "mujoco" else real(name, *a)
    )
    for name in ("SAC_HalfCheetah", "TD3_HalfCheetah"):
        with pytest.raises(ImportError, match="pip install mujoco"):
            rk.make_experiment(name)


@pytest.mark.skipif(importlib.util.find_spec("mujoco") is None, reason="needs mujoco")
def test_half_cheetah_recipe_runs():
    exp = rk.make_experiment(
        "SAC_HalfCheetah", seed=0, total_steps=30, learning_starts=20, batch_size=8, hidden=(8,)
    )
    rk.run(exp)
    assert exp.policy.policy.gradient_steps == 10 and exp.env.action_space.shape == (6,)


def test_bad_n_envs():
    # the owner was the description (a sentence), it is the algorithm and the env
    with pytest.raises(ValueError, match="^SAC on Pendulum-v1: n_envs must be a positive"):
        continuous.continuous_experiment(
            rk.SAC,
            "Pendulum-v1",
            {"total_steps": 1},
            seed=0,
            total_steps=None,
            n_envs=0,
            device="cpu",
            description="SAC on Pendulum-v1 with rl-baselines3-zoo's hyperparameters.",
        )


@pytest.mark.slow
def test_sac_learns_pendulum_within_5000_steps():
    """SAC_Pendulum's settings with 64-64 networks: 5000 steps (about 50 s of CPU alone).
    3500 steps were too few to be robust: after Adam became fused (other rounding) seed 0 ended
    at -457 there (seeds 1 and 2 at -218); at 5000 steps seeds 0, 1, 2 reach -201, -197, -195."""
    exp = rk.make_experiment("SAC_Pendulum", seed=0, total_steps=5000, hidden=(64, 64))
    rk.run(exp)
    result = rk.evaluate(exp.policy, rk.GymEnv("Pendulum-v1"), 10, seed=123)
    assert result.mean >= -400, result.returns


@pytest.mark.slow
@pytest.mark.parametrize("name", ["TD3_Pendulum", "DDPG_Pendulum"])
def test_td3_and_ddpg_learn_pendulum_with_an_earlier_start(name):
    """The recipes' settings with 64-64 networks and learning_starts 1000: 6000 steps (about
    20 s of CPU alone each; measured -315.8 for TD3 and -146.2 for DDPG)."""
    exp = rk.make_experiment(name, seed=0, total_steps=6000, learning_starts=1000, hidden=(64, 64))
    rk.run(exp)
    result = rk.evaluate(exp.policy, rk.GymEnv("Pendulum-v1", seed=10_000), 10, seed=0)
    assert result.mean >= -400, result.returns
