"""TileCoder: tiles3's tile coding with an index hash table."""

from __future__ import annotations

import numpy as np
import pytest

import rlkit as rk


@pytest.mark.parametrize("n_tilings", [1, 4, 8, 16])
def test_as_many_active_tiles_as_tilings(n_tilings):
    coder = rk.TileCoder(4096, n_tilings, scale=(10.0, 3.0))
    rng = np.random.default_rng(0)
    for point in rng.uniform(-1, 1, size=(50, 2)):
        tiles = coder.tiles(point, (1,))
        assert len(tiles) == n_tilings == len(set(tiles))  # one tile in each tiling
        x = coder(point, (1,))
        assert x.shape == (4096,) and x.sum() == n_tilings and set(np.flatnonzero(x)) == set(tiles)


def test_neighbours_share_tiles_and_far_points_do_not():
    coder = rk.TileCoder(4096, 8)  # unit tiles
    base = set(coder.tiles([0.3]))
    shared = [len(base & set(coder.tiles([0.3 + d]))) for d in (0.0, 0.1, 0.3, 0.6, 1.5)]
    assert shared[0] == 8
    assert shared == sorted(shared, reverse=True)  # generalisation falls with distance
    assert shared[1] >= 6 and shared[-1] == 0
    # the action as an integer coordinate separates otherwise equal inputs
    assert not base & set(coder.tiles([0.3], (0,)))


def test_generalises_between_neighbouring_states():
    """One update at x = 0.5 changes the value of its neighbours, less with distance, and not
    of a point two tiles away (the generalisation of Figure 9.4 / 9.5)."""
    coder = rk.TileCoder(1024, 8, scale=4.0)
    v = rk.LinearVApproximator(lambda s: coder([s]), coder.n_features, step_size=0.1 / 8)
    v.update(0.5, 1.0)
    values = [v(s) for s in (0.5, 0.55, 0.65, 0.8, 1.1)]
    assert values[0] == pytest.approx(0.1)
    assert values == sorted(values, reverse=True) and values[1] > 0.05 and values[-1] == 0.0


def test_the_offsets_of_tiles3():
    """tiles3: tiling t is displaced by t * (1, 3, 5, ...) / n_tilings of a tile, i.e. the
    coordinate of input i in tiling t is floor((floor(x_i n) + (2i + 1) t) / n)."""
    coder = rk.TileCoder(64, 4)
    assert coder.tiles([0.0, 0.0]) == [0, 1, 2, 3]
    assert list(coder.table) == [(0, 0, 0), (1, 0, 0), (2, 0, 1), (3, 0, 2)]
    # floor(0.3 * 4) = 1: tiling 1 -> (2 // 4, 4 // 4), tiling 2 -> (3 // 4, 7 // 4) (unchanged),
    # tiling 3 -> (4 // 4, 10 // 4)
    assert coder.tiles([0.3, 0.3]) == [0, 4, 2, 5]
    assert list(coder.table)[4:] == [(1, 0, 1), (3, 1, 2)]


def test_full_table_is_an_error_or_collides():
    coder = rk.TileCoder(16, 4)
    for x in range(3):
        coder.tiles([float(x)])
    assert coder.count() <= 16
    with pytest.raises(ValueError, match=r"TileCoder: the hash table of size=16 is full"):
        for x in range(3, 20):
            coder.tiles([float(x)])
    colliding = rk.TileCoder(16, 4, on_full="collide")
    tiles = [colliding.tiles([float(x)]) for x in range(20)]
    assert colliding.count() == 16 and colliding.overfull_count > 0
    assert all(0 <= t < 16 for ts in tiles for t in ts)


def test_bad_input():
    with pytest.raises(ValueError, match="n_tilings=8 active tiles do not fit a hash table of "
                       "size=4"):
        rk.TileCoder(4, 8)
    with pytest.raises(ValueError, match="scale must be a positive number"):
        rk.TileCoder(64, 4, scale=0.0)
    with pytest.raises(ValueError, match="on_full must be"):
        rk.TileCoder(64, 4, on_full="grow")
    with pytest.raises(ValueError, match="got 3 inputs, but scale has 2 entries"):
        rk.TileCoder(64, 4, scale=(1.0, 2.0)).tiles([0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="size must be a positive integer"):
        rk.TileCoder(0, 1)
