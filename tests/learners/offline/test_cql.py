"""CQL (rlkit/learners/offline/cql.py): the conservative log-sum-exp term by hand, the
deterministic backup, the Lagrangian multiplier, one update, checkpoints, bad input."""

from __future__ import annotations

import math

import pytest
import torch
from pendulum_data import pendulum, random_batch

import rlkit as rk
from rlkit.learners.actor_critic import sac
from rlkit.learners.batch import Batch
from rlkit.learners.offline import cql


def _policy(**config):
    return rk.CQL(pendulum(), seed=0, hidden=(16, 16), n_action_samples=3, **config)


# ---- the conservative term by hand ----


def test_conservative_gap_by_hand_one_critic_one_state():
    # uniform in [-1, 1]^2 has density 1/4: Q - log(1/4); the policy's: Q - log pi
    gap = cql.conservative_gap(
        q_data=torch.tensor([[0.5]]),
        q_random=torch.tensor([[[1.0]]]),
        q_pi=torch.tensor([[[2.0]]]),
        log_prob_pi=torch.tensor([[-1.0]]),
        q_next_pi=torch.tensor([[[0.0]]]),
        log_prob_next_pi=torch.tensor([[0.5]]),
        n_actions=2,
    )
    expected = math.log(math.exp(1.0 + math.log(4)) + math.exp(2.0 + 1.0) + math.exp(-0.5))
    assert gap.shape == (1,)
    assert gap.item() == pytest.approx(expected - 0.5, rel=1e-6)


def test_conservative_gap_is_per_critic_mean_over_states_of_all_samples():
    q_random = torch.tensor([[[0.0, 1.0], [2.0, 0.0]], [[1.0, 1.0], [0.0, 0.0]]])  # (2, 2, 2)
    q_pi = torch.zeros(2, 2, 2)
    q_next = torch.full((2, 2, 2), -1.0)
    log_pi = torch.tensor([[0.0, -1.0], [1.0, 0.0]])
    log_next = torch.zeros(2, 2)
    q_data = torch.tensor([[1.0, 2.0], [0.0, -1.0]])
    gap = cql.conservative_gap(q_data, q_random, q_pi, log_pi, q_next, log_next, n_actions=1)
    expected = []
    for c in range(2):
        per_state = []
        for s in range(2):
            terms = [q_random[c, s, i].item() - math.log(0.5) for i in range(2)]
            terms += [q_pi[c, s, i].item() - log_pi[s, i].item() for i in range(2)]
            terms += [q_next[c, s, i].item() - log_next[s, i].item() for i in range(2)]
            lse = math.log(sum(math.exp(t) for t in terms))
            per_state.append(lse - q_data[c, s].item())
        expected.append(sum(per_state) / 2)
    assert gap.tolist() == pytest.approx(expected, rel=1e-6)


def test_cql_alpha_loss_by_hand():
    policy = _policy(target_action_gap=1.0, cql_alpha=2.0)
    batch = Batch(cql_gap=torch.tensor(3.0))
    loss = cql.cql_alpha_loss(policy, policy.model, None, batch)
    assert loss.item() == pytest.approx(-2.0 * 5.0 * (3.0 - 1.0), rel=1e-6)


# ---- the critic loss ----


def _prepared(policy, seed=0):
    """A batch with the noise update(CQL, batch) draws."""
    batch = random_batch(seed=seed)
    g = torch.Generator().manual_seed(seed + 1)
    n = policy.config["n_action_samples"]
    batch["pi_noise"] = torch.randn(16, 1, generator=g)
    batch["next_noise"] = torch.randn(16, 1, generator=g)
    batch["cql_pi_noise"] = torch.randn(16, n, 1, generator=g)
    batch["cql_next_noise"] = torch.randn(16, n, 1, generator=g)
    batch["cql_random"] = torch.rand(16, n, 1, generator=g) * 2 - 1
    batch["ent_coef"] = torch.tensor(0.5)
    return batch


# ---- the computation before Q(s, a_data) and the actor outputs were shared (2026-11-27), the
# reference: Q(s, a_data) run twice (the TD term and the conservative one), the actor run
# again at s and s' ----


