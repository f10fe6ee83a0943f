"""``Experiment`` and the registry of recipes (``@rk.experiment``, ``rk.make_experiment``).

Every test works on a private copy of the registry, so the recipes registered here never leak
into other tests (e.g. the CLI's ``rlkit list``), and nothing relies on bundled recipes.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
import warnings
from importlib import metadata
from pathlib import Path

import pytest

import rlkit as rk
from rlkit.core import experiment as experiment_module


@pytest.fixture(autouse=True)
def private_registry(monkeypatch):
    experiment_module._load_entry_points()  # registered into the real registry, not this copy
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


@pytest.mark.parametrize("name", ["Random_CartPole", "HER_Random_CartPole", "A2C_X"])
def test_recipe_names_read_method_environment_with_an_optional_modifier(name, private_registry):
    def recipe(seed: int = 0):
        """A description."""

    recipe.__name__ = name
    rk.experiment(recipe)
    assert name in private_registry


@pytest.mark.parametrize(
    "name",
    ["random_cartpole", "RandomCartPole", "Random_cartpole", "Random_Cart_Pole", "_Random_X",
     "Her_Random_CartPole", "HER_Random_Cart_Pole"],
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


# ---- recipes of installed packages: the rlkit.experiments entry points ----

GROUP = "rlkit.experiments"
THIRD_PARTY = "rlkit_test_third_party_recipes"  # a module of "another installed package"
BROKEN = "rlkit_test_broken_recipes"

THIRD_PARTY_CODE = '''
import rlkit as rk


@rk.experiment
def ThirdParty_CartPole(seed: int = 0, episodes: int = 2) -> rk.Experiment:
    """Random actions on CartPole-v1, shipped by another package."""
    return rk.Experiment(
        rk.RandomPolicy(seed=seed),
        rk.GymEnv("CartPole-v1", seed=seed),
        rk.StopAfterNEpisodes(episodes),
        rk.TotalRewardPerEpisode(),
    )
'''


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """``installed(**entry_points)``: the installed packages now declare exactly these
    ``name=module`` entry points in the group, and the registry loads them again. Returns the
    names of the entry points loaded, in order."""
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / f"{THIRD_PARTY}.py").write_text(THIRD_PARTY_CODE)
    (tmp_path / f"{BROKEN}.py").write_text("raise RuntimeError('oops')\n")
    loads: list[str] = []

    class Recorded(metadata.EntryPoint):
        def load(self):
            loads.append(self.name)
            return super().load()

    def install(**entry_points: str) -> list[str]:
        found = metadata.EntryPoints(
            Recorded(name, module, GROUP) for name, module in entry_points.items()
        )

        def entry_points(**selection):
            assert selection == {"group": GROUP}
            return found

        monkeypatch.setattr(metadata, "entry_points", entry_points)
        monkeypatch.setattr(experiment_module, "_entry_points_loaded", False)
        return loads

    yield install
    for module in (THIRD_PARTY, BROKEN):
        sys.modules.pop(module, None)


def test_a_package_ships_recipes_through_the_entry_point_group(installed):
    loads = installed(third_party=THIRD_PARTY)
    assert "ThirdParty_CartPole" not in experiment_module._REGISTRY  # not loaded yet
    listed = rk.list_experiments()
    description = "Random actions on CartPole-v1, shipped by another package."
    assert listed["ThirdParty_CartPole"] == description
    assert len(rk.run(rk.make_experiment("ThirdParty_CartPole", seed=1)).rewards) == 2
    assert loads == ["third_party"]  # loaded once, when the registry was first listed


def test_a_recipe_is_looked_up_through_the_entry_points_too(installed):
    installed(third_party=THIRD_PARTY)
    assert list(experiment_module.recipe_parameters("ThirdParty_CartPole")) == ["episodes"]


def test_a_broken_entry_point_warns_naming_it_and_the_others_are_listed(installed):
    installed(broken=BROKEN, missing="rlkit_test_no_such_module", ok=THIRD_PARTY)
    with pytest.warns(RuntimeWarning) as caught:
        listed = rk.list_experiments()
    assert "ThirdParty_CartPole" in listed
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 2, messages
    assert f"entry point 'broken' ('{BROKEN}'" in messages[0]
    assert "group 'rlkit.experiments'" in messages[0]
    assert "RuntimeError: oops" in messages[0]
    assert "entry point 'missing' ('rlkit_test_no_such_module'" in messages[1]
    assert "ModuleNotFoundError" in messages[1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rk.list_experiments() == listed  # warned once, not at every listing


def test_a_broken_entry_point_does_not_crash_rlkit_list(installed, capsys):
    from rlkit.cli import main

    installed(broken=BROKEN, ok=THIRD_PARTY)
    with pytest.warns(RuntimeWarning, match="entry point 'broken'"):
        assert main(["list"]) in (0, None)
    assert "ThirdParty_CartPole" in capsys.readouterr().out


def test_no_entry_point_at_all_says_rlkit_is_not_installed(installed):
    installed()
    with pytest.warns(RuntimeWarning, match=r"rlkit is not installed.*pip install -e \."):
        rk.list_experiments()


def test_the_bundled_recipe_modules_are_declared_entry_points():
    """Every module of experiments/ that registers recipes has its entry point in
    pyproject.toml (else ``rlkit list`` would not show its recipes)."""
    tomllib = pytest.importorskip("tomllib")
    root = Path(__file__).resolve().parents[2]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    declared = project["entry-points"][GROUP]
    registering = {
        f"rlkit.experiments.{path.stem}"
        for path in (root / "experiments").glob("*.py")
        if "\n@rk.experiment\n" in path.read_text()
    }
    assert registering, "no recipe module found in experiments/"
    assert declared == {module.rsplit(".", 1)[1]: module for module in registering}


def test_the_installed_metadata_declares_the_bundled_recipes():
    """The installed package's entry points (``pip install -e .`` writes them) are the ones in
    pyproject.toml, and rlkit's bundled recipes are listed through them."""
    found = {ep.name: ep.value for ep in metadata.entry_points(group=GROUP)}
    for family in ("tabular", "dqn", "policy_gradient", "optimizers", "continuous"):
        assert found.get(family) == f"rlkit.experiments.{family}", (
            f"entry point {family!r} is missing from the installed metadata: pip install -e ."
        )
    listed = rk.list_experiments()
    assert {"SARSA_CliffWalking", "DQN_CartPole", "PPO_CartPole", "TRPO_CartPole"} <= set(listed)


def test_core_never_imports_the_recipes_by_name():
    """The registry loads entry points: no module of core imports a module by a computed name
    (how it used to import rlkit.experiments)."""
    core = Path(experiment_module.__file__).resolve().parent
    for path in sorted(core.glob("*.py")):
        text = path.read_text()
        assert "import_module" not in text and "rlkit.experiments." not in text, path.name


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
