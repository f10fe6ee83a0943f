"""SAC (rlkit/learners/actor_critic/sac.py): the pure functions on hand-computed inputs, the
tanh-squash correction against a numeric check, the entropy coefficient, targets, resume."""

from __future__ import annotations

import math
from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.learners.actor_critic import sac
from rlkit.learners.builder import Batch

# ---- the squashed Gaussian ----


def test_squashed_log_prob_matches_a_numeric_change_of_variables():
    gen = torch.Generator().manual_seed(0)
    mean = torch.randn(64, 3, generator=gen)
    log_std = torch.randn(64, 3, generator=gen) * 0.5
    noise = torch.randn(64, 3, generator=gen)
    action, log_prob = sac.squashed_gaussian(mean, log_std, noise)
    u = (mean + log_std.exp() * noise).double()
    h = 1e-5
    jacobian = (torch.tanh(u + h) - torch.tanh(u - h)) / (2 * h)  # numeric da/du
    gaussian = torch.distributions.Normal(mean.double(), log_std.exp().double()).log_prob(u)
    expected = (gaussian - torch.log(jacobian)).sum(-1)
    assert torch.allclose(action.double(), torch.tanh(u))
    # SB3's 1e-6 inside the log changes the density by at most about 1e-6 / (1 - a^2)
    tol = 1e-6 / (1 - action.double().pow(2)).min().item() * 3 + 1e-4
    assert torch.allclose(log_prob.double(), expected, atol=tol)


def test_squashed_log_prob_by_hand_in_one_dimension():
    # u = 0.5 + exp(0) * 1 = 1.5; a = tanh(1.5)
    a, logp = sac.squashed_gaussian(torch.tensor([[0.5]]), torch.zeros(1, 1), torch.ones(1, 1))
    expected = -0.5 - 0.5 * math.log(2 * math.pi) - math.log(1 - math.tanh(1.5) ** 2 + 1e-6)
    assert a.item() == pytest.approx(math.tanh(1.5))
    assert logp.item() == pytest.approx(expected, rel=1e-5)


# ---- the losses on a hand-made model ----


LOG_HALF = math.log(0.5)


def _stub(mean=0.0, log_std=0.0, q=(1.0, 3.0), q_target=(2.0, 5.0), log_alpha=LOG_HALF):
    """A model whose actor and critics return constants (the critics' outputs depend on the
    action through a zero weight, so gradients flow)."""
    weight = torch.zeros(1, requires_grad=True)

    def actor(obs):
        n = obs.shape[0]
        return torch.full((n, 1), mean) + 0 * weight, torch.full((n, 1), log_std)

    def critic(obs, act):
        return tuple(torch.full((obs.shape[0],), v) + act.sum(-1) * weight for v in q)

    def critic_target(obs, act):
        return tuple(torch.full((obs.shape[0],), v) for v in q_target)

    return SimpleNamespace(
        actor=actor,
        critic=critic,
        critic_target=critic_target,
        log_ent_coef=torch.tensor([log_alpha], requires_grad=True),
    )


def _policy(**config):
    return SimpleNamespace(config={"gamma": 0.9, "target_entropy": "auto", **config}, n_actions=1)


def _batch(n=2, **extra):
    return Batch(
        state=torch.zeros(n, 3),
        action=torch.zeros(n, 1),
        reward=torch.tensor([1.0, -1.0])[:n],
        terminal=torch.tensor([0.0, 1.0])[:n],
        next_state=torch.zeros(n, 3),
        pi_noise=torch.zeros(n, 1),
        next_noise=torch.zeros(n, 1),
        ent_coef=torch.tensor(0.5),
        **extra,
    )


# log-density of a = tanh(0) = 0 at mean 0, std 1 (with SB3's 1e-6 in the correction)
LOGP0 = -0.5 * math.log(2 * math.pi) - math.log(1 + 1e-6)


def test_ent_coef_loss_by_hand():
    model = _stub()
    loss, info = sac.ent_coef_loss(_policy(), model, None, _batch())
    # target entropy -dim(A) = -1: -(log 0.5 * (logp - 1))
    assert loss.item() == pytest.approx(-(math.log(0.5) * (LOGP0 - 1.0)), rel=1e-6)
    loss.backward()
    assert model.log_ent_coef.grad.item() == pytest.approx(-(LOGP0 - 1.0), rel=1e-6)
    assert info["ent_coef"] == 0.5
    fixed = sac.ent_coef_loss(_policy(target_entropy=-3.0), _stub(), None, _batch())[0]
    assert fixed.item() == pytest.approx(-(math.log(0.5) * (LOGP0 - 3.0)), rel=1e-6)


