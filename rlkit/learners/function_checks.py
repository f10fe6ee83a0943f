"""The checks of an algorithm's pure functions: their signatures when the class is built
(``rk.build_policy`` / ``with_updates``), what the model returns with one forward pass on a
placeholder observation when a run is planned (``rk.run``, ``rk.explain``), and that
``stats_fn`` and ``extra_action_out_fn`` return dicts.

Each error names the function, what it takes or returned and what was expected, so a wrong
function fails where it is given, not steps later inside torch ("mat1 and mat2 shapes cannot be
multiplied") or inside rlkit ("action 2 is outside Discrete(2)", "'list' object has no
attribute 'items'").
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from ..core.checks import check_callable
from ..policies.spaces import short_space
from .batch import fn_name

__all__ = [
    "PARAMETERS",
    "check_signature",
    "check_model_outputs",
    "check_dict_result",
]

# how rlkit calls each function: its positional arguments, in order
PARAMETERS: dict[str, tuple[str, ...]] = {
    "loss_fn": ("policy", "model", "dist_class", "batch"),
    "postprocess_fn": ("policy", "batch"),
    "stats_fn": ("policy", "batch"),
    "extra_action_out_fn": ("policy", "model", "dist", "obs", "actions"),
    "gradients_fn": ("params",),
    "model_fn": ("state_space", "action_space", "dist_class", "config", "seed"),
}


def call_text(key: str) -> str:
    """How rlkit calls the function ``key``: ``loss_fn(policy, model, dist_class, batch)``."""
    return f"{key}({', '.join(PARAMETERS[key])})"


def check_signature(owner: str, key: str, fn: Any, label: str | None = None) -> Any:
    """``fn`` itself if it is callable with the positional arguments rlkit passes to the
    function ``key`` (:data:`PARAMETERS`); else a ``TypeError`` naming the function, its
    signature and the call it must accept. A callable whose signature Python cannot read (a
    builtin) is accepted as it is.

    Example:
        >>> def my_loss(policy, batch):
        ...     return 0.0
        >>> check_signature("build_policy('Mine')", "loss_fn", my_loss)
        Traceback (most recent call last):
        ...
        TypeError: build_policy('Mine'): loss_fn my_loss(policy, batch) cannot be called as loss_fn(policy, model, dist_class, batch) (4 positional arguments): too many positional arguments
    """  # noqa: E501
    label = label or key
    check_callable(owner, label, fn, call_text(key))
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # no signature to read (a builtin, some C callables)
        return fn
    arguments = PARAMETERS[key]
    try:
        signature.bind(*arguments)
    except TypeError as error:
        name = getattr(fn, "__name__", type(fn).__name__)
        raise TypeError(
            f"{owner}: {label} {name}{signature} cannot be called as {call_text(key)} "
            f"({len(arguments)} positional arguments): {error}"
        ) from None
    return fn


def check_dict_result(owner: str, key: str, fn: Any, result: Any) -> Mapping:
    """``result`` if it is a dict (a ``Mapping``); else a ``TypeError`` naming the function and
    what it returned.

    Example:
        >>> check_dict_result("PPO", "stats_fn", len, [1.0])
        Traceback (most recent call last):
        ...
        TypeError: PPO: stats_fn builtins.len must return a dict of name -> value, got list: [1.0]
    """
    if not isinstance(result, Mapping):
        raise TypeError(
            f"{owner}: {key} {fn_name(fn)} must return a dict of name -> value, got "
            f"{type(result).__name__}: {result!r:.80}"
        )
    return result


def placeholder_observation(space: Any) -> np.ndarray | None:
    """One valid observation of ``space`` without drawing from its generator (the zeros of a
    ``Box`` clipped to its bounds; a ``Discrete``'s first value), or None for other spaces."""
    if isinstance(space, gym.spaces.Box):
        return np.clip(np.zeros(space.shape, np.float64), space.low, space.high)
    if isinstance(space, gym.spaces.Discrete):
        return np.asarray(space.start)
    return None


def _first_linear(model: torch.nn.Module) -> torch.nn.Linear | None:
    return next((m for m in model.modules() if isinstance(m, torch.nn.Linear)), None)


def check_model_outputs(policy: Any) -> None:
    """One forward pass of ``policy.model`` on a placeholder observation of its state space:
    the model must take it (a first ``Linear`` sized for another observation is named with the
    spaces, not as torch's "mat1 and mat2") and give ``dist_class.n_inputs(action_space)``
    numbers per observation. Torch's random generator and the model's training mode are left
    as they were (batch-norm statistics are not updated)."""
    cls = type(policy)
    owner, model = cls.name, policy.model
    observation = placeholder_observation(policy.state_space)
    if observation is None:
        return
    obs = policy.observation_tensor(observation[None])
    made_by = f"the model of model_fn {fn_name(cls.model_fn)}"
    training = model.training
    try:
        with torch.random.fork_rng(devices=[]), torch.no_grad():
            model.eval()
            try:
                inputs = model(obs)
            except RuntimeError as error:
                linear = _first_linear(model)
                takes = "" if linear is None else f"; its first Linear takes {linear.in_features}"
                raise ValueError(
                    f"{owner}: {made_by} cannot take one observation of the state space "
                    f"{short_space(policy.state_space)} (a tensor of shape {tuple(obs.shape)}: "
                    f"{int(np.prod(obs.shape[1:]))} features{takes}); torch says: {error}"
                ) from error
    finally:
        model.train(training)
    _check_inputs(policy, made_by, inputs)


def _check_inputs(policy: Any, made_by: str, inputs: Any) -> None:
    owner, dist_class = type(policy).name, policy.dist_class
    expected = dist_class.n_inputs(policy.action_space)
    if not isinstance(inputs, torch.Tensor):
        raise TypeError(
            f"{owner}: {made_by} must return a tensor of {expected} action-distribution "
            f"inputs per observation, got {type(inputs).__name__}"
        )
    if inputs.dim() != 2 or inputs.shape[-1] != expected:
        raise ValueError(
            f"{owner}: {made_by} returns {tuple(inputs.shape)} for a batch of one observation; "
            f"the {dist_class.__name__} of the action space {short_space(policy.action_space)} "
            f"needs "
            f"(1, {expected}): {expected} inputs per observation"
        )
