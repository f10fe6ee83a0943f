"""The conventions every recipe's parameters share (``rk.make_experiment(name, seed,
**params)``, ``rlkit run NAME --set NAME=VALUE``).

One name per concept across the recipes, the learners' names: ``lr`` (the learning rate; the
DQN recipes' former ``learning_rate`` still works, with a warning), ``hidden`` (the widths of the
hidden layers: ``hidden=64`` is one layer, ``hidden=(64, 64)`` or ``--set hidden=64,64`` two),
``total_steps`` (the budget in environment steps, ``--steps``; the tabular recipes count
``episodes`` and ``ES_CartPole`` ``generations``), ``n_envs`` (sub-environments stepped
together) and ``device`` (torch's device). A learning rate or a clip range may be a number or
rl-baselines3-zoo's ``"lin_<start>"``: linear from ``start`` to 0 over the run's
``total_steps``.

Example:
    >>> schedule_value("PPO_CartPole", "lr", "lin_1e-3", 1000)(500)
    0.0005
    >>> schedule_value("PPO_CartPole", "lr", 3e-4, 1000)
    0.0003
"""

from __future__ import annotations

import dataclasses
import importlib.util
from typing import Any

import rlkit as rk
from rlkit.core import checks

__all__ = [
    "LINEAR_PREFIX",
    "schedule_value",
    "check_schedule",
    "check_hidden",
    "check_device",
    "algorithm_fields",
]

#: rl-baselines3-zoo's notation of a linear decay to 0: ``"lin_1e-3"``
LINEAR_PREFIX = "lin_"


def _linear_start(owner: str, name: str, value: str) -> float:
    """The start of ``"lin_<start>"``; ``ValueError`` naming ``owner`` for anything else."""
    if value.startswith(LINEAR_PREFIX):
        try:
            return float(value.removeprefix(LINEAR_PREFIX))
        except ValueError:
            pass
    raise ValueError(
        f"{owner}: {name} must be a number or {LINEAR_PREFIX!r} followed by a number "
        f"(rl-baselines3-zoo's linear decay to 0 over the run, e.g. 'lin_1e-3'), got {value!r}"
    )


def check_schedule(owner: str, name: str, value: float | str) -> None:
    """Refuse a string that is not ``"lin_<number>"`` (numbers are the learner's to check).

    Example:
        >>> check_schedule("PPO_CartPole", "lr", "lin_3e-4")
        >>> check_schedule("PPO_CartPole", "lr", "3e-4")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: PPO_CartPole: lr must be a number or 'lin_' followed by a number ...
    """
    if isinstance(value, str):
        _linear_start(owner, name, value)


def schedule_value(owner: str, name: str, value: float | str, total_steps: int) -> Any:
    """``value`` as the learner takes it: a number as it is, ``"lin_<start>"`` as
    ``rk.LinearSchedule(start, 0.0, total_steps)``."""
    if isinstance(value, str):
        return rk.LinearSchedule(_linear_start(owner, name, value), 0.0, total_steps)
    return value


def check_hidden(owner: str, hidden: Any, *, allow_empty: bool = False) -> tuple[int, ...]:
    """``hidden`` as a tuple of layer widths, or ``ValueError`` naming ``owner``, the value and
    what is expected (``allow_empty``: a network without hidden layers is allowed).

    Example:
        >>> check_hidden("DQN_CartPole", (0,))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: DQN_CartPole: hidden lists the widths of the hidden layers, ... got 0
    """
    layers = tuple(hidden) if isinstance(hidden, (tuple, list)) else (hidden,)
    ok = all(checks.is_int(w) and w >= 1 for w in layers) and (allow_empty or layers)
    if not ok:
        shown = layers[0] if len(layers) == 1 else hidden
        empty = "" if not allow_empty else "; () for none"
        raise ValueError(
            f"{owner}: hidden lists the widths of the hidden layers, each a positive integer "
            f"(hidden=64 for one layer of 64, hidden=64,64 for two{empty}), got {shown!r}"
        )
    return tuple(int(w) for w in layers)


def check_device(owner: str, device: Any) -> None:
    """Refuse a device torch does not know, naming ``owner`` ('cuda' without a GPU is refused
    where the network is built, with its own message).

    Example:
        >>> check_device("TRPO_CartPole", "tpu")
        Traceback (most recent call last):
        ...
        ValueError: TRPO_CartPole: unknown device 'tpu'; expected 'cpu', 'cuda', 'cuda:N' or 'auto'
    """
    checks.instance_of(owner, "device", device, str, "a torch device name such as 'cpu'")
    if device == "auto" or importlib.util.find_spec("torch") is None:
        return  # without torch, building the recipe says what to install
    import torch

    try:
        torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(
            f"{owner}: unknown device {device!r}; expected 'cpu', 'cuda', 'cuda:N' or 'auto'"
        ) from None


def algorithm_fields(params: Any) -> dict[str, Any]:
    """The fields of a recipe's parameter dataclass that are its algorithm's hyperparameters:
    all but those named in its ``run_fields`` (the budget, the envs, the device).

    Example:
        >>> from dataclasses import dataclass
        >>> @dataclass(frozen=True)
        ... class Params:
        ...     total_steps: int = 1000
        ...     lr: float = 3e-4
        ...     run_fields = ("total_steps",)  # not a field: no annotation
        >>> algorithm_fields(Params())
        {'lr': 0.0003}
    """
    return {
        f.name: getattr(params, f.name)
        for f in dataclasses.fields(params)
        if f.name not in params.run_fields
    }
