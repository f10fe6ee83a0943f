"""TRPO: optimizer-module trees, one update's KL bound, checkpoints, bad settings."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from observation_envs import PixelMatch

import rlkit as rk
from rlkit.core.state import get_state, set_state
from rlkit.optimizers import GradientDescent, MultiStep, NaturalGradient, OptimizedStep

SMALL = {"n_steps": 128, "batch_size": 64, "n_critic_updates": 2}


def _agent(seed=0, **config):
    env = rk.GymEnv("CartPole-v1", seed=seed)
    return rk.TRPO.agent(env, seed=seed, **{**SMALL, **config}), env


def _params(policy):
    return [p.detach().clone() for p in policy.model.parameters()]


def test_trpo_builds_its_module_trees_from_the_hyperparameters(capsys):
    agent, _ = _agent(target_kl=0.02, cg_max_steps=7, line_search_max_iter=4, lr=5e-4)
    optimizers = agent.policy.optimizer.modules
    policy, value = optimizers["policy"], optimizers["value"]
    assert isinstance(policy, OptimizedStep) and isinstance(policy.inner, NaturalGradient)
    assert (policy.inner.max_kl, policy.inner.cg_iterations, policy.ls_max_kl) == (0.02, 7, 0.02)
    assert policy.ls_max_iterations == 4 and policy.ls_parameter == 0.8
    assert isinstance(value, MultiStep) and isinstance(value.inner, GradientDescent)
    assert (value.num_steps, value.minibatch_size, value.inner.kwargs["lr"]) == (2, 64, 5e-4)
    rk.explain(agent.policy.optimizer)
    out = capsys.readouterr().out
    assert "policy loss:\n  OptimizedStep(" in out and "NaturalGradient(max_kl=0.02" in out
    assert (
        "value loss:\n  MultiStep(num_steps=2" in out and "GradientDescent(optimizer='adam'" in out
    )


def test_an_update_stays_within_the_kl_bound_and_moves_both_networks():
    agent, env = _agent()
    before = _params(agent.policy)
    rk.run(agent, env, rk.StopAfterNSteps(128))
    stats = rk.statistics(agent.policy)
    assert agent.policy.updates == 1
    if stats["is_line_search_success"]:
        assert 0 < stats["kl_divergence_loss"] <= 0.01
    names = [n for n, _ in agent.policy.model.named_parameters()]
    after = dict(zip(names, _params(agent.policy), strict=True))
    moved = {n for n, b in zip(names, before, strict=True) if not torch.equal(after[n], b)}
    assert any(n.startswith("vf.") for n in moved)
    assert any(n.startswith("pi.") for n in moved) == bool(stats["is_line_search_success"])


def test_trpo_is_reproducible_and_resumes_from_its_state():
    a, env_a = _agent(seed=3)
    b, env_b = _agent(seed=3)
    rk.run(a, env_a, rk.StopAfterNSteps(128))
    rk.run(b, env_b, rk.StopAfterNSteps(128))
    for p, q in zip(_params(a.policy), _params(b.policy), strict=True):
        assert torch.equal(p, q)
    saved = get_state(a.policy)
    rk.run(a, env_a, rk.StopAfterNSteps(128))
    expected = _params(a.policy)
    c, _ = _agent(seed=99)
    set_state(c.policy, saved)
    # the same rollout again: b continues from the same state as c
    set_state(b.policy, saved)
    rk.run(b, env_b, rk.StopAfterNSteps(128))
    for p, q in zip(_params(b.policy), expected, strict=True):
        assert torch.equal(p, q)
    value_rng = c.policy.optimizer.modules["value"].rng
    saved_rng = saved["optimizer"]["value"]["own"]["bit_generator"]
    assert value_rng.bit_generator.state == saved_rng


def test_policy_optimizer_may_be_any_module_spec():
    agent, env = _agent(
        policy_optimizer={"type": "gradient_descent", "optimizer": "adam", "lr": 1e-3}
    )
    assert isinstance(agent.policy.optimizer.modules["policy"], GradientDescent)
    rk.run(agent, env, rk.StopAfterNSteps(128))
    assert agent.policy.updates == 1


def test_trpo_bad_settings():
    with pytest.raises(ValueError, match="TRPO: target_kl must be a positive finite number"):
        _agent(target_kl=0.0)
    with pytest.raises(ValueError, match="NaturalGradient: cg_iterations must be a positive"):
        _agent(cg_max_steps=0)
    with pytest.raises(ValueError, match="TRPO: n_critic_updates must be a positive"):
        _agent(n_critic_updates=0)
    with pytest.raises(ValueError, match="unknown optimizer type"):
        _agent(value_optimizer={"type": "adamw2"})


def test_trpo_on_pendulum_acts_in_the_box():
    env = rk.GymEnv("Pendulum-v1", seed=0)
    agent = rk.TRPO.agent(env, seed=0, **SMALL)
    rk.run(agent, env, rk.StopAfterNSteps(128))
    assert agent.policy.updates == 1 and np.isfinite(rk.statistics(agent.policy)["value_loss"])


def test_on_images_the_policy_step_covers_the_shared_cnn_and_the_value_step_its_head():
    # sb3-contrib's TRPO with CnnPolicy (share_features_extractor=True): the natural gradient
    # covers every parameter the KL depends on, the shared features extractor included; the
    # critic's Adam steps run with those parameters' gradients removed: only the value head
    env = rk.GymEnv(PixelMatch(), seed=0)
    agent = rk.TRPO.agent(env, seed=0, n_steps=32, batch_size=16, n_critic_updates=2)
    model = agent.policy.model
    stepped = {}
    step = agent.policy.optimizer.step

    def recording_step(params, fn_loss, *, loss, **fns):
        stepped[loss] = list(params)
        return step(params, fn_loss, loss=loss, **fns)

    agent.policy.optimizer.step = recording_step
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    rk.run(agent, env, rk.StopAfterNSteps(32))
    assert agent.policy.updates == 1
    head = {id(p) for p in model.vf.parameters()}
    assert {id(p) for p in stepped["value"]} == head
    body = [p for p in model.parameters() if id(p) not in head]
    assert [id(p) for p in stepped["policy"]] == [id(p) for p in body]
    names = {name for name, p in model.named_parameters() if id(p) in {id(q) for q in body}}
    assert any(n.startswith("encoder.") for n in names) and "features.0.weight" in names
    changed = {n for n, p in model.named_parameters() if not torch.equal(p, before[n])}
    assert "vf.weight" in changed and any(n.startswith("encoder.") for n in changed)
    assert rk.statistics(agent.policy)["is_line_search_success"] == 1.0
