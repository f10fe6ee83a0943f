"""Learning of the offline recipes (experiments/offline.py) on several seeds: the greedy mean
return after a fixed number of gradient steps, per seed, against the dataset's mean episode
return. Each recipe's dataset is made once (its ``dataset_seed`` 0) and shared by the seeds.

    OMP_NUM_THREADS=1 python benchmarks/offline_learning.py --seeds 5 --steps 2500 \
        --recipes CQL_PendulumMedium IQL_PendulumMedium TD3BC_PendulumMedium \
        SAC_PendulumRandom CQL_PendulumRandom --data-dir /tmp/rlkit-data

prints one line per run (recipe, seed, mean, std of ``--episodes`` evaluation episodes in
Pendulum-v1 / CartPole-v1) and, per recipe, the dataset's mean return and how many seeds beat
it; benchmarks/results_offline_learning.txt holds a measured output.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import rlkit as rk


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recipes", nargs="+", required=True)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=2500, help="gradient steps")
    parser.add_argument("--episodes", type=int, default=10, help="evaluation episodes")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    means: dict[str, list[float]] = {name: [] for name in args.recipes}
    datasets = {}
    for seed in range(args.seeds):  # seeds outside: a study cut short has every recipe's first
        for name in args.recipes:
            start = time.perf_counter()
            overrides = {"total_steps": args.steps, "eval_every": args.steps,
                         "eval_episodes": args.episodes, "data_dir": args.data_dir}  # fmt: skip
            experiment = rk.make_experiment(name, seed, **overrides)
            rk.run(experiment)
            result = experiment.hook.results[-1]
            means[name].append(result.mean)
            datasets[name] = experiment.env.dataset
            seconds = time.perf_counter() - start
            print(f"{name} seed {seed}: {result.mean:.1f} +- {result.std:.1f} after "
                  f"{args.steps} gradient steps ({seconds:.0f} s)", flush=True)  # fmt: skip
    for name in args.recipes:
        dataset = datasets[name]
        behaviour = float(dataset.episode_returns().mean())
        above = sum(m > behaviour for m in means[name])
        print(f"{name}: mean over seeds {np.mean(means[name]):.1f}; dataset ({len(dataset)} "
              f"transitions, {dataset.policy_description}) mean return {behaviour:.1f}; "
              f"{above} of {len(means[name])} seeds above it", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
