"""TD3 and DDPG (rlkit/learners/actor_critic/td3.py, ddpg.py): target smoothing and clipping,
the losses by hand, delayed actor updates, target updates, action noise, bad input."""

from __future__ import annotations

from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.learners.actor_critic import ddpg, td3
from rlkit.learners.builder import Batch


def test_target_smoothing_clips_the_noise_then_the_action():
    actions = torch.tensor([[0.9, 0.0, -0.2], [0.1, -0.95, 0.0]])
    noise = torch.tensor([[0.3, -0.8, 0.1], [-2.0, -0.2, 0.6]])
    out = td3.smoothed_target_actions(actions, noise, 0.5)
    expected = [[1.0, -0.5, -0.1], [-0.4, -1.0, 0.5]]
    assert torch.allclose(out, torch.tensor(expected))


def _stub(q=(1.0, 3.0), q_target_weights=(1.0, 2.0), target_action=0.9):
    """Critics Q_i(s, a) = c_i (+0*a), target critics Q'_i(s, a) = w_i * a: the target value is
    readable from the smoothed action."""
    weight = torch.zeros(1, requires_grad=True)

    def critic(obs, act):
        return tuple(torch.full((obs.shape[0],), v) + act.sum(-1) * weight for v in q)

    critic.q1 = lambda obs, act: 2.0 * act.sum(-1)
    return SimpleNamespace(
        critic=critic,
        critic_target=lambda obs, act: tuple(w * act.sum(-1) for w in q_target_weights),
        actor_target=lambda obs: torch.full((obs.shape[0], 1), target_action),
        actor=lambda obs: torch.full((obs.shape[0], 1), 0.25),
    )


def test_critic_loss_by_hand_with_smoothing_and_twin_minimum():
    policy = SimpleNamespace(config={"gamma": 0.5, "target_noise_clip": 0.5})
    batch = Batch(
        state=torch.zeros(2, 3),
        action=torch.zeros(2, 1),
        reward=torch.tensor([1.0, 2.0]),
        terminal=torch.tensor([0.0, 1.0]),
        next_state=torch.zeros(2, 3),
        target_noise=torch.tensor([[0.7], [-0.3]]),
    )
    loss, _ = td3.critic_loss(policy, _stub(), None, batch)
    # transition 0: a' = clip(0.9 + clip(0.7, +-0.5)) = 1.0; min(1*1, 2*1) = 1 -> y = 1 + 0.5
    # transition 1: terminal -> y = 2
    targets = [1.5, 2.0]
    expected = sum(np.mean([(q - y) ** 2 for y in targets]) for q in (1.0, 3.0))
    assert loss.item() == pytest.approx(expected, rel=1e-6)


def test_actor_loss_is_minus_q1_of_the_actor_action():
    batch = Batch(state=torch.zeros(4, 3))
    assert td3.actor_loss(None, _stub(), None, batch).item() == pytest.approx(-0.5)


def _agent(cls=td3.TD3, seed=0, **config):
    env = rk.GymEnv("Pendulum-v1", seed=seed)
    settings = {"learning_starts": 40, "batch_size": 16, "hidden": (8, 8), **config}
    return cls.agent(env, seed=seed, **settings), env


def _params(module):
    return [p.detach().clone() for p in module.parameters()]


def test_actor_and_targets_move_every_policy_delay_gradient_steps():
    agent, env = _agent(policy_delay=2, tau=0.5)
    policy = agent.policy
    rk.run(agent, env, rk.StopAfterNSteps(40))
    actor, actor_t, critic_t = (
        _params(m)
        for m in (policy.model.actor, policy.model.actor_target, policy.model.critic_target)
    )
    rk.run(agent, env, rk.StopAfterNSteps(1))  # gradient step 1: critic only
    assert policy.gradient_steps == 1
    for m, saved in (
        (policy.model.actor, actor),
        (policy.model.actor_target, actor_t),
        (policy.model.critic_target, critic_t),
    ):
        assert all(torch.equal(p, q) for p, q in zip(m.parameters(), saved, strict=True))
    rk.run(agent, env, rk.StopAfterNSteps(1))  # gradient step 2: actor and both targets
    assert not all(
        torch.equal(p, q) for p, q in zip(policy.model.actor.parameters(), actor, strict=True)
    )
    for target, old, source in (
        (policy.model.actor_target, actor_t, policy.model.actor),
        (policy.model.critic_target, critic_t, policy.model.critic),
    ):
        for t, b, s in zip(target.parameters(), old, source.parameters(), strict=True):
            assert torch.allclose(t, 0.5 * b + 0.5 * s, atol=1e-6)


