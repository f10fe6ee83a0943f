"""rlkit/hooks/checkpoint/files.py: checkpoint names, the newest checkpoint, temporary files,
atomic writes."""

from __future__ import annotations

import pytest

import rlkit as rk
from rlkit.hooks.checkpoint import CheckpointError, CheckpointHook, latest_checkpoint
from rlkit.hooks.checkpoint import files as files_module
from rlkit.hooks.checkpoint.files import (
    atomic_write,
    is_temporary,
    list_checkpoints,
    resolve_checkpoint,
)


def _touch(folder, *names):
    for name in names:
        (folder / name).write_bytes(b"x")


def test_list_checkpoints_orders_by_step_and_ignores_other_files(tmp_path):
    _touch(
        tmp_path,
        f"checkpoint-{100:012d}.npz",
        f"checkpoint-{9:012d}.safetensors",
        f"checkpoint-{20:012d}.safetensors",
        "checkpoint-20.safetensors",  # not 12 digits
        f"checkpoint-{5:012d}.pt",  # not a checkpoint format
        ".checkpoint-1.2.tmp",
        "notes.txt",
    )
    assert [p.name for p in list_checkpoints(tmp_path)] == [
        f"checkpoint-{9:012d}.safetensors",
        f"checkpoint-{20:012d}.safetensors",
        f"checkpoint-{100:012d}.npz",
    ]
    assert latest_checkpoint(tmp_path).name == f"checkpoint-{100:012d}.npz"


def test_a_missing_or_empty_folder_has_no_checkpoints(tmp_path):
    assert list_checkpoints(tmp_path / "missing") == []
    assert latest_checkpoint(tmp_path / "missing") is None
    assert latest_checkpoint(tmp_path) is None


def test_resolve_checkpoint(tmp_path):
    with pytest.raises(CheckpointError, match="no checkpoint in"):
        resolve_checkpoint(tmp_path)
    with pytest.raises(CheckpointError, match="does not exist"):
        resolve_checkpoint(tmp_path / "gone.npz")
    _touch(tmp_path, f"checkpoint-{1:012d}.npz", f"checkpoint-{2:012d}.npz")
    assert resolve_checkpoint(tmp_path) == tmp_path / f"checkpoint-{2:012d}.npz"
    single = tmp_path / f"checkpoint-{1:012d}.npz"
    assert resolve_checkpoint(single) == single  # a file is taken as it is


def test_is_temporary():
    assert is_temporary(".checkpoint-123.456.tmp")
    assert not is_temporary("checkpoint-123.456.tmp")
    assert not is_temporary(f"checkpoint-{1:012d}.npz")
    assert not is_temporary(".checkpoint-x.tmp")


def test_atomic_write_replaces_the_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "c.npz"
    atomic_write(path, b"old")
    atomic_write(path, b"new")
    assert path.read_bytes() == b"new"
    assert [p.name for p in tmp_path.iterdir()] == ["c.npz"]


def test_an_interrupted_atomic_write_keeps_the_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "c.npz"
    atomic_write(path, b"previous")

    def killed(file, data):
        file.write(data[:2])
        raise KeyboardInterrupt

    monkeypatch.setattr(files_module, "_write_bytes", killed)
    with pytest.raises(KeyboardInterrupt):
        atomic_write(path, b"half written")
    assert path.read_bytes() == b"previous"
    assert [p.name for p in tmp_path.iterdir()] == ["c.npz"]  # the temporary file is removed


def test_stale_temporary_files_are_removed_and_never_loaded(tmp_path):
    stale = tmp_path / ".checkpoint-123.456.tmp"
    stale.write_bytes(b"half a checkpoint")
    assert latest_checkpoint(tmp_path) is None
    rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(3),
           CheckpointHook(tmp_path))  # fmt: skip
    assert not stale.exists() and latest_checkpoint(tmp_path) is not None
