import numpy as np
import pytest

import rlkit as rk
from rlkit.trajectories.episodic import VectorSARTTrajectory


@pytest.mark.parametrize("max_episodes", [0, -1, 1.5, True, "2"])
def test_bad_max_episodes(max_episodes):
    with pytest.raises(
        ValueError, match="VectorSARTTrajectory: max_episodes must be a positive integer, got"
    ):
        VectorSARTTrajectory(max_episodes)


def test_empty():
    t = VectorSARTTrajectory()
    assert len(t) == 0 and t.episode_start == 0 and t.max_episodes == 1
    assert all(getattr(t, name) == [] for name in t.traces)


def test_recording_one_cartpole_episode(recorder):
    env = rk.GymEnv("CartPole-v1", seed=0)
    t = VectorSARTTrajectory()
    record = recorder()
    rk.run(rk.Agent(rk.RandomPolicy(seed=0), t), env, rk.StopAfterNEpisodes(1), record)
    n = len(record.reward)
    assert len(t) == n and all(len(getattr(t, name)) == n for name in t.traces)
    for name in t.traces:
        for got, expected in zip(getattr(t, name), getattr(record, name), strict=True):
            np.testing.assert_array_equal(got, expected)
    # states are copies: distinct objects, not one reused buffer
    assert len({id(s) for s in t.state + t.next_state}) == 2 * n
    for i in range(n - 1):
        np.testing.assert_array_equal(t.next_state[i], t.state[i + 1])
    assert t.terminal[-1] and not any(t.terminal[:-1]) and not any(t.truncated)
    x, theta = t.next_state[-1][0], t.next_state[-1][2]
    assert abs(x) > 2.4 or abs(theta) > 0.2094  # the real final observation, not a reset one


def test_truncated_episode_ends_with_the_real_final_observation(recorder):
    env = rk.GymEnv("CartPole-v1", seed=3, max_episode_steps=5)
    t = VectorSARTTrajectory()
    record = recorder()
    rk.run(rk.Agent(rk.RandomPolicy(seed=0), t), env, rk.StopAfterNEpisodes(1), record)
    assert len(t) == 5 and t.truncated == [False] * 4 + [True] and not any(t.terminal)
    np.testing.assert_array_equal(t.next_state[-1], record.next_state[-1])
    np.testing.assert_array_equal(t.next_state[-1], env.state)


def test_only_the_last_max_episodes_are_kept(recorder):
    env = rk.GymEnv("CartPole-v1", seed=1, max_episode_steps=10)  # every episode: <= 10 steps
    t = VectorSARTTrajectory(max_episodes=2)
    record = recorder()
    rk.run(rk.Agent(rk.RandomPolicy(seed=1), t), env, rk.StopAfterNEpisodes(4), record)
    ends = np.flatnonzero(np.array(record.terminal) | np.array(record.truncated))
    assert len(ends) == 4
    first = ends[1] + 1  # episodes 3 and 4 remain
    assert len(t) == len(record.reward) - first
    assert t.episode_starts == [0, ends[2] + 1 - first] and t.episode_start == ends[2] + 1 - first
    for got, expected in zip(t.state, record.state[first:], strict=True):
        np.testing.assert_array_equal(got, expected)
    assert t.reward == record.reward[first:]


def test_max_episodes_one_starts_afresh_each_episode():
    env = rk.GymEnv("CartPole-v1", seed=2)
    t = VectorSARTTrajectory()
    lengths = rk.StepsPerEpisode()
    rk.run(rk.Agent(rk.RandomPolicy(seed=2), t), env, rk.StopAfterNEpisodes(3), lengths)
    assert len(t) == lengths.steps[-1] and t.episode_starts == [0]
    assert t.terminal[-1] and not any(t.terminal[:-1])


def test_an_episode_in_progress():
    env = rk.GymEnv("CartPole-v1", seed=0)
    t = VectorSARTTrajectory(max_episodes=3)
    rk.run(rk.Agent(rk.RandomPolicy(seed=0), t), env, rk.StopAfterNSteps(40))
    assert len(t) == 40
    start = t.episode_start
    assert 0 < start < 40  # CartPole under random actions ends within 40 steps
    assert t.terminal[start - 1] and not any(t.terminal[start:])


def test_start_episode_on_an_empty_episode_does_nothing():
    t = VectorSARTTrajectory(max_episodes=2)
    t.start_episode()
    assert t.episode_starts == [0]
    for i in range(3):
        t.state.append(i), t.action.append(0), t.reward.append(1.0)
        t.terminal.append(i == 2), t.truncated.append(False), t.next_state.append(i + 1)
    t.start_episode()
    t.start_episode()
    assert t.episode_starts == [0, 3] and t.episode_start == 3


def test_discrete_observations():
    t = VectorSARTTrajectory()
    rk.run(
        rk.Agent(rk.RandomPolicy(seed=0), t),
        rk.GymEnv("CliffWalking-v1", seed=0),
        rk.StopAfterNSteps(3),
    )
    assert len(t) == 3 and t.state[0] == 36


def test_state_dict_round_trip():
    env = rk.GymEnv("CartPole-v1", seed=4)
    t = VectorSARTTrajectory(max_episodes=2)
    rk.run(rk.Agent(rk.RandomPolicy(seed=4), t), env, rk.StopAfterNSteps(30))
    saved = t.state_dict()
    restored = VectorSARTTrajectory()
    restored.load_state_dict(saved)
    assert restored.max_episodes == 2 and restored.episode_starts == t.episode_starts
    for name in t.traces:
        for a, b in zip(getattr(t, name), getattr(restored, name), strict=True):
            np.testing.assert_array_equal(a, b)
    t.reward.append(5.0)  # the saved lists are copies
    assert len(saved["reward"]) == 30 and len(restored) == 30


def test_an_exception_between_pre_act_and_post_act_leaves_the_traces_aligned(fails_once):
    env = rk.GymEnv("CartPole-v1", seed=0)
    t = VectorSARTTrajectory()
    agent = rk.Agent(fails_once(seed=0, at=3), t)
    with pytest.raises(rk.InvalidActionError):
        rk.run(agent, env, rk.StopAfterNSteps(10))
    rk.run(agent, env, rk.StopAfterNSteps(3))  # continues the same episode
    assert len(t.state) == len(t.reward) == 5
    for i in range(4):
        np.testing.assert_array_equal(t.next_state[i], t.state[i + 1])
