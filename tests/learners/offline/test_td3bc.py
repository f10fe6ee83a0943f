"""TD3+BC (rlkit/learners/offline/td3bc.py): the normalised Q weight and the actor loss by hand,
the observation normaliser (set from the dataset, saved, applied when acting), one update,
checkpoints, bad input."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch
from pendulum_data import pendulum, random_batch, random_dataset

import rlkit as rk
from rlkit.learners.offline import td3bc


def _policy(fit=True, **config):
    policy = rk.TD3BC(pendulum(), seed=0, hidden=(16, 16), **config)
    if fit:
        policy.fit_normalizer(np.random.default_rng(0).normal(2.0, 3.0, size=(50, 3)))
    return policy


# ---- by hand ----


def test_normalized_q_weight_is_alpha_over_mean_absolute_q():
    q = torch.tensor([-4.0, 2.0, 0.0, 2.0], requires_grad=True)
    lam = td3bc.normalized_q_weight(q, 2.5)
    assert lam.item() == pytest.approx(2.5 / 2.0)
    assert not lam.requires_grad  # no gradient through lambda


def test_actor_loss_by_hand():
    weight = torch.zeros(1, requires_grad=True)
    model = SimpleNamespace(
        actor=lambda s: torch.full((s.shape[0], 1), 0.5) + weight,
        critic=SimpleNamespace(q1=lambda s, a: torch.tensor([-2.0, 6.0]) + a.sum(-1) * weight),
    )
    policy = SimpleNamespace(config={"alpha": 2.5})
    batch = {"state": torch.zeros(2, 3), "action": torch.tensor([[0.0], [1.0]])}
    loss, info = td3bc.actor_loss(policy, model, None, batch)
    lam = 2.5 / 4.0  # mean |Q| = (2 + 6) / 2
    bc = (0.5**2 + 0.5**2) / 2
    assert loss.item() == pytest.approx(-lam * 2.0 + bc)
    assert info == {"bc_loss": pytest.approx(bc), "q_lambda": pytest.approx(lam)}


def test_observation_statistics_by_hand_and_refusals():
    mean, std = td3bc.observation_statistics(np.array([[1.0, 0.0], [3.0, 0.0]]), 2, "TD3BC")
    assert mean.tolist() == [2.0, 0.0]
    assert std.tolist() == pytest.approx([1.001, 0.001])
    with pytest.raises(ValueError, match="TD3BC.*3 numbers each.*observation space 2"):
        td3bc.observation_statistics(np.zeros((4, 3)), 2, "TD3BC")
    with pytest.raises(ValueError, match="TD3BC: observation 1 is not finite"):
        td3bc.observation_statistics(np.array([[0.0], [np.nan]]), 1, "TD3BC")
    with pytest.raises(ValueError, match="TD3BC: no observations"):
        td3bc.observation_statistics(np.zeros((0, 1)), 1, "TD3BC")


# ---- the normaliser ----


def test_a_step_before_the_normaliser_is_set_is_refused_and_changes_nothing():
    policy = _policy(fit=False)
    before = {k: v.clone() for k, v in policy.model.state_dict().items()}
    with pytest.raises(ValueError, match="TD3BC: the observation normaliser is not set"):
        rk.update(policy, random_batch())
    assert all(torch.equal(v, before[k]) for k, v in policy.model.state_dict().items())
    assert policy.gradient_steps == 0
    rk.update(_policy(fit=False, normalize_observations=False), random_batch())  # allowed


def test_the_batch_is_normalised_and_acting_normalises_raw_observations():
    policy = _policy()
    mean, std = policy.model.obs_mean.clone(), policy.model.obs_std.clone()
    batch = random_batch()
    normalized = policy.normalized(batch)
    assert torch.allclose(normalized["state"], (batch["state"] - mean) / std)
    assert torch.allclose(normalized["next_state"], (batch["next_state"] - mean) / std)
    assert torch.equal(normalized["action"], batch["action"])
    obs = np.array([1.0, -0.5, 3.0], dtype=np.float32)
    with torch.no_grad():
        scaled = policy.model.actor((torch.as_tensor(obs)[None] - mean) / std)
    assert policy.predict(obs)[0] == pytest.approx(2.0 * scaled.item(), rel=1e-6)
    greedy = rk.greedy(policy)
    env = pendulum()
    env.reset()
    with torch.no_grad():
        expected = 2.0 * policy.model.actor((torch.as_tensor(env.state)[None] - mean) / std)
    assert greedy(env)[0] == pytest.approx(expected.item(), rel=1e-6)


def test_an_offline_run_sets_the_normaliser_from_its_dataset():
    dataset = random_dataset()
    env = rk.OfflineEnv(dataset, batch_size=32, seed=0)
    policy = rk.TD3BC(env, seed=0, hidden=(16, 16))
    rk.run(policy, env, rk.StopAfterNSteps(2))
    obs = dataset.observations.astype(np.float64)
    assert policy.model.obs_mean.numpy() == pytest.approx(obs.mean(0), rel=1e-5)
    assert policy.model.obs_std.numpy() == pytest.approx(obs.std(0) + 1e-3, rel=1e-5)
    assert policy.gradient_steps == 2 and "critic_loss" in rk.statistics(policy)


def test_the_normaliser_is_in_the_checkpoint_and_survives_a_round_trip():
    a = _policy()
    for seed in range(3):
        rk.update(a, random_batch(seed=seed))
    b = _policy(fit=False)
    b.load_state_dict(a.state_dict())
    assert torch.equal(a.model.obs_mean, b.model.obs_mean) and bool(b.model.obs_fitted)
    assert rk.update(a, random_batch(seed=7)) == rk.update(b, random_batch(seed=7))
    for (k, va), vb in zip(
        a.model.state_dict().items(), b.model.state_dict().values(), strict=True
    ):
        assert torch.equal(va, vb), k


# ---- update(TD3BC, batch) ----


def test_updates_follow_td3_critic_every_step_actor_and_targets_every_second():
    policy = _policy()
    state = lambda: {k: v.clone() for k, v in policy.model.state_dict().items()}  # noqa: E731
    before = state()
    first = rk.update(policy, random_batch(seed=0))
    middle = state()
    second = rk.update(policy, random_batch(seed=1))
    after = state()
    assert "actor_loss" not in first and {"actor_loss", "bc_loss", "q_lambda"} <= set(second)
    assert not torch.equal(before["critic.qs.0.0.weight"], middle["critic.qs.0.0.weight"])
    assert torch.equal(before["actor.mu.0.weight"], middle["actor.mu.0.weight"])
    assert not torch.equal(middle["actor.mu.0.weight"], after["actor.mu.0.weight"])
    assert not torch.equal(middle["actor_target.mu.0.weight"], after["actor_target.mu.0.weight"])
    assert all(torch.isfinite(v).all() for v in after.values())


@pytest.mark.parametrize(
    "config, message",
    [({"alpha": -1.0}, "alpha"), ({"normalize_observations": 1}, "normalize_observations")],
)
def test_bad_hyperparameters_name_td3bc_and_the_value(config, message):
    with pytest.raises((TypeError, ValueError), match=f"TD3BC.*{message}"):
        rk.TD3BC(pendulum(), seed=0, **config)
