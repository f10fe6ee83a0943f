"""SB3's CnnPolicy network for PPO/A2C on image observations (cnn_models.py)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.learners.policy_gradient.cnn_models import CnnActorCritic
from rlkit.learners.policy_gradient.models import actor_critic_model
from rlkit.policies.distributions import Categorical

ATARI = gym.spaces.Box(0, 255, (4, 84, 84), np.uint8)


def test_shared_nature_body_and_orthogonal_heads():
    net = actor_critic_model(ATARI, gym.spaces.Discrete(6), Categorical, {"cnn": "nature"}, 0)
    assert isinstance(net, CnnActorCritic)
    convs = [m for m in net.modules() if isinstance(m, torch.nn.Conv2d)]
    assert [c.out_channels for c in convs] == [32, 64, 64]
    assert net.features[0].in_features == 3136 and net.features[0].out_features == 512
    obs = torch.randint(0, 256, (3, 4, 84, 84), dtype=torch.uint8)
    assert net(obs).shape == (3, 6) and net.value(obs).shape == (3,)
    assert torch.equal(net(obs), net(obs.float()))  # scaled inside: uint8 or float in
    # SB3's orthogonal init: rows of the action head have norm 0.01, biases are zero
    w = net.pi.weight.detach()
    assert torch.allclose(w @ w.T, 0.01**2 * torch.eye(6), atol=1e-6)
    assert not net.pi.bias.any() and not net.vf.bias.any()
    again = actor_critic_model(ATARI, gym.spaces.Discrete(6), Categorical, {"cnn": "nature"}, 0)
    for a, b in zip(net.state_dict().values(), again.state_dict().values(), strict=True):
        assert torch.equal(a, b)


@pytest.mark.parametrize("algorithm", ["PPO", "A2C"])
def test_ppo_and_a2c_learn_on_minatar_with_a_cnn(algorithm):
    pytest.importorskip("minatar")
    env = rk.GymEnv(rk.make_minatar_env("MinAtar/Breakout-v1"), seed=0)
    cls = getattr(rk, algorithm)
    kw = {"n_steps": 64, "batch_size": 32, "n_epochs": 2} if algorithm == "PPO" else {"n_steps": 8}
    agent = cls.agent(env, seed=0, cnn="minatar", **kw)
    before = [p.detach().clone() for p in agent.policy.model.parameters()]
    rk.run(agent, env, rk.StopAfterNSteps(128))
    assert agent.policy.updates > 0
    after = list(agent.policy.model.parameters())
    assert not all(torch.equal(a, b) for a, b in zip(before, after, strict=True))
    assert agent.policy.predict(np.zeros((5, 4, 10, 10), np.uint8)).shape == (5,)


def test_image_space_without_cnn_gets_the_cnn_its_size_fits_and_cnn_without_images_is_refused():
    # no cnn: the Nature CNN for Atari's 84x84 frames (Stable-Baselines3's CnnPolicy)
    net = actor_critic_model(ATARI, gym.spaces.Discrete(6), Categorical, {"cnn": None}, 0)
    assert isinstance(net, CnnActorCritic) and net.encoder.cnn == "nature"
    given = actor_critic_model(ATARI, gym.spaces.Discrete(6), Categorical, {"cnn": "nature"}, 0)
    assert all(torch.equal(a, b) for a, b in zip(net.parameters(), given.parameters(), strict=True))
    with pytest.raises(ValueError, match="cnn must be one of"):
        actor_critic_model(ATARI, gym.spaces.Discrete(6), Categorical, {"cnn": "impala"}, 0)
    with pytest.raises(ValueError, match="needs image observations"):
        rk.PPO(rk.GymEnv("CartPole-v1"), seed=0, cnn="nature")
