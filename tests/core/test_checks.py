"""rlkit/core/checks.py: the argument checks every component uses. Each accepts numpy numbers,
refuses bools, and words its message "Owner: name must be ..., got value"; a value of the wrong
type raises ArgumentTypeError (a TypeError and a ValueError)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from rlkit.core import checks
from rlkit.core.checks import (
    ArgumentTypeError,
    callable_name,
    check_callable,
    check_gamma,
    exactly_one_of,
    finite_float,
    instance_of,
    int_at_least,
    is_int,
    is_real,
    non_negative_int,
    not_a_class,
    optional_positive_int,
    positive_int,
    unit_interval,
)

INTS = [3, np.int8(3), np.int64(3), np.uint16(3)]
BOOLS = [True, False, np.bool_(True)]


def test_argument_type_error_is_a_type_error_and_a_value_error():
    assert issubclass(ArgumentTypeError, TypeError)
    assert issubclass(ArgumentTypeError, ValueError)


@pytest.mark.parametrize("value", INTS)
def test_is_int_and_is_real_accept_python_and_numpy_integers(value):
    assert is_int(value) and is_real(value)


@pytest.mark.parametrize("value", BOOLS)
def test_bools_are_neither_ints_nor_reals(value):
    assert not is_int(value) and not is_real(value)


@pytest.mark.parametrize("value", [2.5, np.float32(2.5), np.float64(2.5), math.inf])
def test_floats_are_real_not_int(value):
    assert is_real(value) and not is_int(value)


@pytest.mark.parametrize("value", ["3", None, [3], 3j])
def test_other_values_are_neither(value):
    assert not is_int(value) and not is_real(value)


# ---- integer checks: (function, extra args, smallest accepted, expected words) ----

INTEGER_CHECKS = [
    (positive_int, (), 1, "a positive integer"),
    (optional_positive_int, (), 1, "a positive integer or None"),
    (non_negative_int, (), 0, "a non-negative integer"),
    (int_at_least, (2,), 2, "an integer >= 2"),
]


@pytest.mark.parametrize("check, extra, low, words", INTEGER_CHECKS)
@pytest.mark.parametrize("value", INTS)
def test_integer_checks_accept_numpy_integers_and_return_ints(check, extra, low, words, value):
    result = check("Owner", "n", value, *extra)
    assert result == 3 and type(result) is int


@pytest.mark.parametrize("check, extra, low, words", INTEGER_CHECKS)
def test_integer_checks_accept_their_lower_bound_and_refuse_below(check, extra, low, words):
    assert check("Owner", "n", low, *extra) == low
    message = f"Owner: n must be {words}, got {low - 1}"
    with pytest.raises(ValueError, match=re.escape(message)) as error:
        check("Owner", "n", low - 1, *extra)
    assert type(error.value) is ValueError  # the right type, out of range


@pytest.mark.parametrize("check, extra, low, words", INTEGER_CHECKS)
@pytest.mark.parametrize("value", [*BOOLS, 2.0, "3", [3]])
def test_integer_checks_refuse_bools_and_non_integers(check, extra, low, words, value):
    message = f"Owner: n must be {words}, got {value!r}"
    with pytest.raises(ArgumentTypeError, match=re.escape(message)):
        check("Owner", "n", value, *extra)


def test_only_optional_positive_int_accepts_none():
    assert optional_positive_int("Owner", "n", None) is None
    for check, extra, _, _ in INTEGER_CHECKS[:1] + INTEGER_CHECKS[2:]:
        with pytest.raises(ArgumentTypeError, match="got None"):
            check("Owner", "n", None, *extra)


# ---- real-number checks ----


@pytest.mark.parametrize("value", [0, 1, 0.5, np.float32(0.25), np.int64(1)])
def test_unit_interval_accepts_numbers_in_0_1(value):
    result = unit_interval("Owner", "p", value)
    assert result == float(value) and type(result) is float


@pytest.mark.parametrize("value", [-0.1, 1.5, math.nan, math.inf])
def test_unit_interval_refuses_numbers_outside(value):
    with pytest.raises(
        ValueError, match=re.escape(f"Owner: p must be a number in [0, 1], got {value!r}")
    ):
        unit_interval("Owner", "p", value)


@pytest.mark.parametrize("value", [*BOOLS, "0.5", None])
def test_unit_interval_refuses_non_numbers(value):
    with pytest.raises(ArgumentTypeError, match="Owner: p must be a number in"):
        unit_interval("Owner", "p", value)


@pytest.mark.parametrize(
    "bounds, words, inside, outside",
    [
        ({}, "a finite number", [-1e300, 0, 7], [math.inf, -math.inf, math.nan]),
        ({"low": 0}, "a non-negative finite number", [0, 2.5], [-0.1, math.inf]),
        ({"low": 0, "low_open": True}, "a positive finite number", [1e-9, 3], [0, -1]),
        ({"low": 0, "high": 1, "low_open": True}, "a finite number in (0, 1]", [1, 0.5], [0, 1.5]),
        ({"low": -1, "high": 2}, "a finite number in [-1, 2]", [-1, 2], [-1.5, 2.5]),
        ({"high": 0}, "a finite number in [-inf, 0]", [-5, 0], [0.1]),
    ],
)
def test_finite_float_bounds_and_words(bounds, words, inside, outside):
    for value in inside:
        assert finite_float("Owner", "x", value, **bounds) == float(value)
    for value in outside:
        with pytest.raises(ValueError, match=re.escape(f"Owner: x must be {words}, got {value!r}")):
            finite_float("Owner", "x", value, **bounds)
    for value in [*BOOLS, "1", None]:
        with pytest.raises(ArgumentTypeError, match=re.escape(f"Owner: x must be {words}, got")):
            finite_float("Owner", "x", value, **bounds)


def test_finite_float_accepts_numpy_numbers():
    assert finite_float("Owner", "x", np.int64(4), low=0) == 4.0
    assert finite_float("Owner", "x", np.float32(0.5)) == 0.5


def test_check_gamma_is_the_unit_interval_named_gamma():
    assert check_gamma("TDLearner", np.float64(0.9)) == 0.9
    with pytest.raises(
        ValueError, match=re.escape("TDLearner: gamma must be a number in [0, 1], got 1.5")
    ):
        check_gamma("TDLearner", 1.5)
    with pytest.raises(ArgumentTypeError, match="TDLearner: gamma must be"):
        check_gamma("TDLearner", True)


# ---- types, choices, callables ----


def test_instance_of():
    value = [1]
    assert instance_of("Owner", "items", value, (list, tuple), "a list or a tuple") is value
    with pytest.raises(
        ArgumentTypeError, match=re.escape("Owner: items must be a list or a tuple, got int: 3")
    ):
        instance_of("Owner", "items", 3, (list, tuple), "a list or a tuple")


def test_exactly_one_of():
    assert exactly_one_of("Owner", a=None, b=0) == "b"  # 0 counts as given
    with pytest.raises(
        ValueError, match=re.escape("Owner: exactly one of a or b must be given, got none")
    ):
        exactly_one_of("Owner", a=None, b=None)
    with pytest.raises(
        ValueError, match=re.escape("Owner: exactly one of a or b must be given, got a=1, b=2")
    ):
        exactly_one_of("Owner", a=1, b=2)


def test_check_callable_and_callable_name():
    def f(x):
        return x

    assert check_callable("Owner", "f", f, "f(x)") is f
    with pytest.raises(
        ArgumentTypeError, match=re.escape("Owner: f must be callable as f(x), got int: 3")
    ):
        check_callable("Owner", "f", 3, "f(x)")
    assert callable_name(f).endswith("f")
    assert callable_name(print) == "print"

    class Callable:
        def __call__(self):
            return None

    assert callable_name(Callable()) == "Callable"


def test_every_public_check_is_tested_here():
    tested = {
        "ArgumentTypeError", "is_int", "is_real", "positive_int", "non_negative_int",
        "optional_positive_int", "int_at_least", "unit_interval", "finite_float", "instance_of",
        "exactly_one_of", "check_callable", "check_gamma", "callable_name", "not_a_class",
    }  # fmt: skip
    assert set(checks.__all__) == tested


def test_not_a_class():
    assert not_a_class("run", "hook", print) is print
    with pytest.raises(ArgumentTypeError, match=r"^run: hook must be an object, got the class dict "
                       r"itself; create one, e.g. dict\(\.\.\.\)"):
        not_a_class("run", "hook", dict)
