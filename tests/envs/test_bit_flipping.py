"""rlkit/BitFlipping-v0: gymnasium's check_env, SB3's semantics, both action kinds, the
vectorised compute_reward, seeding and bad input."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import rlkit as rk


@pytest.mark.parametrize("continuous", [False, True])
def test_check_env(continuous):
    env = gym.make("rlkit/BitFlipping-v0", n_bits=6, continuous=continuous)
    check_env(env.unwrapped)
    space = env.observation_space
    assert sorted(space.spaces) == ["achieved_goal", "desired_goal", "observation"]
    assert all(isinstance(s, gym.spaces.MultiBinary) for s in space.spaces.values())
    expected = gym.spaces.Box if continuous else gym.spaces.Discrete
    assert isinstance(env.action_space, expected)


def test_discrete_flips_one_bit_until_success_and_truncates_after_n_bits():
    env = gym.make("rlkit/BitFlipping-v0", n_bits=5).unwrapped
    obs, _ = env.reset(seed=3)
    assert (obs["desired_goal"] == 1).all() and obs["observation"].dtype == np.int8
    np.testing.assert_array_equal(obs["observation"], obs["achieved_goal"])
    zeros = np.flatnonzero(obs["observation"] == 0)
    assert zeros.size >= 2  # seed 3's start
    before = obs["observation"].copy()
    obs, reward, terminated, truncated, info = env.step(int(zeros[0]))
    assert obs["observation"][zeros[0]] == 1 and (obs["observation"] != before).sum() == 1
    assert (reward, terminated, truncated, info["is_success"]) == (-1.0, False, False, False)
    for i in zeros[1:]:
        obs, reward, terminated, truncated, info = env.step(int(i))
    assert (reward, terminated, info["is_success"]) == (0.0, True, True)
    env.reset(seed=0)
    flags = [env.step(0)[2:4] for _ in range(5)]  # flipping one bit back and forth
    assert flags[-1][1] and not any(t for _, t in flags[:-1])  # truncated at step n_bits


def test_continuous_flips_the_bits_whose_action_is_positive():
    env = gym.make("rlkit/BitFlipping-v0", n_bits=4, continuous=True).unwrapped
    obs, _ = env.reset(seed=0)
    before = obs["observation"].copy()
    obs, *_ = env.step(np.array([0.5, -0.5, 0.0, 1.0], np.float32))
    np.testing.assert_array_equal(obs["observation"], before ^ np.array([1, 0, 0, 1], np.int8))
    obs, reward, terminated, *_ = env.step((obs["observation"] == 0).astype(np.float32) * 2 - 1)
    assert reward == 0.0 and terminated


def test_compute_reward_is_vectorised():
    env = rk.BitFlippingEnv(n_bits=3)
    achieved = np.array([[1, 1, 1], [0, 1, 1], [1, 1, 1]])
    desired = np.array([[1, 1, 1], [1, 1, 1], [1, 0, 1]])
    rewards = env.compute_reward(achieved, desired, [{}] * 3)
    assert rewards.dtype == np.float32 and rewards.tolist() == [0.0, -1.0, -1.0]
    assert float(env.compute_reward(achieved[0], desired[0], {})) == 0.0
    with pytest.raises(ValueError, match="BitFlippingEnv.compute_reward: achieved_goal"):
        env.compute_reward(np.ones((2, 4)), np.ones((2, 4)), None)


def test_seeded_starts_are_reproducible():
    a, b = rk.GymEnv("rlkit/BitFlipping-v0", seed=7), rk.GymEnv("rlkit/BitFlipping-v0", seed=7)
    for _ in range(3):
        a.reset(), b.reset()
        np.testing.assert_array_equal(a.state["observation"], b.state["observation"])


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="BitFlippingEnv: n_bits must be a positive integer"):
        rk.BitFlippingEnv(n_bits=0)
    with pytest.raises(TypeError, match="BitFlippingEnv: continuous must be True or False"):
        rk.BitFlippingEnv(continuous="yes")
    env = rk.BitFlippingEnv(n_bits=3)
    env.reset(seed=0)
    with pytest.raises(rk.InvalidActionError, match="bit index in 0..2, got 3"):
        env.step(3)


def test_random_goal_draws_a_new_goal_each_episode_and_stays_reproducible():
    env = gym.make("rlkit/BitFlipping-v0", n_bits=12, random_goal=True).unwrapped
    check_env(env)
    obs, _ = env.reset(seed=5)
    goals = [obs["desired_goal"].copy()]
    for _ in range(4):
        goals.append(env.reset()[0]["desired_goal"].copy())
    assert all(g.dtype == np.int8 and set(g.tolist()) <= {0, 1} for g in goals)
    assert len({g.tobytes() for g in goals}) == 5  # a new goal each episode (12 bits)
    # the goal is the one compute_reward and termination use
    obs, _ = env.reset(seed=5)
    for i in np.flatnonzero(obs["observation"] != obs["desired_goal"]):
        obs, reward, terminated, truncated, info = env.step(int(i))
    assert (reward, terminated, info["is_success"]) == (0.0, True, True)
    np.testing.assert_array_equal(obs["achieved_goal"], goals[0])
    # the same seed, the same starts and goals; the fixed-goal env's starts are unchanged
    again = gym.make("rlkit/BitFlipping-v0", n_bits=12, random_goal=True).unwrapped
    fixed = gym.make("rlkit/BitFlipping-v0", n_bits=12).unwrapped
    a, b = again.reset(seed=5)[0], fixed.reset(seed=5)[0]
    np.testing.assert_array_equal(a["desired_goal"], goals[0])
    np.testing.assert_array_equal(a["observation"], b["observation"])
    assert (b["desired_goal"] == 1).all()


def test_random_goal_must_be_a_bool():
    with pytest.raises(TypeError, match="BitFlippingEnv: random_goal must be True or False, got 1"):
        rk.BitFlippingEnv(random_goal=1)
