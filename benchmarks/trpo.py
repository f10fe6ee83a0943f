"""TRPO_CartPole for several seeds beside sb3-contrib's TRPO with the same settings.

For each seed: train rlkit's ``TRPO_CartPole`` recipe (rl-baselines3-zoo's hyperparameters,
100k steps, one env collecting 1024 transitions per update) and report the wall time, the mean
return of the last 10 training episodes and the deterministic (greedy) mean over 20 episodes on
a separate environment. Then, when sb3-contrib is installed, the same for
``sb3_contrib.TRPO("MlpPolicy", env, n_steps=1024, batch_size=512, cg_damping=1e-3,
gae_lambda=0.98, gamma=0.99, learning_rate=1e-3, n_critic_updates=20)`` on one CartPole-v1
environment, with the same torch thread count. Usage::

    python benchmarks/trpo.py [--seeds 5] [--first-seed 0] [--threads 1] [--total-steps 100000]
                              [--no-sb3 | --only-sb3]
"""

from __future__ import annotations

import argparse
import platform
import time

import gymnasium as gym
import numpy as np
import torch
from rlkit.experiments.optimizers import TRPO_CARTPOLE

import rlkit as rk

SOLVED = 475.0


def rlkit_seed(seed: int, total_steps: int) -> tuple[float, float, float]:
    """(wall seconds, mean of the last 10 training returns, greedy mean over 20 episodes)."""
    experiment = rk.make_experiment("TRPO_CartPole", seed, total_steps=total_steps)
    start = time.perf_counter()
    hook = rk.run(experiment)
    wall = time.perf_counter() - start
    greedy = rk.evaluate(
        experiment.policy.policy, rk.GymEnv("CartPole-v1", seed=10_000 + seed), 20, seed=seed
    )
    return wall, float(np.mean(hook.rewards[-10:])), greedy.mean


def sb3_seed(seed: int, total_steps: int) -> tuple[float, float, float]:
    """The same for sb3-contrib's TRPO with the recipe's settings."""
    from sb3_contrib import TRPO
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.monitor import Monitor

    zoo = ("n_steps", "batch_size", "cg_damping", "gae_lambda", "gamma", "lr", "n_critic_updates")
    settings = {k: getattr(TRPO_CARTPOLE, k) for k in zoo}  # what rl-baselines3-zoo sets
    env = Monitor(gym.make("CartPole-v1"))
    model = TRPO(
        "MlpPolicy",
        env,
        seed=seed,
        learning_rate=settings.pop("lr"),
        device="cpu",
        **settings,
    )
    start = time.perf_counter()
    model.learn(total_timesteps=total_steps)
    wall = time.perf_counter() - start
    returns = env.get_episode_rewards()
    eval_env = gym.make("CartPole-v1")
    eval_env.reset(seed=10_000 + seed)
    mean, _ = evaluate_policy(model, eval_env, n_eval_episodes=20, deterministic=True)
    return wall, float(np.mean(returns[-10:])), float(mean)


def _report(name: str, rows: list[tuple[float, float, float]]) -> None:
    walls, lasts, greedys = (np.array(column) for column in zip(*rows, strict=True))
    solved = int(np.sum(greedys >= SOLVED))
    print(
        f"{name}: wall {walls.mean():.1f} s (+/- {walls.std():.1f}), last-10 training return "
        f"{lasts.mean():.1f}, greedy mean {greedys.mean():.1f} (min {greedys.min():.1f}); "
        f"{solved}/{len(rows)} seeds >= {SOLVED:.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--total-steps", type=int, default=TRPO_CARTPOLE.total_steps)
    parser.add_argument("--no-sb3", action="store_true")
    parser.add_argument("--only-sb3", action="store_true")
    parser.add_argument("--first-seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(
        f"python {platform.python_version()}, torch {torch.__version__}, {args.threads} thread(s)"
    )
    runs = {} if args.only_sb3 else {"rlkit TRPO_CartPole": rlkit_seed}
    if not args.no_sb3:
        try:
            import sb3_contrib  # noqa: F401
        except ImportError:
            print("sb3-contrib is not installed: rlkit only")
        else:
            runs["sb3-contrib TRPO"] = sb3_seed
    for name, run_seed in runs.items():
        rows = []
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            wall, last, greedy = run_seed(seed, args.total_steps)
            rows.append((wall, last, greedy))
            print(
                f"{name} seed {seed}: {wall:.1f} s, last-10 training return {last:.1f}, "
                f"greedy mean {greedy:.1f}",
                flush=True,
            )
        _report(name, rows)


if __name__ == "__main__":
    main()
