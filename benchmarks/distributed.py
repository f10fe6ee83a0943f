"""Scale-out of the actor-learner split (docs/how-to/scale-out.md): environment steps per second
of ``ApeX_CartPole`` with 1, 2, 4, ... Ray actors, against the single-process recipes, and
its learning curve against wall time.

1. Throughput: ``--steps`` transitions of ``rk.run(rk.make_experiment("ApeX_CartPole",
   n_actors=N, backend="ray"))`` for N = 1, 2, 4, ... up to ``--max-actors`` (default: the
   machine's cores; Ray is started with that many CPUs plus one for the learner), against the
   same learner fed by one in-process actor (``backend="local"``, n_actors=1) and against
   ``DQN_CartPole`` (the single-process recipe: one env, no split). Everything runs the
   recipes' learning schedule (128 gradient steps every 256 transitions), so the learner's
   gradient steps bound the rate; ``--set NAME=VALUE`` changes a parameter of every run (e.g.
   ``--set gradient_steps=16`` for a lighter learner). Scaling is the rate with N actors over
   the rate with 1, against N (linear).
2. Learning: ``ApeX_CartPole`` with 2 Ray actors on ``--seeds`` seeds, ``--learn-steps``
   transitions: each evaluation's (step, wall seconds, mean return), the wall time to the
   first evaluation of at least 475, and the final greedy mean over 20 episodes (the recipe
   keeps the best evaluated policy).

Runs standalone from the repository root with the repository installed
(``pip install -e .[ray,torch]``); prints tables and writes ``--out``
(default ``benchmarks/results_distributed.txt``). ``--quick``: fewer steps and one seed (a
16-core machine runs ``--max-actors 8 --quick`` in a few minutes)::

    python benchmarks/distributed.py [--max-actors N] [--steps 20000] [--seeds 0 1] [--quick]

RLlib's IMPALA and APPO are compared in ``benchmarks/distributed_rllib.py`` (``ray[rllib]`` in a
virtualenv of its own; it is not a dependency).
"""

from __future__ import annotations

import argparse
import ast
import os
import platform
import time
from pathlib import Path
from typing import Any

import rlkit as rk


