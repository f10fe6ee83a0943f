"""rlkit/hooks/checkpoint/format.py: encoding states, safe loading of corrupt, truncated, foreign
and malicious files, and the npz fallback without safetensors."""

from __future__ import annotations

import io
import json
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest
from state_helpers import FORMATS, Holder, assert_same, rich_state

import rlkit as rk
from rlkit.hooks.checkpoint import (
    VERSION,
    CheckpointError,
    CheckpointHook,
    decode_state,
    encode_state,
    latest_checkpoint,
    load_checkpoint,
    read_checkpoint,
    save_checkpoint,
)

torch = pytest.importorskip("torch")


def test_encode_decode_round_trip_keeps_types_and_dtypes():
    state = rich_state()
    tree, arrays = encode_state(state)
    json.dumps(tree, allow_nan=False)  # the tree is strict JSON
    assert_same(decode_state(tree, arrays), state)


def test_values_that_are_not_checkpoint_data_are_refused_with_their_path():
    with pytest.raises(CheckpointError, match=r"state\.learner\.f: values of type function"):
        encode_state({"learner": {"f": lambda x: x}})
    with pytest.raises(CheckpointError, match=r"state\[1\]: numpy arrays of dtype object"):
        encode_state([1, np.array([None, 1], dtype=object)])


def _good_checkpoint(folder: Path, fmt: str = "safetensors") -> Path:
    return save_checkpoint(
        folder / f"checkpoint-{1:012d}.{fmt}",
        Holder({"w": np.arange(10.0)}),
        Holder({}),
        step=1,
        format=fmt,
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_truncated_and_corrupt_files_are_refused_naming_the_file(tmp_path, fmt):
    data = _good_checkpoint(tmp_path, fmt).read_bytes()
    bad = tmp_path / "bad"
    for cut in (0, 5, 8, 30, len(data) // 2, len(data) - 1):
        bad.write_bytes(data[:cut])
        with pytest.raises(CheckpointError, match=f"{bad}.*(truncated|corrupt|not an rlkit)"):
            read_checkpoint(bad)
    flipped = bytearray(data)
    flipped[len(data) // 3] ^= 0xFF
    bad.write_bytes(bytes(flipped))
    with pytest.raises(CheckpointError, match=str(bad)):
        read_checkpoint(bad)


def test_an_incompatible_version_is_refused(tmp_path):
    path = _good_checkpoint(tmp_path)
    data = path.read_bytes()
    newer = data.replace(b'\\"version\\": 1', f'\\"version\\": {VERSION + 1}'.encode())
    assert newer != data
    path.write_bytes(newer)
    with pytest.raises(CheckpointError, match=r"version 2 is not supported.*newer rlkit"):
        read_checkpoint(path)


def test_foreign_files_are_refused(tmp_path):
    import safetensors.numpy

    plain = tmp_path / "plain.safetensors"
    plain.write_bytes(safetensors.numpy.save({"w": np.zeros(2)}))
    with pytest.raises(CheckpointError, match="without rlkit metadata"):
        read_checkpoint(plain)
    npz = tmp_path / "plain.npz"
    np.savez(npz, w=np.zeros(2))
    with pytest.raises(CheckpointError, match="not an rlkit checkpoint"):
        read_checkpoint(npz)
    text = tmp_path / "notes.txt"
    text.write_text("hello world, this is not a checkpoint")
    with pytest.raises(CheckpointError, match="not an rlkit checkpoint"):
        read_checkpoint(text)


class _Payload:
    """Unpickling this creates the marker file (arbitrary code execution)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return exec, (f"open({str(self.marker)!r}, 'w').close()",)


def _malicious_files(folder: Path, marker: Path) -> dict[str, Path]:
    files = {}
    raw = folder / f"checkpoint-{10:012d}.safetensors"  # named like a checkpoint
    raw.write_bytes(pickle.dumps({"policy": _Payload(marker)}))
    files["pickle"] = raw
    npz = folder / "objects.npz"
    objects = np.empty(1, dtype=object)
    objects[0] = _Payload(marker)
    buffer = io.BytesIO()
    np.savez(buffer, __rlkit__=np.frombuffer(b"{}", np.uint8), a0=objects)
    npz.write_bytes(buffer.getvalue())
    files["npz"] = npz
    pt = folder / "model.pt"
    torch.save({"policy": _Payload(marker)}, pt)
    files["torch"] = pt
    return files


def test_the_malicious_payloads_would_run_code_if_unpickled(tmp_path):
    """The check of the test itself: these files do execute code when unpickled."""
    marker = tmp_path / "pwned"
    files = _malicious_files(tmp_path, marker)
    pickle.loads(files["pickle"].read_bytes())
    assert marker.exists()
    marker.unlink()
    np.load(files["npz"], allow_pickle=True)["a0"]
    assert marker.exists()


@pytest.mark.parametrize("kind", ["pickle", "npz", "torch"])
def test_a_checkpoint_whose_pickle_would_run_code_is_refused(tmp_path, kind):
    marker = tmp_path / "pwned"
    path = _malicious_files(tmp_path, marker)[kind]
    with pytest.raises(CheckpointError, match=f"{path.name}.*(pickle|not an rlkit)") as error:
        read_checkpoint(path)
    assert "pickle" in str(error.value)
    with pytest.raises(CheckpointError):
        load_checkpoint(path, Holder(None), Holder(None))
    if kind == "pickle":  # also when found as the newest checkpoint of a folder
        with pytest.raises(CheckpointError, match="pickle"):
            load_checkpoint(tmp_path, Holder(None), Holder(None))
    assert not marker.exists()


def test_torch_files_in_an_npz_named_checkpoint_are_refused(tmp_path):
    path = tmp_path / "zipped.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("archive/data.pkl", pickle.dumps([1]))
    with pytest.raises(CheckpointError, match="torch.save files are refused"):
        read_checkpoint(path)


def test_without_safetensors_checkpoints_fall_back_to_npz(tmp_path, monkeypatch):
    import rlkit.hooks.checkpoint.format as checkpoint_format

    monkeypatch.setattr(checkpoint_format, "_safetensors", lambda: None)
    hook = CheckpointHook(tmp_path, every_n_steps=5)
    rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(12), hook)
    assert latest_checkpoint(tmp_path).name == f"checkpoint-{12:012d}.npz"
    assert load_checkpoint(tmp_path, rk.RandomPolicy(), rk.GymEnv("CartPole-v1")).step == 12
    with pytest.raises(CheckpointError, match=r"pip install safetensors"):
        save_checkpoint(tmp_path / "x", Holder({}), Holder({}), format="safetensors")
