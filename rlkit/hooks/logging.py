"""Logging hooks: TensorBoard, CSV and JSON lines.

All three share :class:`AbstractLogger`, which does the bookkeeping once:

* a **record per finished episode** (``episode``: 0-based index, ``return``, ``length``,
  ``total_steps``: environment steps seen so far, ``wall_time_s``: seconds of run time since the
  logger first started), passed to :meth:`AbstractLogger.log_episode` at PostEpisode. An episode
  a run stopped in the middle of is never logged as finished; a later run that continues it
  logs it when it ends.
* **statistics every ``stats_every_n_steps`` environment steps**: ``rk.collect_statistics`` of the
  policy (``"learner/loss"``, ``"explorer/epsilon"``, ...) plus ``"time/steps_per_second"``
  (environment steps per second of run time since the previous report), passed to
  :meth:`AbstractLogger.log_statistics`.

Frequencies count environment steps (PostAct) and finished episodes (PostEpisode), never hook
calls. Counters, elapsed time and file positions are kept across runs and saved by
``state_dict`` (see the loggers for what a restored logger does with its files).

Example:
    >>> import rlkit as rk, tempfile, os
    >>> logdir = tempfile.mkdtemp()
    >>> log = rk.CSVLogger(os.path.join(logdir, "episodes.csv"))
    >>> _ = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
    ...            rk.StopAfterNEpisodes(3), log)
    >>> open(os.path.join(logdir, "episodes.csv")).readline().strip()
    'episode,return,length,total_steps,wall_time_s'
"""

from __future__ import annotations

import json
import math
import os
import time
from typing import Any

import numpy as np

from ..core.checks import finite_float, optional_positive_int
from ..core.dispatch import collect_statistics
from ..core.interfaces import AbstractHook

__all__ = ["AbstractLogger", "TensorBoardLogger", "CSVLogger", "JSONLinesLogger"]

#: The columns of :class:`CSVLogger` (and the keys of every episode record), in order.
EPISODE_FIELDS = ("episode", "return", "length", "total_steps", "wall_time_s")


