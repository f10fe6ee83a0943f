"""Gymnasium spaces as JSON (what inference artifacts and datasets store): ``Box`` (low, high,
dtype, shape), ``Discrete`` (n, start), ``MultiDiscrete`` (nvec, start, dtype) and ``MultiBinary``
(n); any other space is refused naming it (wrap the env, e.g. with ``FlattenObservation``).

Example:
    >>> import gymnasium as gym
    >>> space = gym.spaces.Box(-1.0, 1.0, (2,))
    >>> space_from_json(space_to_json(space)) == space
    True
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np

__all__ = ["space_to_json", "space_from_json"]


def _floats(array: np.ndarray) -> list:
    """A 1-D float array as a list, infinities as the strings "inf"/"-inf" (JSON has none)."""
    return [str(x) if math.isinf(x) else float(x) for x in array.tolist()]


def space_to_json(space: Any, owner: str = "rk.save") -> dict[str, Any]:
    """``space`` as a JSON-ready dict; refused unless it is one of the four kinds above."""
    if isinstance(space, gym.spaces.Box):
        dtype = np.dtype(space.dtype)
        low, high = (np.asarray(b).reshape(-1) for b in (space.low, space.high))
        convert = _floats if dtype.kind == "f" else (lambda a: [int(x) for x in a.tolist()])
        return {
            "type": "Box",
            "shape": list(space.shape),
            "dtype": dtype.name,
            "low": convert(low),
            "high": convert(high),
        }
    if isinstance(space, gym.spaces.Discrete):
        return {"type": "Discrete", "n": int(space.n), "start": int(space.start)}
    if isinstance(space, gym.spaces.MultiDiscrete):
        return {
            "type": "MultiDiscrete",
            "nvec": np.asarray(space.nvec).tolist(),
            "start": np.asarray(space.start).tolist(),
            "dtype": np.dtype(space.dtype).name,
        }
    if isinstance(space, gym.spaces.MultiBinary):
        n = space.n
        return {"type": "MultiBinary", "n": list(n) if isinstance(n, tuple | list) else int(n)}
    raise TypeError(
        f"{owner}: cannot store the space {space} ({type(space).__name__}); rlkit stores "
        f"Box, Discrete, MultiDiscrete and MultiBinary spaces (wrap the env with "
        f"gymnasium.wrappers.FlattenObservation for Dict and Tuple observations)"
    )


def space_from_json(
    data: Any, where: str = "the artifact", error: type[Exception] = ValueError
) -> Any:
    """The space :func:`space_to_json` described; a malformed description raises ``error``
    (a ``ValueError`` unless the caller names its own, e.g. ``rk.load``'s ``ArtifactError``)."""
    try:
        kind = data["type"]
        if kind == "Box":
            shape = tuple(int(s) for s in data["shape"])
            dtype = np.dtype(data["dtype"])
            low = np.array([float(x) for x in data["low"]], dtype=np.float64).reshape(shape)
            high = np.array([float(x) for x in data["high"]], dtype=np.float64).reshape(shape)
            return gym.spaces.Box(low.astype(dtype), high.astype(dtype), shape, dtype)
        if kind == "Discrete":
            return gym.spaces.Discrete(int(data["n"]), start=int(data["start"]))
        if kind == "MultiDiscrete":
            return gym.spaces.MultiDiscrete(
                np.array(data["nvec"]), dtype=np.dtype(data["dtype"]), start=np.array(data["start"])
            )
        if kind == "MultiBinary":
            return gym.spaces.MultiBinary(data["n"])
    except (KeyError, TypeError, ValueError) as cause:
        raise error(f"{where}: malformed space description {data!r:.200}: {cause}") from cause
    raise error(f"{where}: unknown space type {kind!r}")
