"""Stop conditions: when a run ends.

A stop condition is checked after every step (``step(policy, env)``) and, for conditions about
whole episodes, after each finished episode (``episode(policy, env)``); each returns True to stop.
A step-level stop in the middle of an episode does not announce PostEpisode for it; one at the last
step of an episode does (the episode is finished). Conditions compose with ``|`` (either) and ``&``
(both): ``StopAny`` and ``StopAll``, defined beside ``AbstractStopCondition`` in ``interfaces.py``
(whose operators build them) and importable from here. A plain callable ``f(policy, env) -> bool``
is accepted too and checked after every step. Bundled: ``StopAfterNSteps``, ``StopAfterNEpisodes``,
``StopWhenDone``, ``StopAfterNoImprovement``, ``StopAfterNSeconds``, ``StopSignal``; each has
``state_dict`` / ``load_state_dict`` for checkpoints, and ``progress()`` where the end is known.
"""

from __future__ import annotations

import math
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from .checks import callable_name, check_callable, finite_float, positive_int
from .dispatch import PlanStep
from .interfaces import AbstractStopCondition, AbstractVectorEnv, StopAll, StopAny, stop_plan
from .state import require_keys, state_count

__all__ = [
    "AbstractStopCondition",
    "StopAfterNSteps",
    "StopAfterNEpisodes",
    "StopWhenDone",
    "StopAfterNoImprovement",
    "StopAfterNSeconds",
    "StopSignal",
    "StopAny",
    "StopAll",
    "stop_plan",
]


class StopAfterNSteps(AbstractStopCondition):
    """Stop after ``n`` environment steps (possibly in the middle of an episode).

    With a vector env a step of the batch counts ``n_envs`` transitions (``steps`` may then pass
    ``n`` by less than ``n_envs``).

    Example:
        >>> import rlkit as rk
        >>> stop = rk.StopAfterNSteps(100)
        >>> _ = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), stop)
        >>> stop.steps
        100
    """

    def __init__(self, n: int) -> None:
        self.n = positive_int("StopAfterNSteps", "n", n)
        self.steps = 0
        self._per_step = 1  # transitions per step: n_envs with a vector env (set by plan)

    def __repr__(self) -> str:
        return f"StopAfterNSteps({self.n})"

    def plan(self, policy: Any, env: Any) -> tuple[PlanStep | None, PlanStep | None]:
        self._per_step = env.n_envs if isinstance(env, AbstractVectorEnv) else 1
        return super().plan(policy, env)

    def step(self, policy: Any, env: Any) -> bool:
        self.steps += self._per_step
        return self.steps >= self.n

    def episode(self, policy: Any, env: Any) -> bool:
        return self.steps >= self.n

    def progress(self) -> tuple[int, int, str]:
        return self.steps, self.n, "steps"

    def state_dict(self) -> dict[str, Any]:
        """The step count (``n`` is configuration: a resumed run may use another)."""
        return {"steps": self.steps}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        require_keys("StopAfterNSteps", state, "steps")
        self.steps = state_count("StopAfterNSteps", state, "steps")


class StopAfterNEpisodes(AbstractStopCondition):
    """Stop after ``n`` finished episodes (after their PostEpisode).

    With a vector env every finished sub-env episode counts; the run stops after the step at
    which the count reached ``n`` (several sub-envs may finish at that step).

    Example:
        >>> import rlkit as rk
        >>> stop = rk.StopAfterNEpisodes(3)
        >>> _ = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), stop)
        >>> stop.episodes
        3
    """

    def __init__(self, n: int) -> None:
        self.n = positive_int("StopAfterNEpisodes", "n", n)
        self.episodes = 0

    def __repr__(self) -> str:
        return f"StopAfterNEpisodes({self.n})"

    def episode(self, policy: Any, env: Any) -> bool:
        self.episodes += 1
        return self.episodes >= self.n

    def progress(self) -> tuple[int, int, str]:
        return self.episodes, self.n, "episodes"

    def state_dict(self) -> dict[str, Any]:
        """The episode count (``n`` is configuration: a resumed run may use another)."""
        return {"episodes": self.episodes}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        require_keys("StopAfterNEpisodes", state, "episodes")
        self.episodes = state_count("StopAfterNEpisodes", state, "episodes")


class StopWhenDone(AbstractStopCondition):
    """Stop after the first finished episode (after its PostEpisode).

    Example:
        >>> import rlkit as rk
        >>> hook = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
        ...               rk.StopWhenDone(), rk.StepsPerEpisode())
        >>> len(hook.steps)
        1
    """

    def __init__(self) -> None:
        self.episodes = 0

    def __repr__(self) -> str:
        return "StopWhenDone()"

    def episode(self, policy: Any, env: Any) -> bool:
        self.episodes += 1
        return True

    def progress(self) -> tuple[int, int, str]:
        return min(self.episodes, 1), 1, "episodes"

    def state_dict(self) -> dict[str, Any]:
        return {"episodes": self.episodes}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        require_keys("StopWhenDone", state, "episodes")
        self.episodes = state_count("StopWhenDone", state, "episodes")


