"""Issue 10: wrapper state that is not plain data is saved (NormalizeObservation's running
statistics, deques) or refused naming the wrapper (rlkit/envs/gym.py)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk


def normalized() -> rk.GymEnv:
    inner = gym.wrappers.NormalizeObservation(gym.make("CartPole-v1"))
    return rk.GymEnv(gym.wrappers.NormalizeReward(inner), seed=0)


def play(env: rk.GymEnv, steps: int, rng: np.random.Generator) -> list:
    seen = []
    for _ in range(steps):
        if env.done or getattr(env, "needs_reset", True):
            env.reset()
        env.act(int(rng.integers(2)))
        seen.append((env.state.copy(), env.reward))
    return seen


def test_normalize_observation_statistics_are_saved_and_restored():
    env = normalized()
    play(env, 40, np.random.default_rng(0))
    state = env.state_dict()
    other = normalized()
    play(other, 3, np.random.default_rng(1))  # different statistics
    other.load_state_dict(state)
    a_rms, b_rms = env.env.env.obs_rms, other.env.env.obs_rms
    assert np.array_equal(a_rms.mean, b_rms.mean) and np.array_equal(a_rms.var, b_rms.var)
    assert a_rms.count == b_rms.count
    assert env.env.return_rms.count == other.env.return_rms.count
    for (s1, r1), (s2, r2) in zip(
        play(env, 30, np.random.default_rng(2)),
        play(other, 30, np.random.default_rng(2)),
        strict=True,
    ):
        assert np.array_equal(s1, s2) and r1 == r2


def test_deques_of_wrappers_are_saved():
    def build() -> rk.GymEnv:
        inner = gym.wrappers.RecordEpisodeStatistics(gym.make("CartPole-v1"), buffer_length=5)
        return rk.GymEnv(gym.wrappers.FrameStackObservation(inner, 3), seed=0)

    env = build()
    play(env, 60, np.random.default_rng(0))
    other = build()
    other.load_state_dict(env.state_dict())
    assert list(other.env.env.return_queue) == list(env.env.env.return_queue)
    assert other.env.env.return_queue.maxlen == 5
    assert all(
        np.array_equal(a, b) for a, b in zip(other.env.obs_queue, env.env.obs_queue, strict=True)
    )


class KeepsAnObject(gym.Wrapper):
    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.history = {1: object()}.values()  # state a checkpoint cannot hold


def test_a_wrapper_with_state_that_cannot_be_saved_is_refused_by_name(tmp_path):
    env = rk.GymEnv(KeepsAnObject(gym.make("CartPole-v1")), seed=0)
    with pytest.raises(TypeError, match="wrapper KeepsAnObject keeps 'history'"):
        env.state_dict()
    steps = rk.DoEveryNSteps(lambda *args: None)
    hook = steps + rk.CheckpointHook(tmp_path, every_n_steps=5)
    with pytest.raises(TypeError, match="wrapper KeepsAnObject keeps 'history'"):
        rk.run(rk.RandomPolicy(seed=0), env, rk.StopAfterNSteps(10), hook)
    assert steps.t == 0  # refused when the run starts, not at the first checkpoint
