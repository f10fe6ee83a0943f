"""IQL (rlkit/learners/offline/iql.py): the expectile loss and the advantage weights by hand,
the Gaussian actor, the losses' targets, one update, checkpoints, bad input."""

from __future__ import annotations

import math

import pytest
import torch
from pendulum_data import pendulum, random_batch

import rlkit as rk
from rlkit.learners.offline import iql


def _policy(**config):
    return rk.IQL(pendulum(), seed=0, hidden=(16, 16), **config)


# ---- pure functions by hand ----


def test_expectile_loss_by_hand_weighs_underestimates_by_tau():
    diff = torch.tensor([2.0, -1.0, 0.5, -3.0])  # target - prediction
    expected = (0.7 * 4.0 + 0.3 * 1.0 + 0.7 * 0.25 + 0.3 * 9.0) / 4
    assert iql.expectile_loss(diff, 0.7).item() == pytest.approx(expected, rel=1e-6)
    # tau = 0.5 is half the mean squared error
    assert iql.expectile_loss(diff, 0.5).item() == pytest.approx(0.5 * (diff**2).mean().item())


def test_expectile_regression_finds_the_expectile():
    # minimising the loss over a constant v gives the 0.9-expectile of the samples
    samples = torch.tensor([0.0, 1.0, 2.0, 10.0])
    v = torch.zeros((), requires_grad=True)
    opt = torch.optim.SGD([v], lr=0.1)
    for _ in range(3000):
        opt.zero_grad()
        iql.expectile_loss(samples - v, 0.9).backward()
        opt.step()
    # the expectile solves sum_i |tau - 1(x_i < v)| (x_i - v) = 0; here v lies in (2, 10):
    # 0.1 * ((0 - v) + (1 - v) + (2 - v)) + 0.9 * (10 - v) = 0 -> v = (0.3 + 9) / 1.2
    assert v.item() == pytest.approx(9.3 / 1.2, rel=1e-4)


def test_advantage_weights_by_hand_clipped_at_max_weight():
    w = iql.advantage_weights(torch.tensor([-1.0, 0.0, 0.5, 2.0]), 3.0, 100.0)
    assert w.tolist() == pytest.approx([math.exp(-3.0), 1.0, math.exp(1.5), 100.0], rel=1e-6)


def test_gaussian_log_prob_matches_torch_normal():
    g = torch.Generator().manual_seed(0)
    mean, log_std, a = (torch.randn(5, 2, generator=g) for _ in range(3))
    expected = torch.distributions.Normal(mean, log_std.exp()).log_prob(a).sum(-1)
    assert torch.allclose(iql.gaussian_log_prob(mean, log_std, a), expected, atol=1e-6)


# ---- the losses on the real model ----


def test_critic_loss_regresses_on_reward_plus_discounted_value_of_the_next_state():
    policy = _policy()
    batch = random_batch()
    model = policy.model
    loss, info = iql.critic_loss(policy, model, None, batch)
    with torch.no_grad():
        y = batch["reward"] + 0.99 * (1 - batch["terminal"]) * model.value(batch["next_state"])
        q_loss = sum(((q - y) ** 2).mean() for q in model.critic(batch["state"], batch["action"]))
        q_t = torch.stack(model.critic_target(batch["state"], batch["action"])).min(0).values
        diff = q_t - model.value(batch["state"])
        weight = torch.where(diff < 0, 0.3, 0.7)
        v_loss = (weight * diff**2).mean()
    assert info["q_loss"] == pytest.approx(q_loss.item(), rel=1e-5)
    assert info["v_loss"] == pytest.approx(v_loss.item(), rel=1e-5)
    assert loss.item() == pytest.approx((q_loss + v_loss).item(), rel=1e-5)


def test_critic_loss_regresses_on_the_scaled_reward():
    policy = _policy(reward_scale=0.25)
    batch = random_batch()
    model = policy.model
    _, info = iql.critic_loss(policy, model, None, batch)
    with torch.no_grad():
        next_v = model.value(batch["next_state"])
        y = 0.25 * batch["reward"] + 0.99 * (1 - batch["terminal"]) * next_v
        q_loss = sum(((q - y) ** 2).mean() for q in model.critic(batch["state"], batch["action"]))
    assert info["q_loss"] == pytest.approx(q_loss.item(), rel=1e-5)
    plain = _policy()  # the same seed: the same networks, rewards unscaled
    unscaled = iql.critic_loss(plain, plain.model, None, batch)[1]["q_loss"]
    assert info["q_loss"] != pytest.approx(unscaled, rel=1e-3)


