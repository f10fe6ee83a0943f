"""SHA-256 of the final parameters of every deep recipe after a short seeded run.

Behaviour-preserving refactors must leave these hashes bit-identical: run the script on two
commits of the same machine and compare. Each recipe is built with
``rk.make_experiment(name, seed=SEED, <budget>=N)`` and run with ``rk.run(experiment)`` (its
hooks included). The hash covers every tensor of the learned networks, in key order, with its
key, dtype, shape and bytes:

* a DQN-family learner (inside ``QBasedPolicy``): the online network's ``state_dict()`` and the
  target network's (the same hash as earlier versions of this script);
* a built policy (VPG, A2C, PPO, TRPO, ES, DDPG, TD3, SAC): ``policy.model.state_dict()``, which
  holds the target networks and SAC's entropy coefficient too.

The recipes are imported from the ``experiments/`` folder of the tree the script runs in (the
current directory, or ``--root``), so the script also runs on older checkouts whose editable
install points elsewhere: ``cd /tmp/old && PYTHONPATH=/tmp/old python /path/to/param_hashes.py``.

Usage::

    python benchmarks/param_hashes.py [--seed 0] [--root .] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

# recipe -> (the budget parameter, its value): long enough for several learning steps of each
BUDGETS = {
    "DQN_CartPole": ("total_steps", 3000),
    "DQN_Acrobot": ("total_steps", 3000),
    "DQN_MountainCar": ("total_steps", 3000),
    "PrioritizedDQN_CartPole": ("total_steps", 3000),
    "QRDQN_CartPole": ("total_steps", 3000),
    "BasicDQN_CartPole": ("total_steps", 3000),
    "C51_CartPole": ("total_steps", 3000),
    "IQN_CartPole": ("total_steps", 3000),
    "Rainbow_CartPole": ("total_steps", 3000),
    "DQN_MinAtarBreakout": ("total_steps", 3000),
    "Rainbow_MinAtarBreakout": ("total_steps", 3000),
    "VPG_CartPole": ("total_steps", 4096),
    "A2C_CartPole": ("total_steps", 2000),
    "PPO_CartPole": ("total_steps", 2048),
    "PPO_Acrobot": ("total_steps", 4096),
    "PPO_Pendulum": ("total_steps", 4096),
    "RecurrentPPO_CartPoleNoVel": ("total_steps", 1024),
    "RecurrentPPO_PendulumNoVel": ("total_steps", 4096),
    "TRPO_CartPole": ("total_steps", 3072),
    "TRPO_Pendulum": ("total_steps", 4096),
    "ES_CartPole": ("generations", 3),
    "DDPG_Pendulum": ("total_steps", 11_000),
    "TD3_Pendulum": ("total_steps", 11_000),
    "TD3_MountainCarContinuous": ("total_steps", 1500),
    "TD3_HalfCheetah": ("total_steps", 10_500),
    "SAC_Pendulum": ("total_steps", 1500),
    "SAC_HalfCheetah": ("total_steps", 10_500),
    "HER_DQN_BitFlipping": ("total_steps", 3000),
    "HER_SAC_BitFlipping": ("total_steps", 1500),
    "ApeX_CartPole": ("total_steps", 3000),  # the local backend (lock-step, deterministic)
    "IMPALA_CartPole": ("total_steps", 2048),
}


def _import_rlkit(root: Path):
    """``rlkit`` of ``root``, with ``root/experiments`` as ``rlkit.experiments``."""
    sys.path.insert(0, str(root))
    import rlkit as rk

    rlkit_dir = Path(rk.__file__).resolve().parent
    if rlkit_dir != (root / "rlkit").resolve():
        raise SystemExit(f"rlkit is imported from {rlkit_dir}, not from {root}; set PYTHONPATH")
    if "rlkit.experiments" not in sys.modules and not (rlkit_dir / "experiments").is_dir():
        sys.modules["rlkit.experiments"] = importlib.import_module("experiments")
    rk.list_experiments()  # registers every recipe
    return rk


def networks(policy) -> list[tuple[str, dict]]:
    """The state dicts the hash covers (module docstring)."""
    policy = getattr(policy, "policy", policy)  # Agent -> its policy
    learner = getattr(policy, "learner", None)
    if learner is not None:  # QBasedPolicy(learner, explorer)
        parts = [("model", learner.approximator.model.state_dict())]
        target = getattr(learner, "target", None)
        if target is not None:
            parts.append(("target", target.state_dict()))
        return parts
    return [("model", policy.model.state_dict())]


def parameter_hash(parts: list[tuple[str, dict]]) -> str:
    """SHA-256 over the tensors of ``parts``: key, dtype, shape, bytes."""
    digest = hashlib.sha256()
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


def _progress(policy) -> str:
    policy = getattr(policy, "policy", policy)
    learner = getattr(policy, "learner", policy)
    counts = []
    for name in ("env_steps", "transitions", "updates", "gradient_steps"):
        value = getattr(learner, name, None)
        if isinstance(value, int):
            counts.append(f"{value} {name.replace('_', ' ')}")
    return ", ".join(counts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--root", type=Path, default=Path.cwd())
    parser.add_argument("--only", nargs="*", default=None, help="recipe names (default: all)")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    rk = _import_rlkit(args.root.resolve())
    for name in args.only or list(BUDGETS):
        budget, value = BUDGETS[name]
        experiment = rk.make_experiment(name, seed=args.seed, **{budget: value})
        rk.run(experiment)
        digest = parameter_hash(networks(experiment.policy))
        print(f"{name:26s} {digest}  ({_progress(experiment.policy)})", flush=True)


if __name__ == "__main__":
    main()
