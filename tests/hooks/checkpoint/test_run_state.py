"""rlkit/hooks/checkpoint/run_state.py: saving and loading a run's objects (both file formats, the
global torch generator, user hooks without state_dict). Resume equivalence of whole runs is in
test_resume.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from state_helpers import FORMATS, Holder, assert_same, rich_state

import rlkit as rk
from rlkit.hooks.checkpoint import (
    CheckpointHook,
    load_checkpoint,
    read_checkpoint,
    save_checkpoint,
)

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("fmt", FORMATS)
def test_file_round_trip_in_both_formats(tmp_path, fmt):
    policy, env = Holder(rich_state()), Holder({"x": np.arange(3)})
    path = save_checkpoint(
        tmp_path / "c", policy, env, step=5, episode=1, metadata={"seed": 3}, format=fmt
    )
    assert path.read_bytes()[:4] == (b"PK\x03\x04" if fmt == "npz" else path.read_bytes()[:4])
    payload = read_checkpoint(path)
    assert payload["meta"]["step"] == 5 and payload["meta"]["metadata"] == {"seed": 3}
    assert_same(payload["policy"]["state"], rich_state())
    restored = Holder(None)
    info = load_checkpoint(path, restored, Holder(None))
    assert_same(restored.state, rich_state())
    assert (info.step, info.episode, info.finished) == (5, 1, False)


def test_global_torch_generator_is_saved_and_restored(tmp_path):
    torch.manual_seed(5)
    save_checkpoint(tmp_path / "c", Holder({}), Holder({}))
    expected = torch.rand(3)
    torch.manual_seed(6)
    load_checkpoint(tmp_path / "c", Holder(None), Holder(None))
    assert torch.equal(torch.rand(3), expected)


def test_user_hooks_without_state_dict_are_saved_by_their_plain_attributes(tmp_path):
    class CountSteps(rk.AbstractHook):
        def __init__(self) -> None:
            self.steps, self.sink = 0, open(tmp_path / "log", "w")  # noqa: SIM115

        def post_act(self, policy: Any, env: Any) -> None:
            self.steps += 1

    counter = CountSteps()
    rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(7),
           counter + CheckpointHook(tmp_path))  # fmt: skip
    fresh = CountSteps()
    load_checkpoint(tmp_path, rk.RandomPolicy(), rk.GymEnv("CartPole-v1"), None,
                    fresh + CheckpointHook(tmp_path))  # fmt: skip
    assert fresh.steps == 7
    counter.sink.close()
    fresh.sink.close()
