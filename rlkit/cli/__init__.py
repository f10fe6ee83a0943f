"""The ``rlkit`` command: list, run, resume and plot the bundled experiments.

rlkit list
rlkit run TabularQLearning_CliffWalking --seed 0
rlkit run DQN_CartPole --help                                       # the recipe's parameters
rlkit run DQN_CartPole --steps 20000 --set lr=1e-3 --set hidden=64 --threads 1
rlkit run DQN_CartPole --checkpoint-every 5000 --logdir runs/dqn    # logs, checkpoints there
rlkit resume runs/dqn                                               # continue after a crash
rlkit plot runs/dqn                                                 # runs/dqn/learning_curve.png
rlkit collect runs/dqn --steps 10000 --epsilon 0.1 --out data.npz   # an offline dataset
rlkit tune PPO_CartPole --trials 50 --steps 20000 --jobs 2           # runs/tune_PPO_CartPole
rlkit run PPO_CartPole --set-from runs/tune_PPO_CartPole/best.json   # the best trial's values
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..hooks.basic import find_hook
from .rundir import RunDirError
from .summary import LearningSummary, report_checkpoint, report_evaluations

__all__ = ["main", "LearningSummary"]

INTERRUPTED = 130  # the shell's status of a process ended by Ctrl-C (128 + SIGINT)
QUIET_HELP = (
    "print one line only, at the end: the steps done of the budget, the episodes, the mean "
    "return and the run directory (errors and warnings still go to standard error; after "
    "Ctrl-C, how to continue)"
)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rlkit`` command; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser(_recipe_help(argv))
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except KeyboardInterrupt:  # a second Ctrl-C, or one outside the run
        print("rlkit: interrupted", file=sys.stderr)
        return INTERRUPTED


def _fail(message: Any, status: int = 2) -> int:
    print(f"rlkit: {message}", file=sys.stderr)
    return status


def _parser(recipe_help: str | None = None) -> argparse.ArgumentParser:
    from ..core.version import __version__

    parser = argparse.ArgumentParser(prog="rlkit", description="Run bundled rlkit experiments.")
    parser.add_argument("--version", action="version", version=f"rlkit {__version__}")
    sub = parser.add_subparsers(dest="command")
    listing = sub.add_parser("list", help="list the bundled experiments")
    listing.set_defaults(func=_list)
    run = sub.add_parser(
        "run",
        help="run a bundled experiment ('rlkit run NAME --help' lists its parameters)",
        epilog=recipe_help
        or "'rlkit run NAME --help' lists the parameters of the recipe NAME (--set NAME=VALUE).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("name", help="experiment name, e.g. TabularQLearning_CliffWalking")
    run.add_argument("--seed", type=int, default=0, help="random seed, >= 0 (default 0)")
    run.add_argument(
        "--seeds",
        default=None,
        metavar="SEEDS",
        help="train several seeds in one process (0-4, or 0,3,7; recipes with many-seed "
        "support: PPO_CartPole, PPO_Acrobot); results are reported per seed",
    )
    run.add_argument(
        "--steps",
        type=int,
        default=None,
        metavar="N",
        help="budget in environment steps (the recipe's total_steps; the tabular recipes count "
        "episodes: --set episodes=N, ES_CartPole generations: --set generations=N)",
    )
    run.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override one of the recipe's parameters (repeatable); VALUE is a Python literal "
        "(1e-3, 64,64, None; true and false as in YAML) or a word (cuda)",
    )
    run.add_argument(
        "--set-from",
        type=Path,
        default=None,
        metavar="FILE",
        help="overrides from a JSON object of NAME: VALUE (the best.json of 'rlkit tune'); "
        "--set wins over it",
    )
    run.add_argument("--device", default=None, help="torch device of deep recipes, e.g. cuda")
    _threads_option(run)
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
        "tensorboard is installed) and checkpoints go there (default: a new folder under --out); "
        "a folder holding another run is refused",
    )
    run.add_argument(
        "--restart",
        action="store_true",
        help="start the run again in a --logdir that holds this same run without a checkpoint "
        "(stopped before its first one); its old results are deleted",
    )
    run.add_argument(
        "--checkpoint-every",
        type=int,
        default=None,
        metavar="N",
        help="save a checkpoint every N environment steps (and at the end, or at Ctrl-C) into "
        "RUN_DIR/checkpoints; continue with 'rlkit resume RUN_DIR'",
    )
    run.add_argument("--quiet", action="store_true", help=QUIET_HELP)
    run.set_defaults(func=_run)
    resume = sub.add_parser("resume", help="continue a checkpointed run from its newest checkpoint")
    resume.add_argument("run_dir", type=Path, help="the run directory of 'rlkit run'")
    _threads_option(resume)
    resume.add_argument("--quiet", action="store_true", help=QUIET_HELP)
    resume.set_defaults(func=_resume)
    plot = sub.add_parser(
        "plot", help="draw a run's learning curve into RUN_DIR/learning_curve.png (matplotlib)"
    )
    plot.add_argument("run_dir", type=Path, help="the run directory of 'rlkit run'")
    plot.add_argument("--output", type=Path, default=None, help="the PNG file to write")
    plot.set_defaults(func=_plot)
    from .collect import add_parser as add_collect
    from .enjoy import add_parser as add_enjoy
    from .tune import add_parser as add_tune

    add_enjoy(sub)
    add_collect(sub)
    add_tune(sub)
    return parser


def _threads_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        metavar="N",
        help="torch threads (default: the recipe's choice, 1 for the small MLPs of the DQN "
        "recipes; more threads slow small networks down on a busy machine)",
    )


def _recipe_help(argv: list[str]) -> str | None:
    """The parameters of the recipe named in ``rlkit run NAME --help``, for its help text."""
    if len(argv) < 3 or argv[0] != "run" or not {"-h", "--help"} & set(argv):
        return None
    from ..core.experiment import UnknownExperimentError, recipe_parameters, recipe_steps_unit

    try:
        params = recipe_parameters(argv[1])
    except UnknownExperimentError:
        return None
    unit = recipe_steps_unit(argv[1])
    steps = (
        "--steps sets total_steps" + (f", counted in {unit}" if unit else "")
        if "total_steps" in params
        else f"it counts {_budget_name(params)}, not steps: --set {_budget_name(params)}=N"
    )
    lines = [f"parameters of {argv[1]} (--set NAME=VALUE; {steps}):"]
    width = max((len(f"{p.name}: {p.type_name}") for p in params.values()), default=0)
    for p in params.values():
        lines.append(f"  {f'{p.name}: {p.type_name}':<{width}}  = {p.default!r}")
    return "\n".join(lines)


def _budget_name(declared: dict[str, Any]) -> str:
    """The name of the parameter a recipe counts its budget in (``total_steps`` when none)."""
    return next((k for k in ("episodes", "generations") if k in declared), "total_steps")


def _list(args: argparse.Namespace) -> int:
    import shutil
    import textwrap

    from ..core.experiment import list_experiments

    recipes = list_experiments()
    width = max(map(len, recipes), default=0)
    # on a terminal, descriptions wrap at whole words (never cut); elsewhere one line each
    columns = shutil.get_terminal_size().columns if sys.stdout.isatty() else 0
    for name, description in recipes.items():
        lines = [description]
        if columns:
            room = max(columns - width - 2, 40)
            lines = textwrap.wrap(description, room, break_on_hyphens=False) or [""]
        print(f"{name:<{width}}  {lines[0]}")
        for line in lines[1:]:
            print(f"{'':<{width}}  {line}")
    return 0


def _positive(name: str, value: int | None) -> str | None:
    if value is not None and value < 1:
        return f"{name} must be a positive integer, got {value}"
    return None


_WORDS = {"true": True, "false": False, "none": None}


def _value(text: str) -> Any:
    """A ``--set`` value: a Python literal (``1e-3``, ``64,64``, ``True``, ``None``), one of
    the words ``true``, ``false``, ``none`` in any case (as in YAML and JSON), else the word
    itself (``cuda``)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return _WORDS.get(text.strip().lower(), text)


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    """``--set`` pairs (values read as Python literals, else as words), ``--steps`` and
    ``--device`` as recipe parameters; ``ValueError`` for a malformed or repeated one."""
    from ..core.experiment import recipe_parameters

    declared = recipe_parameters(args.name)
    overrides: dict[str, Any] = {}
    from_file = _from_file(args.set_from) if getattr(args, "set_from", None) else {}
    for item in args.overrides:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set expects NAME=VALUE, got {item!r}")
        value = _value(text)
        if key.strip() in overrides:
            raise ValueError(f"--set {key.strip()} is given twice")
        overrides[key.strip()] = value
    overrides = _renamed(args.name, {**from_file, **overrides})
    for option, key, value in (
        ("--steps", "total_steps", args.steps),
        ("--device", "device", args.device),
    ):
        if value is None:
            continue
        if key not in declared:
            hint = ""
            if key == "total_steps" and _budget_name(declared) != "total_steps":
                budget = _budget_name(declared)
                hint = f" (it counts {budget}: --set {budget}=N)"
            elif key == "device":
                hint = " (it does not use torch)"
            raise ValueError(f"{option}: {args.name} has no parameter {key}{hint}")
        if key in overrides:
            raise ValueError(f"{option} and --set {key}= both set {key}")
        overrides[key] = value
    return overrides


