"""Tests of experiments/policy_gradient.py: the recipes build, run, and (slow) learn."""

from __future__ import annotations

import pytest
import torch
from rlkit.experiments import policy_gradient
from rlkit.experiments.policy_gradient import A2C_CARTPOLE, PPO_CARTPOLE

import rlkit as rk

RECIPES = ["PPO_CartPole", "A2C_CartPole", "VPG_CartPole", "PPO_Acrobot", "PPO_Pendulum"]


def test_recipes_are_registered():
    assert set(RECIPES) <= set(rk.list_experiments())


@pytest.mark.parametrize("name", RECIPES)
def test_recipe_runs_a_few_updates(name):
    config = getattr(policy_gradient, name.upper())  # PPO_CartPole -> PPO_CARTPOLE
    experiment = rk.make_experiment(name, seed=1, total_steps=config.n_steps * config.n_envs)
    rk.run(experiment)
    assert experiment.policy.policy.updates == 1
    experiment.env.close()


def test_ppo_cartpole_has_the_zoo_hyperparameters():
    agent = rk.make_experiment("PPO_CartPole").policy
    config = agent.policy.config
    assert (config["n_steps"], config["batch_size"], config["n_epochs"]) == (32, 256, 20)
    assert (config["gamma"], config["gae_lambda"], config["ent_coef"]) == (0.98, 0.8, 0.0)
    assert config["lr"](0) == 1e-3 and config["lr"](PPO_CARTPOLE.total_steps) == 0.0
    assert config["clip_range"](PPO_CARTPOLE.total_steps // 2) == pytest.approx(0.1)
    assert agent.trajectory.n_envs == 8


def test_same_seed_same_run():
    def params(seed):
        experiment = rk.make_experiment("PPO_CartPole", seed=seed, total_steps=512)
        rk.run(experiment)
        return [p.detach().clone() for p in experiment.policy.policy.params]

    a, b, c = params(3), params(3), params(4)
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
    assert not all(torch.equal(x, y) for x, y in zip(a, c, strict=True))


def _greedy_mean(experiment, env_id="CartPole-v1"):
    return rk.evaluate(experiment.policy, rk.GymEnv(env_id), 20, seed=123).mean


@pytest.mark.slow
def test_ppo_cartpole_solves_within_its_budget():
    experiment = rk.make_experiment("PPO_CartPole", seed=0)
    rk.run(experiment)
    assert _greedy_mean(experiment) >= 475


@pytest.mark.slow
def test_a2c_cartpole_solves_within_its_budget():
    experiment = rk.make_experiment("A2C_CartPole", seed=0, total_steps=A2C_TEST_STEPS)
    rk.run(experiment)
    assert _greedy_mean(experiment) >= 475


@pytest.mark.slow
def test_vpg_cartpole_reaches_195():
    # shortened from the recipe's 200k steps: seed 0 reaches a greedy mean of 439 at 100k
    experiment = rk.make_experiment("VPG_CartPole", seed=0, total_steps=100_000)
    rk.run(experiment)
    assert _greedy_mean(experiment) >= 195


# The A2C test's budget: shortened from the recipe's 500k steps to 200k, at which seed 0 already
# scores a greedy 500 (A2C has no schedule, so the shortened run is the full run's beginning).
A2C_TEST_STEPS = 200_000
assert A2C_TEST_STEPS < A2C_CARTPOLE.total_steps


def test_normalize_runs_a_recipe_in_vec_normalize_with_the_learners_gamma():
    assert not isinstance(rk.make_experiment("PPO_CartPole").env, rk.VecNormalize)
    experiment = rk.make_experiment("PPO_CartPole", seed=0, normalize=True, total_steps=256)
    env = experiment.env
    assert isinstance(env, rk.VecNormalize) and env.gamma == 0.98 and env.clip_obs == 10.0
    assert experiment.policy.policy.observation_normalizer is env.observation_normalizer
    rk.run(experiment)
    assert env.obs_rms.count == 8 * 33 + 1e-4
    # the zoo's normalize: True in the recurrent CartPoleNoVel recipe
    recurrent = rk.make_experiment("RecurrentPPO_CartPoleNoVel")
    assert isinstance(recurrent.env, rk.VecNormalize) and recurrent.env.gamma == 0.98
    assert not isinstance(rk.make_experiment("RecurrentPPO_PendulumNoVel").env, rk.VecNormalize)


def test_a_normalize_that_is_not_a_bool_is_refused():
    with pytest.raises(TypeError, match=r"PPO_CartPole: normalize must be bool, got .yes."):
        rk.make_experiment("PPO_CartPole", normalize="yes")
    with pytest.raises(ValueError, match=r"normalize=True and seeds=\[...\] together"):
        rk.make_experiment("PPO_CartPole", normalize=True, seeds=[0, 1])
