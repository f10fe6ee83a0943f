"""Checkpoint files on disk: atomic writes, the names of a run's checkpoints, the newest one.

Writing goes to a temporary file in the same folder, which is flushed, synced and renamed over
the final name: a process killed while writing leaves the previous checkpoint intact.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from pathlib import Path
from typing import Any

from .format import CheckpointError

__all__ = [
    "atomic_write",
    "list_checkpoints",
    "latest_checkpoint",
    "resolve_checkpoint",
    "is_temporary",
]

_NAME = re.compile(r"^checkpoint-(\d{12})\.(safetensors|npz)$")
_TEMPORARY = re.compile(r"^\.checkpoint-\d+\.\d+\.tmp$")


def _write_bytes(file: Any, data: bytes) -> None:
    """Write ``data`` to an open file (a separate function so tests can slow it down)."""
    file.write(data)




def atomic_write(path: Path, data: bytes) -> None:
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




def resolve_checkpoint(path: str | os.PathLike) -> Path:
    """The checkpoint file ``path`` names: itself, or the newest checkpoint of a folder.

    Either way the file must be a regular file of its own folder: a symbolic link that leads
    out of the folder it is in (or to something that is not a regular file) is refused with
    :class:`CheckpointError`, whether it is named directly or found as a folder's newest.
    """
    path = Path(path)
    if path.is_dir():
        latest = latest_checkpoint(path)
        if latest is None:
            raise CheckpointError(f"no checkpoint in {path} (expected checkpoint-<step> files)")
        _check_inside(path, latest)
        return latest
    if not path.exists():
        raise CheckpointError(f"checkpoint {path} does not exist")
    _check_inside(path.parent, path)
    return path




def _check_inside(folder: Path, entry: Path) -> None:
    """Refuse a folder entry that is a link out of the folder, or not a regular file."""
    target = entry.resolve()
    if entry.is_symlink() and target.parent != folder.resolve():
        raise CheckpointError(
            f"{entry} is a symbolic link to {target}, outside the checkpoint folder {folder}; "
            f"refusing to load it (copy the file into the folder if it is meant to be loaded)"
        )
    if not target.is_file():
        raise CheckpointError(f"{entry} is not a regular file; refusing to load it")


def is_temporary(name: str) -> bool:
    """Whether ``name`` is a temporary file a killed writer left behind."""
    return _TEMPORARY.match(name) is not None
