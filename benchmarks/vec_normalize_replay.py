"""SAC on Pendulum-v1 with and without ``rk.VecNormalize(norm_obs=True, norm_reward=False)``:
a replay learner on a normalised env (raw transitions in the replay, each batch normalised at
sample time, docs/how-to/normalization.md) should learn as it does on the plain env.

Each seed runs SAC (Stable-Baselines3's defaults, ``lr=1e-3``, ``hidden`` as given) for
``--steps`` steps on a one-env ``rk.VectorGymEnv`` (env seed ``100 + seed``), then reports the
mean return of the last 10 training episodes and of 10 greedy episodes on a raw
``rk.GymEnv`` (``rk.evaluate``, seed ``1000 + seed``; the normalised policy normalises the raw
observations itself with its frozen statistics).

Usage::

    python benchmarks/vec_normalize_replay.py [--steps 8000] [--hidden 64,64] [--seeds 0 1 2]

The output is in benchmarks/results_vec_normalize_replay.txt.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import rlkit as rk


def one_run(seed: int, normalize: bool, steps: int, hidden: tuple[int, ...]) -> str:
    """One SAC run; its line of results."""
    start = time.time()
    env = rk.VectorGymEnv("Pendulum-v1", 1, seed=100 + seed)
    if normalize:
        env = rk.VecNormalize(env, norm_obs=True, norm_reward=False)
    agent = rk.SAC.agent(env, seed=seed, lr=1e-3, hidden=hidden)
    hook = rk.run(agent, env, rk.StopAfterNSteps(steps), rk.TotalRewardPerEpisode())
    train = float(np.mean(hook.rewards[-10:]))
    evaluation = rk.evaluate(agent, rk.GymEnv("Pendulum-v1"), 10, seed=1000 + seed)
    env.close()
    return (
        f"seed={seed} normalize={normalize} last10_train={train:.1f} "
        f"eval10_mean={np.mean(evaluation.returns):.1f} ({time.time() - start:.0f}s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=8000)
    parser.add_argument("--hidden", default="64,64")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args()
    torch.set_num_threads(1)
    hidden = tuple(int(h) for h in args.hidden.split(","))
    for seed in args.seeds:
        for normalize in (False, True):
            print(one_run(seed, normalize, args.steps, hidden), flush=True)


if __name__ == "__main__":
    main()