def overrides(items: list[str]) -> dict[str, Any]:
    result = {}
    for item in items:
        key, _, text = item.partition("=")
        try:
            result[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            result[key] = text
    return result


def steps_per_second(name: str, steps: int, **params: Any) -> float:
    exp = rk.make_experiment(name, seed=0, total_steps=steps, **params)
    exp.hook = None  # no evaluation: the rate of acting and learning only
    start = time.perf_counter()
    rk.run(exp)
    seconds = time.perf_counter() - start
    close = getattr(exp.env, "close", None)
    if close is not None:
        close()
    return steps / seconds


class WallClock(rk.AbstractHook):
    """Stamps the wall time of every new result of an ``rk.EvaluationHook``."""

    def __init__(self, evaluation: Any) -> None:
        self.evaluation, self.start, self.times = evaluation, 0.0, []

    def pre_experiment(self, policy: Any, env: Any) -> None:
        self.start = time.perf_counter()

    def post_act(self, policy: Any, env: Any) -> None:
        while len(self.times) < len(self.evaluation.results):
            self.times.append(time.perf_counter() - self.start)


def learning_curve(seed: int, steps: int, **params: Any) -> dict[str, Any]:
    from rlkit.experiments.dqn import greedy_mean

    exp = rk.make_experiment("ApeX_CartPole", seed=seed, total_steps=steps, **params)
    evaluation = exp.hook[rk.EvaluationHook]
    clock = WallClock(evaluation)
    start = time.perf_counter()
    rk.run(exp.policy, exp.env, exp.stop_condition, exp.hook + clock)
    seconds = time.perf_counter() - start
    exp.env.close()
    curve = [(r.step, t, r.mean) for r, t in zip(evaluation.results, clock.times, strict=True)]
    solved = next(((s, t) for s, t, m in curve if m >= 475), None)
    return {"curve": curve, "seconds": seconds, "solved": solved, "greedy": greedy_mean(exp),
            "info": exp.env.info()}  # fmt: skip


def actor_counts(max_actors: int) -> list[int]:
    counts, n = [], 1
    while n <= max_actors:
        counts.append(n)
        n *= 2
    if counts[-1] != max_actors:
        counts.append(max_actors)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-actors", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--steps", type=int, default=20_000, help="transitions per rate")
    parser.add_argument("--learn-steps", type=int, default=50_000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-learning", action="store_true")
    parser.add_argument("--no-rates", action="store_true", help="the learning runs only")
    parser.add_argument(
        "--backend",
        choices=("ray", "local"),
        default="ray",
        help="the learning runs' backend (they give the same numbers)",
    )
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results_distributed.txt"))
    args = parser.parse_args()
    if args.quick:
        args.steps, args.learn_steps, args.seeds = 4_000, 20_000, args.seeds[:1]
    import ray
    import torch

    torch.set_num_threads(1)
    ray.init(num_cpus=args.max_actors + 1, include_dashboard=False, log_to_driver=False)
    params = overrides(args.overrides)
    lines = [
        f"# benchmarks/distributed.py on {platform.node()} ({os.cpu_count()} cores), "
        f"{time.strftime('%Y-%m-%d %H:%M')}, torch {torch.__version__}, ray {ray.__version__}",
        f"# --steps {args.steps} --max-actors {args.max_actors} "
        f"{' '.join('--set ' + o for o in args.overrides)}",
    ]
    if not args.no_rates:
        lines += rates(args, params)
    if not args.no_learning:
        lines += ["", f"## learning: ApeX_CartPole, 2 {args.backend} actors, {args.learn_steps} "
                  "steps", "", "| seed | greedy mean (20 ep.) | wall s | first eval >= 475 "
                  "(step, s) | curve (step, s, mean) |", "|---|---|---|---|---|"]  # fmt: skip
        for seed in args.seeds:
            result = learning_curve(
                seed, args.learn_steps, **{**params, "n_actors": 2, "backend": args.backend}
            )
            solved = result["solved"]
            where = f"{solved[0]}, {solved[1]:.0f}" if solved else "never"
            curve = " ".join(f"({s}, {t:.0f}, {m:.0f})" for s, t, m in result["curve"])
            lines.append(f"| {seed} | {result['greedy']:.1f} | {result['seconds']:.0f} | "
                         f"{where} | {curve} |")  # fmt: skip
            print(lines[-1], flush=True)
    ray.shutdown()
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"written {args.out}")


def rates(args: argparse.Namespace, params: dict[str, Any]) -> list[str]:
    """The table of env steps per second."""
    lines = [
        "",
        "## env steps/s (acting and learning)",
        "",
        "| run | actors | steps/s | vs 1 Ray actor | linear |",
        "|---|---|---|---|---|",
    ]
    dqn = {k: v for k, v in params.items() if k not in ("n_actors", "backend", "sync_every",
                                                         "rollout_length", "epsilon", "alpha",
                                                         "per_alpha", "per_beta")}  # fmt: skip
    rate = steps_per_second("DQN_CartPole", args.steps, **{**dqn, "n_step": 3})
    lines.append(f"| DQN_CartPole (single process, n_step 3) | - | {rate:,.0f} | | |")
    print(lines[-1], flush=True)
    rate = steps_per_second("ApeX_CartPole", args.steps, **{**params, "n_actors": 1})
    lines.append(f"| ApeX_CartPole local (in-process actor) | 1 | {rate:,.0f} | | |")
    print(lines[-1], flush=True)
    base = None
    for n in actor_counts(args.max_actors):
        rate = steps_per_second("ApeX_CartPole", args.steps, **{**params, "n_actors": n,
                                                                 "backend": "ray"})  # fmt: skip
        base = base or rate
        lines.append(f"| ApeX_CartPole ray | {n} | {rate:,.0f} | {rate / base:.2f} | {n} |")
        print(lines[-1], flush=True)
    return lines


if __name__ == "__main__":
    main()
