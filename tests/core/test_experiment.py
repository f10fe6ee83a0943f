"""``Experiment`` and the registry of recipes (``@rk.experiment``, ``rk.make_experiment``).

Every test works on a private copy of the registry, so the recipes registered here never leak
into other tests (e.g. the CLI's ``rlkit list``), and nothing relies on bundled recipes.
"""

from __future__ import annotations

import pytest

import rlkit as rk
from rlkit.core import experiment as experiment_module


@pytest.fixture(autouse=True)
def private_registry(monkeypatch):
    registry = dict(experiment_module._REGISTRY)
    monkeypatch.setattr(experiment_module, "_REGISTRY", registry)
    return registry


def _register_random_cartpole():
    @rk.experiment
    def TestRandom_CartPole(seed: int = 0, episodes: int = 2) -> rk.Experiment:
        """Uniformly random actions on CartPole-v1 (a test recipe).

        More text that `rlkit list` does not show.
        """
        return rk.Experiment(
            rk.RandomPolicy(seed=seed),
            rk.GymEnv("CartPole-v1", seed=seed),
            rk.StopAfterNEpisodes(episodes),
            rk.TotalRewardPerEpisode(),
        )

    return TestRandom_CartPole


def test_registering_a_recipe(private_registry):
    recipe = _register_random_cartpole()
    assert recipe.__name__ == "TestRandom_CartPole"  # the decorator returns the function
    assert private_registry["TestRandom_CartPole"] is recipe
    listed = rk.list_experiments()
    description = "Uniformly random actions on CartPole-v1 (a test recipe)."
    assert listed["TestRandom_CartPole"] == description
    assert list(listed) == sorted(listed)


def test_make_experiment_builds_and_names_it():
    _register_random_cartpole()
    exp = rk.make_experiment("TestRandom_CartPole", seed=3, episodes=4)
    assert isinstance(exp, rk.Experiment)
    assert (exp.name, exp.seed) == ("TestRandom_CartPole", 3)
    assert exp.description.startswith("Uniformly random actions")
    hook = rk.run(exp)
    assert hook is exp.hook and len(hook.rewards) == 4


def test_same_seed_same_result_different_seed_differs():
    _register_random_cartpole()

    def returns(seed: int) -> list[float]:
        return rk.make_experiment("TestRandom_CartPole", seed=seed, episodes=5).run().rewards

    assert returns(1) == returns(1)
    assert returns(1) != returns(2)


def test_an_explicit_description_is_kept():
    @rk.experiment
    def Described_CartPole(seed: int = 0) -> rk.Experiment:
        """Docstring description."""
        return rk.Experiment(
            rk.RandomPolicy(seed=seed),
            rk.GymEnv("CartPole-v1"),
            rk.StopAfterNSteps(1),
            description="explicit",
        )

    assert rk.make_experiment("Described_CartPole").description == "explicit"


@pytest.mark.parametrize(
    "name",
    ["random_cartpole", "RandomCartPole", "Random_cartpole", "Random_Cart_Pole", "_Random_X"],
)
def test_bad_recipe_names_are_rejected(name, private_registry):
    def recipe(seed: int = 0):
        """A description."""

    recipe.__name__ = name
    with pytest.raises(ValueError, match=f"recipe name '{name}' must read Method_Environment"):
        rk.experiment(recipe)
    assert name not in private_registry


def test_a_recipe_needs_a_docstring(private_registry):
    with pytest.raises(ValueError, match="'NoDoc_CartPole' needs a docstring"):

        @rk.experiment
        def NoDoc_CartPole(seed: int = 0):
            return None

    assert "NoDoc_CartPole" not in private_registry


def test_unknown_experiment_lists_the_known_names():
    _register_random_cartpole()

    @rk.experiment
    def Other_CliffWalking(seed: int = 0) -> rk.Experiment:
        """Another test recipe."""

    with pytest.raises(rk.UnknownExperimentError) as info:
        rk.make_experiment("TestRandom_CartPol")
    message = str(info.value)
    assert message.startswith("unknown experiment 'TestRandom_CartPol'.")
    assert "Did you mean TestRandom_CartPole?" in message
    assert "Known experiments:" in message
    assert "TestRandom_CartPole" in message.split("Known experiments:")[1]
    assert "Other_CliffWalking" in message.split("Known experiments:")[1]
    assert isinstance(info.value, KeyError)  # a lookup error, printed without KeyError's quotes
    assert not message.startswith('"')


def test_unknown_experiment_without_close_match_has_no_hint():
    with pytest.raises(rk.UnknownExperimentError) as info:
        rk.make_experiment("Zzz_Qqq")
    assert "Did you mean" not in str(info.value)


def test_a_recipe_must_return_an_experiment():
    @rk.experiment
    def Broken_CartPole(seed: int = 0):
        """Returns the wrong thing."""
        return "not an experiment"

    with pytest.raises(TypeError, match="'Broken_CartPole' returned str, not an rk.Experiment"):
        rk.make_experiment("Broken_CartPole")


def test_experiment_defaults():
    exp = rk.Experiment(rk.RandomPolicy(), rk.GymEnv("CartPole-v1"), rk.StopAfterNSteps(1))
    assert exp.hook is None  # the run treats None as no hook
    assert (exp.description, exp.name, exp.seed) == ("", "", None)
    assert rk.run(exp) is exp.hook
