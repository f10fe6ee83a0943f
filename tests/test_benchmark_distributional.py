"""benchmarks/distributional.py's ``cleanrl`` part: its settings reach the agent as CleanRL's
``c51.py`` sets them, and the part runs and reports as a user runs it (a short budget)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import rlkit as rk

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "distributional.py"


def _script():
    spec = importlib.util.spec_from_file_location("distributional_benchmark", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(*args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=300)  # fmt: skip


def test_cleanrl_settings_reach_the_agent_as_cleanrl_c51_sets_them():
    # CleanRL's cleanrl/c51.py defaults: 101 atoms on [-100, 100], lr 2.5e-4, Adam eps
    # 0.01 / batch_size, buffer 10k, batch 128, target every 500 steps, learning from step 10k
    # every 10 steps (one gradient step), epsilon 1 -> 0.05 over half of 500k steps, MLP
    # 120-84 (ReLU), no gradient clipping, gamma 0.99, one environment
    experiment = rk.make_experiment(
        "C51_CartPole", seed=0, total_steps=500_000, env="Acrobot-v1", **_script().CLEANRL
    )
    learner = experiment.policy.policy.learner
    linear = [m for m in learner.model if isinstance(m, torch.nn.Linear)]
    assert [(m.in_features, m.out_features) for m in linear] == [(6, 120), (120, 84), (84, 303)]
    assert all(isinstance(m, torch.nn.ReLU) for m in list(learner.model)[1:-1:2])
    assert (learner.n_atoms, learner.v_min, learner.v_max) == (101, -100.0, 100.0)
    assert learner.gamma == 0.99 and learner.double is False
    group = learner.approximator.optimizer.param_groups[0]
    assert type(learner.approximator.optimizer) is torch.optim.Adam
    assert (group["lr"], group["eps"]) == (2.5e-4, 0.01 / 128)
    assert learner.approximator.max_grad_norm is None
    assert learner.sampler.batch_size == 128
    assert experiment.policy.trajectory.capacity == 10_000
    c = learner.controller
    assert (c.warmup_steps, c.update_every, c.n_updates) == (10_000, 10, 1)
    assert learner.target_sync.every == 500 and learner.target_sync.tau is None
    explorer = experiment.policy.policy.explorer
    schedule = (explorer.kind, explorer.epsilon_start, explorer.epsilon_end, explorer.warmup_steps,
                explorer.decay_steps)  # fmt: skip
    assert schedule == ("linear", 1.0, 0.05, 0, 250_000)  # counted from step 0, as CleanRL's
    assert explorer.random_steps == 10_000  # CleanRL: epsilon-greedy at epsilon 1 to 0.962 there


@pytest.mark.slow
def test_cleanrl_part_reports_each_seed_progress_and_the_mean(tmp_path):
    out = _run("cleanrl", "--seeds", "1", "--steps", "10100", "--progress", "5000",
               "--env", "Acrobot-v1", tmp_path=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "  Acrobot-v1 seed 0: step 5000, " in out.stdout
    assert "Acrobot-v1 seed 0: 10100 env steps, 10 gradient steps in " in out.stdout
    assert "mean return of the last 100 training episodes -" in out.stdout
    assert "Acrobot-v1: 1-seed mean of the last-100-episode means -" in out.stdout


@pytest.mark.parametrize("flag", ["--progress", "--steps", "--seeds"])
def test_benchmark_refuses_a_non_positive_count(tmp_path, flag):
    out = _run("cleanrl", flag, "0", tmp_path=tmp_path)
    assert out.returncode == 2
    assert f"{flag} must be a positive integer, got 0" in out.stderr