def _from_file(path: Path) -> dict[str, Any]:
    """The overrides of ``--set-from FILE``: a JSON object of parameter names to values (lists
    are tuples where a parameter is one, as ``hidden``); ``ValueError`` naming the file."""
    import json

    try:
        values = json.loads(Path(path).read_text())
    except OSError as error:
        raise ValueError(f"--set-from {path}: cannot read it: {error}") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"--set-from {path}: not JSON: {error}") from None
    if not isinstance(values, dict):
        raise ValueError(
            f"--set-from {path}: expected a JSON object of NAME: VALUE, got "
            f"{type(values).__name__}"
        )
    return values


def _renamed(name: str, overrides: dict[str, Any]) -> dict[str, Any]:
    """``overrides`` under the recipe's current parameter names, each former name reported as
    a note on standard error."""
    import warnings

    from ..core.experiment import renamed_parameters

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FutureWarning)
        result = renamed_parameters(name, overrides)
    for warning in caught:
        print(f"rlkit: note: {warning.message}", file=sys.stderr)
    return result


def _settings(experiment: Any, overrides: dict[str, Any]) -> str | None:
    """The banner's second line: the values the command line changed, as the run uses them,
    beside the recipe's defaults (which its description quotes)."""
    from ..core.experiment import recipe_parameters

    if not overrides:
        return None
    declared = recipe_parameters(experiment.name)
    changed = [
        f"{key} {_shown(experiment.params.get(key, value))} (recipe: "
        f"{_shown(declared[key].default) if key in declared else '-'})"
        for key, value in overrides.items()
    ]
    return "  run with " + "; ".join(changed)


