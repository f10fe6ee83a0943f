"""SAC_Pendulum, TD3_Pendulum (and SAC_HalfCheetah at a small budget) for several seeds beside
Stable-Baselines3's SAC/TD3 with the same hyperparameters, in one process.

For each case and seed: train rlkit's recipe (rl-baselines3-zoo's hyperparameters, see
``experiments/continuous.py``) and report the wall time, the process CPU time of training (less
sensitive to a shared machine) and the mean return over 10 deterministic episodes on a separate
environment seeded ``10_000 + seed``. Then, for the same seed (interleaved, so a change in the
machine's load touches both sides alike), when stable-baselines3 is installed, the same for
``stable_baselines3.SAC`` / ``TD3`` with the same settings (every field of the recipe's
``SACParams`` / ``TD3Params``: ``learning_rate``, ``gamma``, ``buffer_size``,
``learning_starts``, ``batch_size``, ``tau``, ``train_freq``, ``gradient_steps``, ``net_arch``,
the action noise and the algorithm's own), with the same torch thread count.
``SAC_HalfCheetah`` runs ``--cheetah-steps`` steps (default 20k, of which the recipe's first 10k
are random actions): a budget that fits a benchmark run, far from the zoo's 1M. With
``--floor``, TD3 cases also report their compute floor (:mod:`continuous_floor`): the same
number of gradient steps in the plainest eager torch, no environment, timed in the same
process. Usage::

    python benchmarks/continuous.py [--cases SAC_Pendulum TD3_Pendulum SAC_HalfCheetah]
        [--seeds 5] [--first-seed 0] [--threads 1] [--total-steps N] [--cheetah-steps 20000]
        [--no-sb3 | --only-sb3] [--floor]
"""

from __future__ import annotations

import argparse
import dataclasses
import platform
import time
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from continuous_floor import td3_floor
from rlkit.experiments.continuous import (
    SAC_HALF_CHEETAH,
    SAC_PENDULUM,
    TD3_PENDULUM,
    ContinuousParams,
    DDPGParams,
)

import rlkit as rk

CASES: dict[str, tuple[str, str, ContinuousParams]] = {
    "SAC_Pendulum": ("SAC", "Pendulum-v1", SAC_PENDULUM),
    "TD3_Pendulum": ("TD3", "Pendulum-v1", TD3_PENDULUM),
    "SAC_HalfCheetah": ("SAC", "HalfCheetah-v5", SAC_HALF_CHEETAH),
}
TARGET = {"Pendulum-v1": -200.0}


def rlkit_seed(case: str, seed: int, steps: int) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, deterministic mean return over 10 episodes)."""
    _, env_id, _ = CASES[case]
    experiment = rk.make_experiment(case, seed, total_steps=steps)
    wall, cpu = time.perf_counter(), time.process_time()
    rk.run(experiment)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    result = rk.evaluate(experiment.policy, rk.GymEnv(env_id, seed=10_000 + seed), 10, seed=seed)
    return wall, cpu, result.mean


def sb3_seed(case: str, seed: int, steps: int) -> tuple[float, float, float]:
    """The same for Stable-Baselines3's algorithm with the recipe's settings."""
    import stable_baselines3 as sb3
    from stable_baselines3.common.evaluation import evaluate_policy

    algorithm, env_id, p = CASES[case]
    env = gym.make(env_id)
    model = getattr(sb3, algorithm)(
        "MlpPolicy", env, seed=seed, device="cpu", **sb3_kwargs(p, env.action_space.shape[0])
    )
    wall, cpu = time.perf_counter(), time.process_time()
    model.learn(total_timesteps=steps)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    eval_env = gym.make(env_id)
    eval_env.reset(seed=10_000 + seed)
    mean, _ = evaluate_policy(model, eval_env, n_eval_episodes=10, deterministic=True)
    return wall, cpu, float(mean)


def sb3_kwargs(p: ContinuousParams, n_actions: int) -> dict[str, Any]:
    """Stable-Baselines3's keyword arguments for the recipe's hyperparameters ``p``: every one
    of them (``lr`` as ``learning_rate``, ``hidden`` as ``net_arch`` and ``n_critics`` in the
    ``policy_kwargs``, the noise as an ``ActionNoise``), whether or not it is SB3's default."""
    from stable_baselines3.common.noise import NormalActionNoise, OrnsteinUhlenbeckActionNoise

    kwargs = {
        {"lr": "learning_rate"}.get(name, name): value
        for name, value in dataclasses.asdict(p).items()
        if name not in p.run_fields and name not in ("hidden", "n_critics")
    }
    kwargs["policy_kwargs"] = {"net_arch": list(p.hidden), "n_critics": p.n_critics}
    if isinstance(p, DDPGParams) and p.noise_type is not None:
        noise = {"normal": NormalActionNoise, "ornstein-uhlenbeck": OrnsteinUhlenbeckActionNoise}
        kwargs["action_noise"] = noise[p.noise_type](
            np.zeros(n_actions), p.noise_std * np.ones(n_actions)
        )
    return kwargs


