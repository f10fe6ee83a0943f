import math

import numpy as np
import pytest

from rlkit.trajectories.sum_tree import SumTree

# upper 0.1% quantile of the chi-square distribution with 8 degrees of freedom
CHI2_8_DF_999 = 26.124


def chi_square(counts: np.ndarray, expected: np.ndarray) -> float:
    return float(((counts - expected) ** 2 / expected).sum())


def test_exported_name():
    assert SumTree is SumTree


@pytest.mark.parametrize("capacity", [0, -3, 2.5, True, "4", None])
def test_bad_capacity(capacity):
    with pytest.raises(ValueError, match=r"SumTree: capacity must be a positive integer, got"):
        SumTree(capacity)


def test_update_total_getitem_and_max():
    tree = SumTree(5)
    assert tree.total == 0.0 and len(tree) == 5 and tree.max_priority == 0.0
    tree.update([0, 2, 4], [1.0, 2.5, 0.5])
    assert tree.total == 4.0
    assert tree[2] == 2.5 and tree[1] == 0.0
    np.testing.assert_array_equal(tree[[0, 4]], [1.0, 0.5])
    np.testing.assert_array_equal(tree.priorities, [1.0, 0.0, 2.5, 0.0, 0.5])
    assert tree.max_priority == 2.5
    tree.update([2], [0.25])  # the running maximum does not fall
    assert tree.total == 1.75 and tree.max_priority == 2.5
    tree.update([3, 3], [7.0, 3.0])  # a repeated index gets its last priority
    assert tree[3] == 3.0 and tree.total == 4.75
    tree.update(np.array([], int), np.array([]))
    assert tree.total == 4.75


def test_scalar_set_matches_vectorised_update_bit_for_bit():
    rng = np.random.default_rng(1)
    a, b = SumTree(37), SumTree(37)
    for _ in range(300):
        i = int(rng.integers(37))
        p = float(rng.random() * 10.0 ** rng.integers(-5, 5))
        a.set(i, p)
        b.update([i], [p])
    np.testing.assert_array_equal(a._tree, b._tree)
    assert a.total == b.total and a.max_priority == b.max_priority


def test_inner_sums_follow_many_random_updates():
    rng = np.random.default_rng(2)
    tree = SumTree(100)
    for _ in range(200):
        idx = rng.integers(100, size=16)
        tree.update(idx, rng.random(16) * 100)
    assert tree.total == pytest.approx(math.fsum(tree.priorities), rel=1e-12)
    # every inner node is exactly the sum of its children
    t = tree._tree
    nodes = np.arange(1, tree._size)
    np.testing.assert_array_equal(t[nodes], t[2 * nodes] + t[2 * nodes + 1])


def test_priorities_are_read_only():
    tree = SumTree(3)
    with pytest.raises(ValueError):
        tree.priorities[0] = 1.0


@pytest.mark.parametrize("bad", [-1.0, np.nan, np.inf])
def test_bad_priorities(bad):
    tree = SumTree(4)
    with pytest.raises(ValueError, match="SumTree: priorities must be finite and >= 0"):
        tree.update([0, 1], [1.0, bad])
    with pytest.raises(ValueError, match="SumTree: priorities must be finite and >= 0"):
        tree.set(1, bad)
    assert tree.total == 0.0  # nothing half-written by the vectorised update


@pytest.mark.parametrize("index", [-1, 4, 100])
def test_bad_indices(index):
    tree = SumTree(4)
    with pytest.raises(IndexError, match=r"SumTree: ind"):
        tree.update([index], [1.0])
    with pytest.raises(IndexError, match=r"SumTree: ind"):
        tree.set(index, 1.0)


def test_find_boundaries_and_zero_priorities():
    tree = SumTree(5)  # 3 padding leaves behind the 5 items
    tree.update([0, 1, 2, 3, 4], [1.0, 0.0, 2.0, 1.0, 0.0])
    values = [0.0, 0.999, 1.0, 2.999, 3.0, 3.999]
    np.testing.assert_array_equal(tree.find(values), [0, 0, 2, 2, 3, 3])
    # out-of-range values are clipped; zero-priority items and padding leaves are never found
    np.testing.assert_array_equal(tree.find([-5.0, 4.0, 1e9]), [0, 3, 3])
    tree.update([0], [0.0])
    np.testing.assert_array_equal(tree.find([0.0]), [2])


def test_capacity_one():
    tree = SumTree(1)
    tree.set(0, 2.0)
    assert tree.total == 2.0
    np.testing.assert_array_equal(tree.find([0.0, 1.0, 1.9999]), [0, 0, 0])


