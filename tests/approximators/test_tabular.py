import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk
from rlkit.approximators.tabular import TabularQApproximator, TabularVApproximator

BLACKJACK = gym.spaces.Tuple(
    (gym.spaces.Discrete(32), gym.spaces.Discrete(11), gym.spaces.Discrete(2))
)


# ---- construction ----


def test_q_shapes_from_ints_and_spaces():
    q = TabularQApproximator(48, 4)
    assert q.table.shape == (48, 4) and q.table.dtype == np.float64 and q.n_actions == 4
    q = TabularQApproximator(gym.spaces.Discrete(5), gym.spaces.Discrete(3))
    assert q.table.shape == (5, 3) and q.n_actions == 3
    q = TabularQApproximator(BLACKJACK, gym.spaces.Discrete(2))
    assert q.table.shape == (32, 11, 2, 2) and q.state_shape == (32, 11, 2)
    assert isinstance(q, rk.AbstractApproximator)
    assert rk.TabularQApproximator is TabularQApproximator


def test_v_shapes():
    assert TabularVApproximator(7).table.shape == (7,)
    assert TabularVApproximator(BLACKJACK).table.shape == (32, 11, 2)


def test_optimistic_init():
    q = TabularQApproximator(3, 2, init=5.0)
    assert np.all(q.table == 5.0)
    assert q(1).tolist() == [5.0, 5.0]
    assert np.all(TabularVApproximator(3, init=-2).table == -2.0)


@pytest.mark.parametrize(
    "space",
    [
        gym.spaces.Box(0.0, 1.0, shape=(2,)),
        gym.spaces.MultiDiscrete([2, 3]),
        gym.spaces.Tuple((gym.spaces.Discrete(2), gym.spaces.Box(0.0, 1.0))),
    ],
)
def test_non_discrete_state_space_is_rejected(space):
    with pytest.raises(ValueError, match="TabularQApproximator needs a Discrete \\(or Tuple of"):
        TabularQApproximator(space, 2)
    with pytest.raises(ValueError, match="TabularVApproximator needs a Discrete"):
        TabularVApproximator(space)


def test_box_message_names_the_space():
    with pytest.raises(ValueError, match="got Box\\("):
        TabularQApproximator(gym.spaces.Box(0.0, 1.0, shape=(2,)), 2)
    with pytest.raises(ValueError, match="needs a Discrete action space, got Box"):
        TabularQApproximator(3, gym.spaces.Box(0.0, 1.0))


def test_discrete_with_nonzero_start_is_rejected():
    with pytest.raises(ValueError, match="starts at 1"):
        TabularQApproximator(gym.spaces.Discrete(3, start=1), 2)
    with pytest.raises(ValueError, match="starts at -1"):
        TabularQApproximator(3, gym.spaces.Discrete(2, start=-1))
    with pytest.raises(ValueError, match="starts at 2"):
        TabularVApproximator(
            gym.spaces.Tuple((gym.spaces.Discrete(3), gym.spaces.Discrete(2, start=2)))
        )


@pytest.mark.parametrize("step_size", [-0.1, 0.0, 1.5, float("nan"), True, "0.1"])
def test_bad_step_size(step_size):
    message = f"step_size must be a finite number in \\(0, 1\\], got {step_size!r}"
    with pytest.raises(ValueError, match=message):
        TabularQApproximator(3, 2, step_size=step_size)
    with pytest.raises(ValueError, match="TabularVApproximator: step_size"):
        TabularVApproximator(3, step_size=step_size)


@pytest.mark.parametrize("n", [0, -3, 2.5, True, None])
def test_bad_sizes(n):
    with pytest.raises(ValueError, match=f"n_states must be a positive integer, got {n!r}"):
        TabularQApproximator(n, 2)
    with pytest.raises(ValueError, match=f"n_actions must be a positive integer, got {n!r}"):
        TabularQApproximator(2, n)


def test_bad_init():
    with pytest.raises(ValueError, match="init must be a finite number, got inf"):
        TabularQApproximator(2, 2, init=float("inf"))


# ---- updates ----


