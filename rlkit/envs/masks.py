"""Legal-action masks as environments report them: sb3-contrib's ``action_masks()`` method or
gymnasium's ``info["action_mask"]``, read and checked the same way by ``GymEnv`` and the vector
envs (docs/how-to/action-masks.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

__all__ = ["find_action_masks", "mask_size", "checked_mask"]


def find_action_masks(env: gym.Env) -> Callable[[], Any] | None:
    """The ``action_masks`` method of ``env`` or of a layer of its wrapper chain (outermost
    first: sb3-contrib's ``ActionMasker`` wrapper, or the environment itself), or None.

    Example:
        >>> import gymnasium as gym
        >>> find_action_masks(gym.make("CartPole-v1")) is None
        True
        >>> find_action_masks(gym.make("rlkit/InvalidActionGrid-v0"))().tolist()
        [False, False, True, False]
    """
    layer = env
    while True:
        method = getattr(type(layer), "action_masks", None)
        if callable(method):
            return layer.action_masks
        if not isinstance(layer, gym.Wrapper):
            return None
        layer = layer.env


def mask_size(space: gym.Space) -> int | None:
    """How many entries a legal-action mask of ``space`` has (``Discrete``: ``n``;
    ``MultiDiscrete``: the sum of ``nvec``, one block per dimension), or None for spaces that
    rlkit does not mask (then any length is taken as it is).

    Example:
        >>> import gymnasium as gym
        >>> mask_size(gym.spaces.Discrete(4)), mask_size(gym.spaces.MultiDiscrete([2, 3]))
        (4, 5)
    """
    if isinstance(space, gym.spaces.Discrete):
        return int(space.n)
    if isinstance(space, gym.spaces.MultiDiscrete):
        return int(np.sum(space.nvec))
    return None


def checked_mask(where: str, raw: Any, size: int | None, terminal: bool) -> np.ndarray:
    """``raw`` as a boolean mask, refused with a ``ValueError`` naming ``where`` (the env and
    the step) when it has not ``size`` entries or, unless the state is ``terminal`` (nothing
    acts there), when it marks no action legal.

    Example:
        >>> checked_mask("env at reset", [1, 0, 1], 3, False).tolist()
        [True, False, True]
        >>> try:
        ...     checked_mask("env after step 4", [0, 0], 3, False)
        ... except ValueError as error:
        ...     print(str(error)[:60])
        env after step 4: the legal-action mask has 2 entries, expec
    """
    mask = np.asarray(raw)
    if mask.dtype != np.bool_:
        mask = mask.astype(bool)
    if size is not None and mask.shape != (size,):
        raise ValueError(
            f"{where}: the legal-action mask has {_entries(mask)}, expected {size} (one per "
            f"action of the action space)"
        )
    if not terminal and mask.size and not mask.any():
        raise ValueError(
            f"{where}: the legal-action mask marks no action legal in a state that is not "
            f"terminal; expected at least one legal action (got {mask.astype(int).tolist()})"
        )
    return mask


def _entries(mask: np.ndarray) -> str:
    return f"{mask.size} entries" if mask.ndim == 1 else f"shape {mask.shape}"