def _old_sampled_q(model, state, actions):
    b, n, d = actions.shape
    states = state.flatten(1).repeat_interleave(n, dim=0)
    return torch.stack(model.critic(states, actions.reshape(b * n, d))).view(-1, b, n)


def _old_policy_samples(model, state, noise):
    with torch.no_grad():
        mean, log_std = model.actor(state)
        return sac.squashed_gaussian(mean.unsqueeze(1), log_std.unsqueeze(1), noise)


def _penalty(policy, batch):
    model = policy.model
    state = batch["state"]
    pi, log_pi = _old_policy_samples(model, state, batch["cql_pi_noise"])
    nxt, log_nxt = _old_policy_samples(model, batch["next_state"], batch["cql_next_noise"])
    return cql.conservative_gap(
        torch.stack(model.critic(state, batch["action"])),
        _old_sampled_q(model, state, batch["cql_random"]),
        _old_sampled_q(model, state, pi),
        log_pi,
        _old_sampled_q(model, state, nxt),
        log_nxt,
        policy.n_actions,
    )


def _old_critic_loss(policy, model, dist_class, batch):
    c = policy.config
    td_batch = batch
    if not c["soft_q_backup"]:
        td_batch = Batch(batch)
        td_batch["ent_coef"] = torch.zeros(())
        td_batch["next_noise"] = torch.zeros_like(batch["next_noise"])
    td, info = sac.critic_loss(policy, model, dist_class, td_batch)
    gap = _penalty(policy, batch)
    threshold = 0.0 if c["target_action_gap"] is None else c["target_action_gap"]
    penalty = (cql._alpha(model, c).detach() * c["conservative_weight"] * (gap - threshold)).sum()
    info = {**info, "cql_gap": float(gap.detach().mean()), "td_loss": float(2.0 * td.detach())}
    return 2.0 * td + penalty, info


def _critic_grads(policy, loss):
    params = list(policy.model.critic.parameters())
    return torch.autograd.grad(loss, params)


@pytest.mark.parametrize(
    "config",
    [{}, {"soft_q_backup": True}, {"target_action_gap": 2.0, "cql_alpha": 0.3},
     {"n_action_samples": 1, "conservative_weight": 1.0}],
)  # fmt: skip
def test_critic_loss_with_q_data_once_equals_the_old_computation(config):
    config = {"n_action_samples": 4, **config}
    policy = rk.CQL(pendulum(), seed=3, hidden=(32, 32), **config)
    for seed in range(3):
        batch = _prepared(policy, seed=seed)
        new, new_info = cql.critic_loss(policy, policy.model, None, batch)
        old, old_info = _old_critic_loss(policy, policy.model, None, batch)
        assert new.item() == pytest.approx(old.item(), rel=1e-6, abs=1e-6)
        assert set(new_info) == set(old_info)
        for key in new_info:
            expected = pytest.approx(float(old_info[key]), rel=1e-6, abs=1e-6)
            assert float(new_info[key]) == expected, key
        for g_new, g_old in zip(
            _critic_grads(policy, new), _critic_grads(policy, old), strict=True
        ):
            torch.testing.assert_close(g_new, g_old, rtol=1e-5, atol=1e-6)


def test_the_update_with_the_actor_outputs_reused_equals_the_old_computation():
    """update(CQL, batch) hands the critic loss the actor's outputs it computed already; the
    same updates with the old critic loss (which runs the actor again) give the same
    parameters."""
    new = rk.CQL(pendulum(), seed=1, hidden=(32, 32), n_action_samples=4)
    old = rk.CQL(pendulum(), seed=1, hidden=(32, 32), n_action_samples=4)
    old.loss_fns["critic"] = _old_critic_loss
    for seed in range(5):
        info_new = rk.update(new, random_batch(seed=seed))
        info_old = rk.update(old, random_batch(seed=seed))
        assert info_new == pytest.approx(info_old, rel=1e-5, abs=1e-6)
    for (k, a), b in zip(_parameters(new).items(), _parameters(old).values(), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6, msg=k)


