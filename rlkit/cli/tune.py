"""``rlkit tune NAME --trials N``: hyperparameter search with Optuna (docs/how-to/tuning.md),
rl-baselines3-zoo's ``--optimize`` for rlkit's recipes.

Each trial is the recipe's ``Experiment`` with overrides sampled from its algorithm's search
space (:mod:`rlkit.cli.search_spaces`) on top of the fixed ones (``--steps``, ``--set``). The
trial's ``rk.EvaluationHook`` (the recipe's own, or one that evaluates the greedy policy
``--n-evaluations`` times on ``--eval-episodes`` episodes) reports each evaluation's mean to
Optuna, whose pruner may stop the trial there; the trial's value is its last evaluation's mean
(the zoo's). The study lives in a database (``--storage``, default SQLite in the run
directory), so a killed search resumes with the same command: finished trials (complete or
pruned) are kept, not repeated, and only the missing ones run (a trial that was running when
the search was killed is marked failed once its heartbeat is stale). ``--jobs J`` starts ``J``
worker processes on the same storage, each running trials until the study holds ``N`` finished
ones (so a few more may finish). Results in the run directory (``--logdir``, default
``runs/tune_<study>``): ``best.json`` (the best trial's sampled overrides, for ``rlkit run NAME
--set-from best.json``), ``trials.csv`` and ``trials.md``, and ``importance.png`` (Optuna's
parameter importances) when matplotlib is installed.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from ..core.interfaces import AbstractHook

__all__ = ["add_parser", "TrialReporter"]

OPTUNA_HINT = "rlkit tune needs Optuna, which is not installed: pip install optuna"
HEARTBEAT_S, GRACE_S = 5, 20


def add_parser(sub: Any) -> None:
    """The ``tune`` subcommand."""
    tune = sub.add_parser(
        "tune",
        help="search a recipe's hyperparameters with Optuna (pip install optuna)",
        description=__doc__.split("\n\n")[1].replace("\n", " "),
    )
    tune.add_argument("name", help="the recipe, e.g. PPO_CartPole")
    tune.add_argument("--trials", type=int, required=True, metavar="N",
                      help="finished trials (complete or pruned) the study should hold")
    tune.add_argument("--storage", default=None, metavar="URL",
                      help="Optuna storage, e.g. sqlite:///study.db (default: "
                           "RUN_DIR/study.db)")
    tune.add_argument("--study-name", default=None, metavar="S",
                      help="the study's name (default: the recipe's name)")
    tune.add_argument("--jobs", type=int, default=1, metavar="J",
                      help="worker processes searching in parallel (default 1)")
    tune.add_argument("--sampler", choices=("tpe", "random"), default="tpe")
    tune.add_argument("--pruner", choices=("median", "none"), default="median")
    tune.add_argument("--startup-trials", type=int, default=5, metavar="K",
                      help="trials before TPE models the space and the pruner prunes "
                           "(default 5)")
    tune.add_argument("--n-evaluations", type=int, default=4, metavar="E",
                      help="evaluations per trial when the recipe has none (default 4)")
    tune.add_argument("--eval-episodes", type=int, default=5, metavar="M",
                      help="episodes per evaluation (default 5)")
    tune.add_argument("--seed", type=int, default=0,
                      help="the recipe's seed in every trial and the sampler's seed")
    tune.add_argument("--steps", type=int, default=None, metavar="N",
                      help="each trial's budget (the recipe's total_steps)")
    tune.add_argument("--set", dest="overrides", action="append", default=[],
                      metavar="NAME=VALUE", help="a fixed override of every trial (repeatable)")
    tune.add_argument("--out", type=Path, default=Path("runs"),
                      help="parent folder of the run directory (default ./runs)")
    tune.add_argument("--logdir", type=Path, default=None,
                      help="the run directory (default OUT/tune_STUDY)")
    tune.add_argument("--quiet", action="store_true", help="no line per trial")
    tune.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    tune.set_defaults(func=tune_command, device=None)


class InvalidTrial(Exception):
    """A sampled combination the recipe refuses (the trial is marked failed)."""


def tune_command(args: argparse.Namespace) -> int:
    """``rlkit tune``: see the module."""
    from ..core.experiment import UnknownExperimentError, recipe_parameters
    from . import _fail, _overrides

    for option, value in (("--trials", args.trials), ("--jobs", args.jobs),
                          ("--n-evaluations", args.n_evaluations),
                          ("--eval-episodes", args.eval_episodes)):  # fmt: skip
        if value < 1:
            return _fail(f"{option} must be a positive integer, got {value}")
    for option, value in (("--seed", args.seed), ("--startup-trials", args.startup_trials)):
        if value < 0:
            return _fail(f"{option} must be a non-negative integer, got {value}")
    try:
        import optuna
    except ImportError:
        return _fail(OPTUNA_HINT, status=1)
    from .search_spaces import space_for

    try:
        recipe_parameters(args.name)
        space = space_for(args.name)
        args.set_from = None
        fixed = _overrides(args)
    except (UnknownExperimentError, TypeError, ValueError) as error:
        return _fail(error)
    study_name = args.study_name or args.name
    run_dir = args.logdir if args.logdir is not None else args.out / f"tune_{study_name}"
    run_dir.mkdir(parents=True, exist_ok=True)
    storage_url = args.storage or f"sqlite:///{(run_dir / 'study.db').resolve()}"
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        study = open_study(args, study_name, storage_url)
    except ValueError as error:
        return _fail(error)
    finished = count_finished(study)
    if args.worker is None and not args.quiet:
        print(f"rlkit tune {args.name}: study {study_name!r} in {storage_url}; {finished} of "
              f"{args.trials} trials finished, results go to {run_dir}", flush=True)  # fmt: skip
    if finished < args.trials:
        if args.jobs > 1 and args.worker is None:
            status = _start_workers(args, study_name, storage_url, run_dir)
            if status:
                return _fail(f"a worker process ended with status {status}", status=status)
        else:
            _optimize(args, study, space, fixed)
    if args.worker is None:
        write_results(study, run_dir, quiet=args.quiet)
    return 0


def open_study(args: argparse.Namespace, study_name: str, storage_url: str) -> Any:
    """The study ``study_name`` in ``storage_url``, created when new; ``ValueError`` when it
    belongs to another recipe."""
    import optuna

    storage = open_storage(storage_url)
    worker = args.worker or 0
    if args.sampler == "tpe":
        sampler = optuna.samplers.TPESampler(
            n_startup_trials=args.startup_trials, seed=args.seed + worker, multivariate=True
        )
    else:
        sampler = optuna.samplers.RandomSampler(seed=args.seed + worker)
    pruner = (
        optuna.pruners.MedianPruner(
            n_startup_trials=args.startup_trials, n_warmup_steps=args.n_evaluations // 3
        )
        if args.pruner == "median"
        else optuna.pruners.NopPruner()
    )
    study = optuna.create_study(
        study_name=study_name, storage=storage, sampler=sampler, pruner=pruner,
        direction="maximize", load_if_exists=True,
    )  # fmt: skip
    recipe = study.user_attrs.get("recipe")
    if recipe is None:
        study.set_user_attr("recipe", args.name)
    elif recipe != args.name:
        raise ValueError(
            f"tune: the study {study_name!r} in {storage_url} searches the recipe {recipe!r}, "
            f"not {args.name!r}; give another --study-name (or another --storage)"
        )
    return study


def open_storage(url: str, tries: int = 30) -> Any:
    """Optuna's storage at ``url``, its tables created when new. Searches started together on a
    new SQLite file (several ``rlkit tune`` processes on one ``--storage``) all create the tables,
    and the slower ones fail with ``table ... already exists``, ``database is locked`` or a
    unique-constraint error on the schema's version row: those try again, and find the tables
    the first one made."""
    from sqlalchemy.exc import IntegrityError, OperationalError

    for attempt in range(tries - 1):
        try:
            return _rdb_storage(url)
        except (OperationalError, IntegrityError) as error:
            racing = isinstance(error, IntegrityError) or any(
                words in str(error) for words in ("already exists", "database is locked")
            )
            if not racing:
                raise
            time.sleep(0.05 * (1 + attempt % 4))
    return _rdb_storage(url)


def _rdb_storage(url: str) -> Any:
    import optuna

    with warnings.catch_warnings():  # the heartbeat is "experimental" in Optuna 3 to 5
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return optuna.storages.RDBStorage(url, heartbeat_interval=HEARTBEAT_S, grace_period=GRACE_S)


def count_finished(study: Any) -> int:
    """Complete and pruned trials (failed ones are run again)."""
    from optuna.trial import TrialState

    return len(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED)))


def _optimize(args: argparse.Namespace, study: Any, space: Any, fixed: dict[str, Any]) -> None:
    from optuna.study import MaxTrialsCallback
    from optuna.trial import TrialState

    def report(study: Any, trial: Any) -> None:
        if not args.quiet:
            print(_trial_line(trial), flush=True)

    study.optimize(
        lambda trial: objective(trial, args, space, fixed),
        n_trials=None,
        catch=(InvalidTrial,),
        callbacks=[MaxTrialsCallback(args.trials, states=(TrialState.COMPLETE,
                                                          TrialState.PRUNED)), report],
    )  # fmt: skip


def _start_workers(args: argparse.Namespace, study_name: str, url: str, run_dir: Path) -> int:
    """``--jobs J``: J processes on the shared storage; the exit status of the first that
    failed, else 0."""
    argv = [sys.executable, "-m", "rlkit", "tune", args.name, "--trials", str(args.trials),
            "--storage", url, "--study-name", study_name, "--logdir", str(run_dir),
            "--sampler", args.sampler, "--pruner", args.pruner,
            "--startup-trials", str(args.startup_trials),
            "--n-evaluations", str(args.n_evaluations),
            "--eval-episodes", str(args.eval_episodes), "--seed", str(args.seed)]  # fmt: skip
    if args.steps is not None:
        argv += ["--steps", str(args.steps)]
    for item in args.overrides:
        argv += ["--set", item]
    if args.quiet:
        argv.append("--quiet")
    workers = [subprocess.Popen([*argv, "--worker", str(k)]) for k in range(args.jobs)]
    statuses = [w.wait() for w in workers]
    return next((s for s in statuses if s), 0)


def objective(trial: Any, args: argparse.Namespace, space: Any, fixed: dict[str, Any]) -> float:
    """One trial: the recipe with sampled overrides, evaluated and pruned through its
    ``EvaluationHook``; its value is the last evaluation's mean return."""
    from ..core.experiment import make_experiment, recipe_parameters
    from ..core.run import run
    from ..hooks.basic import find_hook
    from ..hooks.evaluation import EvaluationHook

    declared = recipe_parameters(args.name)
    sampled = {k: v for k, v in space(trial).items() if k in declared and k not in fixed}
    trial.set_user_attr("overrides", _jsonable(sampled))
    try:
        experiment = make_experiment(args.name, seed=args.seed, **fixed, **sampled)
    except (TypeError, ValueError) as error:
        trial.set_user_attr("error", str(error))
        raise InvalidTrial(str(error)) from None
    evaluation = find_hook(experiment.hook, EvaluationHook)
    hook = experiment.hook
    if evaluation is None:
        evaluation = _evaluation(experiment, args)
        hook = evaluation if hook is None else hook + evaluation
    hook = hook + TrialReporter(trial, evaluation)
    _set_threads(experiment.threads or 1)
    try:
        run(experiment.policy, experiment.env, experiment.stop_condition, hook)
    finally:
        close = getattr(experiment.env, "close", None)
        if callable(close):
            close()
    if not evaluation.results:
        raise InvalidTrial("the trial made no evaluation (its budget is shorter than one)")
    return float(evaluation.results[-1].mean)


