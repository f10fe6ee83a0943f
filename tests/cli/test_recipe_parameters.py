"""Tuning a recipe from the command line: one name set for every recipe's hyperparameters
(``lr``, ``hidden``, ``total_steps``, ...), the real defaults in ``--help``, ``--steps`` for
every recipe, ``hidden=64`` as one layer, and clear messages for bad values (issue 21, items 11,
15 and 16)."""

from __future__ import annotations

import dataclasses
import inspect
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

import rlkit as rk
from rlkit.cli import main
from rlkit.core import experiment as registry
from rlkit.core.experiment import recipe_parameters
from rlkit.optimizers.base import OptimizerModule

# one recipe per algorithm, with a budget of a few updates (learning_starts lowered so that the
# off-policy learners update within it)
FAMILIES: dict[str, list[str]] = {
    "DQN_CartPole": ["--steps", "300", "--set", "learning_starts=100", "--set", "train_freq=100"],
    "PPO_CartPole": ["--steps", "256"],
    "RecurrentPPO_CartPoleNoVel": ["--steps", "256", "--set", "lstm_hidden_size=16"],
    "A2C_CartPole": ["--steps", "80"],
    "VPG_CartPole": ["--steps", "1024"],
    "TRPO_CartPole": ["--steps", "300", "--set", "n_steps=100", "--set", "batch_size=50"],
    "ES_CartPole": ["--set", "generations=2"],
    "SAC_Pendulum": ["--steps", "150", "--set", "learning_starts=100"],
    "TD3_Pendulum": ["--steps", "150", "--set", "learning_starts=100"],
    "DDPG_Pendulum": ["--steps", "150", "--set", "learning_starts=100"],
}
ALGORITHM = {
    "PPO_CartPole": "PPO", "A2C_CartPole": "A2C", "VPG_CartPole": "VPG",
    "TRPO_CartPole": "TRPO", "ES_CartPole": "ES", "SAC_Pendulum": "SAC",
    "TD3_Pendulum": "TD3", "DDPG_Pendulum": "DDPG", "MBPO_Pendulum": "MBPO",
    "PETS_Pendulum": "PETS", "RecurrentPPO_CartPoleNoVel": "RecurrentPPO",
}
# the built policies' common defaults an algorithm does not use (rlkit/learners/built.py)
UNUSED = {
    "TRPO": {"n_epochs"},
    # the CartPole recipes' observations are vectors: a CNN body (cnn=) is for image recipes
    "PPO": {"cnn"},
    "A2C": {"cnn"},
    "RecurrentPPO": {"cnn"},
    "ES": {"n_steps", "n_epochs", "batch_size", "target_kl"},
    "SAC": {"n_steps", "n_epochs", "target_kl"},
    # the model-based recipes give a known reward with known_reward (a function is no CLI value)
    "MBPO": {"n_steps", "n_epochs", "target_kl", "reward_fn", "termination_fn"},
    "PETS": {"reward_fn", "termination_fn"},
    "TD3": {"n_steps", "n_epochs", "target_kl", "action_noise"},  # noise_type and noise_std
    # DDPG is TD3 without delay, smoothing or twin critics: those are fixed, not settings
    "DDPG": {"n_steps", "n_epochs", "target_kl", "action_noise", "policy_delay",
             "target_policy_noise", "target_noise_clip"},
}


def learning_rates(obj: Any) -> set[float]:
    """The learning rates of every torch optimizer and rlkit optimizer module in ``obj``."""
    found: set[float] = set()
    seen: set[int] = set()

    def walk(x: Any, depth: int) -> None:
        if id(x) in seen or depth > 8 or isinstance(x, (str, bytes, int, float, torch.Tensor)):
            return
        seen.add(id(x))
        if isinstance(x, torch.optim.Optimizer):
            found.update(float(group["lr"]) for group in x.param_groups)
            return
        if isinstance(x, OptimizerModule) and isinstance(getattr(x, "learning_rate", None),
                                                         float):
            found.add(x.learning_rate)
        if isinstance(x, dict):
            children = list(x.values())
        elif isinstance(x, (list, tuple)):
            children = list(x)
        else:
            children = list(getattr(x, "__dict__", {}).values())
        for child in children:
            walk(child, depth + 1)

    walk(obj, 0)
    return found


def rlkit(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rlkit.cli", *args],
        capture_output=True, text=True, timeout=300, cwd=cwd,
    )


