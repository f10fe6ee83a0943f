"""The policy-gradient learners' network (rlkit/learners/policy_gradient/models.py)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.wrappers import FlattenObservation

import rlkit as rk
from rlkit.learners.policy_gradient.models import observation_size

_BOX = gym.spaces.Box(-1, 1, (3,), np.float32)


@pytest.mark.parametrize(
    "space",
    [
        gym.spaces.Discrete(5),
        gym.spaces.MultiDiscrete([3, 4]),
        gym.spaces.Dict({"a": _BOX}),
        gym.spaces.Tuple((_BOX, _BOX)),
        gym.spaces.Box(-1, 1, (), np.float32),  # failed at the first step: an IndexError
    ],
)
def test_observation_spaces_other_than_box_are_refused_naming_the_wrapper(space):
    with pytest.raises(TypeError, match="observation space must be a Box of at least one "
                       "dimension.*FlattenObservation"):
        rk.PPO(state_space=space, action_space=gym.spaces.Discrete(2))


def test_a_flattened_discrete_observation_is_one_hot_and_learns():
    env = rk.GymEnv(FlattenObservation(gym.make("FrozenLake-v1")), seed=0)
    agent = rk.A2C.agent(env, seed=0)
    rk.run(agent, env, rk.StopAfterNSteps(10))
    assert observation_size("A2C", env.state_space) == 16
    assert agent.policy.updates == 2


def test_an_unknown_activation_is_refused():
    with pytest.raises(ValueError, match=r"activation must be one of \[.*'tanh'\], got 'gelu'"):
        rk.PPO(rk.GymEnv("CartPole-v1", seed=0), activation="gelu")


class _ImageEnv(gym.Env):
    """uint8 observations of ``shape``: images (C, H, W) like Atari frames (without their
    size), or a vector."""

    action_space = gym.spaces.Discrete(2)

    def __init__(self, shape=(3, 6, 6)):
        self.observation_space = gym.spaces.Box(0, 255, shape, np.uint8)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return self.observation_space.sample(), {}

    def step(self, action):
        return self.observation_space.sample(), float(action), False, False, {}


def test_integer_observations_are_learned_from_as_floats_and_images_need_a_cnn():
    # a uint8 vector (not an image) goes through the MLP as floats
    env = rk.GymEnv(_ImageEnv((12,)), seed=0)
    agent = rk.PPO.agent(env, seed=0, n_steps=8, batch_size=4, n_epochs=2)
    rk.run(agent, env, rk.StopAfterNSteps(16))  # failed: "mat1 and mat2 ... Byte and Float"
    assert agent.policy.updates == 2
    assert np.isfinite(rk.statistics(agent.policy)["loss"])
    # uint8 images (C, H, W): an MLP on raw pixels is refused, a CNN learns from them
    images = rk.GymEnv(_ImageEnv((3, 6, 6)), seed=0)
    with pytest.raises(ValueError, match=r"uint8 images of shape \(3, 6, 6\).*give cnn="):
        rk.PPO(images, seed=0)
    agent = rk.PPO.agent(images, seed=0, n_steps=8, batch_size=4, n_epochs=2, cnn="minatar")
    rk.run(agent, images, rk.StopAfterNSteps(16))
    assert agent.policy.updates == 2
    assert np.isfinite(rk.statistics(agent.policy)["loss"])


