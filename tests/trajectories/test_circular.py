import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk
from rlkit.core.plan import build_plan
from rlkit.trajectories.circular import CircularArraySARTTrajectory

BOX = gym.spaces.Box(-1.0, 1.0, (3,), np.float64)
DISCRETE = gym.spaces.Discrete(4)


def draw(t: CircularArraySARTTrajectory, times: int, seed: int = 0) -> np.ndarray:
    """Slots of ``times`` uniform batches of ``len(t)``."""
    rng = np.random.default_rng(seed)
    batches = [t.sample_indices(len(t), rng) for _ in range(times)]
    assert all(weights is None for _, weights in batches)
    return np.concatenate([indices for indices, _ in batches])


def filled(capacity: int, count: int, **kwargs) -> CircularArraySARTTrajectory:
    """A buffer of scalar states ``i`` and next states ``i + 1`` for transitions 0..count-1."""
    t = CircularArraySARTTrajectory(capacity, state_shape=(), **kwargs)
    for i in range(count):
        t.append(i, i % 4, 10.0 * i, False, False, i + 1)
    return t


# ---- construction ----
def test_layout_from_spaces():
    t = CircularArraySARTTrajectory(10, BOX, DISCRETE)
    assert t.capacity == 10 and len(t) == 0 and t.head == 0 and t.n_inserted == 0
    assert t.state.shape == (10, 3) and t.state.dtype == np.float32
    assert t.next_state.shape == (10, 3) and t.next_state.dtype == np.float32
    assert t.action.shape == (10,) and t.action.dtype == np.int64
    assert t.reward.shape == (10,) and t.reward.dtype == np.float32
    assert t.terminal.dtype == bool and t.truncated.dtype == bool
    assert t.traces == ("state", "action", "reward", "terminal", "truncated", "next_state")


def test_layout_of_other_spaces():
    t = CircularArraySARTTrajectory(
        5, gym.spaces.MultiDiscrete([3, 4]), gym.spaces.Box(-1, 1, (2,), np.float32)
    )
    assert t.state.shape == (5, 2) and t.state.dtype == np.int64
    assert t.action.shape == (5, 2) and t.action.dtype == np.float32
    t = CircularArraySARTTrajectory(5, gym.spaces.MultiBinary(6), DISCRETE)
    assert t.state.shape == (5, 6) and t.state.dtype == np.int8


def test_explicit_layout_overrides_the_spaces():
    images = gym.spaces.Box(0, 255, (4, 8, 8), np.uint8)
    t = CircularArraySARTTrajectory(3, images, DISCRETE, state_dtype=np.uint8)
    assert t.state.shape == (3, 4, 8, 8) and t.state.dtype == np.uint8
    t = CircularArraySARTTrajectory(3, state_shape=(2,), action_shape=(1,), action_dtype=np.float32)
    assert t.state.shape == (3, 2) and t.state.dtype == np.float32
    assert t.action.shape == (3, 1) and t.action.dtype == np.float32
    t = CircularArraySARTTrajectory(3, state_shape=())  # defaults: scalar int64 actions
    assert t.state.shape == (3,) and t.action.shape == (3,) and t.action.dtype == np.int64


@pytest.mark.parametrize("capacity", [0, -1, 2.5, True, "10", None])
def test_bad_capacity(capacity):
    with pytest.raises(
        ValueError,
        match=r"CircularArraySARTTrajectory: capacity must be a positive integer, got",
    ):
        CircularArraySARTTrajectory(capacity, BOX, DISCRETE)


