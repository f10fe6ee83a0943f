"""Issue 21 item 12: hostile checkpoint files are refused with CheckpointError, alike however
they are reached (rlkit/hooks/checkpoint/format.py, files.py)."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import numpy as np
import pytest

import rlkit as rk
from rlkit.core.state import get_state
from rlkit.hooks.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from rlkit.hooks.checkpoint.format import FORMAT, VERSION, _digest

safetensors_numpy = pytest.importorskip("safetensors.numpy")

DEEP = 50_000


def tabular(seed: int = 0) -> tuple[Any, Any]:
    env = rk.GymEnv("rlkit/RandomWalk1D-v0", seed=seed, n_states=5)
    q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.5)
    learner = rk.TDLearner(q, method="qlearning", gamma=0.9)
    policy = rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.2, seed=seed))
    return rk.Agent(policy, rk.VectorSARTTrajectory()), env


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def rlkit_text(body: str) -> str:
    """The rlkit metadata of a checkpoint whose payload is ``body`` (a valid checksum)."""
    digest = _digest(body, {})
    return json.dumps({"format": FORMAT, "version": VERSION, "sha256": digest, "payload": body})


def deep_header(path) -> None:
    """A safetensors file whose header JSON is nested 50,000 deep."""
    header = ('{"__metadata__": {"__rlkit__": "{}"}, "x": ' + nested(DEEP) + "}").encode()
    path.write_bytes(len(header).to_bytes(8, "little") + header)


def deep_metadata(path) -> None:
    """A valid safetensors file whose rlkit metadata string holds JSON nested 50,000 deep."""
    path.write_bytes(safetensors_numpy.save({}, metadata={"__rlkit__": nested(DEEP)}))


def deep_payload(path) -> None:
    """Valid metadata (format, version, checksum) around a payload nested 50,000 deep."""
    text = rlkit_text(nested(DEEP))
    path.write_bytes(safetensors_numpy.save({}, metadata={"__rlkit__": text}))


def payload_deeper_than_the_stack(path) -> None:
    """A payload json can parse whose decoding would recurse deeper than Python allows (100
    levels under the recursion limit, which other tests in the same process may have raised)."""
    depth = sys.getrecursionlimit() - 100
    text = rlkit_text('{"meta": ' + nested(depth) + ', "policy": 1, "env": 1}')
    path.write_bytes(safetensors_numpy.save({}, metadata={"__rlkit__": text}))


@pytest.mark.parametrize(
    "write", [deep_header, deep_metadata, deep_payload, payload_deeper_than_the_stack]
)
def test_metadata_nested_50000_deep_is_a_checkpoint_error(tmp_path, write):
    agent, env = tabular()
    rk.run(agent, env, rk.StopAfterNSteps(20))
    before = get_state(agent.policy)
    path = tmp_path / "checkpoint-000000000010.safetensors"
    write(path)
    with pytest.raises(CheckpointError, match=str(path.name)):
        load_checkpoint(path, agent, env)
    with pytest.raises(CheckpointError):
        rk.run(agent, env, rk.StopAfterNSteps(40), resume_from=tmp_path)
    assert np.array_equal(
        get_state(agent.policy)["learner"]["approximator"]["table"],
        before["learner"]["approximator"]["table"],
    )


@pytest.mark.parametrize(
    ("body", "sections"),
    [
        ('{"meta": {}, "policy": 1, "env": 1}', "policy, env section(s)"),
        ('{"meta": {}, "policy": {"type": "Agent"}, "env": [], "hooks": [3]}', "env, hooks"),
        ('{"meta": {}, "policy": {"type": 7}, "env": {"type": "GymEnv"}}', "its policy section"),
    ],
)
def test_a_payload_whose_sections_are_not_objects_is_a_checkpoint_error(tmp_path, body, sections):
    agent, env = tabular()
    rk.run(agent, env, rk.StopAfterNSteps(20))
    before = get_state(agent.policy)
    path = tmp_path / "checkpoint-000000000010.safetensors"
    path.write_bytes(safetensors_numpy.save({}, metadata={"__rlkit__": rlkit_text(body)}))
    with pytest.raises(CheckpointError, match=str(path.name)) as error:
        load_checkpoint(path, agent, env)
    assert sections in str(error.value)
    assert np.array_equal(
        get_state(agent.policy)["learner"]["approximator"]["table"],
        before["learner"]["approximator"]["table"],
    )


def test_a_deep_payload_is_refused_with_a_raised_recursion_limit(tmp_path):
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit * 4)
    try:
        agent, env = tabular()
        path = tmp_path / "checkpoint-000000000010.safetensors"
        payload_deeper_than_the_stack(path)
        with pytest.raises(CheckpointError, match=str(path.name)):
            load_checkpoint(path, agent, env)
    finally:
        sys.setrecursionlimit(limit)


def saved(folder, agent: Any, env: Any) -> Any:
    stop = rk.StopAfterNSteps(30)
    rk.run(agent, env, stop)
    return save_checkpoint(folder / "checkpoint-000000000030.npz", agent, env, stop, step=30,
                           format="npz")


def test_a_symlink_out_of_its_folder_is_refused_when_named_directly(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    target = saved(outside, *tabular(seed=1))
    folder = tmp_path / "run"
    folder.mkdir()
    link = folder / "checkpoint-000000000999.npz"
    os.symlink(target, link)
    agent, env = tabular()
    for source in (link, folder):  # named directly, and found through the folder: alike
        with pytest.raises(CheckpointError, match="symbolic link .* outside the checkpoint folder"):
            load_checkpoint(source, agent, env)
        with pytest.raises(CheckpointError, match="outside the checkpoint folder"):
            rk.run(agent, env, rk.StopAfterNSteps(5), resume_from=source)
    assert load_checkpoint(target, agent, env).step == 30  # the file itself is fine


def test_a_symlink_within_its_folder_named_directly_is_loaded(tmp_path):
    target = saved(tmp_path, *tabular(seed=1))
    link = tmp_path / "latest.npz"
    os.symlink(target.name, link)
    agent, env = tabular()
    assert load_checkpoint(link, agent, env).step == 30