def test_actor_loss_is_advantage_weighted_log_likelihood_of_the_data_actions():
    policy = _policy(beta=2.0, max_weight=5.0)
    batch = random_batch()
    model = policy.model
    loss, info = iql.actor_loss(policy, model, None, batch)
    with torch.no_grad():
        q_t = torch.stack(model.critic_target(batch["state"], batch["action"])).min(0).values
        w = torch.clamp(torch.exp(2.0 * (q_t - model.value(batch["state"]))), max=5.0)
        mean, log_std = model.actor(batch["state"])
        logp = torch.distributions.Normal(mean, log_std.exp()).log_prob(batch["action"]).sum(-1)
    assert loss.item() == pytest.approx(-(w * logp).mean().item(), rel=1e-5)
    assert info["adv_weight"] == pytest.approx(w.mean().item(), rel=1e-5)


def test_actor_is_a_squashed_mean_with_a_state_independent_bounded_std():
    policy = _policy()
    obs = torch.randn(4, 3, generator=torch.Generator().manual_seed(0)) * 100
    mean, log_std = policy.model.actor(obs)
    assert mean.abs().max() <= 1.0
    assert torch.allclose(log_std, torch.full_like(log_std, -5.0 + 7.0 * 0.5))  # sigmoid(0)
    with torch.no_grad():
        policy.model.actor.log_std_logit.fill_(50.0)
    assert policy.model.actor(obs)[1].max().item() == pytest.approx(2.0)
    # greedy and predict act with the mean, rescaled to the bounds
    assert policy.predict(obs[0].numpy())[0] == pytest.approx(2.0 * mean[0, 0].item(), rel=1e-6)


# ---- update(IQL, batch) ----


def _parameters(policy):
    return {k: v.detach().clone() for k, v in policy.model.state_dict().items()}


def test_one_update_moves_critics_value_and_actor_and_keeps_them_finite():
    policy = _policy()
    before = _parameters(policy)
    info = rk.update(policy, random_batch())
    after = _parameters(policy)
    for name in ("critic.qs.0.0.weight", "value_net.0.weight", "actor.mu.0.weight",
                 "actor.log_std_logit"):  # fmt: skip
        assert not torch.equal(before[name], after[name]), name
    assert all(torch.isfinite(v).all() for v in after.values())
    tau = policy.config["tau"]
    target, source = "critic_target.qs.1.2.weight", "critic.qs.1.2.weight"
    expected = (1 - tau) * before[target] + tau * after[source]
    assert torch.allclose(after["critic_target.qs.1.2.weight"], expected, atol=1e-7)
    assert policy.gradient_steps == 1 and {"q_loss", "v_loss", "actor_loss"} <= set(info)


def test_state_dict_round_trip_continues_bit_exactly():
    a = _policy()
    for seed in range(2):
        rk.update(a, random_batch(seed=seed))
    b = rk.IQL(pendulum(), seed=3, hidden=(16, 16))
    b.load_state_dict(a.state_dict())
    assert rk.update(a, random_batch(seed=9)) == rk.update(b, random_batch(seed=9))
    for (k, va), vb in zip(_parameters(a).items(), _parameters(b).values(), strict=True):
        assert torch.equal(va, vb), k


@pytest.mark.parametrize(
    "config, message",
    [
        ({"expectile": 1.5}, "expectile"),
        ({"expectile": 0.0}, "expectile"),
        ({"beta": -1.0}, "beta"),
        ({"max_weight": 0.0}, "max_weight"),
        ({"actor_lr": -1e-3}, "actor_lr"),
        ({"reward_scale": 0.0}, "reward_scale must be a positive finite number, got 0.0"),
        ({"reward_scale": math.inf}, "reward_scale"),
    ],
)
def test_bad_hyperparameters_name_iql_and_the_value(config, message):
    with pytest.raises((TypeError, ValueError), match=f"IQL.*{message}"):
        rk.IQL(pendulum(), seed=0, **config)
