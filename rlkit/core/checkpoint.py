"""Checkpoints: save everything a run needs to continue exactly, and resume from it.

A checkpoint is one file holding the state (:mod:`rlkit.core.state`) of the policy (parameters,
optimizer and scheduler state, target networks, replay contents with priorities, explorer
schedule, every generator inside), of the environment, of the stop condition and of every hook
of the run, the torch global generator (when torch is loaded), and the step and episode counters.

Format (version :data:`VERSION`):

* arrays and tensors in a ``safetensors`` file (``pip install rlkit[checkpoint]``), or, without
  safetensors, a numpy ``.npz`` archive (read with ``allow_pickle=False``);
* everything else as JSON (in the safetensors metadata under ``"__rlkit__"``, or in the npz
  entry ``__rlkit__``), with the format name, the version and a SHA-256 checksum of the whole
  contents (safetensors and npz have none of their own). Tuples, dicts with non-string keys,
  numpy scalars (with their dtype), torch tensors (dtype and device), bytes and non-finite
  floats are tagged so they come back as they were.

Writing goes to a temporary file in the same folder, which is flushed, synced and renamed over
the final name: a process killed while writing leaves the previous checkpoint intact. Loading
never unpickles anything: a pickle (or a ``torch.save`` file, an npz with object arrays) is
refused with :class:`CheckpointError`, and so is a truncated or corrupt file or one of another
format version.

Example:
    >>> import rlkit as rk, tempfile
    >>> from rlkit.core.checkpoint import CheckpointHook, latest_checkpoint
    >>> folder = tempfile.mkdtemp()
    >>> def build():
    ...     return rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0)
    >>> policy, env = build()
    >>> hook = rk.TotalRewardPerEpisode() + CheckpointHook(folder, every_n_steps=50)
    >>> _ = rk.run(policy, env, rk.StopAfterNSteps(120), hook)
    >>> latest_checkpoint(folder).name
    'checkpoint-000000000120.safetensors'
    >>> policy, env = build()  # e.g. in a new process: same objects, then the saved state
    >>> hook = rk.TotalRewardPerEpisode() + CheckpointHook(folder, every_n_steps=50)
    >>> _ = rk.run(policy, env, rk.StopAfterNSteps(200), hook, resume_from=folder)
    >>> hook[1].steps  # steps 121 to 200 were run
    200
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import math
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .hooks import AbstractHook, ComposedHook
from .state import attribute_state, get_state, has_state, load_attribute_state, set_state

__all__ = [
    "CheckpointError",
    "CheckpointHook",
    "CheckpointInfo",
    "save_checkpoint",
    "load_checkpoint",
    "read_checkpoint",
    "latest_checkpoint",
    "list_checkpoints",
    "prepare_checkpoints",
    "encode_state",
    "decode_state",
    "FORMAT",
    "VERSION",
]

#: Name of the format, written into every checkpoint.
FORMAT = "rlkit-checkpoint"
#: Version of the format this rlkit writes and reads.
VERSION = 1

_NAME = re.compile(r"^checkpoint-(\d{12})\.(safetensors|npz)$")
_TEMPORARY = re.compile(r"^\.checkpoint-\d+\.\d+\.tmp$")
_JSON_KEY = "__rlkit__"
_ZIP_MAGIC = b"PK\x03\x04"
# dtypes safetensors stores natively; other dtypes are stored as raw little-endian bytes
_NATIVE = {np.dtype(t) for t in "<f8 <f4 <f2 <i8 <i4 <i2 |i1 <u8 <u4 <u2 |u1 |b1".split()}
_TORCH_NATIVE = set("float64 float32 float16 int64 int32 int16 int8 uint8 bool".split())


class CheckpointError(ValueError):
    """A checkpoint that cannot be written or read: corrupt, truncated, of another format
    version, holding pickled code, or not matching the objects it is loaded into."""


# ---------------------------------------------------------------------------------------------
# encoding: nested state <-> (JSON tree, named arrays)


def encode_state(state: Any) -> tuple[Any, dict[str, np.ndarray]]:
    """Split a nested state into a JSON-able tree and the arrays it refers to (by name)."""
    arrays: dict[str, np.ndarray] = {}
    return _encode(state, arrays, "state"), arrays


def _encode(x: Any, arrays: dict[str, np.ndarray], path: str) -> Any:
    if isinstance(x, np.generic):  # first: np.float64 and np.str_ are also float and str
        if x.dtype.kind in "biufU":
            return {"$scalar": x.dtype.str, "value": _encode(x.item(), arrays, path)}
        return {"$scalar": x.dtype.str, "array": _encode_array(np.asarray(x), arrays, path)}
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, int):
        return int(x)
    if isinstance(x, float):
        return float(x) if math.isfinite(x) else {"$float": repr(float(x))}
    if isinstance(x, dict):
        if all(isinstance(k, str) and not k.startswith("$") for k in x):
            return {k: _encode(v, arrays, f"{path}.{k}") for k, v in x.items()}
        return {
            "$dict": [
                [_encode(k, arrays, f"{path}<key>"), _encode(v, arrays, f"{path}[{k!r}]")]
                for k, v in x.items()
            ]
        }
    if isinstance(x, list):
        return [_encode(v, arrays, f"{path}[{i}]") for i, v in enumerate(x)]
    if isinstance(x, tuple):
        return {"$tuple": [_encode(v, arrays, f"{path}[{i}]") for i, v in enumerate(x)]}
    if isinstance(x, np.ndarray):
        return _encode_array(x, arrays, path)
    if isinstance(x, (bytes, bytearray)):
        return {"$bytes": base64.b64encode(bytes(x)).decode("ascii")}
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return _encode_tensor(x, arrays, path, torch)
    raise CheckpointError(
        f"cannot save {path}: values of type {type(x).__name__} are not checkpoint data "
        f"(expected dicts, lists, tuples, numpy arrays/scalars, torch tensors, int, float, str, "
        f"bool, None); give its owner a state_dict() that returns plain data"
    )


def _encode_array(x: np.ndarray, arrays: dict[str, np.ndarray], path: str) -> dict[str, Any]:
    if x.dtype.kind in "OV" or x.dtype.hasobject:
        raise CheckpointError(
            f"cannot save {path}: numpy arrays of dtype {x.dtype} (objects or records) are not "
            f"checkpoint data"
        )
    key = f"a{len(arrays)}"
    node = {"$array": key, "dtype": x.dtype.str, "shape": list(x.shape)}
    if x.dtype in _NATIVE:
        arrays[key] = np.ascontiguousarray(x)
    else:  # e.g. complex, big-endian, strings: raw little-endian bytes, dtype kept in the tree
        little = x.astype(x.dtype.newbyteorder("<"), copy=False)
        arrays[key] = np.ascontiguousarray(little).reshape(-1).view(np.uint8)
        node["bytes"] = True
    return node


def _encode_tensor(x: Any, arrays: dict[str, np.ndarray], path: str, torch: Any) -> dict:
    dtype = str(x.dtype).removeprefix("torch.")
    t = x.detach().to("cpu").contiguous()
    key = f"a{len(arrays)}"
    node = {"$tensor": key, "dtype": dtype, "shape": list(t.shape), "device": str(x.device)}
    if dtype in _TORCH_NATIVE:
        arrays[key] = t.numpy().copy()
    else:  # bfloat16, complex, ...: raw bytes
        arrays[key] = t.reshape(-1).view(torch.uint8).numpy().copy()
        node["bytes"] = True
    return node


def decode_state(tree: Any, arrays: dict[str, np.ndarray]) -> Any:
    """Inverse of :func:`encode_state`. Raises :class:`CheckpointError` on malformed input."""
    return _decode(tree, arrays, "state")


def _decode(x: Any, arrays: dict[str, np.ndarray], path: str) -> Any:
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if isinstance(x, list):
        return [_decode(v, arrays, f"{path}[{i}]") for i, v in enumerate(x)]
    if not isinstance(x, dict):
        raise CheckpointError(f"malformed checkpoint data at {path}: {x!r:.80}")
    tag = next((k for k in x if k.startswith("$")), None)
    if tag is None:
        return {k: _decode(v, arrays, f"{path}.{k}") for k, v in x.items()}
    try:
        return _decode_tagged(tag, x, arrays, path)
    except CheckpointError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise CheckpointError(f"malformed checkpoint data at {path} ({tag}): {error}") from None


def _decode_tagged(tag: str, x: dict, arrays: dict[str, np.ndarray], path: str) -> Any:
    if tag == "$tuple":
        return tuple(_decode(v, arrays, f"{path}[{i}]") for i, v in enumerate(x[tag]))
    if tag == "$dict":
        return {
            _freeze(_decode(k, arrays, f"{path}<key>")): _decode(v, arrays, f"{path}[{k!r}]")
            for k, v in x[tag]
        }
    if tag == "$float":
        if x[tag] not in ("nan", "inf", "-inf"):
            raise ValueError(f"not a non-finite float: {x[tag]!r}")
        return float(x[tag])
    if tag == "$bytes":
        return base64.b64decode(x[tag], validate=True)
    if tag == "$scalar":
        dtype = _dtype(x[tag])
        if "array" in x:
            return _decode(x["array"], arrays, path)[()]
        return np.array(x["value"], dtype=dtype)[()]
    if tag == "$array":
        return _decode_array(x, arrays, path)
    if tag == "$tensor":
        return _decode_tensor(x, arrays, path)
    raise ValueError(f"unknown tag {tag!r}")


def _freeze(key: Any) -> Any:
    return tuple(_freeze(k) for k in key) if isinstance(key, (list, tuple)) else key


def _dtype(text: Any) -> np.dtype:
    if not isinstance(text, str):
        raise ValueError(f"dtype must be a string, got {text!r}")
    dtype = np.dtype(text)
    if dtype.hasobject or dtype.kind == "V":
        raise CheckpointError(f"refusing dtype {text!r}: object arrays would need unpickling")
    return dtype


def _stored(x: dict, arrays: dict[str, np.ndarray], key_tag: str, path: str) -> np.ndarray:
    key = x[key_tag]
    if key not in arrays:
        raise CheckpointError(f"checkpoint data at {path} refers to a missing array {key!r}")
    return arrays[key]


def _decode_array(x: dict, arrays: dict[str, np.ndarray], path: str) -> np.ndarray:
    stored = _stored(x, arrays, "$array", path)
    dtype, shape = _dtype(x["dtype"]), tuple(int(n) for n in x["shape"])
    if x.get("bytes"):
        little = dtype.newbyteorder("<")
        stored = np.ascontiguousarray(stored).view(np.uint8).view(little).astype(dtype)
    elif stored.dtype != dtype:
        raise CheckpointError(f"array at {path}: stored as {stored.dtype}, recorded as {dtype}")
    if int(np.prod(shape)) != stored.size:
        raise CheckpointError(f"array at {path}: {stored.size} values for shape {shape}")
    return stored.reshape(shape).copy()


def _decode_tensor(x: dict, arrays: dict[str, np.ndarray], path: str) -> Any:
    import torch

    stored = _stored(x, arrays, "$tensor", path)
    dtype = getattr(torch, str(x["dtype"]), None)
    if not isinstance(dtype, torch.dtype):
        raise CheckpointError(f"tensor at {path}: unknown torch dtype {x['dtype']!r}")
    shape = tuple(int(n) for n in x["shape"])
    t = torch.from_numpy(np.ascontiguousarray(stored).copy())
    if x.get("bytes"):
        t = t.view(torch.uint8).view(dtype)
    elif t.dtype != dtype:
        raise CheckpointError(f"tensor at {path}: stored as {t.dtype}, recorded as {dtype}")
    t = t.reshape(shape)
    device = str(x.get("device", "cpu"))
    if device != "cpu":
        with contextlib.suppress(RuntimeError, AssertionError):  # device not available here
            t = t.to(device)
    return t


# ---------------------------------------------------------------------------------------------
# files


def _safetensors() -> Any:
    try:
        import safetensors.numpy
    except ImportError:  # pragma: no cover - depends on the installation
        return None
    return safetensors.numpy


def _write_bytes(file: Any, data: bytes) -> None:
    """Write ``data`` to an open file (a separate function so tests can slow it down)."""
    file.write(data)


def _atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename."""
    tmp = path.parent / f".checkpoint-{os.getpid()}.{time.monotonic_ns()}.tmp"
    try:
        with open(tmp, "wb") as file:
            _write_bytes(file, data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    with contextlib.suppress(OSError):  # make the rename durable (POSIX)
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _serialise(payload: dict[str, Any], fmt: str) -> bytes:
    tree, arrays = encode_state(payload)
    body = json.dumps(tree, allow_nan=False)
    text = json.dumps(
        {"format": FORMAT, "version": VERSION, "sha256": _digest(body, arrays), "payload": body}
    )
    if fmt == "safetensors":
        st = _safetensors()
        if st is None:
            raise CheckpointError(
                "format='safetensors' needs the safetensors package: pip install rlkit[checkpoint]"
            )
        return st.save(arrays, metadata={_JSON_KEY: text})
    import io

    buffer = io.BytesIO()
    np.savez(buffer, **{_JSON_KEY: np.frombuffer(text.encode("utf-8"), np.uint8)}, **arrays)
    return buffer.getvalue()


def _digest(body: str, arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 of the JSON payload and of every array (name, dtype, shape and bytes)."""
    digest = hashlib.sha256(body.encode("utf-8"))
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"\0{name}\0{array.dtype.str}\0{array.shape}\0".encode())
        digest.update(array.reshape(-1).view(np.uint8))
    return digest.hexdigest()


def read_checkpoint(path: str | os.PathLike) -> dict[str, Any]:
    """Read and validate a checkpoint file (never unpickling); return its decoded payload.

    Raises :class:`CheckpointError` naming the file and what is wrong with it.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise CheckpointError(f"cannot read checkpoint {path}: {error}") from None
    if _looks_like_safetensors(data):
        text, arrays = _read_safetensors(path, data)
    elif data[:4] == _ZIP_MAGIC:
        text, arrays = _read_npz(path, data)
    elif data[:1] == b"\x80" or data[:2] in (b"(d", b"(l", b"}q", b"]q", b"cc"):
        raise CheckpointError(
            f"{path} is a Python pickle, not an rlkit checkpoint; rlkit never unpickles "
            f"checkpoint files (unpickling can run arbitrary code)"
        )
    else:
        _read_safetensors(path, data)  # raises, saying what is wrong
    try:
        document = json.loads(text)
    except ValueError as error:
        raise CheckpointError(
            f"{path}: corrupt checkpoint metadata (invalid JSON: {error})"
        ) from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not an rlkit checkpoint (format {FORMAT!r} missing)")
    version = document.get("version")
    if version != VERSION:
        newer = isinstance(version, int) and version > VERSION
        raise CheckpointError(
            f"{path}: checkpoint format version {version!r} is not supported; this rlkit reads "
            f"version {VERSION}"
            + (" (the file was written by a newer rlkit: upgrade rlkit)" if newer else "")
        )
    body = document.get("payload")
    if not isinstance(body, str) or document.get("sha256") != _digest(body, arrays):
        raise CheckpointError(
            f"{path}: corrupt checkpoint (its SHA-256 checksum does not match its contents)"
        )
    try:
        payload = decode_state(json.loads(body), arrays)
    except CheckpointError as error:
        raise CheckpointError(f"{path}: {error}") from None
    if not isinstance(payload, dict) or not {"meta", "policy", "env"} <= set(payload):
        raise CheckpointError(f"{path}: incomplete checkpoint (no policy/env/meta sections)")
    return payload


def _looks_like_safetensors(data: bytes) -> bool:
    """An 8-byte little-endian header size that fits the file, then a JSON object."""
    return (
        len(data) >= 10
        and int.from_bytes(data[:8], "little") <= len(data) - 8
        and (data[8:9] == b"{")
    )


def _read_safetensors(path: Path, data: bytes) -> tuple[str, dict[str, np.ndarray]]:
    if len(data) < 8:
        raise CheckpointError(f"{path}: truncated checkpoint ({len(data)} bytes)")
    size = int.from_bytes(data[:8], "little")
    if size > len(data) - 8 or data[8:9] != b"{":
        raise CheckpointError(
            f"{path} is not an rlkit checkpoint or is truncated: expected a safetensors header "
            f"of {size} bytes in a file of {len(data)} bytes"
        )
    try:
        header = json.loads(data[8 : 8 + size])
        text = header["__metadata__"][_JSON_KEY]
    except (ValueError, KeyError, TypeError):
        raise CheckpointError(
            f"{path} is not an rlkit checkpoint (a safetensors file without rlkit metadata, or a "
            f"corrupt header)"
        ) from None
    st = _safetensors()
    if st is None:  # pragma: no cover - depends on the installation
        raise CheckpointError(
            f"{path} is a safetensors checkpoint; reading it needs the safetensors package: "
            f"pip install rlkit[checkpoint]"
        )
    try:
        arrays = st.load(data)
    except Exception as error:  # noqa: BLE001 - safetensors raises its own error types
        raise CheckpointError(f"{path}: corrupt or truncated checkpoint ({error})") from None
    return text, arrays


def _read_npz(path: Path, data: bytes) -> tuple[str, dict[str, np.ndarray]]:
    import io
    import zipfile

    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            names = set(archive.files)
            if _JSON_KEY not in names:
                raise CheckpointError(
                    f"{path} is not an rlkit checkpoint (a zip/npz without {_JSON_KEY}; "
                    f"torch.save files are refused: they hold pickles)"
                )
            arrays = {name: archive[name] for name in names}
    except CheckpointError:
        raise
    except ValueError as error:
        if "allow_pickle" in str(error):
            raise CheckpointError(
                f"{path} holds pickled object arrays; rlkit never unpickles checkpoint files "
                f"(unpickling can run arbitrary code)"
            ) from None
        raise CheckpointError(f"{path}: corrupt or truncated checkpoint ({error})") from None
    except (OSError, EOFError, zipfile.BadZipFile) as error:
        raise CheckpointError(f"{path}: corrupt or truncated checkpoint ({error})") from None
    text = arrays.pop(_JSON_KEY)
    if text.dtype != np.uint8:
        raise CheckpointError(f"{path}: corrupt checkpoint metadata (dtype {text.dtype})")
    try:
        return text.tobytes().decode("utf-8"), arrays
    except UnicodeDecodeError:
        raise CheckpointError(f"{path}: corrupt checkpoint metadata (not UTF-8)") from None


def list_checkpoints(folder: str | os.PathLike) -> list[Path]:
    """The checkpoint files of ``folder`` (``checkpoint-<step>.<ext>``), oldest step first."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := _NAME.match(p.name))]
    return [p for _, p in sorted(found)]


def latest_checkpoint(folder: str | os.PathLike) -> Path | None:
    """The newest checkpoint file of ``folder`` (highest step), or None if there is none.

    Temporary files of interrupted writes are never returned.
    """
    found = list_checkpoints(folder)
    return found[-1] if found else None


def _resolve(path: str | os.PathLike) -> Path:
    path = Path(path)
    if path.is_dir():
        latest = latest_checkpoint(path)
        if latest is None:
            raise CheckpointError(f"no checkpoint in {path} (expected checkpoint-<step> files)")
        return latest
    if not path.exists():
        raise CheckpointError(f"checkpoint {path} does not exist")
    return path


# ---------------------------------------------------------------------------------------------
# what a checkpoint holds


def _hooks(hook: Any) -> list[Any]:
    """The hooks of a chain, flattened, without checkpoint hooks."""
    if hook is None:
        return []
    hooks = hook.hooks if isinstance(hook, ComposedHook) else (hook,)
    return [h for h in hooks if not isinstance(h, CheckpointHook)]


def _checkpoint_hooks(hook: Any) -> list[CheckpointHook]:
    hooks = hook.hooks if isinstance(hook, ComposedHook) else (hook,)
    return [h for h in hooks if isinstance(h, CheckpointHook)]


def _part(obj: Any) -> dict[str, Any]:
    """``{"type": ..., "kind": ..., "state": ...}`` of a stop condition or hook: its
    ``state_dict``, or else its plain attributes (see :func:`attribute_state`)."""
    name = type(obj).__qualname__
    if has_state(obj):
        return {"type": name, "kind": "state_dict", "state": get_state(obj)}
    if hasattr(obj, "__dict__") and not callable(getattr(obj, "__code__", None)):
        return {"type": name, "kind": "attributes", "state": attribute_state(obj)}
    return {"type": name, "kind": "none", "state": None}


def _load_part(obj: Any, saved: dict[str, Any]) -> None:
    if saved["kind"] == "state_dict":
        set_state(obj, saved["state"])
    elif saved["kind"] == "attributes":
        load_attribute_state(obj, saved["state"])


def _required(obj: Any, what: str) -> dict[str, Any]:
    if not has_state(obj):
        raise TypeError(
            f"checkpoint: the {what} {type(obj).__name__} has no state_dict(); every stateful "
            f"object of a checkpointed run implements state_dict() and load_state_dict(state)"
        )
    return {"type": type(obj).__qualname__, "state": get_state(obj)}


def _torch_rng() -> Any:
    torch = sys.modules.get("torch")
    return None if torch is None else torch.random.get_rng_state()


@dataclass
class CheckpointInfo:
    """What :func:`load_checkpoint` restored: the file, the counters and the user metadata."""

    path: Path
    step: int | None
    episode: int | None
    finished: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)
    created: str = ""


def save_checkpoint(
    path: str | os.PathLike,
    policy: Any,
    env: Any,
    stop_condition: Any = None,
    hook: Any = None,
    *,
    step: int | None = None,
    episode: int | None = None,
    finished: bool = False,
    metadata: dict[str, Any] | None = None,
    format: str = "auto",
) -> Path:
    """Write a checkpoint of a run (atomically) to ``path``; return the path.

    ``policy`` and ``env`` must implement ``state_dict``; the stop condition and the hooks are
    saved through their ``state_dict`` or else their plain attributes. ``format`` is
    ``"safetensors"``, ``"npz"`` or ``"auto"`` (safetensors when installed).
    """
    fmt = _format(format)
    payload = {
        "meta": {
            "step": step,
            "episode": episode,
            "finished": bool(finished),
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "rlkit_version": _rlkit_version(),
            "metadata": dict(metadata or {}),
        },
        "policy": _required(policy, "policy"),
        "env": _required(env, "env"),
        "stop_condition": None if stop_condition is None else _part(stop_condition),
        "hooks": [_part(h) for h in _hooks(hook)],
        "torch_rng": _torch_rng(),
    }
    data = _serialise(payload, fmt)
    path = Path(path)
    try:
        _atomic_write(path, data)
    except OSError as error:
        raise CheckpointError(f"cannot write checkpoint {path}: {error}") from error
    return path


def load_checkpoint(
    path: str | os.PathLike,
    policy: Any,
    env: Any,
    stop_condition: Any = None,
    hook: Any = None,
) -> CheckpointInfo:
    """Restore a run's objects from a checkpoint file, or from the newest one in a folder.

    The objects must be built the same way as those saved (same classes, same hook chain);
    checkpoint hooks in ``hook`` get the saved step and episode counters. The whole file is read
    and checked before anything is changed. Raises :class:`CheckpointError` naming the file.
    """
    path = _resolve(path)
    payload = read_checkpoint(path)
    _check_types(path, payload, policy, env, stop_condition, hook)
    try:
        set_state(policy, payload["policy"]["state"])
        set_state(env, payload["env"]["state"])
        if stop_condition is not None and payload["stop_condition"] is not None:
            _load_part(stop_condition, payload["stop_condition"])
        for h, saved in zip(_hooks(hook), payload["hooks"], strict=False):
            _load_part(h, saved)
    except (KeyError, TypeError, ValueError) as error:
        raise CheckpointError(
            f"{path}: the checkpoint does not fit the objects it is loaded into: {error}"
        ) from error
    meta = payload["meta"]
    for h in _checkpoint_hooks(hook) if hook is not None else ():
        h.steps = int(meta["step"] or 0)
        h.episodes = int(meta["episode"] or 0)
    if payload.get("torch_rng") is not None:
        import torch

        torch.random.set_rng_state(payload["torch_rng"])
    return CheckpointInfo(
        path=path,
        step=meta.get("step"),
        episode=meta.get("episode"),
        finished=bool(meta.get("finished")),
        metadata=dict(meta.get("metadata") or {}),
        created=str(meta.get("created", "")),
    )


def _check_types(
    path: Path, payload: dict, policy: Any, env: Any, stop_condition: Any, hook: Any
) -> None:
    problems = []
    for what, obj in (("policy", policy), ("env", env)):
        saved = payload[what]["type"]
        if saved != type(obj).__qualname__:
            problems.append(f"the {what} was a {saved}, now it is a {type(obj).__qualname__}")
    saved_stop = payload.get("stop_condition")
    if stop_condition is not None and saved_stop is not None:
        if saved_stop["type"] != type(stop_condition).__qualname__:
            problems.append(
                f"the stop condition was a {saved_stop['type']}, now it is a "
                f"{type(stop_condition).__qualname__}"
            )
    if hook is not None:
        saved_hooks = [h["type"] for h in payload["hooks"]]
        now = [type(h).__qualname__ for h in _hooks(hook)]
        if saved_hooks != now:
            problems.append(f"the hooks were {saved_hooks}, now they are {now}")
    if problems:
        raise CheckpointError(
            f"{path} does not fit the run it is loaded into: " + "; ".join(problems)
        )


def _format(fmt: str) -> str:
    if fmt == "auto":
        return "safetensors" if _safetensors() is not None else "npz"
    if fmt not in ("safetensors", "npz"):
        raise ValueError(f"checkpoint: format must be 'auto', 'safetensors' or 'npz', got {fmt!r}")
    return fmt


def _rlkit_version() -> str:
    from .. import __version__

    return __version__


# ---------------------------------------------------------------------------------------------
# the hook


class CheckpointHook(AbstractHook):
    """Save the whole run every ``every_n_steps`` environment steps and/or ``every_n_episodes``
    finished episodes, and when the run stops; keep the newest ``keep_last`` files.

    A checkpoint is taken at a step boundary: after every policy and hook call of the step *and*
    the stop condition's check, so that resuming from it (``rk.run(..., resume_from=dir)``)
    continues exactly where the run was, bit for bit. At the end of an episode the boundary is
    after PostEpisode and the episode check. ``rk.run`` gives the hook the run's policy,
    environment, stop condition and whole hook chain (it saves all of them) and calls it at those
    boundaries (see :func:`prepare_checkpoints`); the hook must therefore be run by ``rk.run``.

    When the stop condition ends the run, a final checkpoint is written (marked ``finished``).
    When the run ends with an exception (a hook raised, Ctrl-C), the state is in the middle of a
    step and cannot be resumed exactly, so nothing is written at PostExperiment: the newest
    checkpoint stays the last valid one. Use ``rk.StopSignal()`` in the stop condition to turn
    Ctrl-C into a clean stop with a final checkpoint.

    Args:
        dir: folder of the checkpoints (created; use one folder per run).
        every_n_steps: save every this many environment steps (None: not by steps).
        every_n_episodes: save after every this many finished episodes (None: not by episodes).
        keep_last: how many checkpoints to keep (older ones are deleted; None keeps all).
        format: ``"auto"`` (safetensors when installed, else npz), ``"safetensors"`` or ``"npz"``.
        metadata: JSON-able dict stored in every checkpoint (e.g. experiment name and seed).

    Counters: ``steps`` and ``episodes`` (environment steps and finished episodes, continued
    across runs and restored on resume), ``last_path`` (the newest file written).

    Example:
        >>> import rlkit as rk, tempfile
        >>> from rlkit.core.checkpoint import CheckpointHook
        >>> hook = CheckpointHook(tempfile.mkdtemp(), every_n_episodes=2, keep_last=1)
        >>> _ = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
        ...            rk.StopAfterNEpisodes(5), hook)
        >>> hook.episodes, hook.last_path.name.startswith("checkpoint-")
        (5, True)
    """

    def __init__(
        self,
        dir: str | os.PathLike,
        *,
        every_n_steps: int | None = None,
        every_n_episodes: int | None = None,
        keep_last: int | None = 3,
        format: str = "auto",
        metadata: dict[str, Any] | None = None,
    ) -> None:
        self.dir = Path(dir)
        self.every_n_steps = _every("every_n_steps", every_n_steps)
        self.every_n_episodes = _every("every_n_episodes", every_n_episodes)
        self.keep_last = _every("keep_last", keep_last)
        self.format = _format(format)
        self.metadata = dict(metadata or {})
        try:
            json.dumps(self.metadata, allow_nan=False)
        except (TypeError, ValueError) as error:
            raise ValueError(f"CheckpointHook: metadata must be JSON data, got {error}") from None
        self.steps = 0
        self.episodes = 0
        self.last_path: Path | None = None
        self._run: tuple[Any, Any, Any, Any] | None = None
        self._due = False  # a step-count save deferred to the episode's end
        self._stopping = False  # the step check said stop at the last step of an episode
        self.finished = False  # the last run ended by its stop condition (final checkpoint)

    def __repr__(self) -> str:
        every = [
            f"{name}={value}"
            for name, value in (
                ("every_n_steps", self.every_n_steps),
                ("every_n_episodes", self.every_n_episodes),
            )
            if value is not None
        ]
        options = ", ".join([*every, f"keep_last={self.keep_last}"])
        return f"CheckpointHook({str(self.dir)!r}, {options})"

    # ---- the run: rk.run binds the hook to the run's objects ----
    def bind(self, policy: Any, env: Any, stop_condition: Any, hook: Any) -> None:
        """Tell the hook what it saves: the run's policy, env, stop condition and hook chain."""
        for what, obj in (("policy", policy), ("env", env)):
            if not has_state(obj):
                raise TypeError(
                    f"CheckpointHook: the {what} {type(obj).__name__} has no state_dict(); every "
                    f"stateful object of a checkpointed run implements state_dict() and "
                    f"load_state_dict(state)"
                )
        self._run = (policy, env, stop_condition, hook)

    # ---- PreExperiment: a fresh start of the boundary bookkeeping ----
    def pre_experiment(self, policy: Any, env: Any) -> None:
        if self._run is None:
            raise RuntimeError(
                "CheckpointHook: not bound to a run; run it with rk.run(policy, env, "
                "stop_condition, hook), which tells it what to save"
            )
        self.dir.mkdir(parents=True, exist_ok=True)
        for stale in self.dir.iterdir():  # temporaries of a process killed while writing
            if _TEMPORARY.match(stale.name):
                with contextlib.suppress(OSError):
                    stale.unlink()
        self._due = self._stopping = self.finished = False

    # ---- PostExperiment: the final checkpoint was written at the stop; nothing after errors ----
    def post_experiment(self, policy: Any, env: Any) -> None:
        self._run = None

    # ---- step and episode boundaries (called through the stop checks, see prepare) ----
    def after_step(self, stop: bool, done: bool) -> None:
        """Count one environment step; save if due (at the boundary after the stop check)."""
        self.steps += 1
        due = self.every_n_steps is not None and self.steps % self.every_n_steps == 0
        if done:  # the episode's boundary comes after PostEpisode and the episode check
            self._due = self._due or due
            self._stopping = stop
        elif stop:
            self.save(finished=True)
        elif due:
            self.save()

    def after_episode(self, stop: bool) -> None:
        """Count one finished episode; save if due or if the run stops here."""
        self.episodes += 1
        due = self._due or (
            self.every_n_episodes is not None and self.episodes % self.every_n_episodes == 0
        )
        finished = stop or self._stopping
        self._due = self._stopping = False
        if due or finished:
            self.save(finished=finished)

    def save(self, *, finished: bool = False) -> Path:
        """Write a checkpoint of the bound run now (named by the step count); return its path."""
        if self._run is None:
            raise RuntimeError("CheckpointHook.save: not bound to a run (see bind)")
        policy, env, stop_condition, hook = self._run
        self.dir.mkdir(parents=True, exist_ok=True)
        path = self.dir / f"checkpoint-{self.steps:012d}.{self.format}"
        save_checkpoint(
            path,
            policy,
            env,
            stop_condition,
            hook,
            step=self.steps,
            episode=self.episodes,
            finished=finished,
            metadata=self.metadata,
            format=self.format,
        )
        self.last_path = path
        self.finished = finished
        if self.keep_last is not None:
            for old in list_checkpoints(self.dir)[: -self.keep_last]:
                with contextlib.suppress(OSError):
                    old.unlink()
        return path

    def state_dict(self) -> dict[str, Any]:
        """The counters (a checkpoint stores them as its step and episode)."""
        return {"steps": self.steps, "episodes": self.episodes}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.steps = int(state["steps"])
        self.episodes = int(state["episodes"])


def _every(name: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(
            f"CheckpointHook: {name} must be a positive integer or None, got {value!r}"
        )
    return value


def prepare_checkpoints(plan: Any, policy: Any, env: Any, stop_condition: Any, hook: Any) -> None:
    """Bind the checkpoint hooks of ``hook`` to the run and call them at step boundaries.

    Called by ``rk.run`` after building the call plan: each checkpoint hook is told the run's
    objects, and the plan's stop checks are wrapped so that, after the stop condition was
    checked, the hook counts the step (or episode) and saves when due. Without checkpoint hooks
    the plan is left as it is (no cost per step).
    """
    if hook is None:
        return
    hooks = _checkpoint_hooks(hook)
    if not hooks:
        return
    from .dispatch import PlanStep

    for h in hooks:
        h.bind(policy, env, stop_condition, hook)
    step_check = plan.stop_step.call if plan.stop_step is not None else None
    episode_check = plan.stop_episode.call if plan.stop_episode is not None else None
    after_step = _fan_out([h.after_step for h in hooks])
    after_episode = _fan_out([h.after_episode for h in hooks])
    step_check = step_check or _never
    episode_check = episode_check or _never

    def check_step() -> bool:
        stop = bool(step_check())
        after_step(stop, env.done)
        return stop

    def check_episode() -> bool:
        stop = bool(episode_check())
        after_episode(stop)
        return stop

    names = " + ".join(repr(h) for h in hooks)
    plan.stop_step = PlanStep(
        check_step,
        f"{plan.stop_step.name if plan.stop_step else 'no step check'}, then {names}.after_step",
        __name__,
    )
    plan.stop_episode = PlanStep(
        check_episode,
        f"{plan.stop_episode.name if plan.stop_episode else 'no episode check'}, then "
        f"{names}.after_episode",
        __name__,
    )


def _never() -> bool:
    return False


def _fan_out(calls: list) -> Any:
    """One function calling every function of ``calls`` (the function itself if only one)."""
    if len(calls) == 1:
        return calls[0]

    def call_all(*args: Any) -> None:
        for call in calls:
            call(*args)

    return call_all
