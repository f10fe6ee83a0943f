"""The settings of a ``torch.optim`` optimizer, checked before it is built: every number must be
finite, and the settings whose meaning bounds them must lie in their range.

``torch.optim`` checks a few settings (a negative ``momentum``), but lets nan and inf through
(``nan < 0`` is false): ``SGD(momentum=nan)`` or ``Adam(weight_decay=inf)`` turn every parameter
into nan at the first step. :func:`check_torch_settings` refuses them, naming the module, the
torch optimizer and the key, for every optimizer ``rk.optimizers.make`` and
``GradientDescent`` build.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ..core.checks import is_real

__all__ = ["SETTING_RANGES", "check_torch_settings"]

# key -> (low, high, low_open, high_open); a bound of None is open-ended. Each number of a
# tuple setting (betas, step_sizes, an Adafactor eps pair) must lie in the range.
SETTING_RANGES: dict[str, tuple[float | None, float | None, bool, bool]] = {
    "lr": (0.0, None, True, False),
    "weight_decay": (0.0, None, False, False),
    "momentum": (0.0, 1.0, False, False),
    "dampening": (0.0, 1.0, False, False),
    "betas": (0.0, 1.0, False, True),
    "eps": (0.0, None, False, False),
    "alpha": (0.0, None, False, False),
    "rho": (0.0, 1.0, False, False),
    "lr_decay": (0.0, None, False, False),
    "initial_accumulator_value": (0.0, None, False, False),
    "lambd": (0.0, None, False, False),
    "t0": (0.0, None, False, False),
    "momentum_decay": (0.0, None, False, False),
    "tolerance_grad": (0.0, None, False, False),
    "tolerance_change": (0.0, None, False, False),
    "step_sizes": (0.0, None, False, False),
}
# an optimizer whose setting has a narrower meaning than the key's usual one
_CLASS_RANGES: dict[tuple[str, str], tuple[float | None, float | None, bool, bool]] = {
    ("RMSprop", "alpha"): (0.0, 1.0, False, False),  # the smoothing constant
}


def _range_text(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    parts = []
    if low is not None:
        parts.append(f"{'>' if low_open else '>='} {low:g}")
    if high is not None:
        parts.append(f"{'<' if high_open else '<='} {high:g}")
    return "a finite number" + (f" {' and '.join(parts)}" if parts else "")


def _numbers(value: Any, name: str) -> list[tuple[str, float]]:
    """The numbers in a setting, with their names (``betas[1]``); None and other values are
    skipped (torch checks their types)."""
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        return [(name, float(value))]
    if is_real(value) or isinstance(value, np.ndarray) and value.ndim == 0:
        return [(name, float(value))]
    if isinstance(value, (tuple, list)):
        return [pair for i, v in enumerate(value) for pair in _numbers(v, f"{name}[{i}]")]
    return []


def check_torch_settings(owner: str, cls: Any, kwargs: dict[str, Any]) -> None:
    """Refuse a non-finite number in any setting, and a setting outside its range
    (:data:`SETTING_RANGES`), naming ``owner``, the torch optimizer and the key.

    Example:
        >>> import torch
        >>> check_torch_settings("GradientDescent", torch.optim.SGD, {"momentum": float("nan")})
        Traceback (most recent call last):
        ...
        ValueError: GradientDescent(torch.optim.SGD): momentum must be a finite number >= 0 and <= 1, got nan
    """  # noqa: E501
    name = getattr(cls, "__name__", None)
    where = f"{owner}(torch.optim.{name})" if isinstance(cls, type) else owner
    for key, value in kwargs.items():
        bounds = _CLASS_RANGES.get((name, key), SETTING_RANGES.get(key))
        for label, x in _numbers(value, key):
            expected = "a finite number" if bounds is None else _range_text(*bounds)
            bad = not math.isfinite(x)
            if bounds is not None and not bad:
                low, high, low_open, high_open = bounds
                bad = (low is not None and (x <= low if low_open else x < low)) or (
                    high is not None and (x >= high if high_open else x > high)
                )
            if bad:
                raise ValueError(f"{where}: {label} must be {expected}, got {x!r}")
