"""benchmarks/offline.py as a user runs it (rlkit's side only: d3rlpy lives in its own
virtualenv), and the d3rlpy worker's episode split, which needs only numpy."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

import rlkit as rk

ROOT = Path(__file__).resolve().parents[1]


def _worker():
    spec = importlib.util.spec_from_file_location(
        "offline_d3rlpy_worker", ROOT / "benchmarks" / "offline_d3rlpy_worker.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_worker_splits_episodes_at_terminations_truncations_and_the_end():
    data = {
        "rewards": np.zeros(7, np.float32),
        "terminations": np.array([0, 1, 0, 0, 0, 0, 0], bool),
        "truncations": np.array([0, 0, 0, 1, 0, 0, 0], bool),
    }
    assert _worker().episodes(data) == [(0, 2), (2, 4), (4, 7)]


def test_offline_benchmark_runs_rlkit_side_on_a_dataset_file(tmp_path):
    data = tmp_path / "pendulum.npz"
    rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("Pendulum-v1", seed=0), rk.StopAfterNSteps(400),
           rk.DatasetRecorder(data, seed=0))  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "offline.py"), "--no-d3rlpy", "--steps", "3",
         "--seeds", "0", "--algos", "bc", "td3bc", "cql_ln", "--eval-episodes", "1",
         "--data", str(data)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "400 transitions, 2 episodes" in out.stdout
    assert "bc     seed 0: rlkit  return" in out.stdout
    assert "td3bc  seed 0: rlkit  return" in out.stdout
    assert "cql_ln seed 0: rlkit  return" in out.stdout


def test_offline_benchmark_refuses_a_bad_step_count(tmp_path):
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "offline.py"), "--steps", "0"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert out.returncode == 2
    assert "--steps must be a positive integer, got 0" in out.stderr


def _refused(tmp_path, *args: str) -> str:
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "offline.py"), *args],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert out.returncode == 2
    return out.stderr


def test_offline_benchmark_refuses_a_negative_evaluation_interval(tmp_path):
    stderr = _refused(tmp_path, "--eval-every", "-5")
    assert "--eval-every must be 0 (off) or a positive integer, got -5" in stderr


def test_offline_benchmark_refuses_to_run_neither_side(tmp_path):
    stderr = _refused(tmp_path, "--d3rlpy-only", "--no-d3rlpy")
    assert "--d3rlpy-only and --no-d3rlpy leave nothing to run" in stderr


def test_offline_benchmark_runs_the_discrete_algorithms_on_cartpole(tmp_path):
    data = tmp_path / "cartpole.npz"
    rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(300),
           rk.DatasetRecorder(data, seed=0))  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "offline.py"), "--no-d3rlpy", "--steps", "3",
         "--seeds", "0", "--algos", "discrete_cql", "discrete_bc", "--eval-episodes", "1",
         "--discrete-data", str(data)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert f"dataset {data}: 300 transitions" in out.stdout
    assert "discrete_cql seed 0: rlkit  return" in out.stdout
    assert "discrete_bc seed 0: rlkit  return" in out.stdout


def test_offline_learning_study_prints_each_seed_and_the_q_estimates(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "offline_learning.py"), "--seeds", "2",
         "--steps", "4", "--eval-every", "2", "--episodes", "1", "--q-estimates",
         "--data-dir", str(tmp_path), "--recipes", "SAC_PendulumRandom",
         "--set", "dataset_size=400"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "(SAC_PendulumRandom seed 1 after 2 updates:" in out.stdout
    assert "s of CPU so far)" in out.stdout  # each evaluation's CPU time, as it happens
    assert re.search(r"SAC_PendulumRandom seed 0: .*\(\d+ s, \d+ s CPU\)", out.stdout)
    assert "Q(s0, pi(s0))" in out.stdout and "vs discounted return" in out.stdout
    assert "after 4 updates: mean over seeds" in out.stdout
    assert "of 2 seeds above the dataset's mean" in out.stdout
