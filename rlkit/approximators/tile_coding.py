"""Tile coding with hashing, as Sutton's ``tiles3`` (Sutton & Barto section 9.5.4).

Each of ``n_tilings`` tilings covers the (scaled) input space with unit tiles, offset from the
others by asymmetric displacements (1, 3, 5, ...) / ``n_tilings`` of a tile per dimension; a
point lies in exactly one tile of each tiling. A tile is named by its tiling and integer
coordinates (plus optional integer coordinates such as an action) and given an index in a hash
table of ``size`` entries the first time it is seen (the index hash table, IHT, of tiles3).
The feature vector is binary with exactly ``n_tilings`` ones.

tiles3 lets a full table start hashing tiles onto each other; here a full table is an error by
default (``on_full="error"``), naming the size needed, or collisions as in tiles3
(``on_full="collide"``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.checks import positive_int

__all__ = ["TileCoder"]


class TileCoder:
    """Sutton's tile coding with an index hash table (tiles3), as a feature function.

    Args:
        size: the number of entries of the hash table, i.e. the number of features.
        n_tilings: tilings (active tiles per input); Sutton recommends a power of 2 >= 4 times
            the number of dimensions.
        scale: multiplies each input before tiling (a number or one per dimension), so that
            a tile is one unit wide: ``n_tiles / (high - low)`` gives ``n_tiles`` tiles over
            ``[low, high]``.
        on_full: ``"error"`` (default): raise when more distinct tiles are needed than the table
            holds; ``"collide"``: hash them onto existing entries, as tiles3.

    ``coder.tiles(floats, ints=())`` returns the ``n_tilings`` active indices, ``coder(floats,
    ints=())`` the binary feature vector of length ``size``. ``coder.count()`` is the number
    of entries used.

    Example:
        >>> import rlkit as rk
        >>> coder = rk.TileCoder(size=1024, n_tilings=8, scale=(8 / 1.7, 8 / 0.14))
        >>> coder.tiles((-0.5, 0.0), (1,))
        [0, 1, 2, 3, 4, 5, 6, 7]
        >>> near = coder.tiles((-0.45, 0.0), (1,))  # a neighbour shares most tiles
        >>> len(set(coder.tiles((-0.5, 0.0), (1,))) & set(near))
        6
        >>> int(coder((-0.5, 0.0), (1,)).sum())
        8
    """

    def __init__(
        self,
        size: int,
        n_tilings: int,
        scale: float | Sequence[float] = 1.0,
        *,
        on_full: str = "error",
    ) -> None:
        self.size = positive_int("TileCoder", "size", size)
        self.n_tilings = positive_int("TileCoder", "n_tilings", n_tilings)
        if self.n_tilings > self.size:
            raise ValueError(
                f"TileCoder: n_tilings={self.n_tilings} active tiles do not fit a hash table of "
                f"size={self.size}; size must be at least n_tilings"
            )
        scales = np.atleast_1d(np.asarray(scale, dtype=np.float64))
        if scales.ndim != 1 or not np.isfinite(scales).all() or (scales <= 0).any():
            raise ValueError(
                f"TileCoder: scale must be a positive number or one per dimension, got {scale!r}"
            )
        self.scale = scales
        self._scales = scales.tolist()
        if on_full not in ("error", "collide"):
            raise ValueError(f"TileCoder: on_full must be 'error' or 'collide', got {on_full!r}")
        self.on_full = on_full
        self.table: dict[tuple, int] = {}
        self.overfull_count = 0
        self._cache: dict[tuple, tuple[int, ...]] = {}

    @property
    def n_features(self) -> int:
        """The length of the feature vector (= ``size``)."""
        return self.size

    def __repr__(self) -> str:
        return (
            f"TileCoder(size={self.size}, n_tilings={self.n_tilings}, "
            f"scale={self.scale.tolist()})"
        )

    def count(self) -> int:
        """The number of entries of the hash table in use."""
        return len(self.table)

    def _index(self, coords: tuple) -> int:
        index = self.table.get(coords)
        if index is not None:
            return index
        count = len(self.table)
        if count < self.size:
            self.table[coords] = count
            return count
        if self.on_full == "error":
            raise ValueError(
                f"TileCoder: the hash table of size={self.size} is full ({count} tiles in use) "
                f"and tile {coords} is new; give the TileCoder a larger size, or "
                f"on_full='collide' to hash tiles onto each other as tiles3 does"
            )
        self.overfull_count += 1
        return hash(coords) % self.size

    def tiles(self, floats: Sequence[float], ints: Sequence[int] = ()) -> list[int]:
        """The indices of the ``n_tilings`` active tiles of ``floats`` (and ``ints``)."""
        values = np.asarray(floats, dtype=np.float64).reshape(-1).tolist()
        scales = self._scales if len(self._scales) > 1 else self._scales * len(values)
        if len(scales) != len(values):
            raise ValueError(
                f"TileCoder: got {len(values)} inputs, but scale has {len(self._scales)} entries"
            )
        n = self.n_tilings
        key = (*[math.floor(x * s * n) for x, s in zip(values, scales, strict=True)],
               *(int(i) for i in ints))
        tiles = self._cache.get(key)  # the tiles of a quantized input never change
        if tiles is None:
            tiles = self._cache[key] = self._tiles(key, len(values))
        return list(tiles)

    def _tiles(self, key: tuple, n_floats: int) -> tuple[int, ...]:
        n = self.n_tilings
        q, extra = key[:n_floats], key[n_floats:]
        out = []
        for tiling in range(n):
            # tiles3: input i of tiling t is displaced by (2 i + 1) t / n of a tile
            coords = tuple((qi + (2 * i + 1) * tiling) // n for i, qi in enumerate(q))
            out.append(self._index((tiling, *coords, *extra)))
        return tuple(out)

    def __call__(self, floats: Sequence[float], ints: Sequence[int] = ()) -> np.ndarray:
        x = np.zeros(self.size)
        x[self.tiles(floats, ints)] = 1.0
        return x

    # ---- checkpoints: the table decides which index a tile has ----
    def state_dict(self) -> dict[str, Any]:
        """The hash table (tile -> index), for checkpoints."""
        return {"table": dict(self.table), "overfull_count": self.overfull_count}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a state saved by :meth:`state_dict`."""
        self.table = dict(state["table"])
        self.overfull_count = int(state["overfull_count"])
        self._cache = {}
