"""Checks of the hyperparameters the built policies share (``lr``, ``gamma``, ``gae_lambda``,
``clip_range``, ``hidden``, ...), run when a policy is constructed, so that a bad value is an
error naming the policy, the hyperparameter, what was expected and the value, before any
environment step (not a NaN loss, or a silently wrong run, thousands of steps later).

A hyperparameter that is a :class:`~rlkit.Schedule` is checked at its ends (step 0, the far end
and, for a :class:`~rlkit.PiecewiseSchedule`, every point); a decaying learning rate may reach 0.
Those fixed when the policy is made (``max_grad_norm``, ``target_kl``, ``hidden``, ...) refuse a
``Schedule``.
Names a policy does not have are not checked: a policy built with other meanings for its own
names is not constrained.

Example:
    >>> check_hyperparameters("PPO", {"lr": 3e-4, "gamma": 0.99, "clip_range": 0.2})
    >>> check_hyperparameters("PPO", {"gamma": 1.5})
    Traceback (most recent call last):
    ...
    ValueError: PPO: gamma must be a number in [0, 1], got 1.5
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from ..core.checks import ArgumentTypeError, finite_float, is_int, unit_interval
from ..schedules import PiecewiseSchedule, Schedule

__all__ = [
    "check_hyperparameters",
    "check_minibatches",
    "hidden_sizes",
    "layers_from_hidden",
    "reads_hidden",
    "schedule_ends",
]

_FAR = 10**15  # a step past the end of any schedule of a run


def _positive(owner: str, name: str, value: Any, schedule: bool) -> None:
    # a schedule may decay to 0 (rl-baselines3-zoo's lin_3e-4 ends at 0)
    finite_float(owner, name, value, low=0, low_open=not schedule)


def _non_negative(owner: str, name: str, value: Any, schedule: bool) -> None:
    finite_float(owner, name, value, low=0)


def _finite(owner: str, name: str, value: Any, schedule: bool) -> None:
    finite_float(owner, name, value)


def _unit(owner: str, name: str, value: Any, schedule: bool) -> None:
    unit_interval(owner, name, value)


def _flag(owner: str, name: str, value: Any, schedule: bool) -> None:
    if not isinstance(value, bool):
        raise ArgumentTypeError(f"{owner}: {name} must be True or False, got {value!r}")


def _hidden(owner: str, name: str, value: Any, schedule: bool) -> None:
    hidden_sizes(owner, value)


# name -> (check, may be None, may be a Schedule); checks take (owner, name, value, is a
# schedule's value). The schedulable ones are read through policy.hp at each update.
_CHECKS: dict[str, tuple[Callable[[str, str, Any, bool], None], bool, bool]] = {
    "lr": (_positive, False, True),
    "gamma": (_unit, False, True),
    "gae_lambda": (_unit, False, True),
    "clip_range": (_positive, False, True),
    "clip_range_vf": (_positive, True, True),
    "ent_coef": (_finite, False, True),
    "vf_coef": (_non_negative, False, True),
    "max_grad_norm": (_positive, True, False),
    "target_kl": (_positive, True, False),
    "normalize_advantage": (_flag, False, False),
    "log_std_init": (_finite, False, False),
    "hidden": (_hidden, False, False),
}


def schedule_ends(schedule: Schedule) -> list[float]:
    """The values a schedule's extremes can be: at step 0, at the far end, at each point."""
    values = [schedule(0), schedule(_FAR)]
    if isinstance(schedule, PiecewiseSchedule):
        values += [value for _, value in schedule.points]
    return values


def check_hyperparameters(owner: str, config: dict[str, Any]) -> None:
    """Check the hyperparameters of ``config`` that this module knows (module docstring)."""
    for name, value in config.items():
        if name not in _CHECKS:
            continue
        check, optional, schedulable = _CHECKS[name]
        if value is None and optional:
            continue
        if isinstance(value, Schedule) and not schedulable:
            raise ArgumentTypeError(
                f"{owner}: {name} cannot be a Schedule (it is fixed when the policy is made), "
                f"got {value!r}"
            )
        if isinstance(value, Schedule):
            for end in schedule_ends(value):
                check(owner, f"{name} (a {type(value).__name__})", end, True)
        else:
            check(owner, name, value, False)


