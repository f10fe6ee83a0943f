"""Trained policies shared by the tests of rlkit.deploy (tests/deploy_helpers.py says how)."""

from __future__ import annotations

import pytest
from deploy_helpers import TABULAR, brief, deep_recipes, learning_steps, observations

import rlkit as rk


@pytest.fixture(scope="session")
def trained(tmp_path_factory):
    """name -> (trained policy, artifact path, observations, live predict(obs), the most
    learning steps seen during the run)."""
    folder = tmp_path_factory.mktemp("artifacts")
    out = {}
    for name in [*deep_recipes(), TABULAR]:
        experiment = rk.make_experiment(name, seed=0, **brief(name))
        learned = []  # the most learning steps seen (a recipe may restore its best evaluation)
        watch = rk.DoEveryNSteps(lambda t, agent, env, seen=learned: seen.append(
            learning_steps(agent)), n=1)  # fmt: skip
        hook = watch if experiment.hook is None else experiment.hook + watch
        rk.run(experiment.policy, experiment.env, experiment.stop_condition, hook)
        learned.append(learning_steps(experiment.policy))  # ES learns at PostEpisode
        policy = experiment.policy.policy
        path = folder / f"{name}.rlkit"
        rk.save(policy, path)
        obs = observations(rk.load(path).state_space)
        out[name] = (policy, path, obs, policy.predict(obs), max(learned))
    return out
