"""The model settings MBPO and PETS share, checked at construction, and the model they make
from them (an :class:`~rlkit.EnsembleDynamicsModel`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ...approximators.dynamics import EnsembleDynamicsModel, check_model_fn
from ...core.checks import finite_float, optional_positive_int, positive_int
from ..hyperparameters import hidden_sizes

__all__ = ["check_model_settings", "make_dynamics"]


def check_model_settings(owner: str, c: dict[str, Any]) -> tuple[int, ...]:
    """Refuse bad model settings in ``c`` naming ``owner``; the model's hidden layer widths.

    Example:
        >>> check_model_settings("PETS", {"ensemble_size": 2, "n_elites": 5})
        Traceback (most recent call last):
        ...
        ValueError: PETS: ensemble_size 2 is below n_elites 5; the elites are chosen among the members (give ensemble_size >= n_elites)
    """  # noqa: E501
    positive_int(owner, "ensemble_size", c["ensemble_size"])
    positive_int(owner, "n_elites", c["n_elites"])
    if c["ensemble_size"] < c["n_elites"]:
        raise ValueError(
            f"{owner}: ensemble_size {c['ensemble_size']} is below n_elites {c['n_elites']}; "
            f"the elites are chosen among the members (give ensemble_size >= n_elites)"
        )
    hidden = hidden_sizes(owner, c["model_hidden"])
    if not hidden:
        raise ValueError(
            f"{owner}: model_hidden must have at least one hidden layer, got {c['model_hidden']!r}"
        )
    positive_int(owner, "model_batch_size", c["model_batch_size"])
    positive_int(owner, "max_epochs_since_update", c["max_epochs_since_update"])
    positive_int(owner, "model_train_freq", c["model_train_freq"])
    finite_float(owner, "model_lr", c["model_lr"], low=0, low_open=True)
    finite_float(owner, "model_holdout_ratio", c["model_holdout_ratio"], low=0, high=1,
                 low_open=True)  # fmt: skip
    optional_positive_int(owner, "model_max_epochs", c["model_max_epochs"])
    check_model_fn(owner, "reward_fn", c["reward_fn"])
    check_model_fn(owner, "termination_fn", c["termination_fn"])
    return hidden


def make_dynamics(
    owner: str,
    state_space: Any,
    action_space: Any,
    c: dict[str, Any],
    seed: np.random.SeedSequence,
    device: torch.device,
) -> EnsembleDynamicsModel:
    """The ensemble the settings ``c`` describe (checked by :func:`check_model_settings`)."""
    return EnsembleDynamicsModel(
        state_space,
        action_space,
        ensemble_size=c["ensemble_size"],
        n_elites=c["n_elites"],
        hidden=check_model_settings(owner, c),
        lr=c["model_lr"],
        batch_size=c["model_batch_size"],
        holdout_ratio=c["model_holdout_ratio"],
        max_epochs=c["model_max_epochs"],
        max_epochs_since_update=c["max_epochs_since_update"],
        reward_fn=c["reward_fn"],
        termination_fn=c["termination_fn"],
        seed=seed,
        device=device,
    )