def test_bad_layouts():
    with pytest.raises(ValueError, match="give state_space .* or state_shape"):
        CircularArraySARTTrajectory(10)
    with pytest.raises(TypeError, match="state_space must be a gymnasium space, got tuple"):
        CircularArraySARTTrajectory(10, (3,))
    tuple_space = gym.spaces.Tuple((DISCRETE, DISCRETE))
    # a Tuple (or Dict) space is stored as arrays by position (key): test_structured.py
    assert set(CircularArraySARTTrajectory(10, tuple_space, DISCRETE).state.arrays) == {0, 1}
    with pytest.raises(TypeError, match="cannot store states of space Text"):
        CircularArraySARTTrajectory(10, gym.spaces.Text(4), DISCRETE)
    with pytest.raises(TypeError, match="no array layout for the observation space Text"):
        CircularArraySARTTrajectory(10, gym.spaces.Dict({"a": gym.spaces.Text(4)}), DISCRETE)
    t = CircularArraySARTTrajectory(10, tuple_space, DISCRETE, state_shape=(2,), state_dtype=int)
    assert t.state.shape == (10, 2)
    with pytest.raises(ValueError, match="state_shape must be a tuple of ints, got 'ab'"):
        CircularArraySARTTrajectory(10, state_shape="ab")
    with pytest.raises(ValueError, match="action_dtype must be a numpy dtype"):
        CircularArraySARTTrajectory(10, state_shape=(), action_dtype="no-such-type")


# ---- the ring buffer ----
def test_wrap_around_overwrites_the_oldest_first():
    t = filled(5, 3)
    assert len(t) == 3 and t.head == 3 and t.oldest == 0 and not t.is_full
    np.testing.assert_array_equal(t.ordered_indices(), [0, 1, 2])
    t = filled(5, 7)
    assert len(t) == 5 and t.head == 2 and t.n_inserted == 7 and t.is_full
    np.testing.assert_array_equal(t.state, [5, 6, 2, 3, 4])
    np.testing.assert_array_equal(t.next_state, [6, 7, 3, 4, 5])
    np.testing.assert_array_equal(t.reward, [50, 60, 20, 30, 40])
    assert t.oldest == 2
    np.testing.assert_array_equal(t.ordered_indices(), [2, 3, 4, 0, 1])
    np.testing.assert_array_equal(t.state[t.ordered_indices()], [2, 3, 4, 5, 6])
    t = filled(5, 10)  # a whole turn: the head is back at 0
    assert t.head == 0 and t.oldest == 0
    np.testing.assert_array_equal(t.state, [5, 6, 7, 8, 9])


def test_capacity_one():
    t = filled(1, 3)
    assert len(t) == 1 and t.head == 0 and t.state.tolist() == [2]


def test_a_slot_being_rewritten_is_not_a_stored_transition():
    t = filled(4, 2)
    t.begin_transition(2, 0)  # not full: the slot at the head was never a transition
    assert len(t) == 2 and t.pending
    t.end_transition(20.0, False, False, 3)
    assert len(t) == 3 and not t.pending
    t = filled(4, 6)  # full; head 2 holds the oldest transition (state 2)
    t.begin_transition(6, 0)  # ... which PreAct overwrites
    assert len(t) == 3 and t.oldest == 3
    np.testing.assert_array_equal(t.state[t.ordered_indices()], [3, 4, 5])
    assert set(draw(t, 300).tolist()) == {3, 0, 1}
    t.end_transition(60.0, False, False, 7)
    assert len(t) == 4 and t.head == 3
    np.testing.assert_array_equal(t.state[t.ordered_indices()], [3, 4, 5, 6])


def test_uniform_sample_indices_cover_exactly_the_stored_slots():
    for count in (3, 8, 11):
        t = filled(8, count)
        assert set(draw(t, 300).tolist()) == set(t.ordered_indices().tolist())
    with pytest.raises(
        ValueError, match="CircularArraySARTTrajectory holds 3 transitions, fewer than batch_size 4"
    ):
        filled(8, 3).sample_indices(4, np.random.default_rng(0))


def test_clear():
    t = filled(4, 6)
    state = t.state
    t.clear()
    assert len(t) == 0 and t.head == 0 and t.n_inserted == 0 and not t.pending
    assert t.state is state and not state.any()