def test_constant_step_size_update():
    q = TabularQApproximator(4, 3, step_size=0.5)
    error = q.update(2, 1, 4.0)
    assert error == 4.0 and isinstance(error, float)
    assert q.table[2, 1] == 2.0
    assert q.update(2, 1, 4.0) == 2.0
    assert q.table[2, 1] == 3.0
    assert np.count_nonzero(q.table) == 1
    assert q.counts is None


def test_sample_average_equals_running_mean():
    rng = np.random.default_rng(0)
    q = TabularQApproximator(3, 2, init=10.0, step_size=None)
    v = TabularVApproximator(3, init=10.0, step_size=None)
    targets = rng.normal(size=50)
    for i, g in enumerate(targets):
        q.update(1, 0, g)
        v.update(2, g)
        assert q.table[1, 0] == pytest.approx(targets[: i + 1].mean())
        assert v.table[2] == pytest.approx(targets[: i + 1].mean())
    assert q.counts[1, 0] == 50 and q.counts.sum() == 50
    assert v.counts[2] == 50 and q.table[0, 0] == 10.0  # untouched entries keep init


def test_step_size_one_replaces():
    v = TabularVApproximator(2, step_size=1)
    assert v.update(0, 3.0) == 3.0 and v(0) == 3.0


def test_q_row_is_a_view():
    q = TabularQApproximator(3, 2)
    row = q.q(1)
    row[0] = 7.0
    assert q.table[1, 0] == 7.0
    q.update(1, 1, 1.0)
    assert row[1] == pytest.approx(0.1)


def test_tuple_states_index_the_table():
    q = TabularQApproximator(BLACKJACK, 2, step_size=0.5)
    v = TabularVApproximator(BLACKJACK, step_size=0.5)
    env = gym.make("Blackjack-v1")
    state, _ = env.reset(seed=0)
    assert q(state).shape == (2,)
    assert q.update(state, 1, 1.0) == 1.0
    assert q.table[state][1] == 0.5 and q.table[(*state, 1)] == 0.5
    assert np.count_nonzero(q.table) == 1
    assert v.update(state, -1.0) == -1.0 and v(state) == -0.5
    sample_average = TabularQApproximator(BLACKJACK, 2, step_size=None)
    sample_average.update((20, 3, 1), 0, 2.0)
    sample_average.update((20, 3, 1), 0, 4.0)
    assert sample_average.q((20, 3, 1))[0] == 3.0 and sample_average.counts[20, 3, 1, 0] == 2


# ---- checkpoints ----


@pytest.mark.parametrize("step_size", [0.1, None])
def test_state_dict_round_trip_in_place(step_size):
    rng = np.random.default_rng(1)
    q = TabularQApproximator(5, 3, step_size=step_size)
    for _ in range(30):
        q.update(int(rng.integers(5)), int(rng.integers(3)), float(rng.normal()))
    state = q.state_dict()
    fresh = TabularQApproximator(5, 3, step_size=step_size)
    view = fresh.table  # learners may hold on to the table
    fresh.load_state_dict(state)
    np.testing.assert_array_equal(view, q.table)
    assert fresh.table is view
    assert not np.shares_memory(state["table"], q.table)  # a copy, not a view
    if step_size is None:
        np.testing.assert_array_equal(fresh.counts, state["counts"])
        fresh.update(2, 1, 5.0)
        assert fresh.counts[2, 1] == state["counts"][2, 1] + 1


def test_v_state_dict_round_trip():
    v = TabularVApproximator(BLACKJACK, step_size=None)
    v.update((10, 2, 0), 3.0)
    fresh = TabularVApproximator(BLACKJACK, step_size=None)
    fresh.load_state_dict(v.state_dict())
    assert fresh((10, 2, 0)) == 3.0 and fresh.counts[10, 2, 0] == 1


def test_incompatible_state_dict():
    q = TabularQApproximator(5, 3)
    with pytest.raises(
        ValueError, match="TabularQApproximator: checkpoint table has shape \\(4, 3\\)"
    ):
        q.load_state_dict(TabularQApproximator(4, 3).state_dict())
    with pytest.raises(ValueError, match="has visit counts"):
        q.load_state_dict(TabularQApproximator(5, 3, step_size=None).state_dict())
    with pytest.raises(ValueError, match="has no visit counts"):
        TabularQApproximator(5, 3, step_size=None).load_state_dict(q.state_dict())