def test_critic_loss_by_hand_uses_min_target_minus_entropy_term_and_terminal():
    loss, _ = sac.critic_loss(_policy(), _stub(), None, _batch())
    next_v = min(2.0, 5.0) - 0.5 * LOGP0
    targets = [1.0 + 0.9 * next_v, -1.0]  # the second transition is terminal
    expected = 0.5 * sum(np.mean([(q - y) ** 2 for y in targets]) for q in (1.0, 3.0))
    assert loss.item() == pytest.approx(expected, rel=1e-6)


def test_actor_loss_by_hand_is_alpha_log_prob_minus_min_q():
    loss, info = sac.actor_loss(_policy(), _stub(), None, _batch())
    assert loss.item() == pytest.approx(0.5 * LOGP0 - 1.0, rel=1e-6)
    assert info["entropy"] == pytest.approx(-LOGP0, rel=1e-6)


# ---- the built policy ----


def _agent(seed=0, **config):
    env = rk.GymEnv("Pendulum-v1", seed=seed)
    settings = {"learning_starts": 40, "batch_size": 16, "hidden": (8, 8), **config}
    return sac.SAC.agent(env, seed=seed, **settings), env


def test_fixed_ent_coef_has_no_parameter_nor_optimizer():
    agent, env = _agent(ent_coef=0.2)
    assert agent.policy.model.log_ent_coef is None and list(agent.policy.optimizers) == [
        "critic",
        "actor",
    ]
    rk.run(agent, env, rk.StopAfterNSteps(50))
    assert rk.statistics(agent.policy)["ent_coef"] == pytest.approx(0.2)


def test_auto_ent_coef_starts_where_asked_and_moves():
    agent, env = _agent(ent_coef="auto_0.1")
    assert agent.policy.model.log_ent_coef.item() == pytest.approx(math.log(0.1))
    rk.run(agent, env, rk.StopAfterNSteps(50))
    assert agent.policy.model.log_ent_coef.item() != pytest.approx(math.log(0.1), abs=1e-7)


def test_target_critic_follows_by_polyak_averaging_and_the_actor_has_no_target():
    agent, env = _agent(learning_starts=40, tau=0.25)
    policy = agent.policy
    assert policy.model.actor_target is None
    rk.run(agent, env, rk.StopAfterNSteps(40))
    before = [p.clone() for p in policy.model.critic_target.parameters()]
    rk.run(agent, env, rk.StopAfterNSteps(1))  # one gradient step
    assert policy.gradient_steps == 1
    for t, b, s in zip(
        policy.model.critic_target.parameters(),
        before,
        policy.model.critic.parameters(),
        strict=True,
    ):
        assert torch.allclose(t, 0.75 * b + 0.25 * s, atol=1e-6)


def test_actions_lie_in_the_box_bounds_and_warm_up_is_uniform():
    space = gym.spaces.Box(np.array([0.0, -5.0], np.float32), np.array([1.0, 5.0], np.float32))
    policy = sac.SAC(
        state_space=gym.spaces.Box(-1, 1, (3,)),
        action_space=space,
        seed=0,
        learning_starts=0,
        hidden=(8,),
    )
    env = SimpleNamespace(state=np.zeros(3, np.float32))
    actions = np.array([policy.act(env) for _ in range(200)])
    assert actions.shape == (200, 2) and space.contains(actions.max(0).astype(np.float32))
    assert (actions >= space.low).all() and (actions <= space.high).all()
    greedy = rk.greedy(policy).act(env)
    assert space.contains(greedy.astype(np.float32))


def test_same_seed_same_parameters():
    a, env_a = _agent(seed=4)
    b, env_b = _agent(seed=4)
    rk.run(a, env_a, rk.StopAfterNSteps(60))
    rk.run(b, env_b, rk.StopAfterNSteps(60))
    for p, q in zip(
        a.policy.model.state_dict().values(), b.policy.model.state_dict().values(), strict=True
    ):
        assert torch.equal(p, q)


# ---- bad input ----


def test_discrete_action_space_names_the_space_and_the_algorithms_that_fit():
    with pytest.raises(TypeError, match=r"Discrete\(2\).*DQN.*PPO"):
        sac.SAC(rk.GymEnv("CartPole-v1"))


def test_unbounded_box_is_refused_for_the_squashed_policy():
    space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float32)
    with pytest.raises(ValueError, match="unbounded"):
        sac.SAC(state_space=gym.spaces.Box(-1, 1, (3,)), action_space=space)


@pytest.mark.parametrize("bad", ["autox", "auto_-1", -0.1, 0, True])
def test_bad_ent_coef(bad):
    with pytest.raises(ValueError, match="ent_coef"):
        _agent(ent_coef=bad)


def test_unknown_hyperparameter_lists_the_known_ones():
    with pytest.raises(TypeError, match="unknown hyperparameter.*learning_starts"):
        _agent(learnin_starts=3)
