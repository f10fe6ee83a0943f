"""What ``policy.predict(obs, deterministic=True, action_masks=None)`` shares between policies:
telling one observation from a batch, and the legal-action masks.

``predict`` follows Stable-Baselines3's ``model.predict`` on plain numpy observations: an
observation of the observation space's shape gives one action (a 0-d int64 array for
``Discrete``, an array of the action shape for ``Box``); a batch (one more leading dimension)
gives a batch of actions. It differs from SB3 in returning the actions only, not the pair
``(actions, recurrent_state)`` (rlkit's policies have no recurrent state), and in never
needing an env (SB3's does not either).

Example:
    >>> import gymnasium as gym, numpy as np
    >>> space = gym.spaces.Box(-1, 1, (4,))
    >>> batch, single = observation_batch("P", np.zeros(4), space)
    >>> batch.shape, single
    ((1, 4), True)
    >>> mask_batch("P", None, 1, 2) is None
    True
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

__all__ = ["observation_batch", "mask_batch", "single_or_batch", "masked_argmax"]


def _state_shape(space: Any) -> tuple[int, ...]:
    if isinstance(space, gym.spaces.Discrete):
        return ()
    shape = getattr(space, "shape", None)
    if shape is None:
        raise TypeError(f"predict: observations of {space} are not supported (no shape)")
    return tuple(shape)


def observation_batch(owner: str, obs: Any, space: Any) -> tuple[np.ndarray, bool]:
    """``(batch, single)``: ``obs`` with a leading batch dimension, and whether it was one
    observation. The shape decides, as in SB3: ``space.shape`` is one observation,
    ``(n, *space.shape)`` a batch; anything else is refused naming both shapes."""
    array = np.asarray(obs)
    shape = _state_shape(space)
    if array.shape == shape:
        return array[None], True
    if array.ndim == len(shape) + 1 and array.shape[1:] == shape:
        return array, False
    raise ValueError(
        f"{owner}.predict: observations must have shape {shape} (one) or (n, *{shape}) (a "
        f"batch) for the observation space {space}, got shape {array.shape}"
    )


def mask_batch(owner: str, action_masks: Any, n: int, n_actions: int | None) -> np.ndarray | None:
    """The legal-action masks as a boolean ``(n, n_actions)`` array (None: every action is
    legal). One mask for one observation may be given without the batch dimension."""
    if action_masks is None:
        return None
    masks = np.asarray(action_masks)
    if masks.dtype != np.bool_:
        raise ValueError(
            f"{owner}.predict: action_masks must be a boolean array, got dtype {masks.dtype}"
        )
    if n_actions is None:
        raise ValueError(
            f"{owner}.predict: action_masks are only for Discrete action spaces (legal actions)"
        )
    if masks.ndim == 1:
        masks = masks[None]
    if masks.shape != (n, n_actions):
        raise ValueError(
            f"{owner}.predict: action_masks must have shape ({n_actions},) or ({n}, "
            f"{n_actions}) for {n} observation(s), got {np.asarray(action_masks).shape}"
        )
    if not masks.any(axis=1).all():
        raise ValueError(f"{owner}.predict: a mask of action_masks marks no action legal")
    return masks


def single_or_batch(actions: np.ndarray, single: bool) -> np.ndarray:
    """The first row for one observation (a 0-d array for Discrete actions), else the batch."""
    return actions[0, ...] if single else actions  # a 0-d array for one Discrete action


def masked_argmax(values: np.ndarray, masks: np.ndarray | None) -> np.ndarray:
    """The first maximal legal action of each row (int64), as ``numpy.argmax`` and ONNX's
    ``ArgMax`` break ties.

    Example:
        >>> masked_argmax(np.array([[1.0, 3.0, 3.0]]), np.array([[True, False, True]]))
        array([2])
    """
    values = np.asarray(values, dtype=np.float64)
    if masks is not None:
        values = np.where(masks, values, -np.inf)
    return values.argmax(axis=-1).astype(np.int64)
