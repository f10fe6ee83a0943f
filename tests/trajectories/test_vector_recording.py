"""Replay buffers fed by vector envs: one transition per sub-env and step, none crossing a reset,
truncation kept apart and bootstrapped from the real final observation; n-step windows stay in
one sub-env."""

from __future__ import annotations

import numpy as np
import pytest

import rlkit as rk
from rlkit.trajectories.samplers import NStepBatchSampler


def record(trajectory_class, capacity: int = 10_000, steps: int = 300, **kwargs):
    env = rk.VectorGymEnv("CartPole-v1", 3, seed=2, max_episode_steps=20)
    trajectory = trajectory_class(capacity, env.state_space, env.action_space, **kwargs)
    rk.run(rk.Agent(rk.RandomPolicy(seed=0), trajectory), env, rk.StopAfterNSteps(steps))
    env.close()
    return trajectory, env


def singles(env: rk.VectorGymEnv, trajectory) -> list[list[tuple]]:
    """Each sub-env's transitions replayed on a single GymEnv with the recorded actions."""
    out = []
    n = env.n_envs
    for i in range(n):
        single = rk.GymEnv("CartPole-v1", seed=env.seeds[i], max_episode_steps=20)
        single.reset()
        rows = []
        for action in trajectory.action[i : len(trajectory) : n]:
            before = np.asarray(single.state, np.float32)
            single.act(int(action))
            rows.append(
                (before, single.reward, single.is_terminated, single.is_truncated,
                 np.asarray(single.state, np.float32))
            )
            if single.done:
                single.reset()
        out.append(rows)
    return out


@pytest.mark.parametrize(
    "trajectory_class",
    [rk.CircularArraySARTTrajectory, rk.PrioritizedCircularArraySARTTrajectory],
    ids=lambda c: c.__name__,
)
def test_each_sub_envs_transitions_are_recorded_in_order(trajectory_class):
    t, env = record(trajectory_class)
    assert len(t) == t.n_inserted == 300 and t.stride == 3
    expected = singles(env, t)
    for i in range(3):
        for k, (state, reward, terminal, truncated, next_state) in enumerate(expected[i]):
            slot = i + 3 * k
            assert np.array_equal(t.state[slot], state)
            assert t.reward[slot] == reward
            assert (t.terminal[slot], t.truncated[slot]) == (terminal, truncated)
            assert np.array_equal(t.next_state[slot], next_state)  # the real final one
    assert t.truncated.any() and t.terminal.any()


def test_prioritized_batch_gets_the_largest_priority():
    t, _ = record(rk.PrioritizedCircularArraySARTTrajectory, capacity=100)
    assert np.allclose(t.tree[np.arange(100)], t._max_leaf)


def test_a_wrapping_buffer_keeps_the_newest_transitions():
    t, _ = record(rk.CircularArraySARTTrajectory, capacity=100)
    assert len(t) == 100 and t.head == 300 % 100
    assert t.is_full


def test_the_buffer_must_hold_a_batch():
    env = rk.VectorGymEnv("CartPole-v1", 3, seed=0)
    t = rk.CircularArraySARTTrajectory(2, env.state_space, env.action_space)
    with pytest.raises(ValueError, match="capacity 2 is smaller than the batch of 3"):
        rk.run(rk.Agent(rk.RandomPolicy(seed=0), t), env, rk.StopAfterNSteps(3))


def test_n_step_windows_follow_one_sub_env_and_stop_at_its_episode_end():
    t, _ = record(rk.CircularArraySARTTrajectory)
    sampler = NStepBatchSampler(64, 3, 0.5, seed=0)
    batch = sampler.sample(t)
    for index, n, reward, terminal in zip(
        batch["indices"], batch["n"], batch["reward"], batch["terminal"], strict=True
    ):
        window = index + 3 * np.arange(n)  # the same sub-env's next transitions
        ends = t.terminal[window] | t.truncated[window]
        assert not ends[:-1].any()  # never past an episode end
        assert reward == pytest.approx(t.reward[window] @ 0.5 ** np.arange(n))
        assert terminal == t.terminal[window[-1]]
