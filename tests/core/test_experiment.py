"""``Experiment`` and the registry of recipes (``@rk.experiment``, ``rk.make_experiment``).

Every test works on a private copy of the registry, so the recipes registered here never leak
into other tests (e.g. the CLI's ``rlkit list``), and nothing relies on bundled recipes.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import rlkit as rk
from rlkit.core import experiment as experiment_module


@pytest.fixture(autouse=True)
def private_registry(monkeypatch):
    experiment_module._load_bundled()  # registered into the real registry, not into this copy
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
    # the closest name first (other registered recipes, such as TRPO_CartPole, may follow it)
    assert "Did you mean TestRandom_CartPole" in message
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


# ---- parameters: declared by the recipe, checked by make_experiment ----


def test_parameters_are_the_keywords_after_seed_with_their_types():
    _register_random_cartpole()
    params = experiment_module.recipe_parameters("TestRandom_CartPole")
    assert list(params) == ["episodes"]
    assert (params["episodes"].type, params["episodes"].default) == (int, 2)
    exp = rk.make_experiment("TestRandom_CartPole", seed=1, episodes=3)
    assert exp.params == {"episodes": 3}
    assert rk.make_experiment("TestRandom_CartPole").params == {"episodes": 2}


def test_an_unknown_parameter_lists_the_accepted_ones():
    _register_random_cartpole()
    with pytest.raises(TypeError) as info:
        rk.make_experiment("TestRandom_CartPole", episode=3)
    assert str(info.value) == (
        "TestRandom_CartPole: unknown parameter 'episode'; it accepts seed, episodes"
    )


@pytest.mark.parametrize("value", ["3", 2.5, True, None])
def test_a_parameter_of_the_wrong_type_is_refused_before_anything_is_built(value):
    built = []

    @rk.experiment
    def Typed_CartPole(seed: int = 0, episodes: int = 2) -> rk.Experiment:
        """A recipe with an int parameter."""
        built.append(episodes)
        return rk.Experiment(rk.RandomPolicy(), rk.GymEnv("CartPole-v1"), rk.StopAfterNSteps(1))

    with pytest.raises(TypeError, match=rf"Typed_CartPole: episodes must be int, got {value!r}"):
        rk.make_experiment("Typed_CartPole", episodes=value)
    assert built == []


def test_a_negative_seed_is_refused_naming_the_recipe():
    _register_random_cartpole()
    with pytest.raises(ValueError, match="TestRandom_CartPole: seed must be a non-negative"):
        rk.make_experiment("TestRandom_CartPole", seed=-1)


@dataclasses.dataclass(frozen=True)
class Budget:
    steps: int
    hidden: tuple[int, ...] = (4, 4)
    rate: float | None = None

    def check(self, owner: str) -> None:
        if self.steps < 1:
            raise ValueError(f"{owner}: steps must be a positive integer, got {self.steps}")


def _register_dataclass_recipe():
    @rk.experiment
    def Budgeted_CartPole(seed: int = 0, p: Budget = Budget(steps=5)) -> rk.Experiment:
        """A recipe whose parameters are a dataclass."""
        return rk.Experiment(
            rk.RandomPolicy(seed=seed), rk.GymEnv("CartPole-v1"), rk.StopAfterNSteps(p.steps)
        )


def test_a_dataclass_default_declares_the_parameters():
    _register_dataclass_recipe()
    params = experiment_module.recipe_parameters("Budgeted_CartPole")
    assert [(p.name, p.type_name, p.default) for p in params.values()] == [
        ("steps", "int", 5),
        ("hidden", "tuple[int, ...]", (4, 4)),
        ("rate", "float | None", None),
    ]
    exp = rk.make_experiment("Budgeted_CartPole", steps=7, hidden=[8], rate=1)
    assert exp.stop_condition.n == 7
    assert exp.params == {"steps": 7, "hidden": (8,), "rate": 1.0}
    with pytest.raises(ValueError, match="Budgeted_CartPole: steps must be a positive integer"):
        rk.make_experiment("Budgeted_CartPole", steps=0)
    with pytest.raises(TypeError, match="Budgeted_CartPole: hidden must be tuple"):
        rk.make_experiment("Budgeted_CartPole", hidden=["8"])
    with pytest.raises(TypeError, match="it accepts seed, steps, hidden, rate"):
        rk.make_experiment("Budgeted_CartPole", p=Budget(3))


# ---- recipes found from a source checkout ----


def test_recipes_are_found_from_a_source_checkout(tmp_path):
    """A script run from a clone after a non-editable ``pip install .`` imports the clone's
    ``rlkit/``, which has no ``experiments`` inside: the recipes come from ``experiments/``
    beside it."""
    root = Path(__file__).resolve().parents[2]
    clone = tmp_path / "clone"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(root / "rlkit", clone / "rlkit", ignore=ignore)
    shutil.copytree(root / "experiments", clone / "experiments", ignore=ignore)
    script = (
        "import sys\n"
        # no editable-install finder: this venv's would map rlkit.experiments to the worktree
        "sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f)]\n"
        "import rlkit as rk\n"
        "exp = rk.make_experiment('SARSA_CliffWalking', seed=0, episodes=2)\n"
        "print(rk.__file__)\n"
        "print(sys.modules['rlkit.experiments'].__file__)\n"
        "print(len(rk.run(exp).rewards))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=clone, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    package, recipes, episodes = result.stdout.split()
    assert package == str(clone / "rlkit" / "__init__.py")
    assert recipes == str(clone / "experiments" / "__init__.py")
    assert episodes == "2"


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("PPO_CartPole", "total_steps"),
        ("TRPO_CartPole", "total_steps"),
        ("ES_CartPole", "generations"),
    ],
)
def test_a_non_positive_budget_names_the_recipe(name, key):
    # it blamed StopAfterNSteps, StopAfterNEpisodes or LinearSchedule
    with pytest.raises(ValueError, match=f"^{name}: {key} must be a positive integer, got 0"):
        rk.make_experiment(name, **{key: 0})