def _shown(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, tuple):
        return "-".join(map(str, value)) if value else "()"  # layers as the descriptions: 64-64
    return str(value)


def _tensorboard_available() -> bool:
    """TensorBoard events are written with torch's SummaryWriter: both must be installed."""
    for name in ("tensorboard", "torch"):
        try:
            if importlib.util.find_spec(name) is None:
                return False
        except (ImportError, ValueError):  # e.g. sys.modules[name] is None
            return False
    return True


def _set_threads(threads: int | None) -> None:
    """Torch's thread count for this run, when torch is in use (a tabular run never loads it)."""
    torch = sys.modules.get("torch")
    if threads is not None and torch is not None:
        torch.set_num_threads(threads)


def _run(args: argparse.Namespace) -> int:
    from ..core.experiment import UnknownExperimentError, make_experiment
    from .rundir import make_config, new_run_dir, prepare_logdir, write_config

    if args.seed < 0:
        return _fail(f"--seed must be a non-negative integer, got {args.seed}")
    for name, value in (
        ("--checkpoint-every", args.checkpoint_every),
        ("--steps", args.steps),
        ("--threads", args.threads),
    ):
        if (problem := _positive(name, value)) is not None:
            return _fail(problem)
    if args.logdir is not None and args.logdir.is_file():
        return _fail(f"--logdir {args.logdir} is a file, not a folder; give a folder for the run")
    try:
        overrides = _overrides(args)
        seeds = None if args.seeds is None else parse_seeds(args.seeds)
        experiment = make_experiment(args.name, seed=args.seed, seeds=seeds, **overrides)
    except (UnknownExperimentError, TypeError, ValueError) as error:
        return _fail(error)
    except ModuleNotFoundError as error:  # torch for a deep recipe
        return _fail(error, status=1)
    threads = args.threads or experiment.threads
    config = make_config(
        experiment,
        overrides=overrides,
        checkpoint_every=args.checkpoint_every,
        threads=threads,
        tensorboard=_tensorboard_available(),
    )
    try:
        if args.logdir is not None:
            run_dir = args.logdir
            prepare_logdir(run_dir, config, restart=args.restart)
        else:
            run_dir = new_run_dir(args.out, args.name, _seed_label(experiment, sep="")[4:])
    except RunDirError as error:
        return _fail(error)
    write_config(run_dir, config)
    if not args.quiet:
        print(f"{experiment.name} ({_seed_label(experiment)}): {experiment.description}")
        if (line := _settings(experiment, overrides)) is not None:
            print(line)
        print(f"results go to {run_dir}{_tensorboard_note(run_dir, config)}", flush=True)
    return _execute(experiment, run_dir, config, threads, quiet=args.quiet)


