"""Stop conditions: when a run ends.

A stop condition is checked after every step (``step(policy, env)``) and, for conditions about
whole episodes, after each finished episode (``episode(policy, env)``); each returns True to stop.
A step-level stop in the middle of an episode does not announce PostEpisode for it. Conditions
compose with ``|`` (either) and ``&`` (both). A plain callable ``f(policy, env) -> bool`` is
accepted too and checked after every step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .dispatch import PlanStep, where

__all__ = [
    "AbstractStopCondition",
    "StopAfterNSteps",
    "StopAfterNEpisodes",
    "StopAny",
    "StopAll",
    "stop_plan",
]


class AbstractStopCondition:
    """Base class: override ``step`` (checked after every step) and/or ``episode`` (checked
    after every finished episode). Both return True to stop the run. Counters keep counting
    across runs, so ``run(..., StopAfterNSteps(n))`` twice on the same condition stops at once
    the second time; build a new one per run."""

    def step(self, policy: Any, env: Any) -> bool:
        """Called after every step; True stops the run at once."""
        return False

    def episode(self, policy: Any, env: Any) -> bool:
        """Called after every finished episode (after PostEpisode); True stops the run."""
        return False

    def __call__(self, policy: Any, env: Any) -> bool:
        return self.step(policy, env)

    def __or__(self, other: AbstractStopCondition) -> StopAny:
        return StopAny(self, other)

    def __and__(self, other: AbstractStopCondition) -> StopAll:
        return StopAll(self, other)

    def progress(self) -> tuple[int, int, str] | None:
        """``(done, total, unit)`` for a progress bar, or None when the end is unknown."""
        return None

    def plan(self, policy: Any, env: Any) -> tuple[PlanStep | None, PlanStep | None]:
        """The resolved step-level and episode-level checks (None where not overridden)."""
        cls = type(self)
        return tuple(
            None
            if getattr(cls, name) is getattr(AbstractStopCondition, name)
            else PlanStep(
                _bind(getattr(self, name), policy, env),
                f"{cls.__name__}.{name}",
                where(getattr(self, name)),
            )
            for name in ("step", "episode")
        )


def _bind(method: Callable[[Any, Any], bool], policy: Any, env: Any) -> Callable[[], bool]:
    def check() -> bool:
        return method(policy, env)

    return check


def stop_plan(stop: Any, policy: Any, env: Any) -> tuple[PlanStep | None, PlanStep | None]:
    """The plan of any stop condition; a plain callable is a step-level check."""
    if isinstance(stop, AbstractStopCondition):
        return stop.plan(policy, env)
    if not callable(stop):
        raise TypeError(
            f"run: stop_condition must be an rk.AbstractStopCondition or a callable "
            f"f(policy, env) -> bool, got {type(stop).__name__}: {stop!r}"
        )
    return PlanStep(
        _bind(stop, policy, env), getattr(stop, "__qualname__", "stop"), where(stop)
    ), None


def _positive_int(owner: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{owner}: {name} must be a positive integer, got {value!r}")
    return value


class StopAfterNSteps(AbstractStopCondition):
    """Stop after ``n`` environment steps (possibly in the middle of an episode).

    Example:
        >>> import rlkit as rk
        >>> stop = rk.StopAfterNSteps(100)
        >>> _ = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), stop)
        >>> stop.steps
        100
    """

    def __init__(self, n: int) -> None:
        self.n = _positive_int("StopAfterNSteps", "n", n)
        self.steps = 0

    def __repr__(self) -> str:
        return f"StopAfterNSteps({self.n})"

    def step(self, policy: Any, env: Any) -> bool:
        self.steps += 1
        return self.steps >= self.n

    def episode(self, policy: Any, env: Any) -> bool:
        return self.steps >= self.n

    def progress(self) -> tuple[int, int, str]:
        return self.steps, self.n, "steps"


class StopAfterNEpisodes(AbstractStopCondition):
    """Stop after ``n`` finished episodes (after their PostEpisode).

    Example:
        >>> import rlkit as rk
        >>> stop = rk.StopAfterNEpisodes(3)
        >>> _ = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), stop)
        >>> stop.episodes
        3
    """

    def __init__(self, n: int) -> None:
        self.n = _positive_int("StopAfterNEpisodes", "n", n)
        self.episodes = 0

    def __repr__(self) -> str:
        return f"StopAfterNEpisodes({self.n})"

    def episode(self, policy: Any, env: Any) -> bool:
        self.episodes += 1
        return self.episodes >= self.n

    def progress(self) -> tuple[int, int, str]:
        return self.episodes, self.n, "episodes"


class StopAny(AbstractStopCondition):
    """Stop when any of the conditions says so (``a | b``); every condition is updated."""

    def __init__(self, *conditions: Any) -> None:
        self.conditions = tuple(conditions)

    def __repr__(self) -> str:
        return " | ".join(repr(c) for c in self.conditions)

    def step(self, policy: Any, env: Any) -> bool:
        return any([_check(c, "step", policy, env) for c in self.conditions])

    def episode(self, policy: Any, env: Any) -> bool:
        return any([_check(c, "episode", policy, env) for c in self.conditions])

    def progress(self) -> tuple[int, int, str] | None:
        known = [p for c in self.conditions if (p := _progress(c)) is not None]
        return max(known, key=lambda p: p[0] / p[1]) if known else None


class StopAll(AbstractStopCondition):
    """Stop when all conditions say so (``a & b``); every condition is updated."""

    def __init__(self, *conditions: Any) -> None:
        self.conditions = tuple(conditions)

    def __repr__(self) -> str:
        return " & ".join(repr(c) for c in self.conditions)

    def step(self, policy: Any, env: Any) -> bool:
        return all([_check(c, "step", policy, env) for c in self.conditions])

    def episode(self, policy: Any, env: Any) -> bool:
        return all([_check(c, "episode", policy, env) for c in self.conditions])

    def progress(self) -> tuple[int, int, str] | None:
        known = [p for c in self.conditions if (p := _progress(c)) is not None]
        return min(known, key=lambda p: p[0] / p[1]) if known else None


def _check(condition: Any, level: str, policy: Any, env: Any) -> bool:
    if isinstance(condition, AbstractStopCondition):
        return bool(getattr(condition, level)(policy, env))
    return bool(condition(policy, env)) if level == "step" else False


def _progress(condition: Any) -> tuple[int, int, str] | None:
    return condition.progress() if isinstance(condition, AbstractStopCondition) else None
