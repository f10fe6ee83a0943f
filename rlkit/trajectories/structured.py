"""Structured observations (``Dict`` and ``Tuple`` spaces) as dicts of arrays.

Replay, rollouts and batches keep an observation of a ``gymnasium.spaces.Dict`` as a dict of
arrays by key, and one of a ``Tuple`` space as a dict of arrays by position (``0``, ``1``, ...),
never as numpy object arrays; nested ``Dict``/``Tuple`` spaces give nested dicts. The keys are
the space's own order: gymnasium's ``Dict`` sorts the keys of a plain dict when it is made (an
``OrderedDict`` keeps its order), so ``{"pos": ..., "angle": ...}`` is stored and encoded as
``angle``, ``pos`` (the order ``gymnasium.wrappers.FlattenObservation`` concatenates them in).

:func:`structured` checks an observation against its space (an observation whose keys differ
from the space's is refused, naming both) and returns it as a dict of numpy arrays;
:class:`StructuredArray` is the preallocated storage of a replay buffer for such observations.

Example:
    >>> import gymnasium as gym, numpy as np
    >>> space = gym.spaces.Dict({"pos": gym.spaces.Box(-1, 1, (2,)), "n": gym.spaces.Discrete(3)})
    >>> obs = structured("env", space, {"pos": np.zeros(2), "n": 1})
    >>> list(obs), obs["pos"].shape
    (['n', 'pos'], (2,))
    >>> store = StructuredArray.zeros(space, (5,))
    >>> store[1] = obs
    >>> store[np.array([1, 0])]["n"].tolist()
    [1, 0]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np

__all__ = [
    "is_structured_space",
    "space_keys",
    "structured",
    "leaf_layout",
    "StructuredArray",
    "map_leaves",
    "leading_length",
]


def is_structured_space(space: Any) -> bool:
    """Whether ``space`` is a ``Dict`` or ``Tuple`` space (observations held as dicts).

    Example:
        >>> import gymnasium as gym
        >>> is_structured_space(gym.spaces.Tuple([gym.spaces.Discrete(2)]))
        True
        >>> is_structured_space(gym.spaces.Box(-1, 1, (2,)))
        False
    """
    return isinstance(space, (gym.spaces.Dict, gym.spaces.Tuple))


def space_keys(space: gym.spaces.Dict | gym.spaces.Tuple) -> list[Any]:
    """The keys of a ``Dict`` space in its order (gymnasium sorts a plain dict's keys), the
    positions ``0 .. n - 1`` of a ``Tuple``'s entries.

    Example:
        >>> import gymnasium as gym
        >>> space_keys(gym.spaces.Dict({"b": gym.spaces.Discrete(2), "a": gym.spaces.Discrete(2)}))
        ['a', 'b']
    """
    if isinstance(space, gym.spaces.Dict):
        return list(space.spaces)
    return list(range(len(space.spaces)))


def _entries(owner: str, space: Any, obs: Any) -> list[tuple[Any, Any, Any]]:
    """``(key, subspace, value)`` per key of ``space``; keys that differ are refused."""
    keys = space_keys(space)
    if isinstance(space, gym.spaces.Dict):
        if not isinstance(obs, Mapping):
            raise TypeError(
                f"{owner}: an observation of the Dict space {space} must be a dict with keys "
                f"{keys}, got {type(obs).__name__}: {obs!r:.80}"
            )
        if set(obs) != set(keys):
            missing = [k for k in keys if k not in obs]
            extra = sorted((k for k in obs if k not in space.spaces), key=str)
            raise ValueError(
                f"{owner}: the observation's keys {sorted(obs, key=str)} differ from the Dict "
                f"space's keys {keys} (missing: {missing}, not in the space: {extra}); the env "
                f"must return observations of its observation_space"
            )
        return [(k, space.spaces[k], obs[k]) for k in keys]
    values = list(obs.values()) if isinstance(obs, Mapping) else obs
    if isinstance(obs, Mapping) and list(obs) != keys:
        raise ValueError(
            f"{owner}: the observation's keys {list(obs)} differ from the Tuple space's "
            f"positions {keys}"
        )
    if not isinstance(values, (list, tuple)) or len(values) != len(keys):
        raise ValueError(
            f"{owner}: an observation of the Tuple space {space} must be a tuple of "
            f"{len(keys)} entries, got {obs!r:.80}"
        )
    return list(zip(keys, space.spaces, values, strict=True))


def structured(owner: str, space: Any, obs: Any) -> Any:
    """``obs`` (one observation or a batch of them) as nested dicts of numpy arrays, keyed as
    ``space`` is (see the module docstring); the leaves are ``np.asarray`` of what was given.
    A ``Box``/``Discrete``/... space gives ``np.asarray(obs)``. Keys that differ from the
    space's are a ``ValueError`` naming both.

    Example:
        >>> import gymnasium as gym
        >>> space = gym.spaces.Dict({"a": gym.spaces.Discrete(2)})
        >>> structured("PPO", space, {"b": 1})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: PPO: the observation's keys ['b'] differ from the Dict space's keys ['a'] ...
    """
    if not is_structured_space(space):
        return np.asarray(obs)
    return {key: structured(owner, sub, value) for key, sub, value in _entries(owner, space, obs)}


def leaf_layout(space: Any) -> tuple[tuple[int, ...], np.dtype]:
    """``(shape, dtype)`` of one observation of a non-structured space in storage: a ``Box``
    keeps its dtype (``uint8`` images stay ``uint8``; float ones are float32), ``Discrete``
    is int64 of shape ``()``, ``MultiDiscrete`` int64, ``MultiBinary`` int8.

    Example:
        >>> import gymnasium as gym
        >>> leaf_layout(gym.spaces.Discrete(4))
        ((), dtype('int64'))
    """
    if isinstance(space, gym.spaces.Box):
        dtype = np.dtype(space.dtype)
        return tuple(space.shape), dtype if dtype.kind in "iub" else np.dtype(np.float32)
    if isinstance(space, gym.spaces.Discrete):
        return (), np.dtype(np.int64)
    if isinstance(space, gym.spaces.MultiDiscrete):
        return tuple(space.shape), np.dtype(np.int64)
    if isinstance(space, gym.spaces.MultiBinary):
        return tuple(np.atleast_1d(space.shape)), np.dtype(np.int8)
    raise TypeError(
        f"no array layout for the observation space {space}; expected Box, Discrete, "
        f"MultiDiscrete, MultiBinary, or a Dict or Tuple of them"
    )


def map_leaves(fn: Any, value: Any) -> Any:
    """``fn`` applied to every array of nested dicts (a plain array: to it).

    Example:
        >>> import numpy as np
        >>> map_leaves(lambda a: a * 2, {"a": np.ones(2), "b": {"c": np.ones(1)}})["b"]["c"]
        array([2.])
    """
    if isinstance(value, Mapping):
        return {k: map_leaves(fn, v) for k, v in value.items()}
    return fn(value)


def leading_length(value: Any) -> int:
    """The length of the first dimension of an array, or of the first leaf of nested dicts.

    Example:
        >>> import numpy as np
        >>> leading_length({"a": np.zeros((3, 2))})
        3
    """
    while isinstance(value, Mapping):
        value = next(iter(value.values()))
    return len(value)


class StructuredArray:
    """Preallocated arrays for observations of a ``Dict`` or ``Tuple`` space: one numpy array
    ``(*leading, *shape)`` per key (nested for nested spaces), indexed like one array by rows.

    ``store[index]`` is a dict of the rows ``index`` of every array (views for slices,
    copies for index arrays, as numpy gives them); ``store[index] = obs`` writes a dict
    (or a tuple, for a ``Tuple`` space) of rows, refusing other keys by name;
    ``store.arrays`` are the arrays by key.

    Example:
        >>> import gymnasium as gym, numpy as np
        >>> space = gym.spaces.Tuple([gym.spaces.Discrete(3), gym.spaces.Box(0, 1, (2,))])
        >>> store = StructuredArray.zeros(space, (4,))
        >>> store[0:2] = (np.array([2, 1]), np.ones((2, 2)))
        >>> store[0:2][0].tolist(), store.shape
        ([2, 1], (4,))
    """

    def __init__(self, space: Any, arrays: dict[Any, Any], owner: str = "StructuredArray"):
        self.space = space
        self.arrays = arrays
        self.owner = owner

    @classmethod
    def zeros(
        cls, space: Any, leading: tuple[int, ...], owner: str = "StructuredArray"
    ) -> StructuredArray:
        """Zero arrays of shape ``(*leading, *leaf_shape)`` for every key of ``space``."""
        arrays: dict[Any, Any] = {}
        for key, sub in zip(space_keys(space), _subspaces(space), strict=True):
            if is_structured_space(sub):
                arrays[key] = cls.zeros(sub, leading, owner)
            else:
                shape, dtype = leaf_layout(sub)
                arrays[key] = np.zeros((*leading, *shape), dtype)
        return cls(space, arrays, owner)

    @property
    def shape(self) -> tuple[int, ...]:
        """The leading (row) dimensions shared by every array."""
        first = next(iter(self.arrays.values()))
        return first.shape if isinstance(first, StructuredArray) else first.shape[:1]

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, index: Any) -> dict[Any, Any]:
        if type(index) is np.ndarray and index.ndim == 1 and index.dtype.kind == "i":
            # rows by position (a replay's batch): ``take`` gathers the same rows as ``v[index]``
            # (out-of-range positions raise too) at about a third of the cost
            return {
                k: v[index] if isinstance(v, StructuredArray) else v.take(index, axis=0)
                for k, v in self.arrays.items()
            }
        return {k: v[index] for k, v in self.arrays.items()}

    def __setitem__(self, index: Any, value: Any) -> None:
        for key, _, part in _entries(self.owner, self.space, value):
            self.arrays[key][index] = part

    def fill(self, value: Any) -> None:
        """Fill every array with ``value``."""
        for array in self.arrays.values():
            array.fill(value)

    def any(self) -> bool:
        """Whether any element of any array is nonzero."""
        return any(bool(array.any()) for array in self.arrays.values())

    def copy(self) -> dict[Any, Any]:
        """A nested dict of copies of the arrays (what checkpoints save)."""
        return {k: v.copy() for k, v in self.arrays.items()}

    def load(self, rows: int, saved: Any) -> None:
        """Write a saved nested dict (:meth:`copy` of the first ``rows`` rows) into the
        first ``rows`` rows and zero the rest, after checking every key and shape."""
        self.check_saved(rows, saved)
        for key, array in self.arrays.items():
            if isinstance(array, StructuredArray):
                array.load(rows, saved[key])
            else:
                array[:rows] = saved[key]
                array[rows:] = 0

    def check_saved(self, rows: int, saved: Any) -> None:
        """Refuse a saved nested dict whose keys or shapes are not these arrays'."""
        if not isinstance(saved, Mapping) or set(saved) != set(self.arrays):
            got = sorted(saved, key=str) if isinstance(saved, Mapping) else type(saved).__name__
            raise ValueError(
                f"{self.owner}: checkpoint observations have keys {got}, this buffer "
                f"{list(self.arrays)}"
            )
        for key, array in self.arrays.items():
            if isinstance(array, StructuredArray):
                array.check_saved(rows, saved[key])
                continue
            got_shape = np.shape(saved[key])
            expected = (rows, *array.shape[1:])
            if got_shape != expected:
                raise ValueError(
                    f"{self.owner}: checkpoint observations under key {key!r} have shape "
                    f"{got_shape}, expected {expected}"
                )


def _subspaces(space: Any) -> list[Any]:
    if isinstance(space, gym.spaces.Dict):
        return list(space.spaces.values())
    return list(space.spaces)