def _tensorboard_note(run_dir: Path, config: dict[str, Any]) -> str:
    if config.get("tensorboard"):
        return f"; TensorBoard: tensorboard --logdir {run_dir / 'tensorboard'}"
    return "; no TensorBoard events (pip install tensorboard, with torch, to get them)"


def _execute(
    experiment: Any,
    run_dir: Path,
    config: dict[str, Any],
    threads: int | None,
    *,
    quiet: bool,
    resume_from: Path | None = None,
) -> int:
    """Run (or resume) ``experiment`` with the CLI's hooks. ``rk.run`` stops it cleanly at the
    first Ctrl-C (a final checkpoint is written when checkpointing is on) and sets ``stop``, the
    StopSignal of its stop condition, so that the CLI reports the stop itself."""
    from ..core.run import run
    from ..core.stop_conditions import StopSignal

    _set_threads(threads)
    stop = StopSignal()  # set by rk.run's Ctrl-C handling (rlkit/core/interrupt.py)
    hook = _hooks(experiment, run_dir, config, quiet=quiet, stop_signal=stop)
    run(
        experiment.policy,
        experiment.env,
        experiment.stop_condition | stop,
        hook,
        resume_from=resume_from,
    )
    report_evaluations(experiment, run_dir, quiet=quiet)
    report_seeds(experiment, quiet=quiet)
    if not quiet:
        report_checkpoint(run_dir)
    if stop.is_set():
        return _interrupted(run_dir, config, hook)
    _save_policy(experiment, run_dir, quiet=quiet)
    if not quiet:
        print(f"results written to {run_dir}")
    return 0


