"""The run directory of ``rlkit run``: its ``config.json`` (everything needed to reproduce the
run) and the rules for reusing a folder (``--logdir``): a folder holding another run is refused,
never mixed."""

from __future__ import annotations

import json
import platform
import shlex
import shutil
from datetime import datetime
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = [
    "RunDirError",
    "make_config",
    "write_config",
    "read_config",
    "prepare_logdir",
    "new_run_dir",
    "has_checkpoints",
    "run_command",
]

# what `rlkit run` writes into a run directory
RESULTS = (
    "config.json",
    "episodes.csv",
    "evaluations.csv",
    "tensorboard",
    "checkpoints",
    "learning_curve.png",
    "policy.rlkit",
)


class RunDirError(Exception):
    """A run directory that cannot be used as asked; the message says why and what to do."""


def versions() -> dict[str, str | None]:
    """Versions of rlkit, Python and the libraries a run's results depend on (None: not
    installed)."""
    from ..core.version import __version__

    found: dict[str, str | None] = {"rlkit": __version__, "python": platform.python_version()}
    for package in ("numpy", "gymnasium", "torch", "plum-dispatch"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = None
    return found


def env_record(env: Any) -> dict[str, Any]:
    """The environment's id and keyword arguments (gymnasium's spec), or its repr."""
    spec = getattr(getattr(env, "env", None), "spec", None)
    if spec is None:
        return {"id": getattr(env, "name", repr(env)), "kwargs": {}}
    return {"id": spec.id, "kwargs": _json_safe(dict(spec.kwargs))}


def _json_safe(value: Any) -> Any:
    return json.loads(json.dumps(value, default=repr))


def make_config(
    experiment: Any,
    *,
    overrides: dict[str, Any],
    checkpoint_every: int | None,
    threads: int | None,
    tensorboard: bool,
) -> dict[str, Any]:
    """``config.json``: the recipe, seed, every parameter (``params``; ``overrides`` are the ones
    given on the command line, which ``rlkit resume`` passes again), environment, budget, thread
    count and library versions."""
    stop = experiment.stop_condition
    return {
        "experiment": experiment.name,
        "seed": experiment.seed,
        **({} if experiment.seeds is None else {"seeds": list(experiment.seeds)}),
        "params": _json_safe(experiment.params),
        "overrides": _json_safe(overrides),
        "env": env_record(experiment.env),
        "budget": repr(stop),
        "checkpoint_every": checkpoint_every,
        "threads": threads,
        "tensorboard": tensorboard,
        "versions": versions(),
        "started": datetime.now().isoformat(timespec="seconds"),
    }


def write_config(run_dir: Path, config: dict[str, Any]) -> None:
    (run_dir / "config.json").write_text(json.dumps(config, indent=2) + "\n")


def read_config(run_dir: Path) -> dict[str, Any]:
    """The run's ``config.json``; ``RunDirError`` if ``run_dir`` is not a run directory."""
    try:
        config = json.loads((run_dir / "config.json").read_text())
        config["experiment"], config["seed"]  # noqa: B018 - both must be there
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise RunDirError(f"{run_dir} is not a run directory of 'rlkit run' ({error})") from None
    return config


def has_checkpoints(run_dir: Path) -> bool:
    """Whether ``run_dir/checkpoints`` holds a checkpoint (a killed writer's temporary is none)."""
    from ..hooks.checkpoint import list_checkpoints

    return bool(list_checkpoints(run_dir / "checkpoints"))


def _same_run(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return (a.get("experiment"), a.get("seed"), a.get("params")) == (
        b.get("experiment"),
        b.get("seed"),
        b.get("params"),
    )


def _differences(old: dict[str, Any], new: dict[str, Any]) -> str:
    if old.get("experiment") != new["experiment"] or old.get("seed") != new["seed"]:
        return f"{old.get('experiment')} seed {old.get('seed')}"
    old_params, new_params = old.get("params") or {}, new["params"]
    changed = [
        f"{key}={old_params.get(key)!r} there, {new_params.get(key)!r} here"
        for key in sorted(set(old_params) | set(new_params))
        if old_params.get(key) != new_params.get(key)
    ]
    return f"{old['experiment']} seed {old['seed']} with other parameters: {'; '.join(changed)}"


def prepare_logdir(run_dir: Path, config: dict[str, Any], *, restart: bool) -> None:
    """Make ``run_dir`` ready for the run of ``config``, or raise ``RunDirError``.

    A new or empty folder is used as it is. A folder holding another run (another recipe, seed
    or parameters, or results without a ``config.json``) is refused. A folder holding this same
    run is refused too (``rlkit resume`` continues it), unless it has no checkpoint and
    ``restart`` is given: then its results are deleted and the run starts again there.
    """
    if run_dir.exists() and not run_dir.is_dir():
        raise RunDirError(f"--logdir {run_dir} is a file, not a folder; give a folder for the run")
    if not run_dir.exists():
        run_dir.mkdir(parents=True)
        return
    present = [name for name in RESULTS if (run_dir / name).exists()]
    if not present:
        return
    if "config.json" not in present:
        raise RunDirError(
            f"{run_dir} holds results of another run ({', '.join(present)}) without its "
            f"config.json; choose another --logdir"
        )
    old = read_config(run_dir)
    if not _same_run(old, config):
        raise RunDirError(
            f"{run_dir} holds another run ({_differences(old, config)}); choose another --logdir"
        )
    if has_checkpoints(run_dir):
        raise RunDirError(
            f"{run_dir} already holds this run, with checkpoints: continue it with "
            f"'rlkit resume {run_dir}', or choose another --logdir"
        )
    if not restart:
        raise RunDirError(
            f"{run_dir} already holds this run, which wrote no checkpoint; start it again there "
            f"with --restart (its results are replaced), or choose another --logdir"
        )
    for name in present:
        path = run_dir / name
        shutil.rmtree(path) if path.is_dir() else path.unlink()


def new_run_dir(parent: Path, name: str, seed: int | str) -> Path:
    """A new folder ``parent/NAME-seedS-DATE-TIME`` (with a suffix if it exists)."""
    if parent.exists() and not parent.is_dir():
        raise RunDirError(f"--out {parent} is a file, not a folder")
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    run_dir = parent / f"{name}-seed{seed}-{stamp}"
    suffix = 1
    while run_dir.exists():
        suffix += 1
        run_dir = parent / f"{name}-seed{seed}-{stamp}-{suffix}"
    run_dir.mkdir(parents=True)
    return run_dir


def _cli_value(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(map(repr, value)) + ("," if len(value) == 1 else "")
    return value if isinstance(value, str) else repr(value)


def run_command(run_dir: Path, config: dict[str, Any], *, restart: bool = False) -> str:
    """The ``rlkit run`` command line that starts the run of ``config`` in ``run_dir``."""
    words = ["rlkit", "run", config["experiment"], "--seed", str(config["seed"])]
    words += ["--logdir", str(run_dir)]
    for key, value in (config.get("overrides") or {}).items():
        words += ["--set", f"{key}={_cli_value(value)}"]
    every = config.get("checkpoint_every")
    words += ["--checkpoint-every", str(every) if every else "N"]
    if restart:
        words.append("--restart")
    return shlex.join(words)