def test_ddpg_is_one_critic_no_smoothing_no_delay():
    agent, env = _agent(ddpg.DDPG)
    policy = agent.policy
    assert len(policy.model.critic.qs) == 1 and policy.config["policy_delay"] == 1
    assert policy.config["target_policy_noise"] == 0.0
    rk.run(agent, env, rk.StopAfterNSteps(41))
    assert policy.gradient_steps == 1 and "actor_loss" in rk.statistics(policy)


def test_noise_is_added_in_the_scaled_space_and_clipped():
    space = gym.spaces.Box(np.array([0.0], np.float32), np.array([10.0], np.float32))
    make = lambda noise: td3.TD3(  # noqa: E731
        state_space=gym.spaces.Box(-1, 1, (2,)),
        action_space=space,
        seed=0,
        learning_starts=0,
        hidden=(4,),
        action_noise=noise,
    )
    env = SimpleNamespace(state=np.zeros(2, np.float32))
    quiet, loud = make(None), make(rk.GaussianActionNoise(100.0))
    assert quiet.act(env) == rk.greedy(quiet).act(env)
    actions = np.array([loud.act(env) for _ in range(50)])
    assert set(np.unique(actions)) <= {0.0, 10.0}  # huge noise: clipped to the bounds


# ---- action noise ----


def test_ornstein_uhlenbeck_by_hand_and_reset_per_env():
    ou = rk.OrnsteinUhlenbeckActionNoise(0.3, theta=0.15, dt=0.01, mean=0.0, seed=1)
    z = np.random.default_rng(1).standard_normal((2, 1))
    x = ou(2, 1)
    assert np.allclose(x, 0.3 * np.sqrt(0.01) * z)
    z2 = np.random.default_rng(1).standard_normal((4, 1))[2:]
    y = ou(2, 1)
    assert np.allclose(y, x - 0.15 * x * 0.01 + 0.3 * 0.1 * z2)
    ou.reset([1])
    assert ou.state[1, 0] == 0.0 and ou.state[0, 0] == y[0, 0]


def test_noise_state_round_trip():
    ou = rk.OrnsteinUhlenbeckActionNoise(0.3, seed=1)
    ou(1, 2)
    saved = ou.state_dict()
    a = ou(1, 2)
    other = rk.OrnsteinUhlenbeckActionNoise(0.3, seed=5)
    other.load_state_dict(saved)
    assert np.array_equal(other(1, 2), a)


@pytest.mark.parametrize("cls", ["GaussianActionNoise", "OrnsteinUhlenbeckActionNoise"])
def test_negative_noise_scale_is_refused(cls):
    with pytest.raises(ValueError, match=f"{cls}: sigma must be a non-negative.*-0.1"):
        getattr(rk, cls)(-0.1)
    with pytest.raises(ValueError, match="sigma"):
        getattr(rk, cls)([0.1, -0.2])


def test_action_noise_must_be_a_noise_object():
    with pytest.raises(TypeError, match="action_noise must be"):
        _agent(action_noise=0.1)


def test_negative_target_policy_noise_is_refused():
    with pytest.raises(ValueError, match="target_policy_noise"):
        _agent(target_policy_noise=-0.2)


@pytest.mark.parametrize("cls", [td3.TD3, ddpg.DDPG])
def test_discrete_action_space_is_refused_naming_it(cls):
    with pytest.raises(TypeError, match=r"Discrete\(2\).*DQN"):
        cls(rk.GymEnv("CartPole-v1"))
