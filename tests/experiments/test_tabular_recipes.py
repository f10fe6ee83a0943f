"""Tests of experiments/tabular.py (rlkit.experiments.tabular): the tabular recipes."""

from __future__ import annotations

import pytest

import rlkit as rk

RECIPES = [
    "TabularQLearning_CliffWalking",
    "SARSA_CliffWalking",
    "ExpectedSARSA_CliffWalking",
    "TD0_RandomWalk1D",
    "MonteCarlo_Blackjack",
    "TabularQLearning_FrozenLake",
]


@pytest.mark.parametrize("name", RECIPES)
def test_every_recipe_runs_a_few_episodes_and_records_its_parameters(name):
    exp = rk.make_experiment(name, seed=2, episodes=3)
    assert len(rk.run(exp).rewards) == 3
    assert exp.params["episodes"] == 3 and exp.threads is None  # no torch
    assert set(exp.params) == set(rk.core.experiment.recipe_parameters(name))


@pytest.mark.parametrize("name", RECIPES)
def test_a_zero_budget_is_refused_naming_the_recipe(name):
    with pytest.raises(ValueError) as info:
        rk.make_experiment(name, episodes=0)
    assert str(info.value) == f"{name}: episodes must be a positive integer, got 0"


def test_overrides_reach_the_objects_they_name():
    exp = rk.make_experiment("SARSA_CliffWalking", seed=0, step_size=0.25, epsilon=0.2)
    policy = exp.policy.policy
    assert policy.learner.approximator.step_size == 0.25
    assert policy.explorer.epsilon == 0.2
    frozen = rk.make_experiment("TabularQLearning_FrozenLake", gamma=0.9, decay_steps=10)
    assert frozen.policy.policy.learner.gamma == 0.9
    assert frozen.policy.policy.explorer.decay_steps == 10
