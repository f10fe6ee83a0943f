"""The ``rlkit`` command: list and run the bundled experiments.

rlkit list
rlkit run TabularQLearning_CliffWalking --seed 0
rlkit run DQN_CartPole --checkpoint-every 5000 --logdir runs/dqn    # logs, checkpoints there
rlkit resume runs/dqn                                               # continue after a crash
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import sys
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from .core.interfaces import AbstractHook
from .hooks.basic import find_hook

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
    run.add_argument(
        "--logdir",
        type=Path,
        default=None,
        help="the run directory itself: episodes.csv, config.json, TensorBoard events (when "
        "tensorboard is installed) and checkpoints go there (default: a new folder under --out)",
    )
    run.add_argument(
        "--checkpoint-every",
        type=int,
        default=None,
        metavar="N",
        help="save a checkpoint every N environment steps (and at the end) into "
        "RUN_DIR/checkpoints; continue with 'rlkit resume RUN_DIR'",
    )
    run.add_argument("--quiet", action="store_true", help="print only the final summary")
    run.set_defaults(func=_run)
    resume = sub.add_parser("resume", help="continue a checkpointed run from its newest checkpoint")
    resume.add_argument("run_dir", type=Path, help="the run directory of 'rlkit run'")
    resume.add_argument("--quiet", action="store_true", help="print only the final summary")
    resume.set_defaults(func=_resume)
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
    from .core.run import run

    if args.checkpoint_every is not None and args.checkpoint_every < 1:
        print(
            f"rlkit: --checkpoint-every must be a positive number of steps, got "
            f"{args.checkpoint_every}",
            file=sys.stderr,
        )
        return 2
    try:
        experiment = make_experiment(args.name, seed=args.seed)
    except UnknownExperimentError as error:
        print(f"rlkit: {error}", file=sys.stderr)
        return 2
    if args.logdir is not None:
        run_dir = args.logdir
        if (run_dir / "config.json").exists():
            print(
                f"rlkit: {run_dir} already holds a run; continue it with 'rlkit resume "
                f"{run_dir}' or choose another --logdir",
                file=sys.stderr,
            )
            return 2
        run_dir.mkdir(parents=True, exist_ok=True)
    else:
        run_dir = _new_run_dir(args.out, args.name, args.seed)
    config = _write_config(run_dir, args)
    hook = _hooks(experiment, run_dir, config, quiet=args.quiet)
    print(f"{experiment.name} (seed {args.seed}): {experiment.description}")
    run(experiment.policy, experiment.env, experiment.stop_condition, hook)
    _report_evaluations(experiment, run_dir)
    print(f"results written to {run_dir}")
    return 0


def _resume(args: argparse.Namespace) -> int:
    from .core.experiment import UnknownExperimentError, make_experiment
    from .core.run import run
    from .hooks.checkpoint import CheckpointError, latest_checkpoint, read_checkpoint

    run_dir = args.run_dir
    try:
        config = json.loads((run_dir / "config.json").read_text())
        name, seed = config["experiment"], config["seed"]
    except (OSError, ValueError, KeyError) as error:
        print(f"rlkit: {run_dir} is not a run directory of 'rlkit run' ({error})", file=sys.stderr)
        return 2
    newest = latest_checkpoint(run_dir / "checkpoints")
    if newest is None:
        print(
            f"rlkit: no checkpoint in {run_dir / 'checkpoints'}; start runs with "
            f"'rlkit run {name} --checkpoint-every N' to be able to resume them",
            file=sys.stderr,
        )
        return 2
    try:
        meta = read_checkpoint(newest)["meta"]
        if meta["finished"]:
            print(f"{name} (seed {seed}) already finished at step {meta['step']}: {newest}")
            return 0
        experiment = make_experiment(name, seed=seed, **config.get("kwargs", {}))
        hook = _hooks(experiment, run_dir, config, quiet=args.quiet)
        print(f"{name} (seed {seed}): resuming at step {meta['step']} from {newest.name}")
        run(experiment.policy, experiment.env, experiment.stop_condition, hook, resume_from=newest)
    except (CheckpointError, UnknownExperimentError) as error:
        print(f"rlkit: {error}", file=sys.stderr)
        return 2
    _report_evaluations(experiment, run_dir)
    print(f"results written to {run_dir}")
    return 0


def _hooks(experiment: Any, run_dir: Path, config: dict[str, Any], *, quiet: bool) -> Any:
    """The hooks of a CLI run: the same chain for ``run`` and ``resume`` (a checkpoint is
    restored into a chain of the same hooks)."""
    from .hooks.basic import StepsPerEpisode, TotalRewardPerEpisode
    from .hooks.logging import CSVLogger, TensorBoardLogger
    from .hooks.progress import ProgressBar

    own = find_hook(experiment.hook, TotalRewardPerEpisode)
    returns, steps = own or TotalRewardPerEpisode(), StepsPerEpisode()
    # On a terminal a progress bar shows the run; elsewhere the summary prints a line every
    # few seconds. The bar is always in the chain (disabled off-terminal): resume needs the
    # same hooks.
    bar_shown = not quiet and sys.stderr.isatty()
    bar = ProgressBar(experiment.stop_condition, desc=config["experiment"], disable=not bar_shown)
    summary = LearningSummary(returns, steps, quiet=quiet or bar_shown)
    hook = experiment.hook + (steps if own else returns + steps)
    hook = hook + CSVLogger(run_dir / "episodes.csv")
    if config.get("tensorboard"):
        hook = hook + TensorBoardLogger(run_dir / "tensorboard")
    hook = hook + bar + summary
    every = config.get("checkpoint_every")
    if every is not None:
        from .hooks.checkpoint import CheckpointHook

        metadata = {"experiment": config["experiment"], "seed": config["seed"]}
        hook = hook + CheckpointHook(
            run_dir / "checkpoints", every_n_steps=every, metadata=metadata
        )
    return hook


def _report_evaluations(experiment: Any, run_dir: Path) -> None:
    """Print the recipe's greedy evaluations (if it has an ``EvaluationHook``) and write them to
    ``evaluations.csv``: step, mean and std of the return per evaluation."""
    from .hooks.evaluation import EvaluationHook

    hook = find_hook(experiment.hook, EvaluationHook)
    if hook is None or not hook.results:
        return
    with open(run_dir / "evaluations.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["step", "mean_return", "std_return"])
        writer.writerows(hook.results)
    last = hook.results[-1]
    line = (
        f"greedy evaluation ({hook.n_episodes} episodes, {len(hook.results)} times): "
        f"last {last.mean:.3f} at step {last.step:,}"
    )
    if hook.keep_best:
        line += f", best {hook.best_mean:.3f} at step {hook.best_step:,}"
    if hook.restored_step is not None:
        line += " (the policy now holds the best parameters)"
    print(line)


def _new_run_dir(parent: Path, name: str, seed: int) -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    run_dir = parent / f"{name}-seed{seed}-{stamp}"
    suffix = 1
    while run_dir.exists():
        suffix += 1
        run_dir = parent / f"{name}-seed{seed}-{stamp}-{suffix}"
    run_dir.mkdir(parents=True)
    return run_dir


def _write_config(run_dir: Path, args: argparse.Namespace) -> dict[str, Any]:
    """``config.json``: what ``rlkit resume`` needs to rebuild the run (name, seed, arguments)."""
    from .core.version import __version__

    config = {
        "experiment": args.name,
        "seed": args.seed,
        "kwargs": {},
        "checkpoint_every": args.checkpoint_every,
        "tensorboard": importlib.util.find_spec("tensorboard") is not None,
        "rlkit": __version__,
        "started": datetime.now().isoformat(timespec="seconds"),
    }
    (run_dir / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    return config


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
        self.start_steps = 0

    def pre_experiment(self, policy: Any, env: Any) -> None:
        self.start = self.last = time.perf_counter()
        self.start_steps = sum(self.steps.steps)  # a resumed run's rate counts its own steps

    def state_dict(self) -> dict[str, Any]:
        """Nothing to save: it only displays the state of the hooks it reads."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        pass

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
        rate = (total_steps - self.start_steps) / max(now - self.start, 1e-9)
        head = "done: " if final else ""
        return (
            f"{head}episodes {len(self.returns.rewards):>7,}  steps {total_steps:>9,}  "
            f"mean return (last {len(rewards)}) {mean:9.3f}  {rate:,.0f} steps/s"
        )


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
