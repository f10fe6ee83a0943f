"""Issue 21 item 10: VectorGymEnv's construction errors name the sub-env, its spaces and the
expected ones, and an impossible sub-env count (rlkit/envs/vector.py, vector_group.py)."""

from __future__ import annotations

import functools

import gymnasium as gym
import pytest

import rlkit as rk
from rlkit.envs.vector import MAX_N_ENVS


def cartpole(max_episode_steps: int | None = None) -> gym.Env:
    return gym.make("CartPole-v1", max_episode_steps=max_episode_steps)


def pendulum() -> gym.Env:  # another observation space and another action space
    return gym.make("Pendulum-v1")


@pytest.mark.parametrize("backend", ["sync", "subprocess"])
def test_a_sub_env_with_other_spaces_is_named_with_both_spaces_and_the_expected_ones(backend):
    fns = [cartpole, cartpole, pendulum]
    with pytest.raises(ValueError) as error:
        rk.VectorGymEnv(fns, backend=backend, seed=3)
    message = str(error.value)
    seed = rk.envs.vector.sub_env_seeds(3, 3)[2]
    assert f"sub-env 2 (seed {seed})" in message
    expected_obs, expected_act = cartpole().observation_space, cartpole().action_space
    obs, act = pendulum().observation_space, pendulum().action_space
    assert f"observation space {obs}, not {expected_obs}" in message
    assert f"action space {act}, not {expected_act}" in message
    assert "expected every sub-env to have the spaces of sub-env 0" in message


@pytest.mark.parametrize("backend", ["sync", "subprocess"])
def test_only_the_action_space_differs(backend):
    def three_actions() -> gym.Env:
        env = cartpole()
        env.action_space = gym.spaces.Discrete(3)
        return env

    with pytest.raises(ValueError, match=r"sub-env 1 \(seed None\) has the action space "
                                         r"Discrete\(3\), not Discrete\(2\)"):
        rk.VectorGymEnv([cartpole, three_actions], backend=backend)


@pytest.mark.parametrize("backend", ["sync", "subprocess"])
def test_alike_spaces_with_other_settings_are_accepted(backend):
    fns = [cartpole, functools.partial(cartpole, max_episode_steps=50)]
    env = rk.VectorGymEnv(fns, backend=backend, seed=0)
    env.reset()
    assert env.state.shape == (2, 4)
    env.close()


def test_an_impossible_sub_env_count_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match=r"n_envs=1,000,000,000,000 sub-envs of 'CartPole-v1'"
                                         r".*at most 100,000"):
        rk.VectorGymEnv("CartPole-v1", 10**12)
    with pytest.raises(ValueError, match="at most"):
        rk.VectorGymEnv("CartPole-v1", MAX_N_ENVS + 1, backend="subprocess")
