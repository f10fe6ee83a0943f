"""The file of an inference artifact: a zip archive (``.rlkit``) of exactly two members,
``policy.json`` (what the policy is: format version, versions, algorithm, spaces,
preprocessing, network description) and ``policy.safetensors`` (its tensors, numpy arrays for
tables, never a pickle).

Writing is atomic: the archive is written to a temporary file beside ``path`` and renamed, so a
failed write leaves the previous file intact. Reading checks, before anything is built from
the file: that it is a zip archive whose members' CRCs are right (a corrupt or truncated file
is refused), that it holds exactly the two members (a pickle, e.g. the ``data.pkl`` of a
``torch.save`` file, is refused by name), the format and its version (a newer one is refused),
and that the tensors are those the JSON was written with (their SHA-256). Tensors are read with
safetensors, which never executes code.

Example:
    >>> import numpy as np, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "p.rlkit")
    >>> write_archive(path, {"kind": "q_table"}, {"q": np.zeros((2, 3))})
    >>> meta, tensors = read_archive(path)
    >>> meta["kind"], meta["format_version"], tensors["q"].shape
    ('q_table', 1, (2, 3))
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import zipfile
import zlib
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from .errors import ArtifactError

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "SUFFIX",
    "write_archive",
    "read_archive",
    "library_versions",
]

FORMAT = "rlkit-policy"
FORMAT_VERSION = 1
SUFFIX = ".rlkit"
META, TENSORS = "policy.json", "policy.safetensors"
_PICKLE_HINTS = (".pkl", ".pickle", ".pt", ".pth", "data/", ".bin")


def library_versions() -> dict[str, str | None]:
    """Versions of rlkit and of the libraries an artifact's numbers depend on."""
    from ..core.version import __version__

    found: dict[str, str | None] = {"rlkit": __version__}
    for package in ("numpy", "gymnasium", "torch", "safetensors"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = None
    return found


def _safetensors_numpy() -> Any:
    """``safetensors.numpy``, or a ``ModuleNotFoundError`` saying how to install it."""
    try:
        import safetensors.numpy
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            "rk.save and rk.load store tensors with safetensors: pip install safetensors",
            name="safetensors",
        ) from error
    return safetensors.numpy


def _tensor_bytes(tensors: dict[str, Any]) -> bytes:
    save = _safetensors_numpy().save

    arrays = {}
    for name, value in tensors.items():
        if hasattr(value, "detach"):  # a torch tensor: its values on the CPU
            value = value.detach().cpu().contiguous().numpy()
        arrays[name] = np.ascontiguousarray(value)
    return save(arrays)


def write_archive(path: str | os.PathLike, meta: dict[str, Any], tensors: dict[str, Any]) -> None:
    """Write ``meta`` (with the format, its version, the library versions and the tensors'
    SHA-256 added) and ``tensors`` to ``path`` atomically."""
    data = _tensor_bytes(tensors)
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "versions": library_versions(),
        **meta,
        "tensors_sha256": hashlib.sha256(data).hexdigest(),
    }
    text = json.dumps(meta, indent=2, sort_keys=True)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr(META, text)
            zf.writestr(TENSORS, data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's file is private; an artifact is not
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_archive(path: str | os.PathLike) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """``(meta, tensors)`` of the artifact at ``path`` (tensors as numpy arrays), after the
    checks of the module docstring; a file that fails one is an :class:`ArtifactError`."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"rk.load: no inference artifact at {str(path)!r}")
    where = f"rk.load({str(path)!r})"
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
            _check_members(where, names)
            text = zf.read(META)
            data = zf.read(TENSORS)
    except ArtifactError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, OSError, NotImplementedError,
            KeyError) as error:  # fmt: skip
        # not a zip, truncated, a member's CRC wrong or its compressed data damaged
        raise ArtifactError(
            f"{where}: not a readable rlkit artifact (corrupt or truncated: {error})"
        ) from error
    meta = _parse_meta(where, text)
    if hashlib.sha256(data).hexdigest() != meta.get("tensors_sha256"):
        raise ArtifactError(f"{where}: the tensors do not match policy.json (the file is corrupt)")
    return meta, _parse_tensors(where, data)


def _check_members(where: str, names: list[str]) -> None:
    if sorted(names) == sorted((META, TENSORS)):
        return
    pickles = [n for n in names if n.endswith(_PICKLE_HINTS) or "pkl" in n]
    if pickles:
        raise ArtifactError(
            f"{where}: the file holds a pickle ({', '.join(pickles)}), e.g. a torch.save file; "
            f"rlkit never unpickles (it could run any code). Save the policy with rk.save"
        )
    raise ArtifactError(
        f"{where}: an rlkit artifact holds exactly {META} and {TENSORS}, this file holds "
        f"{names}"
    )


def _parse_meta(where: str, text: bytes) -> dict[str, Any]:
    try:
        meta = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ArtifactError(f"{where}: {META} is not valid JSON ({error})") from error
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ArtifactError(f"{where}: {META} is not an rlkit policy description")
    version = meta.get("format_version")
    if not isinstance(version, int) or version < 1:
        raise ArtifactError(f"{where}: format_version must be a positive integer, got {version!r}")
    if version > FORMAT_VERSION:
        saved_by = (meta.get("versions") or {}).get("rlkit", "?")
        raise ArtifactError(
            f"{where}: the artifact has format version {version}, written by rlkit {saved_by}; "
            f"this rlkit reads format versions up to {FORMAT_VERSION}: upgrade rlkit "
            f"(pip install -U rlkit-toolkit)"
        )
    return meta


def _parse_tensors(where: str, data: bytes) -> dict[str, np.ndarray]:
    load = _safetensors_numpy().load
    from safetensors import SafetensorError

    try:
        return load(data)
    except (SafetensorError, ValueError) as error:
        raise ArtifactError(f"{where}: {TENSORS} is not a safetensors file ({error})") from error