def _save_policy(experiment: Any, run_dir: Path, quiet: bool = False) -> None:
    """The trained policy's inference artifact, ``RUN_DIR/policy.rlkit`` (``rk.load(RUN_DIR)``,
    ``rlkit enjoy RUN_DIR``), written atomically after the run (its results are unchanged);
    a policy kind without artifacts only gets a note (on standard error when ``quiet``)."""
    from ..deploy.save_load import RUN_DIR_ARTIFACT, save

    if experiment.seeds is not None:  # one artifact per seed
        many = experiment.policy.policy
        for i, seed in enumerate(experiment.seeds):
            path = run_dir / f"policy-seed{seed}.rlkit"
            save(many.seed_policy(i), path)
        if not quiet:
            print(f"each seed's trained policy written to {run_dir}/policy-seed<S>.rlkit")
        return
    try:
        save(experiment.policy, run_dir / RUN_DIR_ARTIFACT)
    except (TypeError, ValueError, ModuleNotFoundError) as error:  # e.g. safetensors missing
        print(f"no {RUN_DIR_ARTIFACT} for this policy: {error}", file=sys.stderr if quiet else None)
        return
    if not quiet:
        print(f"trained policy written to {run_dir / RUN_DIR_ARTIFACT} (rlkit enjoy {run_dir})")


def _interrupted(run_dir: Path, config: dict[str, Any], hook: Any) -> int:
    from ..hooks.checkpoint import CheckpointHook
    from .rundir import run_command

    print(f"interrupted: the results so far are in {run_dir}")
    checkpoints = find_hook(hook, CheckpointHook)
    if checkpoints is not None and checkpoints.last_path is not None:
        print(f"checkpoint written at step {checkpoints.steps:,}; continue with:")
        print(f"  rlkit resume {run_dir}")
    else:
        print("no checkpoints (--checkpoint-every N) to resume from; start again with:")
        print(f"  {run_command(run_dir, config, restart=True)}")
    return INTERRUPTED


def _resume(args: argparse.Namespace) -> int:
    from ..core.experiment import UnknownExperimentError, make_experiment
    from ..hooks.checkpoint import CheckpointError, latest_checkpoint, read_checkpoint
    from .rundir import read_config, run_command

    if (problem := _positive("--threads", args.threads)) is not None:
        return _fail(problem)
    run_dir = args.run_dir
    try:
        config = read_config(run_dir)
    except RunDirError as error:
        return _fail(error)
    name, seed = config["experiment"], config["seed"]
    newest = latest_checkpoint(run_dir / "checkpoints")
    if newest is None:
        if config.get("checkpoint_every") is None:
            why = f"{run_dir} was started without checkpoints (--checkpoint-every N)"
        else:
            why = (
                f"no checkpoint was written in {run_dir / 'checkpoints'} (the run stopped "
                f"before its first one, due every {config['checkpoint_every']:,} steps)"
            )
        return _fail(
            f"{why}; start it again there with: {run_command(run_dir, config, restart=True)}"
        )
    try:
        meta = read_checkpoint(newest)["meta"]
        overrides = _renamed(name, config.get("overrides", {}))
        experiment = make_experiment(name, seed=seed, seeds=config.get("seeds"), **overrides)
    except (CheckpointError, UnknownExperimentError, TypeError, ValueError) as error:
        return _fail(error)
    except ModuleNotFoundError as error:
        return _fail(error, status=1)
    if not args.quiet:
        if meta["finished"]:  # killed after its final checkpoint: rk.run runs its end only
            print(
                f"{name} (seed {seed}) already finished at step {meta['step']}: {newest}; "
                f"ending it as the uninterrupted run did (no step is run)"
            )
        else:
            print(f"{name} (seed {seed}): resuming at step {meta['step']:,} from {newest.name}")
            if (line := _settings(experiment, overrides)) is not None:
                print(line)
        print(f"results go to {run_dir}{_tensorboard_note(run_dir, config)}", flush=True)
    threads = args.threads or config.get("threads") or experiment.threads
    try:
        return _execute(experiment, run_dir, config, threads, quiet=args.quiet, resume_from=newest)
    except CheckpointError as error:
        return _fail(error)


def _plot(args: argparse.Namespace) -> int:
    from .plot import plot_run

    if not args.run_dir.is_dir():
        return _fail(f"{args.run_dir} is not a run directory of 'rlkit run'")
    try:
        path = plot_run(args.run_dir, args.output)
    except FileNotFoundError as error:
        return _fail(error)
    except ModuleNotFoundError as error:
        return _fail(error, status=1)
    print(f"learning curve written to {path}")
    return 0


