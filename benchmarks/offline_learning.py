"""Learning of the offline recipes (experiments/offline.py) on several seeds: the greedy mean
return every ``--eval-every`` gradient steps up to ``--steps``, per seed, against the dataset's
mean episode return. Each recipe's dataset is made once (its ``dataset_seed`` 0, before any
run starts) and shared by the seeds.

    OMP_NUM_THREADS=1 python benchmarks/offline_learning.py --seeds 5 --steps 10000 \
        --eval-every 2500 --episodes 50 --jobs 16 --data-dir /tmp/rlkit-data \
        --recipes CQL_PendulumMedium IQL_PendulumMedium TD3BC_PendulumMedium BC_PendulumMedium

prints one line per run (recipe, seed, the mean of ``--episodes`` evaluation episodes in
Pendulum-v1 / CartPole-v1 at each evaluation) and, per recipe and evaluation, the dataset's
mean return and how many seeds beat it. ``--set key=value`` overrides a recipe parameter of
every recipe (``--set dataset_size=1000``; read as ``rlkit run --set`` reads it). ``--jobs N``
runs N seeds at once, each in its own process with one torch thread (the results do not depend on
N). ``--q-estimates``: for SAC and CQL, the critics' estimate ``min_i Q_i(s_0, pi(s_0))`` at
the first state of ``--episodes`` more greedy episodes beside the discounted return
``sum_t gamma^t r_t`` that episode really got (its 200 steps; Pendulum's rewards are
negative, so the infinite-horizon value is lower still): a critic that over-estimates the
actions it never saw in the data shows it here. ``--diagnostics``: each evaluation's line also
gives the mean, since the previous evaluation, of the diagnostics each update returns (IQL's
``value_mean`` and ``adv_weight``, CQL's ``q_mean`` and ``cql_gap``, ...).
benchmarks/results_offline_learning.txt holds a measured output.
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from typing import Any

import numpy as np
import torch

import rlkit as rk
from rlkit.cli import _value as set_value


def overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The recipe parameters every run gets (``--set`` ones, the budget, the evaluations)."""
    extra = {}
    for item in args.set:
        key, _, value = item.partition("=")
        extra[key] = set_value(value)  # as `rlkit run --set`
    every = args.eval_every or args.steps
    return {"total_steps": args.steps, "eval_every": every, "eval_episodes": args.episodes,
            "data_dir": args.data_dir, **extra}  # fmt: skip


def q_estimates(policy: Any, env_id: str, n: int, seed: int) -> tuple[float, float]:
    """The mean over ``n`` greedy episodes of ``min_i Q_i(s_0, pi(s_0))`` and of the discounted
    return from ``s_0`` (``policy`` an ``rk.SAC`` or ``rk.CQL``)."""
    gamma = policy.config["gamma"]
    env = rk.GymEnv(env_id, seed=seed)
    actor = rk.greedy(policy, seed)
    estimates, returns = [], []
    for _ in range(n):
        env.reset()
        obs = torch.as_tensor(np.asarray(env.state)[None], dtype=torch.float32)
        with torch.no_grad():
            action = policy.model(obs)
            estimates.append(float(torch.stack(policy.model.critic(obs, action)).min()))
        total, discount = 0.0, 1.0
        while not env.done:
            env.act(actor(env))
            total += discount * float(env.reward)
            discount *= gamma
        returns.append(total)
    return float(np.mean(estimates)), float(np.mean(returns))


class Announce(rk.AbstractHook):
    """Prints each new evaluation of ``evaluation`` (an ``rk.EvaluationHook`` called before
    it) as it happens: a study cut short still shows how far each run got."""

    def __init__(
        self, evaluation: rk.EvaluationHook, name: str, seed: int, diagnostics: bool = False
    ) -> None:
        self.evaluation, self.name, self.seed, self.seen = evaluation, name, seed, 0
        self.diagnostics = diagnostics
        self.sums: dict[str, list[float]] = {}

    def record(self, policy: Any) -> None:
        """Collect the diagnostics of each of ``policy``'s updates (its ``end_round``)."""
        end_round = policy.end_round

        def collect(n: int, means: dict[str, float]) -> None:
            for key, value in means.items():
                self.sums.setdefault(key, []).append(value)
            end_round(n, means)

        policy.end_round = collect

    def post_act(self, policy: Any, env: Any) -> None:
        for r in self.evaluation.results[self.seen :]:
            extra = ""
            if self.diagnostics:
                means = {k: float(np.mean(v)) for k, v in self.sums.items()}
                extra = "; " + ", ".join(f"{k} {v:.3g}" for k, v in sorted(means.items()))
                self.sums.clear()
            print(f"  ({self.name} seed {self.seed} after {r.step} updates: {r.mean:.1f}; "
                  f"{time.process_time():.0f} s of CPU so far{extra})", flush=True)  # fmt: skip
        self.seen = len(self.evaluation.results)


