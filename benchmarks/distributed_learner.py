"""Where an actor-learner run's CPU time goes (issue 26's scaling): ``ApeX_CartPole`` on the
local backend (its actors in this process), split into the actors' acting, the learner's
gradient steps and the learner's other work (recording the actors' transitions, their
priorities, the run loop and its hooks).

The learner's side per transition bounds the rate any number of actors can reach with one
learner process at the recipe's replay ratio (``gradient_steps`` every ``train_freq``
transitions): ``ceiling = transitions / (total - actors)`` transitions per second. The Ray
backend acts in other processes, so with enough actors the learner's side is all the learner
process does. Usage::

    python benchmarks/distributed_learner.py [--actors 1 8] [--steps N] [--set NAME=VALUE]
"""

from __future__ import annotations

import argparse
import ast
import time
from collections.abc import Callable
from typing import Any

import torch

import rlkit as rk
from rlkit.distributed import actor as actor_module
from rlkit.learners.drivers import off_policy


def _timed(spent: dict[str, float], key: str, fn: Callable) -> Callable:
    """``fn`` adding its CPU seconds to ``spent[key]``."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[key] += time.process_time() - start

    return wrapper


def split(n_actors: int, steps: int, overrides: dict[str, Any]) -> str:
    """One run's line: total, actors, gradient steps and the learner's other work."""
    spent = {"actors": 0.0, "train": 0.0}
    run, train = actor_module.Actor.run, off_policy.train
    actor_module.Actor.run = _timed(spent, "actors", run)
    off_policy.train = _timed(spent, "train", train)
    try:
        experiment = rk.make_experiment(
            "ApeX_CartPole", seed=0, n_actors=n_actors, backend="local", total_steps=steps,
            **overrides,
        )  # fmt: skip
        start = time.process_time()
        rk.run(experiment)
        total = time.process_time() - start
    finally:
        actor_module.Actor.run, off_policy.train = run, train
    learner = total - spent["actors"]
    other = learner - spent["train"]
    return (
        f"{n_actors} actors, {steps} transitions: total {total:.2f} s CPU, actors "
        f"{spent['actors']:.2f} s, gradient steps {spent['train']:.2f} s, learner's other work "
        f"{other:.2f} s; learner per transition {learner / steps * 1e6:.0f} us (gradient steps "
        f"{spent['train'] / steps * 1e6:.0f} us, other {other / steps * 1e6:.0f} us): ceiling "
        f"{steps / learner:,.0f} transitions/s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actors", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--steps", type=int, default=24_000)
    parser.add_argument("--set", dest="overrides", action="append", default=["gradient_steps=16"])
    args = parser.parse_args()
    torch.set_num_threads(1)
    overrides = {}
    for item in args.overrides:
        key, _, value = item.partition("=")
        overrides[key] = ast.literal_eval(value)
    print(f"ApeX_CartPole, local backend, {overrides}, torch {torch.__version__}, 1 thread")
    for n in args.actors:
        print(split(n, args.steps, overrides), flush=True)


if __name__ == "__main__":
    main()
