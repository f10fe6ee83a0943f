"""RecurrentPPO against plain PPO on the partially observed CartPole (``rlkit/CartPoleNoVel-v1``),
with the same settings (rl-baselines3-zoo's ppo_lstm ones for CartPoleNoVel: 8 envs, n_steps 32,
batch 256, 20 epochs, gamma 0.98, gae_lambda 0.8, lr and clip linear to 0 over 100k steps).

For each seed and each learner: the wall time, the first environment step at which a training
episode returned 500, the first step at which the mean of the last 20 training episodes reached
475 and 500, the mean of the last 20 training episodes, and the greedy policy's returns on 10
evaluation episodes. Torch on one thread.

Usage::

    python benchmarks/recurrent.py [--seeds 0 1 2] [--steps 100000] [--learners rec ppo]

Results (written by hand from the output) are in benchmarks/results_recurrent.txt.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

import rlkit as rk

ENV = "rlkit/CartPoleNoVel-v1"


def settings(steps: int) -> dict:
    """The zoo's ppo_lstm CartPoleNoVel settings, both learners."""
    return dict(
        n_steps=32, batch_size=256, gae_lambda=0.8, gamma=0.98, n_epochs=20, ent_coef=0.0,
        lr=rk.LinearSchedule(1e-3, 0.0, steps), clip_range=rk.LinearSchedule(0.2, 0.0, steps),
    )  # fmt: skip


class FirstSteps(rk.TotalRewardPerEpisode):
    """Episode returns, and the transitions seen when each finished."""

    def __init__(self) -> None:
        super().__init__()
        self.at: list[int] = []

    def vector_post_act(self, policy, env) -> None:
        before = len(self.rewards)
        super().vector_post_act(policy, env)
        self.at.extend([policy.policy.transitions] * (len(self.rewards) - before))


def first(steps: list[int], mask: np.ndarray) -> int | None:
    where = np.flatnonzero(mask)
    return int(steps[where[0]]) if len(where) else None


def run(learner: str, seed: int, steps: int) -> dict:
    torch.set_num_threads(1)
    env = rk.VectorGymEnv(ENV, 8, seed=seed)
    cls = rk.RecurrentPPO if learner == "rec" else rk.PPO
    agent = cls.agent(env, seed=seed, **settings(steps))
    hook = FirstSteps()
    start = time.perf_counter()
    rk.run(agent, env, rk.StopAfterNSteps(steps), hook)
    seconds = time.perf_counter() - start
    r = np.asarray(hook.rewards)
    mean20 = np.convolve(r, np.ones(20) / 20, mode="valid") if len(r) >= 20 else np.array([])
    at20 = hook.at[19:]
    evaluation = rk.run(rk.greedy(agent.policy), rk.GymEnv(ENV, seed=1000 + seed),
                        rk.StopAfterNEpisodes(10), rk.TotalRewardPerEpisode())  # fmt: skip
    return {
        "learner": "RecurrentPPO" if learner == "rec" else "PPO",
        "seed": seed,
        "seconds": round(seconds, 1),
        "first_500": first(hook.at, r >= 500),
        "mean20_475_at": first(at20, mean20 >= 475),
        "mean20_500_at": first(at20, mean20 >= 500),
        "last20": float(r[-20:].mean()),
        "greedy": [float(x) for x in evaluation.rewards],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--learners", nargs="+", default=["rec", "ppo"])
    args = parser.parse_args()
    for seed in args.seeds:
        for learner in args.learners:
            print(json.dumps(run(learner, seed, args.steps)), flush=True)


if __name__ == "__main__":
    main()
