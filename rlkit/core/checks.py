"""Argument checks shared by rlkit's components (messages name the owner, the value and what was
expected)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["check_gamma"]


def check_gamma(owner: str, gamma: Any) -> float:
    """A discount factor: a real number in [0, 1].

    Raises ``TypeError`` for anything that is not a real number (bools included) and
    ``ValueError`` for a number outside [0, 1] (or NaN), both naming ``owner`` and the value.

    Example:
        >>> check_gamma("TDLearner", 0.9)
        0.9
    """
    if isinstance(gamma, bool) or not isinstance(gamma, (int, float, np.integer, np.floating)):
        raise TypeError(f"{owner}: gamma must be a number in [0, 1], got {gamma!r}")
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"{owner}: gamma must be in [0, 1], got {gamma!r}")
    return float(gamma)