def _evaluation(experiment: Any, args: argparse.Namespace) -> Any:
    from ..envs.gym import GymEnv
    from ..hooks.evaluation import EvaluationHook

    total = int(experiment.params.get("total_steps") or 0)
    if total < args.n_evaluations:
        raise InvalidTrial(f"{args.name} has no total_steps of at least --n-evaluations")
    return EvaluationHook(GymEnv(experiment.env.name), every_n_steps=total // args.n_evaluations,
                          n_episodes=args.eval_episodes, seed=args.seed)  # fmt: skip


def _set_threads(threads: int) -> None:
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)


def _jsonable(values: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(values, default=list))


class TrialReporter(AbstractHook):
    """Reports each new result of an ``rk.EvaluationHook`` to an Optuna trial (its index as the
    step) and stops the run with ``optuna.TrialPruned`` when the pruner says so."""

    def __init__(self, trial: Any, evaluation: Any) -> None:
        self.trial, self.evaluation, self.reported = trial, evaluation, 0

    def post_act(self, policy: Any, env: Any) -> None:
        results = self.evaluation.results
        while self.reported < len(results):
            record = results[self.reported]
            self.reported += 1
            self.trial.report(float(record.mean), self.reported)
            if self.trial.should_prune():
                import optuna

                self.trial.set_user_attr("pruned_at_step", int(record.step))
                raise optuna.TrialPruned(
                    f"evaluation {self.reported} (step {record.step}): mean {record.mean:g}"
                )


