"""Policies trained on ``rk.VecNormalize`` (rlkit/deploy/normalization.py): ``predict`` on raw
observations gives the policy's action on the normalised ones; ``rk.save`` keeps the statistics
and the loaded policy applies them, frozen; ``rk.export`` puts the normalisation in the graph;
greedy evaluations on a raw env use the training statistics without changing them."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest
import torch

import rlkit as rk


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """(agent, env, artifact path) of PPO after a few updates on a normalised CartPole."""
    env = rk.VecNormalize(rk.VectorGymEnv("CartPole-v1", 4, seed=0), gamma=0.98)
    agent = rk.PPO.agent(env, seed=0, n_steps=32, batch_size=64, n_epochs=4)
    rk.run(agent, env, rk.StopAfterNSteps(1024))
    path = tmp_path_factory.mktemp("normalized") / "ppo.rlkit"
    rk.save(agent, path)
    return agent, env, path


def raw_observations(n=64, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, 4)) * [1.0, 2.0, 0.1, 1.5]).astype(np.float32)


def modes(policy, normalized):
    with torch.no_grad():
        obs = policy.observation_tensor(normalized)
        return policy.distribution(obs).mode().numpy()


def test_predict_on_raw_observations_is_the_policy_on_normalised_ones(trained):
    agent, env, _ = trained
    raw = raw_observations()
    expected = modes(agent.policy, env.normalize_obs(raw))
    np.testing.assert_array_equal(agent.predict(raw), expected)
    assert not np.array_equal(modes(agent.policy, raw), expected)  # the statistics matter here
    assert agent.predict(raw[0]).item() == expected[0]


def test_the_artifact_keeps_the_statistics_and_the_loaded_policy_applies_them(trained, tmp_path):
    agent, env, path = trained
    with zipfile.ZipFile(path) as zf:
        meta = json.loads(zf.read("policy.json"))
    assert meta["observation_normalization"] == {"clip_obs": 10.0, "epsilon": 1e-8, "keys": None}
    loaded = rk.load(path)
    np.testing.assert_array_equal(loaded.observation_normalizer.rms.mean, env.obs_rms.mean)
    np.testing.assert_array_equal(loaded.observation_normalizer.rms.var, env.obs_rms.var)
    raw = raw_observations(seed=1)
    np.testing.assert_array_equal(loaded.predict(raw), agent.predict(raw))
    # saved again, a loaded policy keeps them
    again = tmp_path / "again.rlkit"
    rk.save(loaded, again)
    np.testing.assert_array_equal(rk.load(again).predict(raw), agent.predict(raw))


def test_a_policy_without_normalisation_saves_as_before(tmp_path):
    path = tmp_path / "plain.rlkit"
    rk.save(rk.PPO(rk.GymEnv("CartPole-v1"), seed=0), path)
    with zipfile.ZipFile(path) as zf:
        assert "observation_normalization" not in json.loads(zf.read("policy.json"))
    assert rk.load(path).observation_normalizer is None


def test_greedy_evaluation_on_a_raw_env_uses_the_frozen_training_statistics(trained, tmp_path):
    agent, env, path = trained
    before = env.obs_rms.state_dict()
    hook = rk.EvaluationHook(rk.GymEnv("CartPole-v1"), every_n_steps=1, n_episodes=3, seed=0)
    hook.evaluate(agent)
    after = env.obs_rms.state_dict()
    assert after["count"] == before["count"]
    np.testing.assert_array_equal(after["mean"], before["mean"])
    # the same as the policy acting on observations normalised by hand, and as the loaded policy
    loaded = rk.load(path)
    by_hand = rk.load(path)
    by_hand.observation_normalizer = None
    frozen = loaded.observation_normalizer
    import gymnasium as gym

    normalized_env = gym.wrappers.TransformObservation(
        gym.make("CartPole-v1"), frozen, gym.make("CartPole-v1").observation_space
    )
    seed = 123
    results = [
        rk.evaluate(agent, rk.GymEnv("CartPole-v1"), 3, seed=seed).returns,
        rk.evaluate(loaded, rk.GymEnv("CartPole-v1"), 3, seed=seed).returns,
        rk.evaluate(by_hand, rk.GymEnv(normalized_env), 3, seed=seed).returns,
    ]
    assert results[0] == results[1] == results[2]
    assert hook.results[0].mean > 0


def test_the_onnx_graph_takes_raw_observations(trained, tmp_path):
    onnxruntime = pytest.importorskip("onnxruntime")  # the test extra has it: never skipped in CI
    agent, _, _ = trained
    path = tmp_path / "ppo.onnx"
    rk.export(agent, path)
    raw = raw_observations(seed=2)
    session = onnxruntime.InferenceSession(str(path))
    np.testing.assert_array_equal(session.run(None, {"obs": raw})[0], agent.predict(raw))


def test_a_recurrent_policy_keeps_its_statistics_through_save_and_export(tmp_path):
    onnxruntime = pytest.importorskip("onnxruntime")
    env = rk.VecNormalize(rk.VectorGymEnv("rlkit/CartPoleNoVel-v1", 2, seed=0))
    agent = rk.RecurrentPPO.agent(env, seed=0, lstm_hidden_size=8, hidden=(8,), n_steps=16,
                                  batch_size=32)  # fmt: skip
    rk.run(agent, env, rk.StopAfterNSteps(128))
    path = tmp_path / "rppo.rlkit"
    rk.save(agent, path)
    loaded = rk.load(path)
    rng = np.random.default_rng(0)
    raw = (rng.normal(size=(5, 2)) * [1.0, 0.1]).astype(np.float32)
    state = loaded.initial_state(5)
    starts = np.array([True, False, True, False, False])
    live_action, live_state = agent.predict(raw, state, starts)
    action, next_state = loaded.predict(raw, state, starts)
    np.testing.assert_array_equal(action, live_action)
    np.testing.assert_array_equal(next_state, live_state)
    # the model on normalised observations, by hand
    policy = agent.policy
    with torch.no_grad():
        inputs, _, _ = policy.model.step(
            policy.observation_tensor(env.normalize_obs(raw)), torch.as_tensor(state),
            torch.as_tensor(starts),
        )  # fmt: skip
        by_hand = policy.dist_class.from_inputs(inputs, policy.action_space, None).mode()
    np.testing.assert_array_equal(action, by_hand.numpy())
    onnx_path = tmp_path / "rppo.onnx"
    rk.export(loaded, onnx_path)
    out = onnxruntime.InferenceSession(str(onnx_path)).run(
        None, {"obs": raw, "state": state, "episode_start": starts}
    )
    np.testing.assert_array_equal(out[0], action)
    np.testing.assert_allclose(out[1], next_state, atol=1e-6)
    env.close()
