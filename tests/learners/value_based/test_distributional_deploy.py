"""rk.save / rk.load / predict / rk.export of the distributional recipes' policies
(rlkit/deploy/distributional.py): the loaded and exported policies act as the trained policy's
greedy form (the expectation of the distribution; Rainbow's noisy layers at their means)."""

from __future__ import annotations

import numpy as np
import pytest

import rlkit as rk
from rlkit.deploy.q_network import NetworkQLearner

BRIEF = {"total_steps": 300, "learning_starts": 100, "train_freq": 10, "gradient_steps": 2,
         "batch_size": 32, "hidden": (32,)}  # fmt: skip


@pytest.fixture(scope="module", params=["C51_CartPole", "IQN_CartPole", "Rainbow_CartPole"])
def trained(request):
    experiment = rk.make_experiment(request.param, seed=0, **BRIEF)
    rk.run(experiment.policy, experiment.env, experiment.stop_condition)
    assert experiment.policy.policy.learner.gradient_steps > 0
    return request.param, experiment.policy.policy


def test_save_load_predict_acts_as_the_greedy_policy(trained, tmp_path):
    name, policy = trained
    path = tmp_path / f"{name}.rlkit"
    rk.save(policy, path)
    loaded = rk.load(path)
    assert isinstance(loaded.learner, NetworkQLearner) and loaded.algorithm == name.split("_")[0] \
        + "Learner"  # fmt: skip
    obs = np.random.default_rng(0).normal(size=(200, 4)).astype(np.float32)
    expected = policy.values(obs, deterministic=True)
    assert np.allclose(loaded.values(obs), expected, atol=1e-5)
    assert loaded.predict(obs).tolist() == policy.predict(obs).tolist()
    assert np.allclose(rk.greedy(policy).values(obs), expected)
    rk.save(rk.greedy(policy), tmp_path / "greedy.rlkit")  # the greedy form saves the same
    assert np.allclose(rk.load(tmp_path / "greedy.rlkit").values(obs), expected, atol=1e-5)
    rk.save(loaded, tmp_path / "again.rlkit")  # a loaded policy saves again
    assert rk.load(tmp_path / "again.rlkit").predict(obs).tolist() == loaded.predict(obs).tolist()


def test_export_gives_the_greedy_actions(trained, tmp_path):
    onnxruntime = pytest.importorskip("onnxruntime")
    name, policy = trained
    path = tmp_path / f"{name}.onnx"
    rk.export(policy, path)
    obs = np.random.default_rng(1).normal(size=(100, 4)).astype(np.float32)
    actions = onnxruntime.InferenceSession(str(path)).run(None, {"obs": obs})[0]
    values = policy.values(obs, deterministic=True)
    clear = np.sort(values, axis=1)[:, -1] - np.sort(values, axis=1)[:, -2] > 1e-4  # no near-ties
    assert clear.sum() > 50
    assert actions[clear].tolist() == values.argmax(1)[clear].tolist()