class StopAfterNoImprovement(AbstractStopCondition):
    """Stop when ``f()`` has not improved for ``patience`` consecutive finished episodes.

    ``f`` takes no argument and returns a number where higher is better (for a loss, pass
    ``lambda: -loss``); it is evaluated after every finished episode, e.g. the latest return of
    a :class:`~rlkit.TotalRewardPerEpisode` hook. A value improves when it exceeds the best so far
    by more than ``min_delta``; like ReinforcementLearning.jl's condition of the same name, the
    run stops once ``patience`` values in a row did not. NaN never improves.

    Example:
        >>> import rlkit as rk
        >>> hook = rk.TotalRewardPerEpisode()
        >>> stop = rk.StopAfterNoImprovement(lambda: hook.rewards[-1], patience=3)
        >>> _ = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), stop, hook)
        >>> stop.bad_episodes
        3
    """

    def __init__(self, f: Callable[[], float], patience: int, min_delta: float = 0.0) -> None:
        self.f = check_callable("StopAfterNoImprovement", "f", f, "f() -> float")
        self.patience = positive_int("StopAfterNoImprovement", "patience", patience)
        self.min_delta = finite_float("StopAfterNoImprovement", "min_delta", min_delta, low=0)
        self.best = -math.inf
        self.bad_episodes = 0

    def __repr__(self) -> str:
        return (
            f"StopAfterNoImprovement({callable_name(self.f)}, "
            f"patience={self.patience}, min_delta={self.min_delta})"
        )

    def episode(self, policy: Any, env: Any) -> bool:
        value = self.f()
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise TypeError(
                f"StopAfterNoImprovement: f() must return a number, got "
                f"{type(value).__name__}: {value!r}"
            ) from None
        if value > self.best + self.min_delta:
            self.best, self.bad_episodes = value, 0
        else:
            self.bad_episodes += 1
        return self.bad_episodes >= self.patience

    def state_dict(self) -> dict[str, Any]:
        return {"best": self.best, "bad_episodes": self.bad_episodes}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        require_keys("StopAfterNoImprovement", state, "best", "bad_episodes")
        self.best = float(state["best"])
        self.bad_episodes = state_count("StopAfterNoImprovement", state, "bad_episodes")


class StopAfterNSeconds(AbstractStopCondition):
    """Stop once the runs using this condition have taken ``seconds`` of wall-clock time
    (``time.perf_counter``), checked after every step.

    The clock runs while a run runs: it starts when a run starts and the time between runs does
    not count, so a second run continues the budget (as the counters of the other conditions do)
    and so does a run resumed from :meth:`state_dict`.

    Example:
        >>> import rlkit as rk
        >>> stop = rk.StopAfterNSeconds(0.05)
        >>> _ = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), stop)
        >>> stop.elapsed >= 0.05
        True
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = finite_float("StopAfterNSeconds", "seconds", seconds, low=0, low_open=True)
        self.elapsed = 0.0
        self._elapsed_before_run = 0.0
        self._run_start = time.perf_counter()

    def __repr__(self) -> str:
        return f"StopAfterNSeconds({self.seconds:g})"

    def plan(self, policy: Any, env: Any) -> tuple[PlanStep | None, PlanStep | None]:
        self._elapsed_before_run = self.elapsed
        self._run_start = time.perf_counter()
        return super().plan(policy, env)

    def step(self, policy: Any, env: Any) -> bool:
        self.elapsed = self._elapsed_before_run + (time.perf_counter() - self._run_start)
        return self.elapsed >= self.seconds

    def episode(self, policy: Any, env: Any) -> bool:
        return self.elapsed >= self.seconds

    def progress(self) -> tuple[float, float, str]:
        return min(self.elapsed, self.seconds), self.seconds, "seconds"

    def state_dict(self) -> dict[str, Any]:
        return {"elapsed": self.elapsed}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        require_keys("StopAfterNSeconds", state, "elapsed")
        elapsed = float(state["elapsed"])
        if not elapsed >= 0:
            raise ValueError(
                f"StopAfterNSeconds.load_state_dict: elapsed must be >= 0, got {elapsed!r}"
            )
        self.elapsed = self._elapsed_before_run = elapsed
        self._run_start = time.perf_counter()


class StopSignal(AbstractStopCondition):
    """Stop when ``set()`` was called: by another thread, a signal handler, a hook, a notebook
    button. Checked after every step (so a run takes at least one step); the flag stays set
    until ``clear()``, so clear it before reusing the condition.

    ``StopSignal.on_sigint()`` makes one that Ctrl-C sets: the first Ctrl-C ends the run
    cleanly after the current step (PostExperiment runs, hooks save what they save), a second
    one raises ``KeyboardInterrupt`` as usual. It installs a process-wide SIGINT handler (only
    possible in the main thread) and does not restore the previous one; do that yourself with
    ``signal.signal(signal.SIGINT, stop.previous_handler)`` if needed.

    Example:
        >>> import rlkit as rk
        >>> stop = rk.StopSignal()
        >>> hook = rk.DoEveryNSteps(lambda t, policy, env: stop.set(), n=7)
        >>> _ = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), stop, hook)
        >>> hook.t, stop.is_set()
        (7, True)
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self.previous_handler: Any = None

    def __repr__(self) -> str:
        return f"StopSignal(set={self.is_set()})"

    def set(self) -> None:
        """Ask the run to stop after the current step (thread- and signal-handler-safe)."""
        self._event.set()

    def clear(self) -> None:
        """Withdraw the request (to reuse the condition for another run)."""
        self._event.clear()

    def is_set(self) -> bool:
        return self._event.is_set()

    def step(self, policy: Any, env: Any) -> bool:
        return self._event.is_set()

    def episode(self, policy: Any, env: Any) -> bool:
        return self._event.is_set()

    @classmethod
    def on_sigint(cls) -> StopSignal:
        """A new StopSignal set by the first Ctrl-C (SIGINT); the second raises
        KeyboardInterrupt. The replaced handler is kept in ``previous_handler``."""
        stop = cls()

        def handler(signum: int, frame: Any) -> None:
            if stop.is_set():
                raise KeyboardInterrupt
            stop.set()

        stop.previous_handler = signal.signal(signal.SIGINT, handler)
        return stop

    def state_dict(self) -> dict[str, Any]:
        """Empty: a stop request is an event of one session, not state to resume with."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        require_keys("StopSignal", state)
