"""torch is optional: rlkit, its tabular recipes and the CLI work without it, and whatever needs
it says what to install. "Without torch" is simulated with ``sys.modules["torch"] = None`` in a
fresh interpreter (an import of torch then fails as if it were not installed)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rlkit.core.optional import TORCH_HINT, require_torch

WITHOUT_TORCH = "import sys\nsys.modules['torch'] = None\n"
CPU_BUILD = "pip install torch --index-url https://download.pytorch.org/whl/cpu"


def python_without_torch(script: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_TORCH + script],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_hint_names_the_package_and_a_cpu_build_for_any_machine():
    assert "pip install torch " in TORCH_HINT and CPU_BUILD in TORCH_HINT
    assert require_torch("x").__name__ == "torch"


def test_rlkit_and_the_tabular_recipes_run_without_torch():
    result = python_without_torch(
        "import rlkit as rk\n"
        "from rlkit.cli import main\n"
        "assert main(['list']) == 0\n"  # the DQN recipes are listed too
        "exp = rk.make_experiment('TabularQLearning_CliffWalking', seed=0, episodes=5)\n"
        "print('episodes', len(rk.run(exp).rewards))\n"
        "print('torch loaded', sys.modules['torch'] is not None)\n"
    )
    assert result.returncode == 0, result.stderr
    assert "DQN_CartPole" in result.stdout
    assert "episodes 5" in result.stdout and "torch loaded False" in result.stdout


@pytest.mark.parametrize(
    "statement, what",
    [
        ("rk.NeuralNetworkApproximator", "rlkit.NeuralNetworkApproximator"),
        ("rk.DQNLearner", "rlkit.DQNLearner"),
        ("rk.make_experiment('DQN_CartPole', seed=0)", "the DQN-family recipes"),
    ],
)
def test_what_needs_torch_says_what_to_install(statement, what):
    result = python_without_torch(
        f"import rlkit as rk\ntry:\n    {statement}\nexcept ModuleNotFoundError as error:\n"
        f"    print(type(error).__name__, error.name, error)\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"ModuleNotFoundError torch {what}: this needs PyTorch")
    assert CPU_BUILD in result.stdout


def test_the_cli_says_what_to_install_for_a_deep_recipe():
    result = python_without_torch(
        "from rlkit.cli import main\nraise SystemExit(main(['run', 'DQN_CartPole', '--quiet']))"
    )
    assert result.returncode == 1
    assert result.stderr.startswith("rlkit: the DQN-family recipes: this needs PyTorch")
    assert CPU_BUILD in result.stderr and "Traceback" not in result.stderr