def test_ppo_set_lr_changes_the_learning_rate_of_the_run(tmp_path):
    """The issue's command: 'unknown parameter lr; it accepts seed, total_steps, device'."""
    run_dir = tmp_path / "run"
    done = rlkit("run", "PPO_CartPole", "--set", "lr=1e-3", "--steps", "256",
                 "--logdir", str(run_dir))
    assert done.returncode == 0, done.stderr
    assert "run with lr 0.001 (recipe: lin_1e-3); total_steps 256 (recipe: 100,000)" in done.stdout
    config = json.loads((run_dir / "config.json").read_text())
    assert config["params"]["lr"] == 1e-3 and config["overrides"]["lr"] == 1e-3
    # the policy 'rlkit resume' builds from config.json trains at that rate, not the schedule
    policy = rk.make_experiment("PPO_CartPole", **config["overrides"]).policy.policy
    assert policy.hp("lr") == 1e-3 and learning_rates(policy) == {1e-3}
    recipe_default = rk.make_experiment("PPO_CartPole").policy.policy  # lin_1e-3: 1e-3 at 0
    assert learning_rates(recipe_default) == {1e-3}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_every_recipe_family_takes_lr_from_the_command_line(name, tmp_path, capsys):
    run_dir = tmp_path / "run"
    assert main(["run", name, "--set", "lr=0.0123", *FAMILIES[name], "--logdir", str(run_dir)]) == 0
    assert "lr 0.0123 (recipe: " in capsys.readouterr().out
    config = json.loads((run_dir / "config.json").read_text())
    assert config["params"]["lr"] == 0.0123
    policy = rk.make_experiment(name, **config["overrides"]).policy.policy
    assert learning_rates(policy) == {0.0123}


@pytest.mark.parametrize("name", sorted(ALGORITHM))
def test_a_recipe_takes_every_hyperparameter_of_its_algorithm_with_its_defaults(name):
    """Every hyperparameter of the algorithm is a recipe parameter of the same name, and the
    recipe's dataclass defaults are the algorithm's own (the recipe names what it changes)."""
    algorithm = getattr(rk, ALGORITHM[name])
    params = recipe_parameters(name)
    wanted = set(algorithm.defaults) - UNUSED.get(ALGORITHM[name], set())
    assert wanted <= set(params), sorted(wanted - set(params))
    fields = {f.name: f.default for f in dataclasses.fields(_params_class(name))}
    for key in wanted:
        assert fields[key] == algorithm.defaults[key], key


def _params_class(name: str) -> type:
    """The recipe's hyperparameter dataclass (the default of its one parameter after seed)."""
    recipe = registry._recipe(name)
    return type(list(inspect.signature(recipe).parameters.values())[1].default)


@pytest.mark.parametrize("name", sorted(rk.list_experiments()))
def test_help_shows_the_real_defaults_and_steps_works_or_says_what_to_use(name, capsys):
    with pytest.raises(SystemExit):
        main(["run", name, "--help"])
    out = capsys.readouterr().out
    params = recipe_parameters(name)
    for p in params.values():
        assert f"= {p.default!r}" in out
    budgets = {"total_steps", "episodes", "generations"} & set(params)
    assert len(budgets) == 1  # every recipe has exactly one budget, shown with its value
    budget = budgets.pop()
    assert params[budget].default is not None and params[budget].default > 0
    if budget == "total_steps":
        assert "--steps sets total_steps" in out
    else:
        assert f"it counts {budget}, not steps: --set {budget}=N" in out
        assert main(["run", name, "--steps", "10"]) == 2
        err = capsys.readouterr().err
        assert f"has no parameter total_steps (it counts {budget}: --set {budget}=N)" in err


def test_ppo_help_shows_its_zoo_values_not_none():
    out = rlkit("run", "PPO_CartPole", "--help").stdout
    assert "total_steps: int" in out and "= 100000" in out and "= None\n" not in out.split(
        "total_steps")[1].split("\n")[0]
    assert "lr: float | str" in out and "'lin_1e-3'" in out and "clip_range" in out


@pytest.mark.parametrize("name", ["DQN_CartPole", "PPO_CartPole", "TRPO_CartPole",
                                  "ES_CartPole", "SAC_Pendulum", "TD3_Pendulum"])
def test_hidden_64_is_one_layer_of_64_everywhere(name):
    exp = rk.make_experiment(name, hidden=64, **({} if name == "ES_CartPole" else
                                                 {"total_steps": 1000}))
    assert exp.params["hidden"] == (64,)
    policy = exp.policy.policy
    model = policy.learner.model if hasattr(policy, "learner") else policy.model
    hidden = {m.out_features for m in model.modules() if isinstance(m, torch.nn.Linear)}
    assert 64 in hidden and not {256, 400, 300, 16} & hidden


