"""rk.export: the ONNX file run by onnxruntime gives the trained policy's greedy actions
(discrete: equal; continuous: within 1e-5) on 1,000 observations, for every bundled deep
recipe and a tabular one, and IQN on uint8 images (its CNN-encoded network); the opset and the
spaces are in the file's metadata."""

from __future__ import annotations

import json

import numpy as np
import pytest
from deploy_helpers import TABULAR, deep_recipes
from observation_envs import PixelMatch

import rlkit as rk
from rlkit.deploy.export import OPSET

onnx = pytest.importorskip("onnx")
onnxruntime = pytest.importorskip("onnxruntime")

NAMES = [*deep_recipes(), TABULAR]


@pytest.mark.parametrize("name", NAMES)
def test_onnx_gives_the_greedy_actions(name, trained, tmp_path):
    policy, _, obs, actions, learned = trained[name]
    path = tmp_path / f"{name}.onnx"
    rk.export(policy, path)
    # tables take int64 state indices, image policies uint8 pixels (scaled inside the graph)
    feed = obs.astype(
        np.int64 if name == TABULAR else np.uint8 if obs.dtype == np.uint8 else np.float32
    )
    (out,) = onnxruntime.InferenceSession(str(path)).run(None, {"obs": feed})
    assert out.shape == actions.shape
    if np.issubdtype(actions.dtype, np.integer):
        np.testing.assert_array_equal(out, actions)
    else:
        np.testing.assert_allclose(out, actions, rtol=0, atol=1e-5)


def test_the_file_states_its_opset_and_spaces(trained, tmp_path):
    path = tmp_path / "sac.onnx"
    rk.export(rk.load(trained["SAC_Pendulum"][1]), path)  # a loaded policy exports too
    model = onnx.load(str(path))
    assert [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")] == [OPSET]
    meta = {p.key: p.value for p in model.metadata_props}
    assert meta["opset"] == str(OPSET) and meta["algorithm"] == "SAC"
    assert json.loads(meta["action_space"])["type"] == "Box"
    assert [i.name for i in model.graph.input] == ["obs"]


def test_export_refuses_what_it_cannot_save(tmp_path):
    with pytest.raises(TypeError, match="rk.save: no artifact for a RandomPolicy"):
        rk.export(rk.RandomPolicy(), tmp_path / "x.onnx")
    assert not (tmp_path / "x.onnx").exists()


def test_an_iqn_agent_on_images_exports_its_greedy_actions(tmp_path):
    env = rk.GymEnv(PixelMatch(), seed=0)
    agent = rk.IQN.agent(env, seed=0, learning_starts=32, buffer_size=400, n_tau=8,
                         n_tau_target=8)  # fmt: skip
    rk.run(agent, env, rk.StopAfterNSteps(400))  # enough for the frame to change the action
    learner = agent.policy.learner
    assert type(learner.model).__name__ == "EncodedIQNNetwork" and learner.gradient_steps > 0
    path = tmp_path / "iqn.onnx"
    rk.export(agent.policy, path)
    obs = []  # uint8 frames (256, 3, 6, 6) of every brightness the env shows
    for _ in range(256):
        env.reset() if env.done else env.act(0)
        obs.append(env.state)
    obs = np.stack(obs)
    expected = agent.policy.predict(obs)
    assert len(np.unique(expected)) > 1  # the actions depend on the frame: a real comparison
    (out,) = onnxruntime.InferenceSession(str(path)).run(None, {"obs": obs})
    np.testing.assert_array_equal(out, expected)
    meta = {p.key: p.value for p in onnx.load(str(path)).metadata_props}
    assert meta["algorithm"] == "IQNLearner"
