"""What a checkpoint holds: the state of a run's policy, env, stop condition and hooks.

:func:`save_checkpoint` collects them into one payload and writes it (:mod:`.format`,
:mod:`.files`); :func:`load_checkpoint` reads a payload, checks that it fits the objects, and
restores them.
"""

from __future__ import annotations

import contextlib
import copy
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.state import attribute_state, get_state, has_state, load_attribute_state, set_state
from ..basic import ComposedHook
from .files import atomic_write, resolve_checkpoint
from .format import (
    CheckpointError,
    checked_format,
    checked_metadata,
    read_checkpoint,
    serialise,
)

__all__ = ["CheckpointInfo", "save_checkpoint", "load_checkpoint", "saves_run", "checkpoint_hooks"]


def saves_run(hook: Any) -> bool:
    """Whether ``hook`` is one that saves the run (its counters are the checkpoint's own)."""
    return getattr(hook, "saves_run", False) is True


def _hooks(hook: Any) -> list[Any]:
    """The hooks of a chain, flattened, without checkpoint hooks."""
    if hook is None:
        return []
    hooks = hook.hooks if isinstance(hook, ComposedHook) else (hook,)
    return [h for h in hooks if not saves_run(h)]




def checkpoint_hooks(hook: Any) -> list[Any]:
    hooks = hook.hooks if isinstance(hook, ComposedHook) else (hook,)
    return [h for h in hooks if saves_run(h)]




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
    fmt = checked_format(format)
    payload = {
        "meta": {
            "step": step,
            "episode": episode,
            "finished": bool(finished),
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "rlkit_version": _rlkit_version(),
            "metadata": checked_metadata("save_checkpoint", metadata),
        },
        "policy": _required(policy, "policy"),
        "env": _required(env, "env"),
        "stop_condition": None if stop_condition is None else _part(stop_condition),
        "hooks": [_part(h) for h in _hooks(hook)],
        "torch_rng": _torch_rng(),
    }
    data = serialise(payload, fmt)
    path = Path(path)
    try:
        atomic_write(path, data)
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
    and checked before anything is changed: each saved state is first loaded into a deep copy
    of its object, so a state that does not fit (network shapes, replay capacity, wrappers,
    settings) raises :class:`CheckpointError` naming the file and the object, and leaves every
    object as it was. (An object that cannot be copied is restored to its previous state if its
    load fails.)
    """
    path = resolve_checkpoint(path)
    payload = read_checkpoint(path)
    _check_types(path, payload, policy, env, stop_condition, hook)
    loads = _loads(payload, policy, env, stop_condition, hook)
    for what, obj, load, state in loads:  # check everything first: load into copies
        _trial(path, what, obj, load, state)
    snapshots = [(obj, copy.deepcopy(_part(obj))) for _, obj, _, _ in loads]
    try:  # then change everything
        for _, obj, load, _ in loads:
            load(obj)
    except Exception as error:  # e.g. an object that could not be copied for the trial
        for obj, saved in snapshots:  # put back what was there
            with contextlib.suppress(Exception):
                _load_part(obj, saved)
        raise CheckpointError(
            f"{path}: the checkpoint does not fit the objects it is loaded into "
            f"({type(error).__name__}: {error}); nothing was changed"
        ) from error
    meta = payload["meta"]
    for h in checkpoint_hooks(hook) if hook is not None else ():
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




def _loads(
    payload: dict, policy: Any, env: Any, stop_condition: Any, hook: Any
) -> list[tuple[str, Any, Callable[[Any], None], Any]]:
    """``(what, object, load, state)`` for every object a checkpoint restores, ``load(obj)``
    putting the saved state into ``obj`` (or into a copy of it); ``state`` is the saved
    ``state_dict`` (None for parts saved by their attributes)."""
    policy_state, env_state = payload["policy"]["state"], payload["env"]["state"]
    loads: list[tuple[str, Any, Callable[[Any], None], Any]] = [
        (f"policy {type(policy).__qualname__}", policy, _setter(policy_state), policy_state),
        (f"env {env!r}", env, _setter(env_state), env_state),
    ]
    if stop_condition is not None and payload["stop_condition"] is not None:
        saved = payload["stop_condition"]
        loads.append(
            (f"stop condition {stop_condition!r}", stop_condition, _part_loader(saved),
             _state_of(saved))
        )
    for h, saved in zip(_hooks(hook), payload["hooks"], strict=False):
        loads.append((f"hook {type(h).__qualname__}", h, _part_loader(saved), _state_of(saved)))
    return loads


def _state_of(saved: dict[str, Any]) -> Any:
    return saved["state"] if saved["kind"] == "state_dict" else None


def _setter(state: Any) -> Callable[[Any], None]:
    return lambda obj: set_state(obj, state)


def _part_loader(saved: dict[str, Any]) -> Callable[[Any], None]:
    return lambda obj: _load_part(obj, saved)


def _trial(path: Path, what: str, obj: Any, load: Callable[[Any], None], state: Any) -> None:
    """Load into a deep copy of ``obj``: a state that does not fit raises here, before anything
    is changed. An object that cannot be copied (one owning worker processes) is checked by its
    ``check_state_dict(state)`` when it has one (which changes nothing), else when it is loaded
    (and restored to its state before the load if anything fails)."""
    try:
        trial = copy.deepcopy(obj)
    except Exception:  # noqa: BLE001 - not copyable (open handles, workers, ...)
        check = getattr(obj, "check_state_dict", None)
        if state is None or not callable(check):
            return
        trial, load = None, lambda _: check(state)
    try:
        load(trial)
    except Exception as error:  # noqa: BLE001 - whatever the object raises: it does not fit
        raise CheckpointError(
            f"{path} does not fit the {what} it is loaded into: {type(error).__name__}: "
            f"{error}; nothing was changed"
        ) from error


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




def _rlkit_version() -> str:
    from ...core.version import __version__

    return __version__


