"""GymEnv's state (rlkit/envs/gym.py state_dict/load_state_dict): round trips through the
checkpoint encoding, mid-episode and before the first reset, time limits, space generators."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk
from rlkit.core.state import get_state, set_state
from rlkit.hooks.checkpoint import (
    decode_state,
    encode_state,
)


def _play(env: rk.GymEnv, actions: list) -> list:
    seen = []
    for a in actions:
        if env.done or env.needs_reset:
            env.reset()
        env.act(a)
        seen.append((_plain(env.state), env.reward, env.is_terminated, env.is_truncated))
    return seen


def _plain(x: Any) -> Any:
    return x.tolist() if isinstance(x, np.ndarray) else x


@pytest.mark.parametrize(
    "env_id, kwargs", [("CartPole-v1", {}), ("CliffWalking-v1", {}), ("Blackjack-v1", {}),
                       ("FrozenLake-v1", {}), ("MountainCar-v0", {"max_episode_steps": 30})]
)  # fmt: skip
def test_gym_env_state_round_trip_mid_episode(env_id, kwargs):
    env = rk.GymEnv(env_id, seed=1, **kwargs)
    actions = [int(a) for a in np.random.default_rng(0).integers(env.action_space.n, size=300)]
    _play(env, actions[:17])
    saved = encode_state(get_state(env))  # through the file encoding, as a checkpoint does
    expected = _play(env, actions[17:])
    fresh = rk.GymEnv(env_id, seed=1, **kwargs)
    set_state(fresh, decode_state(*saved))
    assert _play(fresh, actions[17:]) == expected


def test_gym_env_state_before_the_first_reset_keeps_the_pending_seed():
    env = rk.GymEnv("CartPole-v1", seed=4)
    fresh = rk.GymEnv("CartPole-v1")
    set_state(fresh, get_state(env))
    env.reset()
    fresh.reset()
    assert np.array_equal(env.state, fresh.state)


def test_gym_env_state_restores_time_limit_and_space_generators():
    env = rk.GymEnv("CartPole-v1", seed=0)
    env.reset()
    env.action_space.seed(3)
    for _ in range(5):
        env.act(0)
    state = get_state(env)
    assert state["layers"][0]["attributes"]["values"]["_elapsed_steps"] == 5
    fresh = rk.GymEnv("CartPole-v1")
    set_state(fresh, state)
    assert fresh.env._elapsed_steps == 5
    assert [env.action_space.sample() for _ in range(5)] == [
        fresh.action_space.sample() for _ in range(5)
    ]


def test_gym_env_refuses_a_different_wrapper_chain():
    env = rk.GymEnv("CartPole-v1", seed=0)
    other = rk.GymEnv(gym.make("CartPole-v1").unwrapped)
    with pytest.raises(ValueError, match="wrapper chain"):
        set_state(other, get_state(env))
