"""``rlkit collect NAME_OR_RUN_DIR --steps N --out PATH``: a loadable dataset of N transitions
from a recipe's untrained policy or a run's trained one, with epsilon-random actions; refusals."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import rlkit as rk

ROOT = Path(__file__).resolve().parents[2]


def rlkit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rlkit.cli", *args], cwd=ROOT, capture_output=True, text=True,
        timeout=180,
    )  # fmt: skip


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("collect") / "ppo"
    done = rlkit("run", "PPO_CartPole", "--steps", "512", "--logdir", str(folder), "--quiet")
    assert done.returncode == 0, done.stderr
    return folder


def test_recipe_random_dataset_of_n_transitions(tmp_path):
    out = tmp_path / "random.npz"
    done = rlkit("collect", "DQN_CartPole", "--steps", "500", "--epsilon", "1", "--seed", "4",
                 "--out", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "500 transitions" in done.stdout and str(out) in done.stdout
    ds = rk.Dataset.load(out)
    assert len(ds) == 500 and ds.seed == 4 and ds.env_spec["id"] == "CartPole-v1"
    assert "DQN_CartPole untrained" in ds.policy_description
    assert "epsilon=1.0" in ds.policy_description
    assert ds.terminations.sum() >= 10  # random CartPole episodes are short
    again = tmp_path / "again.npz"
    assert rlkit("collect", "DQN_CartPole", "--steps", "500", "--epsilon", "1", "--seed", "4",
                 "--out", str(again)).returncode == 0  # fmt: skip
    np.testing.assert_array_equal(rk.Dataset.load(again).actions, ds.actions)  # seeded


def test_trained_run_acts_greedily_with_its_saved_policy(run_dir, tmp_path):
    out = tmp_path / "expert.npz"
    done = rlkit("collect", str(run_dir), "--steps", "300", "--out", str(out))
    assert done.returncode == 0, done.stderr
    ds = rk.Dataset.load(out)
    assert len(ds) == 300 and "PPO_CartPole trained policy" in ds.policy_description
    policy = rk.load(run_dir)
    np.testing.assert_array_equal(ds.actions, policy.predict(ds.observations))


def test_epsilon_replaces_that_share_of_actions_by_random_ones(run_dir, tmp_path):
    out = tmp_path / "mixed.npz"
    done = rlkit("collect", str(run_dir), "--steps", "800", "--epsilon", "0.5", "--out", str(out))
    assert done.returncode == 0, done.stderr
    ds = rk.Dataset.load(out)
    differs = np.mean(ds.actions != rk.load(run_dir).predict(ds.observations))
    assert 0.17 < differs < 0.33  # half random, of which half pick the other of 2 actions


def test_minari_format(tmp_path):
    pytest.importorskip("minari")
    out = tmp_path / "minari_ds"
    done = rlkit("collect", "SAC_Pendulum", "--steps", "250", "--epsilon", "1", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "(minari)" in done.stdout and (out / "data" / "main_data.hdf5").exists()
    ds = rk.Dataset.load(out)
    assert len(ds) == 250 and ds.truncations[-1] and ds.env_spec["id"] == "Pendulum-v1"


def test_vector_env_recipe(tmp_path):
    out = tmp_path / "ppo.npz"
    done = rlkit("collect", "PPO_CartPole", "--steps", "400", "--stochastic", "--out", str(out))
    assert done.returncode == 0, done.stderr
    ds = rk.Dataset.load(out)
    assert len(ds) == 400 and "stochastic" in ds.policy_description
    for episode in ds.episodes():  # 8 sub-envs' episodes, each whole
        np.testing.assert_array_equal(episode.next_observations[:-1], episode.observations[1:])


def test_tabular_recipe(tmp_path):
    out = tmp_path / "cliff.npz"
    done = rlkit("collect", "SARSA_CliffWalking", "--steps", "200", "--epsilon", "0.3",
                 "--out", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    ds = rk.Dataset.load(out)
    assert len(ds) == 200 and ds.observations.dtype == np.int64


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["DQN_CartPole", "--steps", "0"], "--steps must be a positive integer, got 0"),
        (["DQN_CartPole", "--steps", "10", "--epsilon", "1.5"], "--epsilon must be between 0"),
        (["DQN_CartPole", "--steps", "10", "--seed", "-1"], "--seed must be a non-negative"),
        (["NoSuchRecipe", "--steps", "10"], "NoSuchRecipe"),
        (["PPO_CartPole", "--steps", "100"], "not a multiple of the recipe's 8 sub-envs"),
    ],
)
def test_refusals(tmp_path, args, message):
    out = tmp_path / "d.npz"
    done = rlkit("collect", *args, "--out", str(out))
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert not out.exists()


def test_run_dir_without_a_saved_policy_is_refused(run_dir, tmp_path):
    copy = tmp_path / "run"
    copy.mkdir()
    (copy / "config.json").write_text((run_dir / "config.json").read_text())
    done = rlkit("collect", str(copy), "--steps", "10", "--out", str(tmp_path / "d.npz"))
    assert done.returncode == 2 and "has no policy.rlkit" in done.stderr
    not_a_run = rlkit("collect", str(tmp_path), "--steps", "10", "--out", str(tmp_path / "d.npz"))
    assert not_a_run.returncode == 2 and "not a run directory" in not_a_run.stderr


def test_a_killed_collect_leaves_no_dataset_and_the_old_one_intact(tmp_path):
    out = tmp_path / "d.npz"
    out.write_bytes(b"the dataset of an earlier collect")
    process = subprocess.Popen(
        [sys.executable, "-m", "rlkit.cli", "collect", "DQN_CartPole", "--steps", "50000000",
         "--epsilon", "1", "--out", str(out)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdout.readline().startswith("collecting 50000000 transitions")
    time.sleep(1.0)  # well inside the run
    process.kill()
    process.wait(timeout=30)
    process.stdout.close(), process.stderr.close()
    assert out.read_bytes() == b"the dataset of an earlier collect"
    assert [p.name for p in tmp_path.iterdir()] == ["d.npz"]
