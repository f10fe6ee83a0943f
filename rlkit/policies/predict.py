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

from ..trajectories.structured import is_structured_space, leading_length, map_leaves, structured

__all__ = [
    "observation_batch",
    "mask_batch",
    "single_or_batch",
    "predicted_draw",
    "masked_argmax",
    "ObservationBatch",
]


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
    if is_structured_space(space):
        return _structured_batch(owner, obs, space)
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


class ObservationBatch(dict):
    """A batch of ``Dict``/``Tuple`` observations: arrays by key (nested), whose ``len`` is
    the number of observations (not of keys)."""

    def __len__(self) -> int:
        return leading_length(dict(self)) if dict.__len__(self) else 0


def _leaf_pairs(value: Any, space: Any) -> list[tuple[np.ndarray, tuple[int, ...]]]:
    if is_structured_space(space):
        subspaces = space.spaces.values() if isinstance(space, gym.spaces.Dict) else space.spaces
        return [pair for v, sub in zip(value.values(), subspaces, strict=True)
                for pair in _leaf_pairs(v, sub)]  # fmt: skip
    return [(value, _state_shape(space))]


def _structured_batch(owner: str, obs: Any, space: Any) -> tuple[ObservationBatch, bool]:
    """A ``Dict``/``Tuple`` observation (or a batch of them: every array with one more leading
    dimension, of the same length) as an :class:`ObservationBatch`, and whether it was one."""
    value = structured(f"{owner}.predict", space, obs)
    pairs = _leaf_pairs(value, space)
    if all(a.shape == shape for a, shape in pairs):
        return ObservationBatch(map_leaves(lambda a: a[None], value)), True
    batched = all(a.ndim == len(shape) + 1 and a.shape[1:] == shape for a, shape in pairs)
    if batched and len({a.shape[0] for a, _ in pairs}) == 1:
        return ObservationBatch(value), False
    got = [(tuple(a.shape), shape) for a, shape in pairs]
    raise ValueError(
        f"{owner}.predict: every array of a {type(space).__name__} observation must have its "
        f"space's shape (one observation) or one more leading dimension of the same length (a "
        f"batch); got (shape, space shape) per key {got}"
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


def predicted_draw(policy: Any, dist: Any, deterministic: bool) -> Any:
    """``predict``'s actions from ``dist``: its mode, or a sample from the policy's own predict
    generator (seeded 0 on first use, apart from the generators training draws from)."""
    if deterministic:
        return dist.mode()
    generator = policy.__dict__.get("_predict_generator")
    if generator is None:
        import torch  # here: the module serves tabular policies without torch too

        generator = policy._predict_generator = torch.Generator().manual_seed(0)
    return dist.sample(generator)


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