# ---- recording in a run ----
def test_recording_a_cartpole_run(recorder):
    env = rk.GymEnv("CartPole-v1", seed=0, max_episode_steps=30)  # both terminations and cuts
    t = CircularArraySARTTrajectory(1000, env.state_space, env.action_space)
    arrays = [getattr(t, name) for name in t.traces]
    record = recorder()
    rk.run(rk.Agent(rk.RandomPolicy(seed=0), t), env, rk.StopAfterNSteps(400), record)
    assert len(t) == 400 and t.head == 400 and t.n_inserted == 400
    assert all(
        getattr(t, name) is a for name, a in zip(t.traces, arrays, strict=True)
    )  # never reallocated
    k = slice(0, 400)
    np.testing.assert_array_equal(t.state[k], np.array(record.state, np.float32))
    np.testing.assert_array_equal(t.action[k], record.action)
    np.testing.assert_array_equal(t.reward[k], record.reward)
    np.testing.assert_array_equal(t.terminal[k], record.terminal)
    np.testing.assert_array_equal(t.truncated[k], record.truncated)
    np.testing.assert_array_equal(t.next_state[k], np.array(record.next_state, np.float32))
    ends = t.terminal[k] | t.truncated[k]
    assert t.terminal[k].sum() >= 3 and t.truncated[k].sum() >= 3
    assert len(np.unique(t.state[k], axis=0)) > 390  # copies of each state, not one buffer
    for i in range(399):
        if ends[i]:  # the real final observation, never the state after the reset
            assert not np.array_equal(t.next_state[i], t.state[i + 1])
        else:
            np.testing.assert_array_equal(t.next_state[i], t.state[i + 1])
    final = np.flatnonzero(t.terminal[k])
    assert (np.abs(t.next_state[final][:, [0, 2]]) > [2.4, 0.2094]).any(axis=1).all()


def test_recording_wraps_around_in_a_run(recorder):
    env = rk.GymEnv("CartPole-v1", seed=1)
    t = CircularArraySARTTrajectory(50, env.state_space, env.action_space)
    record = recorder()
    rk.run(rk.Agent(rk.RandomPolicy(seed=1), t), env, rk.StopAfterNSteps(333), record)
    assert len(t) == 50 and t.head == 333 % 50 and t.n_inserted == 333
    ordered = t.ordered_indices()
    np.testing.assert_array_equal(t.state[ordered], np.array(record.state[-50:], np.float32))
    np.testing.assert_array_equal(
        t.next_state[ordered], np.array(record.next_state[-50:], np.float32)
    )
    np.testing.assert_array_equal(t.action[ordered], record.action[-50:])


def test_a_step_that_raises_in_env_act_is_not_recorded(fails_once):
    env = rk.GymEnv("CartPole-v1", seed=0)
    t = CircularArraySARTTrajectory(3, env.state_space, env.action_space)
    agent = rk.Agent(fails_once(seed=0, at=5), t)
    with pytest.raises(rk.InvalidActionError):
        rk.run(agent, env, rk.StopAfterNSteps(10))
    assert len(t) == 2 and t.pending and t.n_inserted == 4  # the failed step is not counted
    rk.run(agent, env, rk.StopAfterNSteps(2))  # continues the same episode
    assert len(t) == 3 and t.n_inserted == 6 and 7 not in t.action
    ordered = t.ordered_indices()
    for i, j in zip(ordered[:-1], ordered[1:], strict=True):
        np.testing.assert_array_equal(t.next_state[i], t.state[j])


def test_discrete_observations():
    env = rk.GymEnv("CliffWalking-v1", seed=0)
    t = CircularArraySARTTrajectory(10, env.state_space, env.action_space)
    rk.run(rk.Agent(rk.RandomPolicy(seed=0), t), env, rk.StopAfterNSteps(3))
    assert t.state.dtype == np.int64 and t.state[0] == 36 and len(t) == 3