def test_find_on_an_empty_tree_raises():
    with pytest.raises(
        ValueError, match="SumTree: cannot search a tree whose priorities are all 0"
    ):
        SumTree(3).find([0.0])


def test_rounding_never_leads_into_a_zero_priority_leaf():
    # found by fuzzing: a plain descent for the largest value below the total ends in a padding
    # leaf (item 7 of 8, priority 0) because the sums round; find must return item 4
    tree = SumTree(6)
    priorities = np.array([0.0, 2.43, 2.81, 0.0, 21.03, 0.0])
    tree.update(np.arange(6), priorities)
    value = np.nextafter(tree.total, 0.0)
    assert value < tree.total
    plain = tree._descend(np.array([value]), careful=False) - tree._size
    assert plain.tolist() == [7]  # the case the careful search exists for
    assert tree.find([value]).tolist() == [4]


def test_fuzz_found_items_have_positive_priority():
    rng = np.random.default_rng(3)
    for _ in range(300):
        capacity = int(rng.integers(1, 12))
        priorities = np.where(rng.random(capacity) < 0.4, 0.0, 10.0 ** rng.uniform(-6, 6, capacity))
        if priorities.sum() == 0:
            continue
        tree = SumTree(capacity)
        tree.update(np.arange(capacity), priorities)
        edges = np.cumsum(priorities)
        values = np.concatenate(
            [
                edges,
                np.nextafter(edges, 0.0),
                np.nextafter(edges, np.inf),
                rng.random(20) * edges[-1],
            ]
        )
        assert (priorities[tree.find(values)] > 0).all()


def test_find_matches_a_prefix_sum_search():
    rng = np.random.default_rng(4)
    priorities = rng.integers(0, 5, size=50).astype(float)  # exact sums: no rounding at all
    tree = SumTree(50)
    tree.update(np.arange(50), priorities)
    values = rng.random(1000) * tree.total
    expected = np.searchsorted(np.cumsum(priorities), values, side="right")
    np.testing.assert_array_equal(tree.find(values), expected)


def test_sampling_frequencies_are_proportional_to_priorities():
    rng = np.random.default_rng(5)
    priorities = np.array([0.5, 3.0, 0.0, 1.0, 10.0, 0.1, 2.0, 4.0, 0.0, 1.5, 7.0])
    tree = SumTree(len(priorities))
    tree.update(np.arange(len(priorities)), priorities)
    draws = 200_000
    found = tree.find(rng.random(draws) * tree.total)
    counts = np.bincount(found, minlength=len(priorities))
    assert counts[priorities == 0].sum() == 0
    positive = priorities > 0
    expected = draws * priorities[positive] / priorities.sum()
    assert positive.sum() - 1 == 8
    assert chi_square(counts[positive], expected) < CHI2_8_DF_999


def test_the_chi_square_check_can_fail():
    # the same check rejects frequencies drawn from slightly wrong priorities
    rng = np.random.default_rng(5)
    priorities = np.array([0.5, 3.0, 1.0, 10.0, 0.1, 2.0, 4.0, 1.5, 7.0])
    wrong = priorities * np.array([1, 1, 1, 1, 1, 1, 1, 1, 1.05])
    tree = SumTree(len(wrong))
    tree.update(np.arange(len(wrong)), wrong)
    draws = 200_000
    counts = np.bincount(tree.find(rng.random(draws) * tree.total), minlength=len(wrong))
    expected = draws * priorities / priorities.sum()
    assert chi_square(counts, expected) > CHI2_8_DF_999


def test_state_dict_round_trip_is_exact():
    rng = np.random.default_rng(6)
    tree = SumTree(77)
    for _ in range(50):
        tree.update(rng.integers(77, size=8), rng.random(8) * 3)
    saved = tree.state_dict()
    tree.update([0], [123.0])  # the saved priorities are a copy
    assert saved["priorities"][0] != 123.0
    restored = SumTree(77)
    restored.load_state_dict(saved)
    tree.update([0], [saved["priorities"][0]])
    np.testing.assert_array_equal(restored._tree, tree._tree)
    assert restored.max_priority == saved["max_priority"]
    values = rng.random(64) * tree.total
    np.testing.assert_array_equal(restored.find(values), tree.find(values))


def test_load_state_dict_rejects_incompatible_checkpoints():
    saved = SumTree(8).state_dict()
    with pytest.raises(ValueError, match="SumTree: checkpoint has capacity 8, this tree has 9"):
        SumTree(9).load_state_dict(saved)
    saved["priorities"] = np.full(8, -1.0)
    with pytest.raises(ValueError, match="finite and >= 0"):
        SumTree(8).load_state_dict(saved)