def test_hidden_64_on_the_command_line(tmp_path):
    """The issue's command: "'int' object is not iterable"."""
    done = rlkit("run", "DQN_CartPole", "--set", "hidden=64", "--steps", "50", "--quiet",
                 "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr


def test_hidden_0_is_a_clear_error():
    """The issue's command: 'got ()'."""
    done = rlkit("run", "DQN_CartPole", "--set", "hidden=0")
    assert done.returncode == 2
    assert done.stderr == (
        "rlkit: DQN_CartPole: hidden lists the widths of the hidden layers, each a positive "
        "integer (hidden=64 for one layer of 64, hidden=64,64 for two), got 0\n"
    )


@pytest.mark.parametrize("name", ["SAC_Pendulum", "PPO_CartPole", "TRPO_CartPole"])
def test_hidden_0_is_a_clear_error_for_every_family(name, capsys):
    assert main(["run", name, "--set", "hidden=0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"rlkit: {name}: hidden lists the widths of the hidden layers, each a positive integer "
        f"(hidden=64 for one layer of 64, hidden=64,64 for two"
    )
    assert err.rstrip().endswith("got 0")


def test_an_unknown_device_is_named_as_such():
    """The issue's command: the recipe 'does not use torch' (it does)."""
    done = rlkit("run", "TRPO_CartPole", "--device", "tpu")
    assert done.returncode == 2
    assert done.stderr == (
        "rlkit: TRPO_CartPole: unknown device 'tpu'; expected 'cpu', 'cuda', 'cuda:N' or "
        "'auto'\n"
    )


@pytest.mark.parametrize("name", ["PPO_CartPole", "DQN_CartPole", "ES_CartPole", "SAC_Pendulum"])
def test_an_unknown_device_is_named_as_such_for_every_family(name, capsys):
    assert main(["run", name, "--device", "tpu"]) == 2
    assert capsys.readouterr().err == (
        f"rlkit: {name}: unknown device 'tpu'; expected 'cpu', 'cuda', 'cuda:N' or 'auto'\n"
    )


def test_device_on_a_tabular_recipe_says_it_does_not_use_torch():
    done = rlkit("run", "SARSA_CliffWalking", "--device", "cuda")
    assert "SARSA_CliffWalking has no parameter device (it does not use torch)" in done.stderr


def test_a_bad_schedule_string_names_the_parameter_and_the_notation(capsys):
    assert main(["run", "PPO_CartPole", "--set", "clip_range=linear"]) == 2
    assert "PPO_CartPole: clip_range must be a number or 'lin_' followed by a number" in (
        capsys.readouterr().err
    )


def test_the_former_name_learning_rate_works_with_a_note_and_is_recorded_as_lr(
    tmp_path, capsys
):
    run_dir = tmp_path / "run"
    args = ["run", "DQN_CartPole", "--set", "learning_rate=1e-3", "--steps", "50"]
    assert main([*args, "--logdir", str(run_dir)]) == 0
    assert "rlkit: note: DQN_CartPole: the parameter 'learning_rate' is now called 'lr'" in (
        capsys.readouterr().err
    )
    config = json.loads((run_dir / "config.json").read_text())
    assert config["overrides"]["lr"] == 1e-3 and config["params"]["lr"] == 1e-3


def test_resume_reads_the_config_json_of_a_run_made_before_the_rename(tmp_path, capsys):
    run_dir = tmp_path / "run"
    args = ["run", "DQN_CartPole", "--steps", "600", "--set", "lr=1e-3", "--quiet"]
    assert main([*args, "--checkpoint-every", "200", "--logdir", str(run_dir)]) == 0
    # as an older rlkit wrote it: learning_rate, and the run stopped before its end
    config = json.loads((run_dir / "config.json").read_text())
    config["overrides"] = {"total_steps": 600, "learning_rate": 1e-3}
    config["params"]["learning_rate"] = config["params"].pop("lr")
    (run_dir / "config.json").write_text(json.dumps(config))
    checkpoints = sorted((run_dir / "checkpoints").iterdir())
    finished = [p for p in checkpoints if "600" in p.name]
    assert finished, checkpoints
    for path in finished:
        path.unlink() if path.is_file() else shutil.rmtree(path)
    capsys.readouterr()
    assert main(["resume", str(run_dir)]) == 0
    out, err = capsys.readouterr()
    assert "'learning_rate' is now called 'lr'" in err
    assert "resuming at step 400" in out and "done: 600 of 600 steps" in out


@pytest.mark.parametrize(
    "text, value",
    [("true", True), ("False", False), ("TRUE", True), ("True", True), ("none", None),
     ("1e-3", 1e-3), ("64,64", (64, 64)), ("cuda", "cuda"), ("truthy", "truthy")],
)
def test_set_values_are_literals_or_the_yaml_words_true_false_none(text, value):
    from rlkit.cli import _value

    assert _value(text) == value and type(_value(text)) is type(value)


def test_a_boolean_parameter_takes_true_and_false_as_the_docs_write_them(tmp_path, capsys):
    """The documentation's `--set normalize=true` (and `compile=true`, `her=false`) was
    refused: "normalize must be bool, got 'true'"."""
    run_dir = tmp_path / "run"
    args = ["run", "PPO_CartPole", "--set", "normalize=true", "--steps", "256", "--quiet"]
    assert main([*args, "--logdir", str(run_dir)]) == 0, capsys.readouterr().err
    config = json.loads((run_dir / "config.json").read_text())
    assert config["params"]["normalize"] is True and config["overrides"]["normalize"] is True