def test_critic_loss_is_twice_the_deterministic_backup_td_loss_plus_the_weighted_gap():
    policy = _policy(cql_alpha=0.5)
    batch = _prepared(policy)
    loss, info = cql.critic_loss(policy, policy.model, None, batch)
    # the deterministic backup by hand: y = r + gamma (1 - d) min_i Q'_i(s', tanh(mu(s')))
    with torch.no_grad():
        mean, _ = policy.model.actor(batch["next_state"])
        qn = torch.stack(policy.model.critic_target(batch["next_state"], torch.tanh(mean)))
        y = batch["reward"] + 0.99 * (1 - batch["terminal"]) * qn.min(0).values
        qs = policy.model.critic(batch["state"], batch["action"])
        td = sum(((q - y) ** 2).mean() for q in qs)
        gap = _penalty(policy, batch)
    assert info["td_loss"] == pytest.approx(td.item(), rel=1e-5)
    assert loss.item() == pytest.approx((td + 0.5 * 5.0 * gap.sum()).item(), rel=1e-5)
    assert info["cql_gap"] == pytest.approx(gap.mean().item(), rel=1e-5)


def test_deterministic_backup_ignores_the_entropy_term_soft_backup_uses_it():
    for soft in (False, True):
        policy = _policy(soft_q_backup=soft)
        batch = _prepared(policy)
        a = cql.critic_loss(policy, policy.model, None, batch)[0].item()
        batch["ent_coef"] = torch.tensor(3.0)
        batch["next_noise"] = batch["next_noise"] + 1.0
        b = cql.critic_loss(policy, policy.model, None, batch)[0].item()
        assert (a == b) is not soft


def test_soft_backup_td_term_is_sacs_critic_loss_doubled():
    policy = _policy(soft_q_backup=True, conservative_weight=0.0)
    batch = _prepared(policy)
    loss, _ = cql.critic_loss(policy, policy.model, None, batch)
    sac_loss, _ = sac.critic_loss(policy, policy.model, None, batch)
    assert loss.item() == pytest.approx(2 * sac_loss.item(), rel=1e-6)


# ---- update(CQL, batch) ----


def _parameters(policy):
    return {k: v.detach().clone() for k, v in policy.model.state_dict().items()}


def test_one_update_moves_every_network_and_keeps_them_finite():
    policy = _policy()
    before = _parameters(policy)
    info = rk.update(policy, random_batch())
    after = _parameters(policy)
    for name in ("actor.mu.weight", "critic.qs.0.0.weight", "critic.qs.1.0.weight", "log_ent_coef"):
        assert not torch.equal(before[name], after[name]), name
    assert all(torch.isfinite(v).all() for v in after.values())
    assert policy.gradient_steps == 1
    # the target critic moved by tau towards the updated critic
    tau = policy.config["tau"]
    target, source = "critic_target.qs.0.0.weight", "critic.qs.0.0.weight"
    expected = (1 - tau) * before[target] + tau * after[source]
    assert torch.allclose(after["critic_target.qs.0.0.weight"], expected, atol=1e-7)
    assert {"cql_gap", "td_loss", "critic_loss", "actor_loss", "ent_coef"} <= set(info)
    assert info["cql_alpha"] == 1.0


def test_fixed_alpha_has_no_multiplier_the_lagrangian_learns_it_towards_the_target_gap():
    assert "cql_alpha" not in _policy().optimizer and _policy().model.log_cql_alpha is None
    low = _policy(target_action_gap=-100.0)  # the gap is far above: alpha grows
    high = _policy(target_action_gap=100.0)  # far below: alpha shrinks
    for policy in (low, high):
        assert "cql_alpha" in policy.optimizer
        for seed in range(3):
            rk.update(policy, random_batch(seed=seed))
    assert low.model.log_cql_alpha.item() > 0.0 > high.model.log_cql_alpha.item()


def test_state_dict_round_trip_continues_bit_exactly():
    a = _policy(target_action_gap=5.0)
    for seed in range(2):
        rk.update(a, random_batch(seed=seed))
    b = rk.CQL(pendulum(), seed=7, hidden=(16, 16), n_action_samples=3, target_action_gap=5.0)
    b.load_state_dict(a.state_dict())
    ia, ib = rk.update(a, random_batch(seed=5)), rk.update(b, random_batch(seed=5))
    assert ia == ib
    for (k, va), vb in zip(_parameters(a).items(), _parameters(b).values(), strict=True):
        assert torch.equal(va, vb), k


