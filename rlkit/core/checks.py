"""Argument checks shared by all of rlkit's components.

Every check names the owner, the argument, what was expected and the value it got, in one style:
``"Owner: name must be a positive integer, got 0"``. numpy integers and floats are accepted where
Python ones are; bools are refused wherever a number is expected (``True`` is not a step size).
A value of the wrong type raises :class:`ArgumentTypeError` (a ``TypeError`` that is also a
``ValueError``), a value of the right type out of range raises ``ValueError``.

Example:
    >>> positive_int("StopAfterNSteps", "n", 3)
    3
    >>> positive_int("StopAfterNSteps", "n", 0)
    Traceback (most recent call last):
    ...
    ValueError: StopAfterNSteps: n must be a positive integer, got 0
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "ArgumentTypeError",
    "is_int",
    "is_real",
    "positive_int",
    "non_negative_int",
    "int_at_least",
    "optional_positive_int",
    "unit_interval",
    "finite_float",
    "instance_of",
    "not_a_class",
    "exactly_one_of",
    "check_callable",
    "check_gamma",
    "callable_name",
]


class ArgumentTypeError(TypeError, ValueError):
    """An argument of the wrong type (a ``TypeError``, and a ``ValueError`` for code that
    catches bad values)."""


def is_int(value: Any) -> bool:
    """A Python or numpy integer, not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def is_real(value: Any) -> bool:
    """A Python or numpy integer or float, not a bool."""
    return is_int(value) or isinstance(value, (float, np.floating))


def _fail(owner: str, name: str, expected: str, value: Any, error: type = ValueError) -> None:
    raise error(f"{owner}: {name} must be {expected}, got {value!r}")


def positive_int(owner: str, name: str, value: Any) -> int:
    """``value`` as an ``int`` if it is an integer >= 1."""
    if not is_int(value):
        _fail(owner, name, "a positive integer", value, ArgumentTypeError)
    if value < 1:
        _fail(owner, name, "a positive integer", value)
    return int(value)


def optional_positive_int(owner: str, name: str, value: Any) -> int | None:
    """None, or ``value`` as an ``int`` if it is an integer >= 1."""
    if value is None:
        return None
    if not is_int(value):
        _fail(owner, name, "a positive integer or None", value, ArgumentTypeError)
    if value < 1:
        _fail(owner, name, "a positive integer or None", value)
    return int(value)


def non_negative_int(owner: str, name: str, value: Any) -> int:
    """``value`` as an ``int`` if it is an integer >= 0."""
    if not is_int(value):
        _fail(owner, name, "a non-negative integer", value, ArgumentTypeError)
    if value < 0:
        _fail(owner, name, "a non-negative integer", value)
    return int(value)


def int_at_least(owner: str, name: str, value: Any, minimum: int) -> int:
    """``value`` as an ``int`` if it is an integer >= ``minimum``.

    Example:
        >>> int_at_least("GamblersProblemEnv", "goal", 1, 2)
        Traceback (most recent call last):
        ...
        ValueError: GamblersProblemEnv: goal must be an integer >= 2, got 1
    """
    if not is_int(value):
        _fail(owner, name, f"an integer >= {minimum}", value, ArgumentTypeError)
    if value < minimum:
        _fail(owner, name, f"an integer >= {minimum}", value)
    return int(value)


def unit_interval(owner: str, name: str, value: Any) -> float:
    """``value`` as a ``float`` if it is a real number in [0, 1]."""
    if not is_real(value):
        _fail(owner, name, "a number in [0, 1]", value, ArgumentTypeError)
    if not 0.0 <= value <= 1.0:  # NaN fails too
        _fail(owner, name, "a number in [0, 1]", value)
    return float(value)


def finite_float(
    owner: str,
    name: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
) -> float:
    """``value`` as a ``float`` if it is a finite real number in ``[low, high]`` (``(low, high]``
    with ``low_open``; either bound may be None)."""
    expected = _range_text(low, high, low_open)
    if not is_real(value):
        _fail(owner, name, expected, value, ArgumentTypeError)
    x = float(value)
    if (
        not math.isfinite(x)
        or (low is not None and (x <= low if low_open else x < low))
        or (high is not None and x > high)
    ):
        _fail(owner, name, expected, value)
    return x


def _range_text(low: float | None, high: float | None, low_open: bool) -> str:
    if low == 0 and low_open and high is None:
        return "a positive finite number"
    if low == 0 and high is None:
        return "a non-negative finite number"
    if low is None and high is None:
        return "a finite number"
    left = "(" if low_open else "["
    lo = "-inf" if low is None else low
    hi = "inf" if high is None else high
    return f"a finite number in {left}{lo}, {hi}]"


def instance_of(owner: str, name: str, value: Any, types: type | tuple, expected: str) -> Any:
    """``value`` itself if it is an instance of ``types`` (``expected`` says what in words)."""
    if not isinstance(value, types):
        raise ArgumentTypeError(
            f"{owner}: {name} must be {expected}, got {type(value).__name__}: {value!r}"
        )
    return value


def not_a_class(owner: str, name: str, value: Any) -> Any:
    """``value`` itself unless it is a class (``rk.run(agent, env, rk.StopAfterNSteps)``: a class
    is callable, so it would be called as a plain function later, with a puzzling error).

    Example:
        >>> not_a_class("run", "hook", print) is print
        True
    """
    if isinstance(value, type):
        name_ = value.__name__
        made = f"{name_}.agent(env)" if hasattr(value, "agent") else f"{name_}(...)"
        raise ArgumentTypeError(
            f"{owner}: {name} must be an object, got the class {name_} itself; create "
            f"one, e.g. {made}"
        )
    return value


def exactly_one_of(owner: str, **named: Any) -> str:
    """The name of the one argument of ``named`` that is not None."""
    given = [name for name, value in named.items() if value is not None]
    if len(given) != 1:
        names = " or ".join(named)
        raise ValueError(
            f"{owner}: exactly one of {names} must be given, got "
            + (", ".join(f"{n}={named[n]!r}" for n in given) if given else "none")
        )
    return given[0]


def check_callable(owner: str, name: str, f: Any, signature: str) -> Callable:
    """``f`` itself if it is callable (``signature`` shows how it will be called)."""
    if not callable(f):
        raise ArgumentTypeError(
            f"{owner}: {name} must be callable as {signature}, got {type(f).__name__}: {f!r}"
        )
    return f


def check_gamma(owner: str, gamma: Any) -> float:
    """A discount factor: a real number in [0, 1].

    Example:
        >>> check_gamma("TDLearner", 0.9)
        0.9
    """
    return unit_interval(owner, "gamma", gamma)


def callable_name(f: Any) -> str:
    """A short name of a function or callable object for reprs and messages."""
    return getattr(f, "__qualname__", type(f).__name__)
