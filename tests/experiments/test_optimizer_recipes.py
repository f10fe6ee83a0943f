"""Recipes of experiments/optimizers.py: TRPO and ES, their settings and learning tests."""

from __future__ import annotations

import pytest
from rlkit.experiments.optimizers import ES_CARTPOLE, TRPO_CARTPOLE

import rlkit as rk
from rlkit.optimizers import Evolutionary, NaturalGradient, OptimizedStep

RECIPES = ["TRPO_CartPole", "TRPO_Pendulum", "ES_CartPole"]


def test_recipes_are_registered_with_descriptions():
    listed = rk.list_experiments()
    for name in RECIPES:
        assert name in listed and listed[name]


def test_trpo_cartpole_uses_the_rl_baselines3_zoo_hyperparameters():
    policy = rk.make_experiment("TRPO_CartPole", seed=0).policy.policy
    for key, value in TRPO_CARTPOLE.algorithm_config().items():
        assert policy.config[key] == value, key
    assert (policy.config["n_steps"], policy.config["cg_damping"]) == (1024, 1e-3)
    tree = policy.optimizer.modules["policy"]
    assert isinstance(tree, OptimizedStep) and isinstance(tree.inner, NaturalGradient)
    assert tree.inner.cg_damping == 1e-3


@pytest.mark.parametrize("name", ["TRPO_CartPole", "TRPO_Pendulum"])
def test_trpo_recipes_run_a_short_training(name):
    exp = rk.make_experiment(name, seed=1, total_steps=2100)
    rk.run(exp)
    assert exp.policy.policy.updates == 2100 // exp.policy.policy.config["n_steps"]


def test_es_recipe_runs_two_generations():
    exp = rk.make_experiment("ES_CartPole", seed=1, generations=2)
    hook = rk.run(exp)
    assert len(hook.rewards) == 2 and exp.policy.policy.updates == 2
    assert isinstance(exp.policy.policy.optimizer, Evolutionary)
    assert exp.policy.policy.optimizer.num_samples == ES_CARTPOLE.num_samples


# ---- learning tests: the recipes' own budgets ----


@pytest.mark.slow
def test_trpo_solves_cartpole_within_its_budget():
    exp = rk.make_experiment("TRPO_CartPole", seed=0)
    rk.run(exp)
    result = rk.evaluate(exp.policy.policy, rk.GymEnv("CartPole-v1"), 20, seed=123)
    assert result.mean >= 475, result


@pytest.mark.slow
def test_es_solves_cartpole_within_its_budget():
    exp = rk.make_experiment("ES_CartPole", seed=0)
    rk.run(exp)
    result = rk.evaluate(exp.policy.policy, rk.GymEnv("CartPole-v1"), 20, seed=123)
    assert result.mean >= 475, result


def test_trpo_normalize_runs_the_recipe_in_vec_normalize_with_the_learners_gamma():
    assert TRPO_CARTPOLE.normalize is False  # the default: the recipe as measured
    experiment = rk.make_experiment("TRPO_CartPole", seed=0, normalize=True, total_steps=256,
                                    n_steps=128, batch_size=64)  # fmt: skip
    env = experiment.env
    assert isinstance(env, rk.VecNormalize) and env.n_envs == 1 and env.gamma == 0.99
    rk.run(experiment)
    assert experiment.policy.policy.observation_normalizer is env.observation_normalizer
    assert env.obs_rms.count > 256
    with pytest.raises(TypeError, match=r"TRPO_CartPole: normalize must be bool, got .yes."):
        rk.make_experiment("TRPO_CartPole", normalize="yes")


def test_es_refuses_normalize_naming_why():
    assert ES_CARTPOLE.normalize is False
    with pytest.raises(ValueError, match=r"ES_CartPole: normalize=True is not supported by ES: "
                                         r"each perturbed policy is scored on a fitness env"):
        rk.make_experiment("ES_CartPole", normalize=True)