def test_a_checkpoint_of_a_fixed_alpha_policy_is_refused_by_a_lagrangian_one():
    trained = _policy()
    rk.update(trained, random_batch())
    state = trained.state_dict()
    other = _policy(target_action_gap=1.0)
    before = _parameters(other)
    with pytest.raises((ValueError, RuntimeError)):
        other.load_state_dict(state)
    assert all(torch.equal(v, before[k]) for k, v in _parameters(other).items())


def test_critic_layer_norm_normalises_before_each_hidden_relu_with_the_same_linear_weights():
    plain, normed = _policy(), _policy(critic_layer_norm=True)
    for critic in (normed.model.critic, normed.model.critic_target):
        for q in critic.qs:
            kinds = [type(m).__name__ for m in q]
            assert kinds == ["Linear", "LayerNorm", "ReLU"] * 2 + ["Linear"]
    assert not any(isinstance(m, torch.nn.LayerNorm) for m in plain.model.critic.modules())
    # the same weights from the same seed: layer norm draws nothing
    linear = [m for m in normed.model.critic.modules() if isinstance(m, torch.nn.Linear)]
    plain_linear = [m for m in plain.model.critic.modules() if isinstance(m, torch.nn.Linear)]
    assert all(torch.equal(a.weight, b.weight) for a, b in zip(linear, plain_linear, strict=True))
    assert torch.equal(normed.model.actor.mu.weight, plain.model.actor.mu.weight)


def test_critic_layer_norm_forward_and_gradients_are_the_modules_own():
    q = _policy(critic_layer_norm=True).model.critic.qs[0]
    with torch.no_grad():  # non-trivial affine parameters
        for m in q:
            if isinstance(m, torch.nn.LayerNorm):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
    x = torch.randn(5, 4, generator=torch.Generator().manual_seed(3))
    fast = q(x)
    fast.sum().backward()
    fast_grads = [p.grad.clone() for p in q.parameters()]
    q.zero_grad()
    slow = x
    for m in q:  # each module's own forward (torch.nn.Sequential's)
        slow = m(slow)
    slow.sum().backward()
    assert torch.equal(fast, slow)
    assert all(torch.equal(a, p.grad) for a, p in zip(fast_grads, q.parameters(), strict=True))


def test_critic_layer_norm_updates_its_parameters_and_targets():
    policy = _policy(critic_layer_norm=True)
    before = _parameters(policy)
    rk.update(policy, random_batch())
    after = _parameters(policy)
    assert not torch.equal(before["critic.qs.0.1.weight"], after["critic.qs.0.1.weight"])
    assert not torch.equal(before["critic_target.qs.0.1.bias"], after["critic_target.qs.0.1.bias"])
    assert all(torch.isfinite(v).all() for v in after.values())


def test_greedy_acts_with_the_squashed_mean_in_the_bounds():
    policy = _policy()
    obs = torch.tensor([[1.0, 0.0, 0.5]])
    with torch.no_grad():
        expected = 2.0 * torch.tanh(policy.model.actor(obs)[0]).item()
    assert policy.predict([1.0, 0.0, 0.5])[0] == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize(
    "config, message",
    [
        ({"n_action_samples": 0}, "n_action_samples"),
        ({"conservative_weight": -1.0}, "conservative_weight"),
        ({"cql_alpha": 0.0}, "cql_alpha"),
        ({"target_action_gap": "ten"}, "target_action_gap"),
        ({"soft_q_backup": "yes"}, "soft_q_backup"),
        ({"critic_layer_norm": 1}, "critic_layer_norm"),
        ({"actor_lr": 0.0}, "actor_lr"),
    ],
)
def test_bad_hyperparameters_name_cql_and_the_value(config, message):
    with pytest.raises((TypeError, ValueError), match=f"CQL.*{message}"):
        rk.CQL(pendulum(), seed=0, **config)
