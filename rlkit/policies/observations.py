"""Observations as the networks take them: batches of tensors, through ``Dict``/``Tuple``.

A ``Box``/``Discrete``/... observation becomes one float32 tensor; an observation of a
``Dict`` or ``Tuple`` space (:mod:`rlkit.trajectories.structured`) a dict of float32 tensors by
key (``Tuple``: by position), checked against the policy's space, so an env whose observation
keys differ from its space is refused naming both sets of keys. ``uint8`` images inside a dict
become floats holding the same values (the CNN scales them inside).

Example:
    >>> import gymnasium as gym, numpy as np, torch
    >>> space = gym.spaces.Dict({"a": gym.spaces.Discrete(2), "b": gym.spaces.Box(0, 1, (2,))})
    >>> obs = observation_tensor("PPO", {"a": np.array([1]), "b": np.ones((1, 2))},
    ...                          torch.device("cpu"), space)
    >>> {k: tuple(v.shape) for k, v in obs.items()}
    {'a': (1,), 'b': (1, 2)}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from ..trajectories.structured import is_structured_space, map_leaves, structured

__all__ = ["observation_tensor", "one_row", "all_finite", "flat_rows", "is_structured"]


def is_structured(state: Any) -> bool:
    """Whether an observation (or a batch) is a dict or tuple of arrays."""
    return isinstance(state, (Mapping, tuple))


def _is_structured(state: Any, space: Any) -> bool:
    """A Dict/Tuple observation: by its space when known (a Box observation given as a tuple
    of numbers is an array), else by its type."""
    return is_structured_space(space) if space is not None else is_structured(state)


def one_row(state: Any, space: Any = None) -> Any:
    """A single env's observation as a batch of one (a leading dimension on every array).

    Example:
        >>> import numpy as np
        >>> one_row(np.zeros(4)).shape, one_row({"a": np.zeros(2)})["a"].shape
        ((1, 4), (1, 2))
    """
    if _is_structured(state, space):
        rows = structured("observation", space, state) if space is not None else state
        if isinstance(rows, tuple):
            rows = dict(enumerate(rows))
        return map_leaves(lambda a: np.asarray(a)[None], rows)
    return np.asarray(state)[None]


def observation_tensor(owner: str, state: Any, device: torch.device, space: Any = None) -> Any:
    """A batch of observations as a float32 tensor on ``device``, or nested dicts of them for
    a ``Dict``/``Tuple`` observation (checked against ``space`` when given: other keys are a
    ``ValueError`` naming ``owner`` and both sets of keys).

    Example:
        >>> import numpy as np, torch
        >>> observation_tensor("PPO", np.zeros((2, 3)), torch.device("cpu")).dtype
        torch.float32
    """
    if _is_structured(state, space):
        if space is not None:
            state = structured(owner, space, state)
        elif isinstance(state, tuple):
            state = dict(enumerate(state))
        return map_leaves(lambda a: _tensor(owner, a, device), state)
    return _tensor(owner, state, device)


def _tensor(owner: str, state: Any, device: torch.device) -> torch.Tensor:
    if isinstance(state, torch.Tensor):
        return state.to(device=device, dtype=torch.float32)
    try:
        return torch.as_tensor(np.asarray(state), dtype=torch.float32, device=device)
    except TypeError as error:  # e.g. the None state of an env that was never reset
        raise TypeError(
            f"{owner}: cannot act on the observation {state!r:.80}; an env has no observation "
            f"before env.reset()"
        ) from error


def flat_rows(obs: Any) -> torch.Tensor:
    """A batch of observations as one ``(N, features)`` tensor (a dict's leaves flattened and
    concatenated in key order): what error messages show of an observation.

    Example:
        >>> import torch
        >>> flat_rows({"a": torch.zeros(2, 3), "b": torch.ones(2)}).shape
        torch.Size([2, 4])
    """
    if isinstance(obs, Mapping):
        return torch.cat([_flat(v) for v in obs.values()], dim=1)
    return obs


def _flat(obs: Any) -> torch.Tensor:
    if isinstance(obs, Mapping):
        return torch.cat([_flat(v) for v in obs.values()], dim=1)
    return obs.reshape(obs.shape[0], -1)


def all_finite(obs: Any) -> bool:
    """Whether every number of a batch of observations (nested dicts too) is finite.

    Example:
        >>> import torch
        >>> all_finite({"a": torch.zeros(1, 2)}), all_finite(torch.tensor([float("nan")]))
        (True, False)
    """
    if isinstance(obs, Mapping):
        return all(all_finite(v) for v in obs.values())
    return bool(torch.isfinite(obs).all())