def layers_from_hidden(model_fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark ``model_fn`` as one that builds its layers from the ``hidden`` hyperparameter (so a
    policy made with it checks ``hidden`` when it is made); rlkit's own model functions are
    marked. Returns ``model_fn`` itself."""
    model_fn.reads_hidden = True
    return model_fn


def reads_hidden(model_fn: Any) -> bool:
    """Whether ``model_fn`` builds its layers from ``hidden`` (:func:`layers_from_hidden`): a
    user's ``model_fn`` may give ``hidden`` any meaning, or none, and it is not checked.

    Example:
        >>> from rlkit.learners.policy_gradient.models import actor_critic_model
        >>> reads_hidden(actor_critic_model), reads_hidden(lambda *args: None)
        (True, False)
    """
    return getattr(model_fn, "reads_hidden", False) is True


def hidden_sizes(owner: str, hidden: Any) -> tuple[int, ...]:
    """``hidden`` as a tuple of layer widths: a sequence of positive integers (empty for a
    network without hidden layers), or one positive integer, one hidden layer.

    Example:
        >>> hidden_sizes("SAC", [64, 64])
        (64, 64)
        >>> hidden_sizes("PPO", 64)
        (64,)
        >>> hidden_sizes("TD3", (0,))
        Traceback (most recent call last):
        ...
        ValueError: TD3: hidden must be a sequence of positive integers such as (64, 64), or one such as 64, got (0,)
    """  # noqa: E501
    expected = "a sequence of positive integers such as (64, 64), or one such as 64"
    if is_int(hidden):  # one hidden layer
        hidden = (hidden,)
    if isinstance(hidden, (str, bytes)) or not isinstance(hidden, Sequence):
        raise ArgumentTypeError(f"{owner}: hidden must be {expected}, got {hidden!r}")
    if not all(is_int(width) for width in hidden):
        raise ArgumentTypeError(f"{owner}: hidden must be {expected}, got {hidden!r}")
    if not all(width >= 1 for width in hidden):
        raise ValueError(f"{owner}: hidden must be {expected}, got {hidden!r}")
    return tuple(int(width) for width in hidden)


def check_minibatches(owner: str, config: dict[str, Any], n_envs: int | None) -> None:
    """Stable-Baselines3's checks of PPO's minibatches (a policy without a ``batch_size``, or
    ``batch_size=None``, learns from the whole rollout and is not checked): ``batch_size`` > 1
    when advantages are normalised per minibatch (an error), and a warning when the rollout
    (``n_steps * n_envs`` transitions; ``n_envs`` None when unknown) is not a multiple of
    ``batch_size``: every epoch then ends with a shorter minibatch (a ``batch_size`` larger than
    the rollout gives one minibatch, the whole rollout).

    Example:
        >>> check_minibatches("PPO", {"n_steps": 64, "batch_size": 32}, 2)
    """
    batch_size = config.get("batch_size")
    if batch_size is None:
        return
    if config.get("normalize_advantage") and batch_size < 2:
        raise ValueError(
            f"{owner}: batch_size must be > 1 when normalize_advantage is True (advantages are "
            f"normalised per minibatch; as Stable-Baselines3), got {batch_size}"
        )
    if n_envs is None:
        return
    rollout = config["n_steps"] * n_envs
    if rollout % batch_size == 0:
        return
    if batch_size > rollout:
        what = f"is larger than the rollout of n_steps * n_envs = {config['n_steps']} * {n_envs}"
        epoch = f"one minibatch of {rollout}"
    else:
        what = f"does not divide the rollout of n_steps * n_envs = {config['n_steps']} * {n_envs}"
        full, rest = divmod(rollout, batch_size)
        epoch = f"{full} minibatch(es) of {batch_size} and one of {rest}"
    warnings.warn(
        f"{owner}: batch_size={batch_size} {what} = {rollout} transitions: each epoch is "
        f"{epoch} (as in Stable-Baselines3)",
        UserWarning,
        stacklevel=4,
    )