def parse_seeds(text: str) -> list[int]:
    """``--seeds``: ``"0-4"`` (a range, both ends included), ``"0,3,7"`` or ``"5"``.

    Example:
        >>> parse_seeds("0-4"), parse_seeds("1,3")
        ([0, 1, 2, 3, 4], [1, 3])
    """
    seeds: list[int] = []
    try:
        for part in text.split(","):
            low, _, high = part.strip().partition("-")
            seeds.extend(range(int(low), int(high or low) + 1))
    except ValueError:
        raise ValueError(
            f"--seeds must be a range (0-4) or a list (0,3,7) of non-negative integers, got "
            f"{text!r}"
        ) from None
    if not seeds:
        raise ValueError(f"--seeds names no seed: {text!r} (a range such as 0-4)")
    return seeds


def _seed_label(experiment: Any, sep: str = " ") -> str:
    """``"seed 0"`` for one seed; ``"seeds 0-4"`` or ``"seeds 0,3,7"`` for several."""
    seeds = experiment.seeds
    if seeds is None:
        return f"seed{sep}{experiment.seed}"
    if seeds == list(range(seeds[0], seeds[-1] + 1)) and len(seeds) > 1:
        return f"seeds{sep}{seeds[0]}-{seeds[-1]}"
    return f"seeds{sep}" + ",".join(map(str, seeds))


def report_seeds(experiment: Any, *, quiet: bool) -> None:
    """Each seed's episodes and mean return over its last 10 (a run of several seeds)."""
    from ..hooks.per_seed import TotalRewardPerSeed

    hook = find_hook(experiment.hook, TotalRewardPerSeed)
    if quiet or hook is None:
        return
    means = hook.summary(10)
    for seed, values in hook.per_seed.items():
        print(f"seed {seed}: {len(values)} episodes, mean return of the last 10: {means[seed]:.1f}")


def _hooks(
    experiment: Any, run_dir: Path, config: dict[str, Any], *, quiet: bool, stop_signal: Any
) -> Any:
    """The hooks of a CLI run: the same chain for ``run`` and ``resume`` (a checkpoint is
    restored into a chain of the same hooks)."""
    from ..hooks.basic import StepsPerEpisode, TotalRewardPerEpisode
    from ..hooks.logging import CSVLogger, TensorBoardLogger
    from ..hooks.progress import ProgressBar

    own = find_hook(experiment.hook, TotalRewardPerEpisode)
    returns, steps = own or TotalRewardPerEpisode(), StepsPerEpisode()
    # On a terminal a progress bar shows the run; elsewhere the summary prints a line every
    # few seconds. The bar is always in the chain (disabled off-terminal): resume needs the
    # same hooks.
    bar_shown = not quiet and sys.stderr.isatty()
    bar = ProgressBar(experiment.stop_condition, desc=config["experiment"], disable=not bar_shown)
    csv_logger = CSVLogger(run_dir / "episodes.csv")
    summary = LearningSummary(
        returns,
        steps,
        quiet=quiet or bar_shown,
        stop_signal=stop_signal,
        stop_condition=experiment.stop_condition,
        where=run_dir if quiet else None,
        counter=csv_logger,  # every transition, as the checkpoints count them
    )
    own_hooks = steps if own else returns + steps
    hook = own_hooks if experiment.hook is None else experiment.hook + own_hooks
    hook = hook + csv_logger
    if config.get("tensorboard"):
        from ..hooks.evaluation import EvaluationHook

        evaluations = find_hook(experiment.hook, EvaluationHook)  # greedy evaluations, if any
        hook = hook + TensorBoardLogger(run_dir / "tensorboard", evaluations=evaluations)
    hook = hook + bar + summary
    every = config.get("checkpoint_every")
    if every is not None:
        from ..hooks.checkpoint import CheckpointHook

        metadata = {"experiment": config["experiment"], "seed": config["seed"]}
        hook = hook + CheckpointHook(
            run_dir / "checkpoints", every_n_steps=every, metadata=metadata
        )
    return hook


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