def floor_seed(case: str, seed: int, steps: int) -> tuple[float, float, float]:
    """TD3's compute floor for the recipe's number of gradient steps (no return: nan)."""
    _, env_id, p = CASES[case]
    env = gym.make(env_id)
    updates = (steps - p.learning_starts) // p.train_freq
    wall, cpu = time.perf_counter(), time.process_time()
    td3_floor(
        updates * p.gradient_steps,
        n_obs=int(np.prod(env.observation_space.shape)),
        n_actions=int(np.prod(env.action_space.shape)),
        hidden=p.hidden,
        gamma=p.gamma,
        lr=p.lr,
    )
    return time.perf_counter() - wall, time.process_time() - cpu, float("nan")


def _report(name: str, env_id: str, rows: list[tuple[float, float, float]]) -> None:
    walls, cpus, means = (np.array(column) for column in zip(*rows, strict=True))
    line = f"{name}: wall {walls.mean():.1f} s, cpu {cpus.mean():.1f} s"
    if np.isnan(means).all():  # the floor plays no episodes
        print(line, flush=True)
        return
    line += f", deterministic mean {means.mean():.1f} (min {means.min():.1f})"
    if env_id in TARGET:
        line += f"; {int(np.sum(means >= TARGET[env_id]))}/{len(rows)} seeds >= {TARGET[env_id]}"
    print(line, flush=True)


def _ratios(seed: int, last: dict[str, tuple[float, float, float]]) -> None:
    """Wall and CPU time ratios of one seed: rlkit and the floor against SB3, rlkit against
    the floor (whichever were run)."""
    for a, b in (("rlkit", "sb3"), ("floor", "sb3"), ("rlkit", "floor")):
        if a in last and b in last:
            (w1, c1, _), (w2, c2, _) = last[a], last[b]
            print(f"  seed {seed}: {a} / {b} wall {w1 / w2:.2f}, cpu {c1 / c2:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--total-steps", type=int, default=None, help="Pendulum budget")
    parser.add_argument("--cheetah-steps", type=int, default=20_000)
    parser.add_argument("--no-sb3", action="store_true")
    parser.add_argument("--only-sb3", action="store_true")
    parser.add_argument("--floor", action="store_true", help="TD3's compute floor too")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(
        f"python {platform.python_version()}, torch {torch.__version__}, {args.threads} thread(s)"
    )
    sides = {} if args.only_sb3 else {"rlkit": rlkit_seed}
    if not args.no_sb3:
        try:
            import stable_baselines3  # noqa: F401
        except ImportError:
            print("stable-baselines3 is not installed: rlkit only")
        else:
            sides["sb3"] = sb3_seed
    for case in args.cases:
        _, env_id, p = CASES[case]
        if env_id.startswith("HalfCheetah"):
            steps = args.cheetah_steps
        else:
            steps = args.total_steps or p.total_steps
        case_sides = dict(sides)
        if args.floor and CASES[case][0] == "TD3":
            case_sides["floor"] = floor_seed
        rows: dict[str, list[tuple[float, float, float]]] = {side: [] for side in case_sides}
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            for side, run_seed in case_sides.items():  # interleaved, so both see the same load
                wall, cpu, mean = run_seed(case, seed, steps)
                rows[side].append((wall, cpu, mean))
                print(
                    f"{side} {case} ({steps} steps) seed {seed}: wall {wall:.1f} s, cpu "
                    f"{cpu:.1f} s, deterministic mean {mean:.1f}",
                    flush=True,
                )
            _ratios(seed, {side: side_rows[-1] for side, side_rows in rows.items()})
        for side in case_sides:
            _report(f"{side} {case} ({steps} steps)", env_id, rows[side])


if __name__ == "__main__":
    main()
