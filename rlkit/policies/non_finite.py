"""What a stochastic policy says when it cannot act because a number is nan or inf: which
observation (its values, the env and the sub-env it came from), or, for a finite observation,
that the model's outputs are not finite.

Without it torch answers from deep inside the sampling ("probability tensor contains either
inf, nan or element < 0"), naming neither the observation nor the environment.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

__all__ = ["NonFiniteObservationError", "cannot_act"]


class NonFiniteObservationError(ValueError):
    """A policy was given an observation holding nan or inf (or its model gave non-finite
    distribution inputs); the message names the observation, the env and the sub-env.

    Example:
        >>> import torch, rlkit as rk
        >>> env = rk.GymEnv("CartPole-v1")
        >>> error = cannot_act("PPO", torch.tensor([[0.0, float("nan")]]), env, False)
        >>> print(error)  # doctest: +NORMALIZE_WHITESPACE
        PPO: cannot act on a non-finite observation: env.state = [ 0. nan] of GymEnv(CartPole-v1)
        (nan at index (1,)). Check the environment (its reset and step) for nan/inf
        observations (gymnasium.utils.env_checker.check_env, or
        gymnasium.wrappers.PassiveEnvChecker, shows where they start)
    """


def _where(values: np.ndarray) -> str:
    bad = np.argwhere(~np.isfinite(values))
    shown = ", ".join(f"{values[tuple(i)]} at index {tuple(int(j) for j in i)}" for i in bad[:3])
    more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
    return f"{shown}{more}"


def cannot_act(owner: str, obs: torch.Tensor, env: Any, vector: bool) -> NonFiniteObservationError:
    """The error for a policy that could not act on the batch ``obs`` from ``env``: the first
    non-finite observation (the sub-env's index for a vector env), or the model's fault when
    every observation is finite."""
    values = obs.detach().cpu().numpy()
    flat = values.reshape(len(values), -1)
    rows = np.flatnonzero(~np.isfinite(flat).all(axis=1))
    if len(rows) == 0:
        return NonFiniteObservationError(
            f"{owner}: the model's action-distribution inputs are nan or inf for finite "
            f"observations of {env!r}: are the policy's parameters finite? (a checkpoint or a "
            f"learning step that made them nan)"
        )
    row = int(rows[0])
    with np.printoptions(threshold=12, edgeitems=3, precision=4):
        shown = str(values[row])
    where = f"env.state[{row}] (sub-env {row} of {len(values)})" if vector else "env.state"
    others = f"; {len(rows) - 1} other sub-env(s) too" if len(rows) > 1 else ""
    return NonFiniteObservationError(
        f"{owner}: cannot act on a non-finite observation: {where} = {shown} of {env!r} "
        f"({_where(values[row])}{others}). Check the environment (its reset and step) for "
        f"nan/inf observations (gymnasium.utils.env_checker.check_env, or "
        f"gymnasium.wrappers.PassiveEnvChecker, shows where they start)"
    )
