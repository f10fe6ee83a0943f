"""``ProgressBar``: a tqdm progress bar for a run (notebook-aware)."""

from __future__ import annotations

import importlib.util
import math
import sys
import time
from collections import deque
from typing import Any

import numpy as np
from tqdm import tqdm

from ..core.checks import positive_int
from ..core.interfaces import AbstractHook

__all__ = ["ProgressBar", "PlainProgress"]

_UNITS = {"steps": "step", "episodes": "episode"}
_TICK_SECONDS = 0.1  # aim for about this many seconds between bar updates
_RATE_SECONDS = 1.0  # steps/s in the postfix is measured over at least this many seconds


class ProgressBar(AbstractHook):
    """Show a run's progress with tqdm: steps or episodes of the stop condition, the mean return
    of the last ``mean_window`` finished episodes and environment steps per second.

    The total and the unit come from ``stop_condition.progress()`` (``StopAfterNSteps``: steps,
    ``StopAfterNEpisodes``: episodes; a condition without ``progress``, or none: steps with no
    total). Pass the same stop condition object to ``rk.run``. The bar is updated about ten times
    a second, not every step (the number of steps between updates adapts to the speed of the
    run), and closed at PostExperiment, also when the run raises. In a Jupyter notebook the bar
    is a widget (``tqdm.auto``; with ``ipywidgets`` installed), elsewhere text on ``file``.

    Args:
        stop_condition: the run's stop condition (for the total and the unit).
        desc: text in front of the bar.
        mean_window: number of recent episodes averaged for the ``return`` postfix.
        disable: True hides the bar, False shows it; None (default) shows it on ``file`` when
            one is given, on standard error when that is a terminal, or in a notebook, and
            otherwise (standard error redirected to a file or a pipe) writes plain lines to
            standard error instead: one per tenth of the total (or every 10 s when the total
            is unknown) and one at the end, e.g. ``DQN_CartPole: 1,500/1,500 steps (100%),
            return=21.4, steps/s=812``.
        file: where a text bar is written (default standard error).

    Example:
        >>> import rlkit as rk, io
        >>> stop, out = rk.StopAfterNSteps(500), io.StringIO()
        >>> _ = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), stop,
        ...            rk.ProgressBar(stop, desc="random", file=out))
        >>> "500/500" in out.getvalue()
        True
    """

    def __init__(
        self,
        stop_condition: Any = None,
        *,
        desc: str | None = None,
        mean_window: int = 100,
        disable: bool | None = None,
        file: Any = None,
    ) -> None:
        self._tqdm_std = tqdm
        mean_window = positive_int("ProgressBar", "mean_window", mean_window)
        if stop_condition is not None and not callable(getattr(stop_condition, "progress", None)):
            raise TypeError(
                f"ProgressBar: stop_condition must have a progress() method (an "
                f"rk.AbstractStopCondition), got {type(stop_condition).__name__}: "
                f"{stop_condition!r}"
            )
        if disable is not None and not isinstance(disable, bool):
            raise TypeError(f"ProgressBar: disable must be True, False or None, got {disable!r}")
        self.stop_condition = stop_condition
        self.desc = desc
        self.mean_window = mean_window
        self.disable = disable
        self.file = file
        self.bar: Any = None
        self.total_steps = 0
        self.episodes = 0
        self.episode_return = 0.0
        self.returns: deque[float] = deque(maxlen=mean_window)
        self.unit = "steps"
        self._offset = 0  # stop condition's count minus ours, in ``unit``
        self._countdown = 1
        self._tick_time = 0.0
        self._tick_steps = 0
        self._rate_time = 0.0
        self._rate_steps = 0
        self._rate = float("nan")
        self._full_window = False

    def __repr__(self) -> str:
        return f"ProgressBar({self.stop_condition!r})"

    # ---- PreExperiment: open a bar with the stop condition's total ----
    def pre_experiment(self, policy: Any, env: Any) -> None:
        progress = self._progress()
        total = None
        self.unit = "steps"
        self._offset = 0
        if progress is not None and progress[2] in _UNITS:
            done, total, self.unit = progress
            self._offset = int(done) - self._count()
        # other units (e.g. seconds): count steps with no known total
        self.close()
        options = {
            "total": total,
            "initial": self._count() + self._offset,
            "desc": self.desc,
            "unit": _UNITS.get(self.unit, self.unit),
        }
        if self._plain():
            self.bar = PlainProgress(**options)
        else:
            self.bar = self._tqdm_class()(
                **options, file=self.file, disable=self._disabled(), dynamic_ncols=True
            )
        now = time.perf_counter()
        self._tick_time = self._rate_time = now
        self._tick_steps = self._rate_steps = self.total_steps
        self._countdown = 1
        self._rate = float("nan")
        self._full_window = False

    # ---- PreEpisode: a new episode ----
    def pre_episode(self, policy: Any, env: Any) -> None:
        self.episode_return = 0.0

    # ---- PostAct: count; update the bar every few steps ----
    def post_act(self, policy: Any, env: Any) -> None:
        self.total_steps += 1
        self.episode_return += env.reward
        self._countdown -= 1
        if self._countdown <= 0:
            self._tick()

    # ---- multi-agent envs: the return is the mean of the agents' returns ----
    def multiagent_post_act(self, policy: Any, env: Any) -> None:
        rewards = env.rewards
        self.total_steps += 1
        self.episode_return += sum(rewards.values()) / max(len(rewards), 1)
        self._countdown -= 1
        if self._countdown <= 0:
            self._tick()

    # ---- PostEpisode: the episode's return joins the mean ----
    def post_episode(self, policy: Any, env: Any) -> None:
        self.episodes += 1
        self.returns.append(float(self.episode_return))
        if self.unit == "episodes":
            self._tick()

    # ---- vector envs: per-sub-env returns; n_envs transitions per step ----
    def vector_pre_experiment(self, policy: Any, env: Any) -> None:
        if np.ndim(self.episode_return) == 0 or len(self.episode_return) != env.n_envs:
            self.episode_return = np.zeros(env.n_envs)
        self.pre_experiment(policy, env)

    def vector_post_act(self, policy: Any, env: Any) -> None:
        self.total_steps += env.n_envs
        self.episode_return += getattr(env, "original_reward", env.reward)  # before VecNormalize
        done = env.done
        finished = False
        if done.any():
            finished = True
            for i in np.flatnonzero(done):
                self.episodes += 1
                self.returns.append(float(self.episode_return[i]))
                self.episode_return[i] = 0.0
        self._countdown -= env.n_envs
        if self._countdown <= 0 or (finished and self.unit == "episodes"):
            self._tick()

    vector_pre_episode = None
    vector_post_episode = None

    # ---- PostExperiment: final count, close (also after an error) ----
    def post_experiment(self, policy: Any, env: Any) -> None:
        if self.bar is None:
            return
        progress = self._progress()
        if progress is not None and progress[2] == self.unit:
            self._offset = int(progress[0]) - self._count()
        self._update_postfix(time.perf_counter())
        self.bar.update(self._count() + self._offset - self.bar.n)
        self.close()

    def close(self) -> None:
        """Close the bar (done at PostExperiment)."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    @property
    def mean_return(self) -> float:
        """Mean return of the last ``mean_window`` finished episodes (nan before the first)."""
        return sum(self.returns) / len(self.returns) if self.returns else float("nan")

    def _progress(self) -> tuple[int, int, str] | None:
        return None if self.stop_condition is None else self.stop_condition.progress()

    def _count(self) -> int:
        return self.episodes if self.unit == "episodes" else self.total_steps

    def _tick(self) -> None:
        now = time.perf_counter()
        steps = self.total_steps - self._tick_steps
        seconds = now - self._tick_time
        # Next update after about _TICK_SECONDS of steps at the current speed.
        wanted = steps * _TICK_SECONDS / seconds if seconds > 0 else 2 * steps
        self._countdown = max(1, min(100_000, int(wanted)))
        self._tick_time, self._tick_steps = now, self.total_steps
        if self.bar is None:
            return
        self._update_postfix(now)
        self.bar.update(self._count() + self._offset - self.bar.n)
        if self.unit == "steps" and isinstance(self.bar, PlainProgress):
            # plain lines come at each tenth of the run, however fast it goes
            due = self.bar.until_next_line()
            if due is not None:
                self._countdown = max(1, min(self._countdown, due))

    def _update_postfix(self, now: float) -> None:
        # steps/s over the last window of at least _RATE_SECONDS (over the run so far, before
        # the first full window)
        seconds = now - self._rate_time
        if seconds > 0 and (seconds >= _RATE_SECONDS or not self._full_window):
            self._rate = (self.total_steps - self._rate_steps) / seconds
            if seconds >= _RATE_SECONDS:
                self._rate_time, self._rate_steps = now, self.total_steps
                self._full_window = True
        parts = []
        if self.returns:
            parts.append(f"return={self.mean_return:.4g}")
        if not math.isnan(self._rate):
            rate = self._rate
            parts.append(f"steps/s={rate:.0f}" if rate >= 100 else f"steps/s={rate:.3g}")
        self.bar.set_postfix_str(", ".join(parts), refresh=False)

    def _disabled(self) -> bool:
        return bool(self.disable)

    def _plain(self) -> bool:
        """Off a terminal (standard error redirected or piped, not in a notebook) and not told
        otherwise: plain periodic lines instead of a bar that redraws itself."""
        if self.disable is not None or self.file is not None:
            return False
        return not (_is_tty(sys.stderr) or _in_notebook())

    def _tqdm_class(self) -> type:
        if self.file is None and _in_notebook() and importlib.util.find_spec("ipywidgets"):
            from tqdm.auto import tqdm  # a widget

            return tqdm
        return self._tqdm_std  # text (in a notebook without ipywidgets: on standard error)

    # ---- checkpoint protocol ----
    def state_dict(self) -> dict[str, Any]:
        """Counters, the unfinished episode's return and the recent returns."""
        return {
            "total_steps": self.total_steps,
            "episodes": self.episodes,
            "episode_return": (
                self.episode_return.tolist()
                if isinstance(self.episode_return, np.ndarray)
                else float(self.episode_return)
            ),
            "returns": list(self.returns),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved (call it between runs)."""
        self.close()
        self.total_steps = int(state["total_steps"])
        self.episodes = int(state["episodes"])
        ret = state["episode_return"]
        self.episode_return = np.array(ret, dtype=np.float64) if np.ndim(ret) else float(ret)
        self.returns = deque((float(r) for r in state["returns"]), maxlen=self.mean_window)


class PlainProgress:
    """The part of tqdm's interface ``ProgressBar`` uses, written as plain lines, for output
    that is not a terminal (a log file, a pipe): a line when the count passes the next tenth
    of the total (every ``every_s`` seconds when there is no total), and one when closed.

    Example:
        >>> import io
        >>> out = io.StringIO()
        >>> bar = PlainProgress(total=200, desc="run", unit="step", file=out)
        >>> bar.update(100); bar.set_postfix_str("return=9.5"); bar.close()
        >>> print(out.getvalue(), end="")
        run: 100/200 steps (50%)
        run: 100/200 steps (50%), return=9.5
    """

    def __init__(
        self,
        total: int | None = None,
        initial: int = 0,
        desc: str | None = None,
        unit: str = "step",
        file: Any = None,
        every_s: float = 10.0,
    ) -> None:
        self.total, self.n, self.desc, self.unit = total, int(initial), desc, unit
        self.file, self.every_s = file, every_s
        self.postfix = ""
        self._printed: tuple[int, str] | None = None
        self._last = time.perf_counter()
        self._next_tenth = self._tenth_after(self.n)

    def _tenth_after(self, n: int) -> float | None:
        """The next tenth of the total above ``n`` (inf past the total; None without one)."""
        if not self.total:
            return None
        k = n * 10 // self.total + 1
        return -(-k * self.total // 10) if k <= 10 else math.inf

    def update(self, n: int = 1) -> None:
        self.n += int(n)
        now = time.perf_counter()
        if self._next_tenth is None:
            due = now - self._last >= self.every_s
        else:
            due = self.n >= self._next_tenth
        if due:
            self._print(now)
            self._next_tenth = self._tenth_after(self.n)

    def until_next_line(self) -> int | None:
        """How many more counts until the next tenth's line (None: no total, or past it)."""
        if self._next_tenth is None or math.isinf(self._next_tenth):
            return None
        return max(1, int(self._next_tenth) - self.n)

    def set_postfix_str(self, text: str = "", refresh: bool = True) -> None:
        self.postfix = text

    def close(self) -> None:
        if self._printed != (self.n, self.postfix):
            self._print(time.perf_counter())

    def line(self) -> str:
        """The current line, e.g. ``run: 100/200 steps (50%), return=9.5``."""
        head = f"{self.desc}: " if self.desc else ""
        units = f"{self.unit}s"
        if self.total:
            count = f"{self.n:,}/{self.total:,} {units} ({100 * self.n // self.total}%)"
        else:
            count = f"{self.n:,} {units}"
        return f"{head}{count}{', ' + self.postfix if self.postfix else ''}"

    def _print(self, now: float) -> None:
        print(self.line(), file=self.file or sys.stderr, flush=True)
        self._printed, self._last = (self.n, self.postfix), now


def _is_tty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _in_notebook() -> bool:
    """True inside a Jupyter kernel (notebook, lab, VS Code), False in a terminal or IPython."""
    if "ipykernel" not in sys.modules:
        return False
    ipython = sys.modules.get("IPython")
    get_ipython = getattr(ipython, "get_ipython", None)
    shell = get_ipython() if get_ipython is not None else None
    return type(shell).__name__ == "ZMQInteractiveShell"
