"""The checkpoint file format: a run's nested state <-> one safetensors or npz file.

A checkpoint is one file holding the state (:mod:`rlkit.core.state`) of the policy (parameters,
optimizer and scheduler state, target networks, replay contents with priorities, explorer
schedule, every generator inside), of the environment, of the stop condition and of every hook
of the run, the torch global generator (when torch is loaded), and the step and episode counters.

Format (version :data:`VERSION`):

* arrays and tensors in a ``safetensors`` file (``pip install safetensors``), or, without
  safetensors, a numpy ``.npz`` archive (read with ``allow_pickle=False``);
* everything else as JSON (in the safetensors metadata under ``"__rlkit__"``, or in the npz
  entry ``__rlkit__``), with the format name, the version and a SHA-256 checksum of the whole
  contents (safetensors and npz have none of their own). Tuples, dicts with non-string keys,
  numpy scalars (with their dtype), torch tensors (dtype and device), bytes and non-finite
  floats are tagged so they come back as they were.

Loading never unpickles anything: a pickle (or a ``torch.save`` file, an npz with object arrays)
is refused with :class:`CheckpointError`, and so is a truncated or corrupt file or one of another
format version.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from ...core.checks import ArgumentTypeError

__all__ = [
    "CheckpointError",
    "FORMAT",
    "VERSION",
    "encode_state",
    "decode_state",
    "serialise",
    "read_checkpoint",
    "checked_format",
    "checked_metadata",
]


#: Name of the format, written into every checkpoint.
FORMAT = "rlkit-checkpoint"
#: Version of the format this rlkit writes and reads.
VERSION = 1

_JSON_KEY = "__rlkit__"
_ZIP_MAGIC = b"PK\x03\x04"
# dtypes safetensors stores natively; other dtypes are stored as raw little-endian bytes
_NATIVE = {np.dtype(t) for t in "<f8 <f4 <f2 <i8 <i4 <i2 |i1 <u8 <u4 <u2 |u1 |b1".split()}
_TORCH_NATIVE = set("float64 float32 float16 int64 int32 int16 int8 uint8 bool".split())


class CheckpointError(ValueError):
    """A checkpoint that cannot be written or read: corrupt, truncated, of another format
    version, holding pickled code, or not matching the objects it is loaded into.

    Example:
        >>> import os, tempfile
        >>> import rlkit as rk
        >>> path = os.path.join(tempfile.mkdtemp(), "step_5.safetensors")
        >>> with open(path, "wb") as file:
        ...     _ = file.write(b"not a checkpoint")
        >>> try:
        ...     rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
        ...            rk.StopAfterNSteps(5), resume_from=path)
        ... except rk.CheckpointError as error:
        ...     print(type(error).__name__, "not an rlkit checkpoint" in str(error))
        CheckpointError True
    """



# ---------------------------------------------------------------------------------------------
# user metadata: JSON data, checked where it is given

_METADATA_DEPTH = 32


def checked_metadata(owner: str, metadata: Any) -> dict[str, Any]:
    """``metadata`` (a dict of JSON data) copied, or None as ``{}``; raises ``TypeError`` or
    ``ValueError`` naming the offending entry: not JSON data, a NaN or infinite float, a key
    that is not a string, or nesting deeper than 32 levels."""
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise ArgumentTypeError(
            f"{owner}: metadata must be a dict of JSON data, got {type(metadata).__name__}: "
            f"{metadata!r:.80}"
        )
    _check_json(owner, metadata, "metadata", 0)
    return json.loads(json.dumps(metadata))


def _check_json(owner: str, x: Any, path: str, depth: int) -> None:
    if depth > _METADATA_DEPTH:
        raise ValueError(
            f"{owner}: metadata must be JSON data nested at most {_METADATA_DEPTH} levels deep; "
            f"it is nested more than {_METADATA_DEPTH} levels (at {path}): "
            f"expected a shallow dict of JSON data (e.g. experiment name, seed, settings)"
        )
    if x is None or isinstance(x, (bool, str, int)):
        return
    if isinstance(x, float):
        if not math.isfinite(x):
            raise ValueError(
                f"{owner}: metadata must be JSON data: {path} is {x!r}; expected JSON data, "
                f"which has no NaN or infinity (store it as a string or None)"
            )
        return
    if isinstance(x, (list, tuple)):
        for i, v in enumerate(x):
            _check_json(owner, v, f"{path}[{i}]", depth + 1)
        return
    if isinstance(x, dict):
        for k, v in x.items():
            if not isinstance(k, str):
                raise ArgumentTypeError(
                    f"{owner}: metadata must be JSON data: {path} has the key {k!r}; JSON keys "
                    f"are strings"
                )
            _check_json(owner, v, f"{path}[{k!r}]", depth + 1)
        return
    raise ArgumentTypeError(
        f"{owner}: metadata must be JSON data: {path} is a {type(x).__name__} ({x!r:.60}) "
        f"(expected dicts, lists, strings, finite numbers, bools and None)"
    )


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
# files of the format: bytes <-> payload

def _safetensors() -> Any:
    try:
        import safetensors.numpy
    except ImportError:  # pragma: no cover - depends on the installation
        return None
    return safetensors.numpy




def serialise(payload: dict[str, Any], fmt: str) -> bytes:
    tree, arrays = encode_state(payload)
    body = json.dumps(tree, allow_nan=False)
    text = json.dumps(
        {"format": FORMAT, "version": VERSION, "sha256": _digest(body, arrays), "payload": body}
    )
    if fmt == "safetensors":
        st = _safetensors()
        if st is None:
            raise CheckpointError(
                "format='safetensors' needs the safetensors package: pip install safetensors"
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
    document = _parse_json(path, text, "metadata")
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
    tree = _parse_json(path, body, "payload")
    try:
        payload = decode_state(tree, arrays)
    except CheckpointError as error:
        raise CheckpointError(f"{path}: {error}") from None
    except RecursionError:
        raise CheckpointError(f"{path}: corrupt checkpoint payload ({_TOO_DEEP})") from None
    if not isinstance(payload, dict) or not {"meta", "policy", "env"} <= set(payload):
        raise CheckpointError(f"{path}: incomplete checkpoint (no policy/env/meta sections)")
    _check_sections(path, payload)
    return payload


def _is_section(section: Any) -> bool:
    """Whether ``section`` is a saved object's section: a dict with its class's name."""
    return isinstance(section, dict) and isinstance(section.get("type"), str)


def _check_sections(path: Path, payload: dict) -> None:
    """:class:`CheckpointError` naming the file when a section is not what rlkit writes (the
    policy and env sections, the optional stop condition and hooks)."""
    bad = [what for what in ("policy", "env") if not _is_section(payload[what])]
    stop = payload.get("stop_condition")
    if stop is not None and not _is_section(stop):
        bad.append("stop_condition")
    hooks = payload.get("hooks", [])
    if not isinstance(hooks, list) or not all(_is_section(h) for h in hooks):
        bad.append("hooks")
    if bad:
        raise CheckpointError(
            f"{path}: corrupt checkpoint payload (its {', '.join(bad)} section(s) are not the "
            f"{{'type': ..., ...}} objects rlkit writes)"
        )




_TOO_DEEP = "nested deeper than Python can read; rlkit writes shallow JSON"


def _parse_json(path: Path, text: str | bytes, what: str) -> Any:
    """``json.loads(text)``; :class:`CheckpointError` naming the file for invalid JSON and for
    JSON nested so deep that parsing it would exhaust Python's stack (``RecursionError``)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise CheckpointError(f"{path}: corrupt checkpoint {what} ({_TOO_DEEP})") from None
    except ValueError as error:
        raise CheckpointError(
            f"{path}: corrupt checkpoint {what} (invalid JSON: {error})"
        ) from None


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
    header = _parse_json(path, data[8 : 8 + size], "safetensors header")
    try:
        text = header["__metadata__"][_JSON_KEY]
    except (KeyError, TypeError):
        raise CheckpointError(
            f"{path} is not an rlkit checkpoint (a safetensors file without rlkit metadata, or a "
            f"corrupt header)"
        ) from None
    st = _safetensors()
    if st is None:  # pragma: no cover - depends on the installation
        raise CheckpointError(
            f"{path} is a safetensors checkpoint; reading it needs the safetensors package: "
            f"pip install safetensors"
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




def checked_format(fmt: str) -> str:
    if fmt == "auto":
        return "safetensors" if _safetensors() is not None else "npz"
    if fmt not in ("safetensors", "npz"):
        raise ValueError(f"checkpoint: format must be 'auto', 'safetensors' or 'npz', got {fmt!r}")
    return fmt


