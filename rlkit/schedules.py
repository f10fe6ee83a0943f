"""Schedules: a hyperparameter (learning rate, clip range, entropy coefficient) as a function
of a step counter, with the counter saved in checkpoints.

``schedule(t)`` is the value at step ``t`` (pure); ``schedule.value`` is the value at the
schedule's own counter, which ``schedule.advance(n)`` moves on. ``state_dict`` holds the counter.
What a step is (an environment transition, an update) is up to the owner; the policy-gradient
learners count environment transitions, as Stable-Baselines3's ``progress_remaining`` does.

Example:
    >>> lr = LinearSchedule(1e-3, 0.0, 100)
    >>> lr(0), lr(50), lr(100), lr(1000)
    (0.001, 0.0005, 0.0, 0.0)
    >>> lr.advance(25); lr.value
    0.00075
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .core.checks import finite_float, positive_int
from .core.state import require_keys, state_count

__all__ = [
    "Schedule",
    "ConstantSchedule",
    "LinearSchedule",
    "PiecewiseSchedule",
    "ExponentialSchedule",
    "as_schedule",
]


class Schedule:
    """Base class: subclasses implement ``__call__(t) -> float``.

    Example:
        >>> class Halving(Schedule):
        ...     \"\"\"Halves the value every ``every`` steps.\"\"\"
        ...     def __init__(self, start, every):
        ...         super().__init__()
        ...         self.start, self.every = start, every
        ...     def __call__(self, t):
        ...         return self.start * 0.5 ** (t // self.every)
        >>> s = Halving(1.0, every=10)
        >>> s(25), s.value
        (0.25, 1.0)
        >>> s.advance(10); s.value
        0.5
    """

    def __init__(self) -> None:
        self.t = 0

    def __call__(self, t: int) -> float:
        raise NotImplementedError

    @property
    def value(self) -> float:
        """The value at the schedule's own counter."""
        return self(self.t)

    def advance(self, n: int = 1) -> None:
        """Move the counter on by ``n`` steps."""
        self.t += int(n)

    def state_dict(self) -> dict[str, Any]:
        return {"t": self.t}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        require_keys(type(self).__name__, state, "t")
        self.t = state_count(type(self).__name__, state, "t")


class ConstantSchedule(Schedule):
    """The same value at every step.

    Example:
        >>> ConstantSchedule(0.2)(10**6)
        0.2
    """

    def __init__(self, value: float) -> None:
        super().__init__()
        self.constant = finite_float("ConstantSchedule", "value", value)

    def __call__(self, t: int) -> float:
        return self.constant

    def __repr__(self) -> str:
        return f"ConstantSchedule({self.constant})"


class LinearSchedule(Schedule):
    """From ``start`` at step 0 to ``end`` at step ``n_steps``, then ``end``.

    ``LinearSchedule(1e-3, 0.0, total_steps)`` is rl-baselines3-zoo's ``lin_1e-3``.

    Example:
        >>> s = LinearSchedule(1.0, 0.0, 100)
        >>> s(0), s(50), s(200)
        (1.0, 0.5, 0.0)
    """

    def __init__(self, start: float, end: float, n_steps: int) -> None:
        super().__init__()
        self.start = finite_float("LinearSchedule", "start", start)
        self.end = finite_float("LinearSchedule", "end", end)
        self.n_steps = positive_int("LinearSchedule", "n_steps", n_steps)

    def __call__(self, t: int) -> float:
        fraction = min(max(t, 0) / self.n_steps, 1.0)
        return self.start + fraction * (self.end - self.start)

    def __repr__(self) -> str:
        return f"LinearSchedule({self.start}, {self.end}, {self.n_steps})"


class PiecewiseSchedule(Schedule):
    """Linear interpolation between ``(step, value)`` points (steps increasing); the first value
    before the first point, the last after the last.

    Example:
        >>> s = PiecewiseSchedule([(0, 1.0), (10, 0.5), (20, 0.0)])
        >>> s(5), s(15), s(30)
        (0.75, 0.25, 0.0)
    """

    def __init__(self, points: Sequence[tuple[int, float]]) -> None:
        super().__init__()
        points = list(points)
        if not points:
            raise ValueError("PiecewiseSchedule: points must hold at least one (step, value)")
        steps = [int(s) for s, _ in points]
        if any(b <= a for a, b in zip(steps, steps[1:], strict=False)):
            raise ValueError(f"PiecewiseSchedule: steps must increase, got {steps}")
        self.points = [
            (s, finite_float("PiecewiseSchedule", "value", v))
            for s, (_, v) in zip(steps, points, strict=True)
        ]

    def __call__(self, t: int) -> float:
        (t0, v0) = self.points[0]
        if t <= t0:
            return v0
        for (a, va), (b, vb) in zip(self.points, self.points[1:], strict=False):
            if t <= b:
                return va + (t - a) / (b - a) * (vb - va)
        return self.points[-1][1]

    def __repr__(self) -> str:
        return f"PiecewiseSchedule({self.points})"


class ExponentialSchedule(Schedule):
    """``start * rate ** (t / every)``, never below ``end`` (or above it for a growing one).

    Example:
        >>> ExponentialSchedule(1.0, 0.5, every=10, end=0.2)(20), ExponentialSchedule(1.0, 0.5)(1)
        (0.25, 0.5)
    """

    def __init__(
        self, start: float, rate: float, *, every: int = 1, end: float | None = None
    ) -> None:
        super().__init__()
        self.start = finite_float("ExponentialSchedule", "start", start)
        self.rate = finite_float("ExponentialSchedule", "rate", rate, low=0.0, low_open=True)
        self.every = positive_int("ExponentialSchedule", "every", every)
        self.end = None if end is None else finite_float("ExponentialSchedule", "end", end)

    def __call__(self, t: int) -> float:
        value = self.start * math.pow(self.rate, max(t, 0) / self.every)
        if self.end is None:
            return value
        return max(value, self.end) if self.rate <= 1 else min(value, self.end)

    def __repr__(self) -> str:
        return f"ExponentialSchedule({self.start}, {self.rate}, every={self.every}, end={self.end})"


def as_schedule(owner: str, name: str, value: Any) -> Schedule:
    """``value`` if it is a :class:`Schedule`, a :class:`ConstantSchedule` of a number."""
    if isinstance(value, Schedule):
        return value
    return ConstantSchedule(finite_float(owner, name, value))
