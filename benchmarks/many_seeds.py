"""Many seeds in one process against sequential single runs, one torch thread.

``rk.make_experiment(RECIPE, seeds=[0, ..., N-1])`` (``rk.ManySeedsPPO`` or ``rk.ManySeedsDQN``:
the seeds' parameters stacked, their losses computed at once, each seed's own envs and
generators) against ``N`` runs of ``rk.make_experiment(RECIPE, seed)`` one after the other, in
the same process. The single runs record their episode returns only: ``DQN_CartPole``'s
model selection (``rk.EvaluationHook(..., restore_best=True)``, which does not change the
training) is left out, so both sides are timed without evaluations and judged by their final
parameters. For each seed:
the greedy (deterministic) mean over 20 episodes on a separate ``CartPole-v1`` (seeded 123), for
the single run and for the seed inside the many-seed run. Reports wall and CPU time (CPU time
is the fairer measure on a shared machine) and their ratio many / sequential, and the load
average before and after.

Target (issue 28): ratio <= 0.4 on the CPU; every seed >= 475 as the single runs (PPO; DQN's
final greedy return swings from one evaluation to the next, results_many_seeds.txt). Usage::

    python benchmarks/many_seeds.py [--seeds 5] [--recipe PPO_CartPole|DQN_CartPole] [--steps N]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import torch

import rlkit as rk


def greedy_mean(policy: object, env_id: str) -> float:
    """The greedy mean return over 20 episodes on a separate environment."""
    return float(rk.evaluate(policy, rk.GymEnv(env_id), 20, seed=123).mean)


def timed(experiment: rk.Experiment, single: bool) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of a run of ``experiment`` (a single run: with only
    ``rk.TotalRewardPerEpisode``, the module docstring)."""
    start, cpu = time.perf_counter(), time.process_time()
    if single:
        experiment = rk.Experiment(
            policy=experiment.policy,
            env=experiment.env,
            stop_condition=experiment.stop_condition,
            hook=rk.TotalRewardPerEpisode(),
            threads=1,
        )
    rk.run(experiment)
    return time.perf_counter() - start, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    recipes = ["PPO_CartPole", "DQN_CartPole"]
    parser.add_argument("--recipe", default="PPO_CartPole", choices=recipes)
    parser.add_argument("--steps", type=int, default=None, help="total_steps per seed")
    args = parser.parse_args()
    torch.set_num_threads(1)
    seeds = list(range(args.seeds))
    budget = {} if args.steps is None else {"total_steps": args.steps}
    env_id = "CartPole-v1"
    print(f"{args.recipe}, {args.seeds} seeds, torch {torch.__version__}, "
          f"{platform.processor() or platform.machine()}, 1 torch thread")
    print(f"load average before: {os.getloadavg()}", flush=True)
    single_wall = single_cpu = 0.0
    single_means = []
    for seed in seeds:
        experiment = rk.make_experiment(args.recipe, seed, **budget)
        wall, cpu = timed(experiment, single=True)
        single_wall, single_cpu = single_wall + wall, single_cpu + cpu
        single_means.append(greedy_mean(experiment.policy, env_id))
        print(f"single run seed {seed}: wall {wall:.1f} s, cpu {cpu:.1f} s, greedy mean "
              f"{single_means[-1]:.1f}", flush=True)
    experiment = rk.make_experiment(args.recipe, seeds=seeds, **budget)
    many_wall, many_cpu = timed(experiment, single=False)
    many = experiment.policy.policy
    many_means = [greedy_mean(many.seed_policy(i), env_id) for i in range(len(seeds))]
    print(f"{len(seeds)} seeds in one process: wall {many_wall:.1f} s, cpu {many_cpu:.1f} s")
    print("| seed | single greedy mean | many-seed greedy mean |")
    print("|---:|---:|---:|")
    for seed, a, b in zip(seeds, single_means, many_means, strict=True):
        print(f"| {seed} | {a:.1f} | {b:.1f} |")
    print(f"sequential: wall {single_wall:.1f} s, cpu {single_cpu:.1f} s")
    print(f"ratio many / sequential: wall {many_wall / single_wall:.2f}, "
          f"cpu {many_cpu / single_cpu:.2f} (target <= 0.4)")
    print(f"seeds >= 475: single {sum(m >= 475 for m in single_means)} of {len(seeds)}, "
          f"many {sum(m >= 475 for m in many_means)} of {len(seeds)}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
