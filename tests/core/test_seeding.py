"""rlkit/core/seeding.py: every generator derives from one seed through numpy SeedSequence."""

from __future__ import annotations

import numpy as np
import pytest

from rlkit.core.seeding import int_seed, spawn_generators, spawn_seeds


def test_spawn_seeds_are_the_seed_sequence_children():
    children = spawn_seeds(42, 3)
    expected = np.random.SeedSequence(42).spawn(3)
    assert [c.entropy for c in children] == [e.entropy for e in expected]
    assert [c.spawn_key for c in children] == [(0,), (1,), (2,)]
    assert [c.generate_state(2).tolist() for c in children] == [
        e.generate_state(2).tolist() for e in expected
    ]


def test_spawn_seeds_of_a_seed_sequence_spawns_from_it():
    parent = np.random.SeedSequence(7)
    first = spawn_seeds(parent, 2)
    second = spawn_seeds(parent, 2)  # a seed sequence keeps count: new children
    assert [s.spawn_key for s in first + second] == [(0,), (1,), (2,), (3,)]


def test_the_same_seed_gives_the_same_generators_and_children_differ():
    a = [g.random(4).tolist() for g in spawn_generators(5, 2)]
    b = [g.random(4).tolist() for g in spawn_generators(5, 2)]
    assert a == b
    assert a[0] != a[1]
    assert a != [g.random(4).tolist() for g in spawn_generators(6, 2)]


@pytest.mark.parametrize("seed", [0, 3, np.int64(3), np.uint32(3), 2**40])
def test_integer_seeds_are_accepted(seed):
    assert len(spawn_seeds(seed, 1)) == 1


@pytest.mark.parametrize("seed", [-1, 1.5, True, np.bool_(False), "1", None])
def test_other_seeds_are_refused(seed):
    with pytest.raises(ValueError, match="spawn_seeds: seed must be a non-negative integer"):
        spawn_seeds(seed, 2)


def test_int_seed_is_a_31_bit_function_of_the_sequence():
    seeds = [int_seed(s) for s in spawn_seeds(0, 50)]
    assert all(isinstance(s, int) and 0 <= s < 2**31 for s in seeds)
    assert len(set(seeds)) == 50
    assert int_seed(np.random.SeedSequence(9)) == int_seed(np.random.SeedSequence(9))
    expected = int(np.random.SeedSequence(9).generate_state(1, dtype=np.uint32)[0] >> 1)
    assert int_seed(np.random.SeedSequence(9)) == expected
