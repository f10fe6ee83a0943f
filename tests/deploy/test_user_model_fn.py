"""A user's own algorithm (tests/user_reinforce.py: its own model_fn) saves and loads through
the model_fn's import path; where that module cannot be imported, loading says so."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from user_reinforce import MyReinforce

import rlkit as rk
from rlkit.deploy.errors import ArtifactError

ROOT = Path(__file__).resolve().parents[2]


def test_a_user_model_fn_is_recorded_by_import_path_and_rebuilt(tmp_path):
    env = rk.GymEnv("CartPole-v1", seed=0)
    policy = MyReinforce(env, seed=0)
    rk.run(rk.Agent(policy, rk.RolloutTrajectory(16)), env, rk.StopAfterNSteps(64))
    assert policy.updates > 0
    path = tmp_path / "mine.rlkit"
    rk.save(policy, path)
    obs = np.random.default_rng(0).normal(size=(1000, 4)).astype(np.float32)
    np.save(tmp_path / "obs.npy", obs)
    code = textwrap.dedent(
        f"""
        import numpy as np, rlkit as rk
        policy = rk.load({str(path)!r})
        print(policy.algorithm)
        obs = np.load({str(tmp_path / "obs.npy")!r})
        np.save({str(tmp_path / "out.npy")!r}, policy.predict(obs))
        """
    )
    env_vars = {**os.environ, "PYTHONPATH": str(ROOT / "tests")}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env_vars,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "MyReinforce"
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), policy.predict(obs))


def test_loading_without_the_model_fn_module_says_what_to_install(tmp_path, monkeypatch):
    env = rk.GymEnv("CartPole-v1", seed=0)
    path = tmp_path / "mine.rlkit"
    rk.save(MyReinforce(env, seed=0), path)
    monkeypatch.setitem(sys.modules, "user_reinforce", None)  # not importable here
    with pytest.raises(ArtifactError, match=r"model_fn 'user_reinforce:model_fn' cannot be "
                       r"imported here; install the package that defines it"):  # fmt: skip
        rk.load(path)
