"""Structured observations, goals, masks and memory (issue 30): rlkit against Stable-Baselines3
and sb3-contrib in the same process on the same settings, one torch thread.

Parts (``--part``; the others of the issue, ``her``, ``recurrent`` and ``dict``, are added here
as they land):

* ``masks``: ``PPO_InvalidActionGrid`` (experiments/masks.py: ``rlkit/InvalidActionGrid-v0``,
  4 envs, n_steps 128, batch 64, 4 epochs, Adam 3e-4, gamma 0.99, gae_lambda 0.95, ent_coef
  0.01, MLP 64-64 tanh, ``--steps`` steps, default 50k) for each seed: rlkit's masked PPO, the
  same run unmasked (``masked=False``), and sb3-contrib's ``MaskablePPO`` with the same
  hyperparameters on the same env (``make_vec_env``, its own seeding; masks through the env's
  ``action_masks()``). Reported: environment steps until the mean return of the last 20
  training episodes first reaches 0.8 (the best return is 0.86), the mean of the last 20
  training episodes, the greedy (masked) mean over 20 episodes on a separate env, training wall
  time, and rlkit / MaskablePPO ratios of greedy return, of wall time and of CPU time (the
  process's, less sensitive than wall time to other work on a shared machine).

Usage::

    python benchmarks/structure.py --part masks [--seeds 3] [--steps 50000] [--no-sb3]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

import rlkit as rk  # noqa: E402

GRID = "rlkit/InvalidActionGrid-v0"
WINDOW = 20


def _threshold() -> float:
    from rlkit.experiments.masks import INVALID_ACTION_GRID_THRESHOLD

    return INVALID_ACTION_GRID_THRESHOLD


def _steps_to(rewards: list[float], ends: list[int]) -> int | None:
    from rlkit.experiments.masks import steps_to_threshold

    return steps_to_threshold(rewards, ends, _threshold(), WINDOW)


def rlkit_ppo(seed: int, steps: int, masked: bool) -> dict[str, Any]:
    """rlkit's PPO_InvalidActionGrid run (masked or not): steps to threshold, returns, time."""
    experiment = rk.make_experiment(
        "PPO_InvalidActionGrid", seed, total_steps=steps, masked=masked
    )
    start, cpu = time.perf_counter(), time.process_time()
    hook = rk.run(experiment)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    experiment.env.close()
    greedy = rk.evaluate(experiment.policy, rk.GymEnv(GRID), 20, seed=123).mean
    return {
        "steps_to": _steps_to(hook.rewards, hook.ends),
        "last": float(np.mean(hook.rewards[-WINDOW:])),
        "greedy": float(greedy),
        "seconds": seconds,
        "cpu": cpu,
    }


def sb3_maskable_ppo(seed: int, steps: int) -> dict[str, Any] | None:
    """sb3-contrib's MaskablePPO with the recipe's hyperparameters (None: not installed)."""
    try:
        from sb3_contrib import MaskablePPO
        from sb3_contrib.common.maskable.evaluation import evaluate_policy
        from stable_baselines3.common.callbacks import BaseCallback
        from stable_baselines3.common.env_util import make_vec_env
    except ImportError:
        return None

    class Episodes(BaseCallback):
        """Each finished episode's return and the environment steps taken then."""

        def __init__(self) -> None:
            super().__init__()
            self.rewards: list[float] = []
            self.ends: list[int] = []

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "episode" in info:
                    self.rewards.append(float(info["episode"]["r"]))
                    self.ends.append(int(self.num_timesteps))
            return True

    env = make_vec_env(lambda: gym.make(GRID), n_envs=4, seed=seed)
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=4, learning_rate=3e-4,
        gamma=0.99, gae_lambda=0.95, ent_coef=0.01, clip_range=0.2, vf_coef=0.5,
        max_grad_norm=0.5, seed=seed, device="cpu",
    )  # fmt: skip
    episodes = Episodes()
    start, cpu = time.perf_counter(), time.process_time()
    model.learn(steps, callback=episodes)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    eval_env = make_vec_env(lambda: gym.make(GRID), n_envs=1, seed=123)
    greedy, _ = evaluate_policy(model, eval_env, n_eval_episodes=20, deterministic=True)
    return {
        "steps_to": _steps_to(episodes.rewards, episodes.ends),
        "last": float(np.mean(episodes.rewards[-WINDOW:])),
        "greedy": float(greedy),
        "seconds": seconds,
        "cpu": cpu,
    }


def _steps(value: int | None) -> str:
    return "not reached" if value is None else f"{value:,}"


def masks(seeds: int, steps: int, sb3: bool) -> None:
    """The ``masks`` part (module docstring)."""
    print(f"masks: PPO_InvalidActionGrid, {steps:,} steps, threshold {_threshold()} (mean of "
          f"the last {WINDOW} training episodes), torch {torch.__version__}, "
          f"{platform.machine()}, 1 torch thread")  # fmt: skip
    print("| seed | masked: steps to threshold | last 20 | greedy | time (s) | unmasked: steps "
          "to threshold | last 20 | MaskablePPO: steps to threshold | last 20 | greedy | "
          "time (s) | greedy rlkit / MaskablePPO | time rlkit / MaskablePPO | CPU time rlkit / "
          "MaskablePPO |")
    print("|---:" * 14 + "|")
    rows = []
    for seed in range(seeds):
        masked = rlkit_ppo(seed, steps, True)
        unmasked = rlkit_ppo(seed, steps, False)
        peer = sb3_maskable_ppo(seed, steps) if sb3 else None
        rows.append((masked, unmasked, peer))
        peer_text = (
            " n/a | n/a | n/a | n/a | n/a | n/a | n/a"
            if peer is None
            else f" {_steps(peer['steps_to'])} | {peer['last']:.3f} | {peer['greedy']:.3f} | "
            f"{peer['seconds']:.1f} | {masked['greedy'] / peer['greedy']:.2f} | "
            f"{masked['seconds'] / peer['seconds']:.2f} | {masked['cpu'] / peer['cpu']:.2f}"
        )
        print(
            f"| {seed} | {_steps(masked['steps_to'])} | {masked['last']:.3f} | "
            f"{masked['greedy']:.3f} | {masked['seconds']:.1f} | {_steps(unmasked['steps_to'])} "
            f"| {unmasked['last']:.3f} |{peer_text} |",
            flush=True,
        )
    faster = sum(
        m["steps_to"] is not None and (u["steps_to"] is None or m["steps_to"] < u["steps_to"])
        for m, u, _ in rows
    )
    print(f"masked PPO reached the threshold in fewer steps than unmasked PPO on {faster} of "
          f"{seeds} seeds")  # fmt: skip
    if all(p is not None for *_, p in rows):
        at_least = sum(m["greedy"] >= p["greedy"] - 1e-9 for m, _, p in rows)
        ratios = [m["seconds"] / p["seconds"] for m, _, p in rows]
        cpu = [m["cpu"] / p["cpu"] for m, _, p in rows]
        print(f"greedy return >= MaskablePPO's on {at_least} of {seeds} seeds; rlkit / "
              f"MaskablePPO: wall time {np.mean(ratios):.2f}, CPU time {np.mean(cpu):.2f} "
              f"(mean of the seeds; target <= 0.7)")  # fmt: skip


PARTS = {"masks": masks}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=sorted(PARTS), required=True)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=50_000)
    parser.add_argument("--no-sb3", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    PARTS[args.part](args.seeds, args.steps, not args.no_sb3)


if __name__ == "__main__":
    main()
