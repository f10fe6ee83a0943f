"""What rk.load refuses, with a clear message and without executing anything: corrupt and
truncated files, an artifact from a future format version, an env whose spaces do not fit, a
pickle inside (a torch.save file, a pickle member, pickled tensors), a function named in the
JSON that is not a Python function of the module it names; and what rk.save refuses."""

from __future__ import annotations

import hashlib
import json
import pickle
import zipfile

import gymnasium as gym
import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.deploy.errors import ArtifactError


class Payload:
    """Unpickling it would create the file ``marker`` (it must never happen)."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.fixture(scope="module")
def artifact(tmp_path_factory):
    path = tmp_path_factory.mktemp("refusals") / "ppo.rlkit"
    rk.save(rk.PPO(rk.GymEnv("CartPole-v1", seed=0), seed=0), path)
    return path


def members(path):
    with zipfile.ZipFile(path) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def write_members(path, items):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in items.items():
            zf.writestr(name, data)


def test_every_corrupted_byte_is_refused(artifact, tmp_path):
    data = artifact.read_bytes()
    bad = tmp_path / "bad.rlkit"
    for position in range(0, len(data), max(1, len(data) // 60)):
        damaged = bytearray(data)
        damaged[position] ^= 0xFF
        bad.write_bytes(bytes(damaged))
        try:
            rk.load(bad)
        except ArtifactError as error:
            assert "bad.rlkit" in str(error)
        else:  # a byte the zip format does not read (e.g. a timestamp) changes nothing
            assert rk.load(bad).predict(np.zeros(4)) == rk.load(artifact).predict(np.zeros(4))


def test_a_truncated_file_is_refused(artifact, tmp_path):
    data = artifact.read_bytes()
    short = tmp_path / "short.rlkit"
    for length in (0, 10, len(data) // 3, len(data) // 2, len(data) - 1):
        short.write_bytes(data[:length])
        with pytest.raises(ArtifactError, match="corrupt or truncated"):
            rk.load(short)


def test_a_future_format_version_is_refused(artifact, tmp_path):
    items = members(artifact)
    meta = json.loads(items["policy.json"])
    meta["format_version"] = 2
    meta["versions"]["rlkit"] = "9.0.0"
    items["policy.json"] = json.dumps(meta)
    future = tmp_path / "future.rlkit"
    write_members(future, items)
    with pytest.raises(ArtifactError, match=r"format version 2, written by rlkit 9\.0\.0.*up to 1"):
        rk.load(future)


def test_another_library_version_is_a_warning(artifact, tmp_path):
    items = members(artifact)
    meta = json.loads(items["policy.json"])
    meta["versions"]["torch"] = "1.0.0"
    items["policy.json"] = json.dumps(meta)
    older = tmp_path / "older.rlkit"
    write_members(older, items)
    with pytest.warns(UserWarning, match=r"saved with torch 1\.0\.0 \(here "):
        rk.load(older)


def test_an_env_whose_spaces_do_not_fit_is_refused_naming_both(artifact):
    with pytest.raises(ValueError, match=r"Box\(shape=\(4,\)\).*Discrete\(2\).*Acrobot.*"
                       r"Box\(shape=\(6,\)\).*Discrete\(3\)"):  # fmt: skip
        rk.load(artifact, env=rk.GymEnv("Acrobot-v1"))
    with pytest.raises(ValueError, match="Discrete\\(3\\)"):  # a gymnasium env too
        rk.load(artifact, env=_three_actions())
    assert rk.load(artifact, env=gym.make("CartPole-v1")).algorithm == "PPO"


def _three_actions():
    env = gym.make("CartPole-v1")
    env.action_space = gym.spaces.Discrete(3)
    return env


def test_a_torch_save_file_is_refused_unread(tmp_path):
    marker = tmp_path / "marker"
    path = tmp_path / "model.rlkit"
    torch.save({"evil": Payload(marker)}, path)
    with pytest.raises(ArtifactError, match=r"holds a pickle \(.*data\.pkl.*never unpickles"):
        rk.load(path)
    assert not marker.exists()


def test_a_pickle_member_is_refused_unread(artifact, tmp_path):
    marker = tmp_path / "marker"
    items = {**members(artifact), "extra.pkl": pickle.dumps(Payload(marker))}
    path = tmp_path / "extra.rlkit"
    write_members(path, items)
    with pytest.raises(ArtifactError, match=r"holds a pickle \(extra\.pkl\)"):
        rk.load(path)
    assert not marker.exists()


def test_pickled_tensors_are_refused_unread(artifact, tmp_path):
    marker = tmp_path / "marker"
    items = members(artifact)
    evil = pickle.dumps(Payload(marker))
    meta = json.loads(items["policy.json"])
    meta["tensors_sha256"] = hashlib.sha256(evil).hexdigest()  # even with a matching digest
    items.update({"policy.json": json.dumps(meta), "policy.safetensors": evil})
    path = tmp_path / "pickled.rlkit"
    write_members(path, items)
    with pytest.raises(ArtifactError, match="policy.safetensors is not a safetensors file"):
        rk.load(path)
    assert not marker.exists()


@pytest.mark.parametrize("name", ["os:system", "builtins:exec", "rlkit.deploy.built:np"])
def test_a_model_fn_that_is_not_a_python_function_of_its_module_is_refused(
    artifact, tmp_path, name
):
    items = members(artifact)
    meta = json.loads(items["policy.json"])
    meta["network"]["model_fn"] = name
    items["policy.json"] = json.dumps(meta)
    path = tmp_path / "named.rlkit"
    write_members(path, items)
    with pytest.raises(ArtifactError, match="not a function or class defined in"):
        rk.load(path)


def test_damaged_json_and_foreign_members_are_refused(artifact, tmp_path):
    items = members(artifact)
    path = tmp_path / "x.rlkit"
    write_members(path, {**items, "policy.json": b"{not json"})
    with pytest.raises(ArtifactError, match="policy.json is not valid JSON"):
        rk.load(path)
    write_members(path, {**items, "readme.txt": b"hi"})
    with pytest.raises(ArtifactError, match="holds exactly policy.json and policy.safetensors"):
        rk.load(path)
    write_members(path, {**items, "policy.json": json.dumps({"format": "other"})})
    with pytest.raises(ArtifactError, match="not an rlkit policy description"):
        rk.load(path)


def test_a_refused_load_leaves_nothing_and_a_failed_save_keeps_the_old_file(artifact, tmp_path):
    path = tmp_path / "p.rlkit"
    path.write_bytes(artifact.read_bytes())
    with pytest.raises(TypeError, match="no artifact for a RandomPolicy"):
        rk.save(rk.RandomPolicy(), path)
    assert path.read_bytes() == artifact.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.rlkit"]


def test_save_refuses_what_it_cannot_rebuild(tmp_path):
    env = rk.GymEnv("CartPole-v1", seed=0)
    by_hand = rk.StochasticPolicy(torch.nn.Linear(4, 2), env.action_space)
    with pytest.raises(TypeError, match="StochasticPolicy made by hand has no model_fn"):
        rk.save(by_hand, tmp_path / "a.rlkit")
    local = rk.PPO.with_updates(name="LocalPPO", model_fn=lambda *a: torch.nn.Linear(4, 2))
    with pytest.raises(TypeError, match="cannot be recorded by name"):
        rk.save(local(env, seed=0), tmp_path / "b.rlkit")
    approx = rk.NeuralNetworkApproximator(
        torch.nn.Sequential(torch.nn.Linear(4, 2), torch.nn.Dropout()),
        lambda p: torch.optim.SGD(p, lr=0.1),
    )
    learner = rk.DQNLearner(approx, sampler=rk.BatchSampler(4),
                            controller=rk.InsertSampleRatioController(1, 1, 1))  # fmt: skip
    learner.state_space, learner.action_space = env.state_space, env.action_space
    policy = rk.QBasedPolicy(learner, rk.GreedyExplorer())
    with pytest.raises(TypeError, match=r"the Q-network\[1\] = torch.nn.modules.dropout.Dropout"):
        rk.save(policy, tmp_path / "c.rlkit")
    assert not list(tmp_path.iterdir())


def test_a_space_json_cannot_hold_is_refused(tmp_path):
    from rlkit.deploy.spaces import space_to_json

    with pytest.raises(TypeError, match="cannot store the space Text.*Dict and Tuple spaces of"):
        space_to_json(gym.spaces.Text(5))
    # Dict and Tuple spaces are stored (tests/deploy/test_structured_spaces.py), not what they hold
    with pytest.raises(TypeError, match=r"\(position 1\): cannot store the space Sequence"):
        space_to_json(gym.spaces.Tuple((gym.spaces.Discrete(2),
                                        gym.spaces.Sequence(gym.spaces.Discrete(3)))))


def test_without_safetensors_save_says_how_to_install_it(monkeypatch, tmp_path):
    import sys

    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)
    with pytest.raises(ModuleNotFoundError, match="pip install safetensors"):
        rk.save(rk.PPO(rk.GymEnv("CartPole-v1"), seed=0), tmp_path / "p.rlkit")
    assert not list(tmp_path.iterdir())
