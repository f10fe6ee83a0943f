"""The ``rlkit`` command: list and run the bundled experiments.

rlkit list
rlkit run TabularQLearning_CliffWalking --seed 0
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from .core.hooks import AbstractHook

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rlkit`` command; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    return args.func(args)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rlkit", description="Run bundled rlkit experiments.")
    sub = parser.add_subparsers(dest="command")
    listing = sub.add_parser("list", help="list the bundled experiments")
    listing.set_defaults(func=_list)
    run = sub.add_parser("run", help="run a bundled experiment")
    run.add_argument("name", help="experiment name, e.g. TabularQLearning_CliffWalking")
    run.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    run.add_argument(
        "--out",
        type=Path,
        default=Path("runs"),
        help="parent folder of the run directory (default ./runs)",
    )
    run.add_argument("--quiet", action="store_true", help="print only the final summary")
    run.set_defaults(func=_run)
    return parser


def _list(args: argparse.Namespace) -> int:
    from .core.experiment import list_experiments

    recipes = list_experiments()
    width = max(map(len, recipes), default=0)
    for name, description in recipes.items():
        print(f"{name:<{width}}  {description}")
    return 0


def _run(args: argparse.Namespace) -> int:
    from .core.experiment import UnknownExperimentError, make_experiment
    from .core.hooks import StepsPerEpisode, TotalRewardPerEpisode
    from .core.logging import CSVLogger
    from .core.run import run

    try:
        experiment = make_experiment(args.name, seed=args.seed)
    except UnknownExperimentError as error:
        print(f"rlkit: {error}", file=sys.stderr)
        return 2
    run_dir = _new_run_dir(args.out, args.name, args.seed)
    _write_config(run_dir, args)
    returns, steps = TotalRewardPerEpisode(), StepsPerEpisode()
    summary = LearningSummary(returns, steps, quiet=args.quiet)
    hook = experiment.hook + returns + steps + CSVLogger(run_dir / "episodes.csv") + summary
    print(f"{experiment.name} (seed {args.seed}): {experiment.description}")
    run(experiment.policy, experiment.env, experiment.stop_condition, hook)
    print(f"results written to {run_dir}")
    return 0


def _new_run_dir(parent: Path, name: str, seed: int) -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    run_dir = parent / f"{name}-seed{seed}-{stamp}"
    suffix = 1
    while run_dir.exists():
        suffix += 1
        run_dir = parent / f"{name}-seed{seed}-{stamp}-{suffix}"
    run_dir.mkdir(parents=True)
    return run_dir


def _write_config(run_dir: Path, args: argparse.Namespace) -> None:
    from . import __version__

    config = {
        "experiment": args.name,
        "seed": args.seed,
        "rlkit": __version__,
        "started": datetime.now().isoformat(timespec="seconds"),
    }
    (run_dir / "config.json").write_text(json.dumps(config, indent=2) + "\n")


class LearningSummary(AbstractHook):
    """Prints episodes, steps, recent mean return and steps/s every few seconds, and at the end.

    It reads the episode returns and lengths of the hooks it is given.
    """

    def __init__(
        self,
        returns: Any,
        steps: Any,
        *,
        every_s: float = 2.0,
        window: int = 100,
        quiet: bool = False,
    ) -> None:
        self.returns, self.steps = returns, steps
        self.every_s, self.window, self.quiet = every_s, window, quiet
        self.start = self.last = time.perf_counter()

    def pre_experiment(self, policy: Any, env: Any) -> None:
        self.start = self.last = time.perf_counter()

    def post_episode(self, policy: Any, env: Any) -> None:
        now = time.perf_counter()
        if not self.quiet and now - self.last >= self.every_s:
            self.last = now
            print(self.line(now))

    def post_experiment(self, policy: Any, env: Any) -> None:
        print(self.line(time.perf_counter(), final=True))

    def line(self, now: float, final: bool = False) -> str:
        """One summary line."""
        rewards = self.returns.rewards[-self.window :]
        total_steps = sum(self.steps.steps)
        mean = sum(rewards) / len(rewards) if rewards else float("nan")
        rate = total_steps / max(now - self.start, 1e-9)
        head = "done: " if final else ""
        return (
            f"{head}episodes {len(self.returns.rewards):>7,}  steps {total_steps:>9,}  "
            f"mean return (last {len(rewards)}) {mean:9.3f}  {rate:,.0f} steps/s"
        )


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