def one_run(job: tuple[str, int, dict[str, Any], bool, bool]) -> dict[str, Any]:
    """Train ``name`` with ``seed``: its evaluations (and Q estimates) and its wall time."""
    name, seed, extra, with_q, diagnostics = job
    torch.set_num_threads(1)
    start, cpu = time.perf_counter(), time.process_time()
    experiment = rk.make_experiment(name, seed, **extra)
    announce = Announce(experiment.hook, name, seed, diagnostics)
    if diagnostics and hasattr(experiment.policy, "end_round"):
        announce.record(experiment.policy)
    hook = experiment.hook + announce
    rk.run(experiment.policy, experiment.env, experiment.stop_condition, hook)
    out = {
        "name": name,
        "seed": seed,
        "evals": [(r.step, r.mean, r.std) for r in experiment.hook.results],
        "seconds": time.perf_counter() - start,
        "cpu": time.process_time() - cpu,
    }
    policy = experiment.policy
    if with_q and isinstance(policy, rk.SAC | rk.CQL):
        episodes = extra["eval_episodes"]
        out["q"] = q_estimates(policy, experiment.hook.env.name, episodes, 20_000 + seed)
    return out


def line(result: dict[str, Any]) -> str:
    evals = ", ".join(f"{step}: {mean:.1f} +- {std:.1f}" for step, mean, std in result["evals"])
    seconds = f"{result['seconds']:.0f} s, {result['cpu']:.0f} s CPU"
    text = f"{result['name']} seed {result['seed']}: {evals} ({seconds})"
    if "q" in result:
        text += f"; Q(s0, pi(s0)) {result['q'][0]:.1f} vs discounted return {result['q'][1]:.1f}"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recipes", nargs="+", required=True)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0, help="seeds from this one on")
    parser.add_argument("--steps", type=int, default=2500, help="gradient steps")
    parser.add_argument("--eval-every", type=int, default=0, help="0: only at the end")
    parser.add_argument("--episodes", type=int, default=10, help="evaluation episodes")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE")
    parser.add_argument("--jobs", type=int, default=1, help="runs at once (processes)")
    parser.add_argument("--q-estimates", action="store_true")
    parser.add_argument("--diagnostics", action="store_true", help="the updates' diagnostics")
    args = parser.parse_args()
    torch.set_num_threads(1)
    extra = overrides(args)
    datasets = {}
    for name in args.recipes:  # made here, once, before the runs share them
        datasets[name] = rk.make_experiment(name, 0, **extra).env.dataset
    # seeds outside: a study cut short has every recipe's first seeds
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    jobs = [(name, seed, extra, args.q_estimates, args.diagnostics) for seed in seeds
            for name in args.recipes]  # fmt: skip
    results = []
    if args.jobs > 1:
        with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
            for result in pool.imap_unordered(one_run, jobs):
                results.append(result)
                print(line(result), flush=True)
    else:
        for job in jobs:
            results.append(one_run(job))
            print(line(results[-1]), flush=True)
    for name in args.recipes:
        dataset = datasets[name]
        behaviour = float(dataset.episode_returns().mean())
        runs = sorted((r for r in results if r["name"] == name), key=lambda r: r["seed"])
        print(f"{name}: dataset ({len(dataset)} transitions, {dataset.policy_description}) "
              f"mean return {behaviour:.1f}", flush=True)  # fmt: skip
        for i, (step, _, _) in enumerate(runs[0]["evals"] if runs else []):
            means = [r["evals"][i][1] for r in runs]
            above = sum(m > behaviour for m in means)
            print(f"  after {step} updates: mean over seeds {np.mean(means):.1f}; "
                  f"{above} of {len(means)} seeds above the dataset's mean; per seed "
                  f"{', '.join(f'{m:.1f}' for m in means)}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
