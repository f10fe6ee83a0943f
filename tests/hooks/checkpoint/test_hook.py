"""rlkit/hooks/checkpoint/hook.py: CheckpointHook's arguments and schedule."""

from __future__ import annotations

import pytest

import rlkit as rk
from rlkit.hooks.checkpoint import (
    CheckpointHook,
    latest_checkpoint,
    list_checkpoints,
    read_checkpoint,
)

pytest.importorskip("safetensors")  # the default checkpoint format


def test_checkpoint_hook_arguments_are_checked():
    with pytest.raises(ValueError, match="every_n_steps must be a positive integer"):
        CheckpointHook("x", every_n_steps=0)
    with pytest.raises(ValueError, match="keep_last must be a positive integer"):
        CheckpointHook("x", keep_last=-1)
    with pytest.raises(ValueError, match="format must be"):
        CheckpointHook("x", format="pickle")
    with pytest.raises(ValueError, match="metadata must be JSON"):
        CheckpointHook("x", metadata={"f": print})


def test_counts_environment_steps_and_episodes_and_keeps_the_last_k(tmp_path):
    hook = CheckpointHook(tmp_path, every_n_steps=30, keep_last=2)
    rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(100), hook)
    assert hook.steps == 100
    assert [p.name for p in list_checkpoints(tmp_path)] == [
        f"checkpoint-{90:012d}.safetensors",
        f"checkpoint-{100:012d}.safetensors",  # the final checkpoint
    ]
    assert read_checkpoint(latest_checkpoint(tmp_path))["meta"]["finished"] is True
    episodes = CheckpointHook(tmp_path / "e", every_n_episodes=2, keep_last=None, format="npz")
    rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNEpisodes(5),
           episodes)  # fmt: skip
    saved = [read_checkpoint(p)["meta"]["episode"] for p in list_checkpoints(tmp_path / "e")]
    assert saved == [2, 4, 5] and episodes.episodes == 5


def test_checkpoint_hook_outside_rk_run_says_so(tmp_path):
    hook = CheckpointHook(tmp_path)
    with pytest.raises(RuntimeError, match="not attached to a run"):
        hook(rk.PRE_EXPERIMENT_STAGE, None, None)


def test_a_run_stopped_by_a_stop_signal_is_not_finished_and_resumes(tmp_path):
    """Ctrl-C (a ``StopSignal`` in the stop condition) ends the run with a checkpoint that is not
    ``finished``: resuming it continues to the run's own end."""
    signal = rk.StopSignal()
    interrupt = rk.DoEveryNSteps(lambda t, policy, env: signal.set() if t == 7 else None, n=1)
    hook = CheckpointHook(tmp_path, every_n_steps=1000)
    stop = rk.StopAfterNSteps(30) | signal
    policy, env = rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0)
    rk.run(policy, env, stop, interrupt + hook)
    meta = read_checkpoint(latest_checkpoint(tmp_path))["meta"]
    assert (meta["step"], meta["finished"]) == (7, False)
    signal.clear()
    resumed = CheckpointHook(tmp_path, every_n_steps=1000)
    stop = rk.StopAfterNSteps(30) | rk.StopSignal()
    rk.run(
        rk.RandomPolicy(),
        rk.GymEnv("CartPole-v1"),
        stop,
        rk.DoEveryNSteps(lambda t, policy, env: None, n=1) + resumed,
        resume_from=tmp_path,
    )
    meta = read_checkpoint(latest_checkpoint(tmp_path))["meta"]
    assert (meta["step"], meta["finished"]) == (30, True)  # its own end: finished
