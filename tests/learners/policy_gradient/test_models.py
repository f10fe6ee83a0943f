"""The policy-gradient learners' network (rlkit/learners/policy_gradient/models.py)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.wrappers import FlattenObservation

import rlkit as rk
from rlkit.learners.policy_gradient.models import observation_size
from rlkit.policies.observations import one_row

_BOX = gym.spaces.Box(-1, 1, (3,), np.float32)


@pytest.mark.parametrize(
    ("space", "width"),
    [
        (gym.spaces.Discrete(5), 5),
        (gym.spaces.MultiDiscrete([3, 4]), 7),
        (gym.spaces.Dict({"a": _BOX}), 3),
        (gym.spaces.Tuple((_BOX, _BOX)), 6),
        (gym.spaces.Box(-1, 1, (), np.float32), 1),  # a scalar: one feature
    ],
)
def test_observation_spaces_other_than_box_get_their_encoder(space, width):
    # (they were refused, naming FlattenObservation: docs/how-to/observations.md)
    policy = rk.PPO(state_space=space, action_space=gym.spaces.Discrete(2))
    assert policy.model.pi[0].in_features == width
    space.seed(0)
    obs = policy.observation_tensor(one_row(space.sample(), space))
    assert policy.model(obs).shape == (1, 2)


def test_an_observation_space_without_an_encoder_is_refused_naming_it():
    with pytest.raises(TypeError, match=r"actor_critic_model: encoder_for: no encoder for the "
                       r"observation space Text"):  # fmt: skip
        rk.PPO(state_space=gym.spaces.Text(4), action_space=gym.spaces.Discrete(2))


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


def test_integer_observations_are_learned_from_as_floats_and_images_through_a_cnn():
    # a uint8 vector (not an image) goes through the MLP as floats
    env = rk.GymEnv(_ImageEnv((12,)), seed=0)
    agent = rk.PPO.agent(env, seed=0, n_steps=8, batch_size=4, n_epochs=2)
    rk.run(agent, env, rk.StopAfterNSteps(16))  # failed: "mat1 and mat2 ... Byte and Float"
    assert agent.policy.updates == 2
    assert np.isfinite(rk.statistics(agent.policy)["loss"])
    # uint8 images (C, H, W): never an MLP on raw pixels, a CNN learns from them (without cnn
    # the one their size fits: MinAtar's for 6x6 frames)
    images = rk.GymEnv(_ImageEnv((3, 6, 6)), seed=0)
    assert rk.PPO(images, seed=0).model.encoder.cnn == "minatar"
    agent = rk.PPO.agent(images, seed=0, n_steps=8, batch_size=4, n_epochs=2, cnn="minatar")
    rk.run(agent, images, rk.StopAfterNSteps(16))
    assert agent.policy.updates == 2
    assert np.isfinite(rk.statistics(agent.policy)["loss"])


