"""benchmarks/minatar_rainbow.py: DQN keeps its recipe's 250k-step epsilon schedule whatever
the budget, and ``run`` then ``report`` work as a user runs them (a short budget)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("minatar")

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "minatar_rainbow.py"


def _script():
    spec = importlib.util.spec_from_file_location("minatar_benchmark", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)  # fmt: skip


def test_a_short_budget_keeps_the_recipes_epsilon_schedule():
    script = _script()
    dqn = script.experiment("DQN", 0, 150_000)
    assert dqn.stop_condition.n == 150_000
    explorer = dqn.policy.policy.explorer
    assert explorer.epsilon_at(150_000) == pytest.approx(1 - 0.99 * 150_000 / 250_000)
    assert explorer.epsilon_at(250_000) == pytest.approx(0.01)
    fitted = script.experiment("DQN", 0, 150_000, epsilon_steps=150_000).policy.policy.explorer
    assert fitted.epsilon_at(150_000) == pytest.approx(0.01)
    rainbow = script.experiment("Rainbow", 0, 150_000)
    assert rainbow.policy.policy.explorer.epsilon_at(2000) == 0.0
    assert rainbow.stop_condition.n == 150_000


def test_run_and_report(tmp_path):
    for algo in ("DQN", "Rainbow"):
        done = _run("run", "--algo", algo, "--steps", "400", "--every", "200",
                    "--eval-episodes", "1", "--out", str(tmp_path / f"{algo}_s0.txt"),
                    cwd=tmp_path)  # fmt: skip
        assert done.returncode == 0, done.stderr
        lines = (tmp_path / f"{algo}_s0.txt").read_text().splitlines()
        assert [line.split()[1] for line in lines[1:3]] == ["200", "400"]
        assert lines[-1].startswith("greedy ")
    results, plot = tmp_path / "results.txt", tmp_path / "plot.png"
    done = _run("report", "--dir", str(tmp_path), "--results", str(results), "--plot", str(plot),
                cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = results.read_text()
    assert "DQN      seed 0:     400 steps" in text and "Rainbow  seed 0:     400 steps" in text
    assert plot.stat().st_size > 0