class AbstractLogger(AbstractHook):
    """Base class of the logging hooks: counts steps and episodes, builds the records.

    With a vector env every sub-env's finished episodes are logged (at PostAct, in sub-env
    order within a step) and ``total_steps`` counts transitions (``n_envs`` per step).

    Subclasses override :meth:`log_episode` and/or :meth:`log_statistics` (and :meth:`open` /
    :meth:`close` for their output); nothing else. ``stats_every_n_steps=None`` reports no
    statistics.

    Example:
        >>> import rlkit as rk
        >>> class PrintReturns(rk.AbstractLogger):
        ...     def log_episode(self, record):
        ...         print(record["episode"], record["return"])
        >>> _ = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
        ...            rk.StopAfterNEpisodes(2), PrintReturns())
        0 18.0
        1 16.0
    """

    def __init__(self, *, stats_every_n_steps: int | None = None) -> None:
        name = type(self).__name__
        self.stats_every_n_steps = optional_positive_int(
            name, "stats_every_n_steps", stats_every_n_steps
        )
        self.total_steps = 0
        self.episodes = 0
        self.episode_return = 0.0
        self.episode_length = 0
        self._elapsed = 0.0  # run time of finished runs, seconds
        self._run_start: float | None = None  # perf_counter() at this run's PreExperiment
        self._next_stats = self.stats_every_n_steps or math.inf
        self._rate_time = 0.0
        self._rate_steps = 0

    # ---- what subclasses override ----
    def open(self) -> None:
        """Open the output (called at PreExperiment of every run)."""

    def close(self) -> None:
        """Flush and close the output (called at PostExperiment, also after an error)."""

    def log_episode(self, record: dict[str, Any]) -> None:
        """Write one finished episode: a dict with the keys of ``EPISODE_FIELDS``."""

    def log_statistics(self, step: int, stats: dict[str, float]) -> None:
        """Write the statistics reported at environment step ``step``."""

    # ---- bookkeeping shared by every logger ----
    @property
    def wall_time_s(self) -> float:
        """Seconds of run time since the logger first started (pauses between runs excluded)."""
        if self._run_start is None:
            return self._elapsed
        return self._elapsed + (time.perf_counter() - self._run_start)

    def episode_record(self, sub_env: int | None = None) -> dict[str, Any]:
        """The record of the episode that just finished (of sub-env ``sub_env`` of a vector
        env, whose running return and length are arrays)."""
        ret, length = self.episode_return, self.episode_length
        if sub_env is not None:
            ret, length = ret[sub_env], length[sub_env]
        return {
            "episode": self.episodes,
            "return": float(ret),
            "length": int(length),
            "total_steps": self.total_steps,
            "wall_time_s": round(self.wall_time_s, 6),
        }

    def statistics_report(self, policy: Any) -> dict[str, float]:
        """``collect_statistics(policy)`` plus ``"time/steps_per_second"`` since the last one."""
        stats = collect_statistics(policy)
        now = time.perf_counter()
        seconds = now - self._rate_time
        steps = self.total_steps - self._rate_steps
        stats["time/steps_per_second"] = steps / seconds if seconds > 0 else math.nan
        self._rate_time, self._rate_steps = now, self.total_steps
        return stats

    # ---- PreExperiment: start the clock, open the output ----
    def pre_experiment(self, policy: Any, env: Any) -> None:
        self._run_start = self._rate_time = time.perf_counter()
        self._rate_steps = self.total_steps
        self.open()

    # ---- PreEpisode: a new episode (not called for an episode a previous run left unfinished) --
    def pre_episode(self, policy: Any, env: Any) -> None:
        self.episode_return = 0.0
        self.episode_length = 0

    # ---- PostAct: count the step; statistics every N steps ----
    def post_act(self, policy: Any, env: Any) -> None:
        self.total_steps += 1
        self.episode_length += 1
        self.episode_return += env.reward
        if self.total_steps >= self._next_stats:
            self._next_stats += self.stats_every_n_steps
            self.log_statistics(self.total_steps, self.statistics_report(policy))

    # ---- PostEpisode: one record per finished episode ----
    def post_episode(self, policy: Any, env: Any) -> None:
        self.log_episode(self.episode_record())
        self.episodes += 1

    # ---- vector envs: per-sub-env return and length (arrays); every finished sub-env
    # episode is logged at PostAct, in sub-env order; a step counts n_envs transitions ----
    def vector_pre_experiment(self, policy: Any, env: Any) -> None:
        n = env.n_envs
        if np.ndim(self.episode_return) == 0:
            if self.episode_length:
                raise ValueError(
                    f"{type(self).__name__}: holds an unfinished single-env episode, cannot log "
                    f"the sub-envs of {env!r}; use a new logger"
                )
            self.episode_return = np.zeros(n)
            self.episode_length = np.zeros(n, dtype=np.int64)
        elif len(self.episode_return) != n:
            raise ValueError(
                f"{type(self).__name__}: holds {len(self.episode_return)} sub-envs' episodes, "
                f"{env!r} has {n}; use a new logger"
            )
        self.pre_experiment(policy, env)

    def vector_post_act(self, policy: Any, env: Any) -> None:
        self.total_steps += env.n_envs
        self.episode_length += 1
        self.episode_return += getattr(env, "original_reward", env.reward)  # before VecNormalize
        done = env.done
        if done.any():
            for i in np.flatnonzero(done):
                self.log_episode(self.episode_record(int(i)))
                self.episodes += 1
                self.episode_return[i] = 0.0
                self.episode_length[i] = 0
        if self.total_steps >= self._next_stats:
            while self._next_stats <= self.total_steps:
                self._next_stats += self.stats_every_n_steps
            self.log_statistics(self.total_steps, self.statistics_report(policy))

    vector_pre_episode = None
    vector_post_episode = None

    # ---- multi-agent envs: a step is one agent's move (or all live agents' moves); the
    # return logged is the mean of the agents' returns ----
    def multiagent_post_act(self, policy: Any, env: Any) -> None:
        rewards = env.rewards
        self.total_steps += 1
        self.episode_length += 1
        self.episode_return += sum(rewards.values()) / max(len(rewards), 1)
        if self.total_steps >= self._next_stats:
            self._next_stats += self.stats_every_n_steps
            self.log_statistics(self.total_steps, self.statistics_report(policy))

    # ---- PostExperiment: stop the clock, close the output ----
    def post_experiment(self, policy: Any, env: Any) -> None:
        if self._run_start is not None:
            self._elapsed += time.perf_counter() - self._run_start
            self._run_start = None
        self.close()

    # ---- checkpoint protocol ----
    def state_dict(self) -> dict[str, Any]:
        """Counters, the unfinished episode's return/length and the elapsed run time."""
        return {
            "total_steps": self.total_steps,
            "episodes": self.episodes,
            "episode_return": _plain(self.episode_return, float),
            "episode_length": _plain(self.episode_length, int),
            "wall_time_s": self.wall_time_s,
            "next_stats": None if math.isinf(self._next_stats) else int(self._next_stats),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved (call it between runs; closes the output)."""
        self.close()
        self.total_steps = int(state["total_steps"])
        self.episodes = int(state["episodes"])
        ret, length = state["episode_return"], state["episode_length"]
        vector = np.ndim(ret) > 0  # a vector run's per-sub-env values
        self.episode_return = np.array(ret, dtype=np.float64) if vector else float(ret)
        self.episode_length = np.array(length, dtype=np.int64) if vector else int(length)
        self._elapsed = float(state["wall_time_s"])
        self._run_start = None
        next_stats = state["next_stats"]
        self._next_stats = math.inf if next_stats is None else int(next_stats)


def _plain(value: Any, kind: type) -> Any:
    return value.tolist() if isinstance(value, np.ndarray) else kind(value)


class TensorBoardLogger(AbstractLogger):
    """Write episode returns/lengths, learner statistics and steps/s as TensorBoard scalars.

    Tags: ``"episode/return"`` and ``"episode/length"`` (one point per finished episode), every
    key of ``rk.collect_statistics(policy)`` (``"learner/loss"``, ``"explorer/epsilon"``, ...) and
    ``"time/steps_per_second"`` every ``stats_every_n_steps`` environment steps. The x-axis
    (global step) is always the total number of environment steps. The writer is flushed at
    PostEpisode at most every ``flush_every_s`` seconds and closed at PostExperiment (a later run
    opens a new event file in the same ``logdir``; TensorBoard shows them as one run). A logger
    restored with ``load_state_dict`` purges events at or after its restored step, so a resumed
    run does not show the steps after the checkpoint twice; a fresh logger purges the events
    earlier runs left in ``logdir`` (a run restarted from scratch in the same folder replaces
    them rather than showing its steps twice).

    With ``evaluations=`` (an ``rk.EvaluationHook`` placed before the logger in the hook chain)
    every greedy evaluation is written too, as ``"evaluation/mean_return"`` and
    ``"evaluation/std_return"`` at the step it was made (a resumed run writes only those after
    its checkpoint).

    Needs the ``tensorboard`` package: ``pip install tensorboard``.

    Example:
        >>> import rlkit as rk, tempfile
        >>> evaluation = rk.EvaluationHook(rk.GymEnv("CartPole-v1"), every_n_steps=100,
        ...                                n_episodes=2, seed=0)
        >>> log = rk.TensorBoardLogger(tempfile.mkdtemp(), stats_every_n_steps=100,
        ...                            evaluations=evaluation)
        >>> _ = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
        ...            rk.StopAfterNSteps(300), evaluation + log)
    """

    def __init__(
        self,
        logdir: str | os.PathLike,
        *,
        stats_every_n_steps: int | None = 1000,
        flush_every_s: float = 10.0,
        evaluations: Any = None,
    ) -> None:
        super().__init__(stats_every_n_steps=stats_every_n_steps)
        if evaluations is not None and not isinstance(getattr(evaluations, "results", None), list):
            raise TypeError(
                f"TensorBoardLogger: evaluations must be an rk.EvaluationHook (a hook with a "
                f"results list), got {evaluations!r}"
            )
        self.evaluations = evaluations
        self._evaluations_seen = 0  # how many of evaluations.results were looked at
        self._evaluation_step = -1  # the step of the last evaluation written
        self._writer_class = _summary_writer_class()
        self.logdir = os.fspath(logdir)
        self.flush_every_s = finite_float(
            "TensorBoardLogger", "flush_every_s", flush_every_s, low=0
        )
        self.writer: Any = None
        # A fresh logger replaces what an earlier run (e.g. one killed before its first
        # checkpoint) left in logdir: TensorBoard hides those events (purge from step 0).
        self._purge_step: int | None = 0
        self._last_flush = 0.0

    def __repr__(self) -> str:
        return f"TensorBoardLogger({self.logdir!r})"

    def open(self) -> None:
        if self.writer is None:
            self.writer = self._writer_class(log_dir=self.logdir, purge_step=self._purge_step)
            self._purge_step = None
            self._last_flush = time.perf_counter()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def log_episode(self, record: dict[str, Any]) -> None:
        step = record["total_steps"]
        self.writer.add_scalar("episode/return", record["return"], step)
        self.writer.add_scalar("episode/length", record["length"], step)
        now = time.perf_counter()
        if now - self._last_flush >= self.flush_every_s:
            self.writer.flush()
            self._last_flush = now

    def log_statistics(self, step: int, stats: dict[str, float]) -> None:
        for tag, value in stats.items():
            self.writer.add_scalar(tag, value, step)

    def log_evaluations(self) -> None:
        """Write the evaluations made since the last call (``evaluation/...`` tags)."""
        results = self.evaluations.results
        for step, mean, std in results[self._evaluations_seen :]:
            if step > self._evaluation_step:
                self.writer.add_scalar("evaluation/mean_return", mean, step)
                self.writer.add_scalar("evaluation/std_return", std, step)
                self._evaluation_step = step
        self._evaluations_seen = len(results)

    def post_act(self, policy: Any, env: Any) -> None:
        super().post_act(policy, env)
        if self.evaluations is not None and len(self.evaluations.results) > self._evaluations_seen:
            self.log_evaluations()

    def vector_post_act(self, policy: Any, env: Any) -> None:
        super().vector_post_act(policy, env)
        if self.evaluations is not None and len(self.evaluations.results) > self._evaluations_seen:
            self.log_evaluations()

    def post_experiment(self, policy: Any, env: Any) -> None:
        if self.evaluations is not None and self.writer is not None:
            self.log_evaluations()
        super().post_experiment(policy, env)

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self._purge_step = self.total_steps + 1
        # the evaluations up to the checkpoint are in the event files already
        self._evaluations_seen, self._evaluation_step = 0, self.total_steps


def _summary_writer_class() -> type:
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError as e:  # tensorboard is an optional extra
        raise ImportError(
            "TensorBoardLogger needs the tensorboard package: pip install tensorboard"
        ) from e
    return SummaryWriter


class _FileLogger(AbstractLogger):
    """A logger writing lines to one file, flushed per line.

    The file is opened at PreExperiment and closed at PostExperiment. A fresh logger starts the
    file anew (``append=False``) or appends to it (``append=True``); every later opening by the
    same logger appends, first cutting the file back to the bytes this logger had written (a
    no-op unless the logger was restored with ``load_state_dict``: then the lines written after
    the checkpoint are dropped, and the resumed run writes them again, exactly once).
    """

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        append: bool = False,
        stats_every_n_steps: int | None = None,
    ) -> None:
        super().__init__(stats_every_n_steps=stats_every_n_steps)
        self.path = os.fspath(path)
        if os.path.isdir(self.path):
            raise ValueError(
                f"{type(self).__name__}: path {self.path!r} is a directory; expected the path "
                f"of a file to write, e.g. {os.path.join(self.path, 'episodes.csv')!r}"
            )
        self.append = bool(append)
        self.file: Any = None
        self._offset: int | None = None  # bytes of the file written so far (None: not started)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.path!r})"

    def header(self) -> str | None:
        """The first line of an empty file (None: no header)."""
        return None

    def open(self) -> None:
        if self.file is not None:
            return
        parent = os.path.dirname(self.path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        exists = os.path.exists(self.path)
        if self._offset is None and not self.append:
            mode = "wb"
        else:
            mode = "ab"
            if exists and self._offset is not None and os.path.getsize(self.path) > self._offset:
                os.truncate(self.path, self._offset)
        self.file = open(self.path, mode)  # noqa: SIM115 - closed at PostExperiment
        self._offset = self.file.seek(0, os.SEEK_END)
        header = self.header()
        if self._offset == 0 and header is not None:
            self.write_line(header)

    def write_line(self, line: str) -> None:
        """Append ``line`` (without its newline) and flush it to the operating system."""
        self.file.write(line.encode("utf-8") + b"\n")
        self.file.flush()
        self._offset = self.file.tell()

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None

    def state_dict(self) -> dict[str, Any]:
        """Counters plus the number of bytes of the file written so far."""
        return {**super().state_dict(), "offset": self._offset}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self._offset = None if state["offset"] is None else int(state["offset"])


class CSVLogger(_FileLogger):
    """One CSV row per finished episode, flushed as it is written.

    Columns: ``episode`` (0-based index of the finished episode), ``return`` (sum of rewards),
    ``length`` (steps), ``total_steps`` (environment steps seen by the logger, this episode's
    included), ``wall_time_s`` (seconds of run time since the logger first started). An episode a
    run stopped in the middle of gets no row.

    The header is written only when the file is empty. A new logger overwrites ``path``
    (``append=True``: appends to it); later runs of the same logger append. A logger restored with
    ``load_state_dict`` cuts the file back to the bytes it had written when its state was saved
    and appends from there, so a resumed run neither repeats the header nor duplicates the
    episodes run after the checkpoint. Each row is flushed to the operating system: a crashed
    process loses no finished episode.

    Example:
        >>> import rlkit as rk, csv, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "episodes.csv")
        >>> _ = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
        ...            rk.StopAfterNEpisodes(3), rk.CSVLogger(path))
        >>> rows = list(csv.DictReader(open(path)))
        >>> len(rows), rows[0]["return"], rows[0]["length"]
        (3, '18.0', '18')
    """

    columns = EPISODE_FIELDS

    def __init__(self, path: str | os.PathLike, *, append: bool = False) -> None:
        super().__init__(path, append=append)

    def header(self) -> str:
        return ",".join(self.columns)

    def log_episode(self, record: dict[str, Any]) -> None:
        self.write_line(",".join(_csv_value(record[c]) for c in self.columns))


def _csv_value(value: Any) -> str:
    return repr(value) if isinstance(value, float) else str(value)


class JSONLinesLogger(_FileLogger):
    """One JSON object per line: one per finished episode, one per statistics report.

    Episode lines: ``{"type": "episode", "episode": ..., "return": ..., "length": ...,
    "total_steps": ..., "wall_time_s": ...}`` (the fields of :class:`CSVLogger`). Statistics lines
    every ``stats_every_n_steps`` environment steps: ``{"type": "statistics", "total_steps": ...,
    "wall_time_s": ..., "learner/loss": ..., "time/steps_per_second": ...}``. Non-finite numbers
    are written as ``null`` (strict JSON). Files are handled as by :class:`CSVLogger`.

    Example:
        >>> import rlkit as rk, json, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "log.jsonl")
        >>> _ = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
        ...            rk.StopAfterNSteps(60), rk.JSONLinesLogger(path, stats_every_n_steps=50))
        >>> [json.loads(line)["type"] for line in open(path)]
        ['episode', 'episode', 'episode', 'statistics', 'episode']
    """

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        stats_every_n_steps: int | None = 1000,
        append: bool = False,
    ) -> None:
        super().__init__(path, append=append, stats_every_n_steps=stats_every_n_steps)

    def log_episode(self, record: dict[str, Any]) -> None:
        self.write_line(_json_line({"type": "episode", **record}))

    def log_statistics(self, step: int, stats: dict[str, float]) -> None:
        line = {
            "type": "statistics",
            "total_steps": step,
            "wall_time_s": round(self.wall_time_s, 6),
        }
        self.write_line(_json_line({**line, **stats}))


def _json_line(record: dict[str, Any]) -> str:
    clean = {
        k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in record.items()
    }
    return json.dumps(clean, allow_nan=False)