def _trial_line(trial: Any) -> str:
    state = trial.state.name.lower()
    value = "" if trial.value is None else f" value {trial.value:g}"
    where = ""
    if "pruned_at_step" in trial.user_attrs:
        where = f" at step {trial.user_attrs['pruned_at_step']:,}"
    error = f" ({trial.user_attrs['error']})" if "error" in trial.user_attrs else ""
    return f"trial {trial.number}: {state}{where}{value}{error} {trial.user_attrs.get('overrides')}"


# ---- results ----
def write_results(study: Any, run_dir: Path, quiet: bool = False) -> None:
    """``best.json``, ``trials.csv``, ``trials.md`` and (matplotlib) ``importance.png``."""
    from optuna.trial import TrialState

    trials = study.get_trials(deepcopy=False)
    rows = [_row(t) for t in trials]
    names = sorted({k for r in rows for k in r["overrides"]})
    header = ["number", "state", "value", "pruned_at_step", *names]
    with open(run_dir / "trials.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        for r in rows:
            writer.writerow([r["number"], r["state"], r["value"], r["pruned_at_step"],
                             *(json.dumps(r["overrides"].get(n)) for n in names)])  # fmt: skip
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        cells = [r["number"], r["state"], r["value"], r["pruned_at_step"],
                 *(json.dumps(r["overrides"].get(n)) for n in names)]  # fmt: skip
        lines.append("| " + " | ".join("" if c is None else str(c) for c in cells) + " |")
    (run_dir / "trials.md").write_text("\n".join(lines) + "\n")
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    if not complete:
        if not quiet:
            print(f"no trial completed; the trials are listed in {run_dir / 'trials.md'}")
        return
    best = study.best_trial
    (run_dir / "best.json").write_text(json.dumps(best.user_attrs.get("overrides", {}),
                                                  indent=2) + "\n")  # fmt: skip
    plotted = _importance_plot(study, run_dir / "importance.png", len(complete))
    if not quiet:
        pruned = sum(t.state == TrialState.PRUNED for t in trials)
        print(f"{len(complete)} trials complete, {pruned} pruned; best: trial {best.number}, "
              f"value {best.value:g}; written {run_dir / 'best.json'} (rlkit run "
              f"{study.user_attrs.get('recipe')} --set-from {run_dir / 'best.json'}), "
              f"trials.csv, trials.md{', importance.png' if plotted else ''}")  # fmt: skip


def _row(trial: Any) -> dict[str, Any]:
    value = trial.value
    return {
        "number": trial.number,
        "state": trial.state.name,
        "value": None if value is None or math.isnan(value) else round(float(value), 6),
        "pruned_at_step": trial.user_attrs.get("pruned_at_step"),
        "overrides": trial.user_attrs.get("overrides", {}),
    }


def _importance_plot(study: Any, path: Path, n_complete: int) -> bool:
    """Optuna's parameter importances as a bar chart (matplotlib); False when it cannot be
    drawn (matplotlib missing, fewer than two complete trials, or nothing varied)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import optuna
    except ImportError:
        return False
    if n_complete < 2:
        return False
    try:
        importances = optuna.importance.get_param_importances(study)
    except (RuntimeError, ValueError):
        return False
    if not importances:
        return False
    names = list(importances)[::-1]
    fig, ax = plt.subplots(figsize=(6, 0.35 * len(names) + 1.2))
    ax.barh(names, [importances[n] for n in names])
    ax.set_xlabel("importance (fANOVA)")
    ax.set_title(f"{study.user_attrs.get('recipe')}: hyperparameter importance")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True
