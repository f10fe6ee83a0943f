"""What ``rlkit run`` prints while and after it runs: the learning summary and the recipe's
greedy evaluations."""

from __future__ import annotations

import csv
import sys
import time
from pathlib import Path
from typing import Any

from ..core.interfaces import AbstractHook
from ..hooks.basic import find_hook

__all__ = ["LearningSummary", "report_checkpoint", "report_evaluations"]


class LearningSummary(AbstractHook):
    """Prints the run's progress every few seconds, and one final line (``done:``, or
    ``stopped:`` when ``stop_signal`` ended the run early): the environment steps (transitions)
    done out of the budget of ``stop_condition`` (or the episodes, for an episode budget),
    episodes finished, the mean return of the last ``window`` episodes and steps per second.
    ``quiet`` prints the final line only, followed by ``where`` (the run directory) if given.

    It reads the episode returns and lengths of the hooks it is given, the progress of
    ``stop_condition`` (``stop_condition.progress()``) and the steps counted by ``counter`` (a
    logger of the same run; without one, the stop condition's steps or those of finished
    episodes).

    Example:
        >>> import rlkit as rk
        >>> returns, steps = rk.TotalRewardPerEpisode(), rk.StepsPerEpisode()
        >>> stop = rk.StopAfterNSteps(50)
        >>> summary = LearningSummary(returns, steps, quiet=True, stop_condition=stop)
        >>> hook = returns + steps + summary
        >>> _ = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), stop, hook)
        ... # doctest: +ELLIPSIS
        done: 50 of 50 steps, ... episodes, mean return (last ...) ...
    """

    def __init__(
        self,
        returns: Any,
        steps: Any,
        *,
        every_s: float = 2.0,
        window: int = 100,
        quiet: bool = False,
        stop_signal: Any = None,
        stop_condition: Any = None,
        where: Any = None,
        counter: Any = None,
    ) -> None:
        self.returns, self.steps, self.counter = returns, steps, counter
        self.every_s, self.window, self.quiet = every_s, window, quiet
        self.stop_signal, self.stop_condition, self.where = stop_signal, stop_condition, where
        self.start = self.last = time.perf_counter()
        self.start_steps = 0

    def pre_experiment(self, policy: Any, env: Any) -> None:
        self.start = self.last = time.perf_counter()
        self.start_steps = self.total_steps  # a resumed run's rate counts its own steps

    def state_dict(self) -> dict[str, Any]:
        """Nothing to save: it only displays the state of the hooks it reads."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        pass

    def _progress(self) -> tuple[int, int, str] | None:
        progress = getattr(self.stop_condition, "progress", None)
        return progress() if callable(progress) else None

    @property
    def total_steps(self) -> int:
        """Environment steps (transitions) done: ``counter.total_steps`` when a counter (an
        ``rk.AbstractLogger`` of the run) was given, else the stop condition's count when it
        counts steps, else the steps of finished episodes."""
        if self.counter is not None:
            return self.counter.total_steps
        progress = self._progress()
        if progress is not None and progress[2] == "steps":
            return progress[0]
        return sum(self.steps.steps)

    def post_episode(self, policy: Any, env: Any) -> None:
        now = time.perf_counter()
        if not self.quiet and now - self.last >= self.every_s:
            self.last = now
            print(self.line(now), flush=True)

    # ---- vector envs: no episode stages; sub-env episodes are recorded at PostAct ----
    vector_post_act = post_episode
    vector_post_episode = None

    def post_experiment(self, policy: Any, env: Any) -> None:
        stopped = self.stop_signal is not None and self.stop_signal.is_set()
        line = self.line(time.perf_counter(), head="stopped: " if stopped else "done: ")
        if self.quiet and self.where is not None:
            line += f"; results in {self.where}"
        print(line, flush=True)

    def line(self, now: float, head: str = "") -> str:
        """One summary line."""
        # a multi-agent run's returns are dicts by agent: their mean over the agents
        rewards = [_team(r) for r in self.returns.rewards[-self.window :]]
        total_steps = self.total_steps
        mean = sum(rewards) / len(rewards) if rewards else float("nan")
        rate = (total_steps - self.start_steps) / max(now - self.start, 1e-9)
        episodes = len(self.returns.rewards)
        progress = self._progress()
        if progress is None:
            counts = f"{total_steps:,} steps, {episodes:,} episodes"
        elif progress[2] == "steps":
            counts = f"{progress[0]:,} of {progress[1]:,} steps, {episodes:,} episodes"
        else:
            counts = f"{progress[0]:,} of {progress[1]:,} {progress[2]}, {total_steps:,} steps"
        return (
            f"{head}{counts}, mean return (last {len(rewards)}) {mean:.3f}, "
            f"{rate:,.0f} steps/s"
        )


def report_evaluations(experiment: Any, run_dir: Path, *, quiet: bool = False) -> None:
    """Print the recipe's greedy evaluations (if it has an ``EvaluationHook``; not when
    ``quiet``) and write them to ``evaluations.csv``: step, mean and std of the return per
    evaluation."""
    from ..hooks.evaluation import EvaluationHook

    hook = find_hook(experiment.hook, EvaluationHook)
    if hook is None or not hook.results:
        return
    with open(run_dir / "evaluations.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["step", "mean_return", "std_return"])
        writer.writerows(hook.results)
    if quiet:
        return
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
    sys.stdout.flush()


def report_checkpoint(run_dir: Path) -> None:
    """Print the newest checkpoint of ``run_dir/checkpoints`` and its size (nothing when the
    run wrote none), e.g. ``newest checkpoint: checkpoint-00000500.safetensors (92.4 kB)``."""
    from ..hooks.checkpoint import latest_checkpoint

    newest = latest_checkpoint(run_dir / "checkpoints")
    if newest is not None:
        print(f"newest checkpoint: {newest.name} ({_size(newest.stat().st_size)})")


def _size(n_bytes: int) -> str:
    """``n_bytes`` in B, kB, MB or GB (powers of 1000)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.1f} {unit}"
    return f"{n_bytes} B"


def _team(ret: Any) -> float:
    """An episode's return; a multi-agent one (a dict by agent): the mean over the agents."""
    return sum(ret.values()) / max(len(ret), 1) if isinstance(ret, dict) else ret
