"""CQL, IQL and TD3+BC (rlkit/learners/offline/) in offline runs: the dataset's sample as an
actor-critic batch, kill-and-resume bit-exact, rk.explain, evaluation in a real env, spaces
that do not fit."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch
from pendulum_data import random_dataset

import rlkit as rk

ALGORITHMS = ["CQL", "IQL", "TD3BC", "SAC"]  # SAC: a plain off-policy learner, offline


@pytest.fixture(scope="module")
def dataset():
    return random_dataset(n_episodes=1)


def _make(name, env, seed=0):
    config = {"hidden": (16, 16), "batch_size": 32}
    if name == "CQL":
        config["n_action_samples"] = 2
    return getattr(rk, name)(env, seed=seed, **config)


def test_offline_batch_scales_the_datasets_actions_to_the_unit_box(dataset):
    env = rk.OfflineEnv(dataset, batch_size=4, seed=0)
    policy = _make("CQL", env)
    sample = env.sample()
    sample["action"] = np.array([[-2.0], [0.0], [1.0], [2.0]], dtype=np.float32)
    batch = policy.offline_batch(sample)
    assert batch["action"].tolist() == [[-1.0], [0.0], [0.5], [1.0]]
    assert batch["state"].dtype == torch.float32 and batch["state"].shape == (4, 3)
    assert torch.equal(batch["terminal"], torch.as_tensor(sample["terminal"]))


@pytest.mark.parametrize("name", ALGORITHMS)
def test_kill_and_resume_is_bit_exact(tmp_path, dataset, name):
    def build():
        env = rk.OfflineEnv(dataset, batch_size=32, seed=3)
        return _make(name, env), env

    def params(policy):
        return torch.cat([v.detach().flatten().float() for v in policy.model.state_dict().values()])

    full, env = build()
    rk.run(full, env, rk.StopAfterNSteps(9))
    first, env1 = build()
    rk.run(first, env1, rk.StopAfterNSteps(4), rk.CheckpointHook(tmp_path, every_n_steps=4))
    resumed, env2 = build()
    rk.run(resumed, env2, rk.StopAfterNSteps(9), rk.CheckpointHook(tmp_path, every_n_steps=4),
           resume_from=tmp_path)  # fmt: skip
    assert env2.steps == 9 and resumed.gradient_steps == 9
    assert torch.equal(params(resumed), params(full))
    assert rk.statistics(resumed) == rk.statistics(full)


@pytest.mark.parametrize(
    "name, loss", [("CQL", "cql.critic_loss"), ("IQL", "iql.actor_loss"), ("TD3BC", "td3bc")]
)
def test_explain_shows_the_offline_driver_the_update_and_the_losses(capsys, dataset, name, loss):
    env = rk.OfflineEnv(dataset, batch_size=32, seed=0)
    rk.explain(_make(name, env), env, None, rk.StopAfterNSteps(3))
    out = capsys.readouterr().out
    assert f"update({name}, OfflineEnv, PostActStage)" in out
    assert "rlkit/learners/drivers/offline.py" in out
    assert f"update({name}, Batch)" in out and f"rlkit/learners/offline/{name.lower()}.py" in out
    assert loss in out


def test_evaluation_hook_plays_the_greedy_policy_in_a_real_env(dataset):
    env = rk.OfflineEnv(dataset, batch_size=32, seed=0)
    evaluation = rk.EvaluationHook(rk.GymEnv("Pendulum-v1", seed=1), every_n_steps=3,
                                   n_episodes=1, seed=0)  # fmt: skip
    rk.run(_make("IQL", env), env, rk.StopAfterNSteps(6), evaluation)
    assert [r.step for r in evaluation.results] == [3, 6]
    assert all(-2000 < r.mean < 0 for r in evaluation.results)  # 200 real Pendulum steps


def test_a_policy_made_for_other_spaces_is_refused_naming_both(dataset):
    env = rk.OfflineEnv(dataset, batch_size=32, seed=0)
    policy = _make("CQL", rk.GymEnv("MountainCarContinuous-v0", seed=0))
    with pytest.raises(ValueError, match=r"CQL.*OfflineEnv"):
        rk.run(policy, env, rk.StopAfterNSteps(2))
    assert policy.gradient_steps == 0


@pytest.mark.parametrize("name", ["CQL", "IQL", "TD3BC"])
def test_save_and_load_act_the_same_with_the_normaliser(tmp_path, dataset, name):
    pytest.importorskip("safetensors")
    env = rk.OfflineEnv(dataset, batch_size=32, seed=0)
    policy = _make(name, env)
    rk.run(policy, env, rk.StopAfterNSteps(2))  # TD3BC: the normaliser from the dataset
    rk.save(policy, tmp_path / "policy")
    loaded = rk.load(tmp_path / "policy")
    obs = dataset.observations[:5] * 3.0
    assert np.array_equal(loaded.predict(obs), policy.predict(obs))


def test_sac_learns_offline_in_a_fresh_interpreter_without_importing_the_offline_package():
    # the offline driver is registered with the other drivers (rlkit/learners/builder.py), not
    # only when rlkit.learners.offline is imported
    code = (
        "import sys, numpy as np, rlkit as rk\n"
        "space = rk.GymEnv('Pendulum-v1').state_space\n"
        "act = rk.GymEnv('Pendulum-v1').action_space\n"
        "n = 40\n"
        "ds = rk.Dataset.from_arrays(observations=np.zeros((n, 3), np.float32),\n"
        "    actions=np.zeros((n, 1), np.float32), rewards=np.zeros(n, np.float32),\n"
        "    terminations=np.zeros(n, bool), truncations=np.arange(n) % 20 == 19,\n"
        "    next_observations=np.zeros((n, 3), np.float32), observation_space=space,\n"
        "    action_space=act)\n"
        "env = rk.OfflineEnv(ds, 8, seed=0)\n"
        "policy = rk.SAC(env, seed=0, hidden=(8,))\n"
        "rk.run(policy, env, rk.StopAfterNSteps(2))\n"
        "assert 'rlkit.learners.offline' not in sys.modules\n"
        "print(policy.gradient_steps)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "2"