def test_an_episode_left_unfinished_is_cut_at_the_next_reset():
    t = CircularArraySARTTrajectory(100, state_shape=(4,))
    agent = rk.Agent(rk.RandomPolicy(seed=0), t)
    rk.run(agent, rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(5))
    assert len(t) == 5 and not t.truncated[4] and not t.terminal[4]
    rk.run(agent, rk.GymEnv("CartPole-v1", seed=1), rk.StopAfterNSteps(5))  # a new env: reset
    assert t.truncated[4] and not t.terminal[4]
    assert not t.truncated[:4].any() and not t.truncated[5:10].any()


def test_a_finished_episode_is_left_as_it_is():
    t = CircularArraySARTTrajectory(1000, state_shape=(4,))
    env = rk.GymEnv("CartPole-v1", seed=0)
    rk.run(rk.Agent(rk.RandomPolicy(seed=0), t), env, rk.StopAfterNEpisodes(3))
    k = slice(0, len(t))
    assert t.terminal[k].sum() == 3 and not t.truncated[k].any()


def test_the_plan_shows_the_recording_methods():
    env = rk.GymEnv("CartPole-v1", seed=0)
    t = CircularArraySARTTrajectory(10, env.state_space, env.action_space)
    plan = build_plan(rk.Agent(rk.RandomPolicy(), t), env)
    for stage in (rk.PRE_EPISODE_STAGE, rk.PRE_ACT_STAGE, rk.POST_ACT_STAGE):
        (step,) = plan.stages[stage]
        assert "CircularArraySARTTrajectory" in step.name
        assert step.where.startswith("rlkit/trajectories/circular.py")


# ---- checkpoints ----
def test_state_dict_round_trip_continues_identically():
    a = filled(6, 9)
    a.begin_transition(9, 1)  # saved in the middle of a step
    saved = a.state_dict()
    a.state[0] = -1  # the saved arrays are copies
    assert saved["state"][0] != -1
    a.state[0] = saved["state"][0]
    b = CircularArraySARTTrajectory(6, state_shape=())
    b.load_state_dict(saved)
    assert (b.head, b.n_inserted, b.pending, len(b)) == (a.head, a.n_inserted, True, 5)
    for t in (a, b):
        t.end_transition(90.0, True, False, 10)
        for i in range(10, 14):
            t.append(i, 3, 1.0, False, i == 12, i + 1)
    for name in a.traces:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert (a.head, a.n_inserted, len(a)) == (b.head, b.n_inserted, len(b))
    np.testing.assert_array_equal(draw(a, 5, seed=3), draw(b, 5, seed=3))


def test_load_state_dict_rejects_incompatible_checkpoints():
    saved = CircularArraySARTTrajectory(6, BOX, DISCRETE).state_dict()
    with pytest.raises(ValueError, match="checkpoint has capacity=6, this trajectory has 7"):
        CircularArraySARTTrajectory(7, BOX, DISCRETE).load_state_dict(saved)
    with pytest.raises(ValueError, match=r"checkpoint has state_shape=\[3\], this trajectory"):
        CircularArraySARTTrajectory(6, state_shape=(4,)).load_state_dict(saved)
    with pytest.raises(ValueError, match="checkpoint has state_dtype='<f4'"):
        CircularArraySARTTrajectory(6, BOX, DISCRETE, state_dtype=np.uint8).load_state_dict(saved)
    del saved["action_dtype"]
    with pytest.raises(ValueError, match="checkpoint has no 'action_dtype'"):
        CircularArraySARTTrajectory(6, BOX, DISCRETE).load_state_dict(saved)


def test_a_rejected_checkpoint_changes_nothing():
    t = filled(4, 3)
    saved = filled(4, 4).state_dict()
    saved["next_state"] = np.zeros(3)
    with pytest.raises(ValueError, match=r"checkpoint trace 'next_state' has shape \(3,\)"):
        t.load_state_dict(saved)
    assert t.state.tolist() == [0, 1, 2, 0] and t.n_inserted == 3
