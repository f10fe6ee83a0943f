"""SHA-256 of the final network parameters of every DQN-family recipe after a short seeded run.

Behaviour-preserving refactors must leave these hashes bit-identical: run the script on two
commits of the same machine and compare. Each recipe (``experiments/dqn.py``) is built with
``rk.make_experiment(name, seed=SEED, total_steps=N)`` and run with ``rk.run(experiment)`` (its
evaluation hook included); the hash covers the online network's ``state_dict()`` (and the target
network's, when there is one): every tensor in key order, its key, dtype, shape and bytes.

The recipes are imported from the ``experiments/`` folder of the tree the script runs in (the
current directory, or ``--root``), so the script also runs on older checkouts whose editable
install points elsewhere: ``cd /tmp/old && PYTHONPATH=/tmp/old python /path/to/param_hashes.py``.

Usage::

    python benchmarks/param_hashes.py [--steps 3000] [--seed 0] [--root .]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

RECIPE_MODULE = "rlkit.experiments.dqn"


def _import_recipes(root: Path):
    """``rlkit`` and the recipes of ``root`` (``experiments/`` installed as rlkit.experiments)."""
    sys.path.insert(0, str(root))
    import rlkit as rk

    rlkit_dir = Path(rk.__file__).resolve().parent
    if rlkit_dir != (root / "rlkit").resolve():
        raise SystemExit(f"rlkit is imported from {rlkit_dir}, not from {root}; set PYTHONPATH")
    if not (rlkit_dir / "experiments").is_dir():  # the recipes live in the top-level folder
        package = importlib.import_module("experiments")
        sys.modules["rlkit.experiments"] = package
        sys.modules[RECIPE_MODULE] = importlib.import_module("experiments.dqn")
    module = importlib.import_module(RECIPE_MODULE)
    if Path(module.__file__).resolve() != (root / "experiments" / "dqn.py").resolve():
        raise SystemExit(f"the recipes come from {module.__file__}, not from {root}")
    return rk, module


def _recipes(rk, module) -> list[str]:
    """The names of the recipes registered by the DQN recipe module, in registry order."""
    from rlkit.core import experiment as registry_module

    rk.list_experiments()  # imports rlkit.experiments (registers everything)
    registry = registry_module._REGISTRY
    return [name for name, fn in registry.items() if fn.__module__ == module.__name__] or [
        name for name, fn in registry.items() if getattr(module, name, None) is fn
    ]


def _learner(experiment):
    policy = experiment.policy
    policy = getattr(policy, "policy", policy)  # Agent -> QBasedPolicy
    return policy.learner


def parameter_hash(learner) -> str:
    """SHA-256 over the online (and target) network's tensors: key, dtype, shape, bytes."""
    digest = hashlib.sha256()
    parts = [("model", learner.approximator.model.state_dict())]
    target = getattr(learner, "target", None)
    if target is not None:
        parts.append(("target", target.state_dict()))
    for part, state in parts:
        for key, value in _tensors(part, state):
            array = value.detach().cpu().contiguous().numpy()
            digest.update(f"{key}|{array.dtype}|{array.shape}|".encode())
            digest.update(array.tobytes())
    return digest.hexdigest()


def _tensors(prefix: str, state) -> list:
    """The tensors of a (nested) state dict, in key order, with dotted keys."""
    import torch

    found = []
    if isinstance(state, torch.Tensor):
        return [(prefix, state)]
    if isinstance(state, dict):
        for key, value in state.items():
            found.extend(_tensors(f"{prefix}.{key}", value))
    elif isinstance(state, (list, tuple)):
        for i, value in enumerate(state):
            found.extend(_tensors(f"{prefix}.{i}", value))
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--root", type=Path, default=Path.cwd())
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    rk, module = _import_recipes(args.root.resolve())
    for name in _recipes(rk, module):
        experiment = rk.make_experiment(name, seed=args.seed, total_steps=args.steps)
        rk.run(experiment)
        learner = _learner(experiment)
        steps = f"{learner.env_steps} env steps, {learner.gradient_steps} gradient steps"
        print(f"{name:26s} {parameter_hash(learner)}  ({steps})", flush=True)


if __name__ == "__main__":
    main()
