"""``Dict`` and ``Tuple`` observations in an ``rk.Dataset``: dicts of arrays by key.

A dataset of a ``Dict`` observation space holds ``observations`` and ``next_observations`` as
dicts of arrays by key (a ``Tuple``'s: by position ``0, 1, ...``; nested spaces nest), one row
per transition in every array, as replay buffers hold them (``rlkit/trajectories/structured.py``:
``uint8`` image keys stay ``uint8``, float keys are float32, ``Discrete`` keys int64), never
numpy object arrays. This module has what :mod:`rlkit.trajectories.dataset` needs for them:

* :func:`space_json` / :func:`space_from_json`: the spaces as JSON, ``Dict`` and ``Tuple``
  (nested) around the four kinds of ``rlkit.core.spaces``;
* :func:`structured_rows`: observations checked against the space (keys that differ are
  refused naming both, each key's rows its shape) as nested dicts of arrays;
* :func:`leaf_items` / :func:`from_leaf_items`: the arrays in the space's key order as
  ``(path, array)`` pairs and back (how the ``.npz`` file stores them: ``observations/0``,
  ``observations/1``, ... in that order).

Example:
    >>> import gymnasium as gym, numpy as np
    >>> space = gym.spaces.Dict({"pos": gym.spaces.Box(-1, 1, (2,)), "n": gym.spaces.Discrete(3)})
    >>> space_from_json(space_json(space, "Dataset"), "Dataset") == space
    True
    >>> rows = structured_rows("observations", {"pos": np.zeros((4, 2)), "n": [0, 1, 2, 0]}, space)
    >>> {k: (v.shape, v.dtype.name) for k, v in rows.items()}
    {'n': ((4,), 'int64'), 'pos': ((4, 2), 'float32')}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from ..core import spaces as core_spaces
from .structured import is_structured_space, leaf_layout, space_keys, structured

__all__ = [
    "space_json",
    "space_from_json",
    "structured_rows",
    "leaf_items",
    "from_leaf_items",
    "subspaces",
    "count_leaves",
]


def subspaces(space: gym.spaces.Dict | gym.spaces.Tuple) -> list[Any]:
    """The spaces of a ``Dict``'s keys (a ``Tuple``'s entries), in :func:`space_keys` order.

    Example:
        >>> import gymnasium as gym
        >>> subspaces(gym.spaces.Tuple([gym.spaces.Discrete(2)]))
        [Discrete(2)]
    """
    if isinstance(space, gym.spaces.Dict):
        return list(space.spaces.values())
    return list(space.spaces)


def space_json(space: Any, owner: str) -> dict[str, Any]:
    """``space`` as JSON: ``rlkit.core.spaces.space_to_json`` for ``Box``, ``Discrete``,
    ``MultiDiscrete``, ``MultiBinary``; ``{"type": "Dict", "keys": [...], "spaces": [...]}``
    (the keys in the space's order, strings) and ``{"type": "Tuple", "spaces": [...]}``, nested.
    Any other space (or a ``Dict`` key that is not a string) is a ``TypeError`` naming ``owner``.

    Example:
        >>> import gymnasium as gym
        >>> space_json(gym.spaces.Tuple([gym.spaces.Discrete(2)]), "Dataset")["type"]
        'Tuple'
    """
    if isinstance(space, gym.spaces.Dict):
        keys = space_keys(space)
        odd = [k for k in keys if not isinstance(k, str)]
        if odd:
            raise TypeError(f"{owner}: the Dict space's keys must be strings, got {odd} in {space}")
        return {
            "type": "Dict",
            "keys": keys,
            "spaces": [space_json(sub, owner) for sub in subspaces(space)],
        }
    if isinstance(space, gym.spaces.Tuple):
        return {"type": "Tuple", "spaces": [space_json(sub, owner) for sub in space.spaces]}
    return core_spaces.space_to_json(space, owner)


def space_from_json(data: Any, where: str, error: type[Exception] = ValueError) -> Any:
    """The space :func:`space_json` described (a malformed description raises ``error``).

    Example:
        >>> space_from_json({"type": "Tuple", "spaces": [{"type": "Discrete", "n": 2,
        ...                  "start": 0}]}, "Dataset")
        Tuple(Discrete(2))
    """
    kind = data.get("type") if isinstance(data, Mapping) else None
    try:
        if kind == "Dict":
            keys, parts = data["keys"], data["spaces"]
            if len(keys) != len(parts):
                raise ValueError(f"{len(keys)} keys for {len(parts)} spaces")
            pairs = zip(keys, parts, strict=True)
            return gym.spaces.Dict([(str(k), space_from_json(p, where, error)) for k, p in pairs])
        if kind == "Tuple":
            return gym.spaces.Tuple([space_from_json(p, where, error) for p in data["spaces"]])
    except (KeyError, TypeError, ValueError) as cause:
        if isinstance(cause, error):
            raise
        raise error(f"{where}: malformed space description {data!r:.200}: {cause}") from cause
    return core_spaces.space_from_json(data, where, error)


def structured_rows(name: str, value: Any, space: Any) -> dict[Any, Any]:
    """``value`` (observations of a ``Dict``/``Tuple`` ``space``, one row per transition in
    every array) as nested dicts of contiguous arrays laid out as replay buffers lay them out
    (:func:`~rlkit.trajectories.structured.leaf_layout`). Keys that differ from the space's are
    a ``ValueError`` naming both; a key whose rows have another shape, or that holds no
    numbers, is refused naming ``name`` and the key.

    Example:
        >>> import gymnasium as gym, numpy as np
        >>> space = gym.spaces.Dict({"a": gym.spaces.Box(-1, 1, (2,))})
        >>> structured_rows("observations", {"b": np.zeros((3, 2))}, space)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: Dataset: observations: the observation's keys ['b'] differ from the Dict ...
    """
    values = structured(f"Dataset: {name}", space, value)
    rows: dict[Any, Any] = {}
    for key, sub in zip(space_keys(space), subspaces(space), strict=True):
        where = f"{name}[{key!r}]"
        if is_structured_space(sub):
            rows[key] = structured_rows(where, values[key], sub)
            continue
        shape, dtype = leaf_layout(sub)
        array = np.asarray(values[key])
        if array.dtype.kind not in "biuf":
            raise TypeError(f"Dataset: {where} must hold numbers, got dtype {array.dtype}")
        if array.ndim < 1 or array.shape[1:] != tuple(shape):
            raise ValueError(
                f"Dataset: {where} has rows of shape {array.shape[1:]}, but its space {sub} has "
                f"shape {tuple(shape)} (one row per transition)"
            )
        rows[key] = np.ascontiguousarray(array, dtype=dtype)
    return rows


def leaf_items(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    """The arrays of nested dicts as ``(path, array)`` pairs, in the dicts' (the space's) order.

    Example:
        >>> import numpy as np
        >>> [p for p, _ in leaf_items({"a": np.zeros(1), "b": {0: np.ones(1)}})]
        [('a',), ('b', 0)]
    """
    if not isinstance(value, Mapping):
        return [(prefix, value)]
    items: list[tuple[tuple[Any, ...], Any]] = []
    for key, sub in value.items():
        items += leaf_items(sub, (*prefix, key))
    return items


def from_leaf_items(space: Any, arrays: list[Any]) -> Any:
    """Nested dicts keyed as ``space`` is, whose leaves are ``arrays`` in :func:`leaf_items`
    order (how the ``.npz`` and Minari files are read back).

    Example:
        >>> import gymnasium as gym, numpy as np
        >>> space = gym.spaces.Tuple([gym.spaces.Discrete(2), gym.spaces.Discrete(3)])
        >>> from_leaf_items(space, [np.zeros(1), np.ones(1)])[1].tolist()
        [1.0]
    """
    leaves = iter(arrays)

    def build(sub: Any) -> Any:
        if not is_structured_space(sub):
            return next(leaves)
        return {k: build(s) for k, s in zip(space_keys(sub), subspaces(sub), strict=True)}

    return build(space)


def count_leaves(space: Any) -> int:
    """How many arrays an observation of ``space`` has (1 for a non-structured space).

    Example:
        >>> import gymnasium as gym
        >>> count_leaves(gym.spaces.Dict({"a": gym.spaces.Discrete(2),
        ...                               "b": gym.spaces.Tuple([gym.spaces.Discrete(2)] * 2)}))
        3
    """
    if not is_structured_space(space):
        return 1
    return sum(count_leaves(sub) for sub in subspaces(space))
