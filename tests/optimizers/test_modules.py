"""Synchronization, Evolutionary, specs, rk.explain and checkpoint state of module trees."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.hooks.checkpoint.format import decode_state, encode_state
from rlkit.optimizers import (
    ClippedStep,
    Evolutionary,
    GradientDescent,
    MultiStep,
    NaturalGradient,
    OptimizedStep,
    Synchronization,
    make,
)

# ---- Synchronization ----


def _pair(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)


def test_synchronization_with_tau_one_equals_a_hard_copy():
    online, polyak_target = _pair()
    hard_target = torch.nn.Linear(3, 2)
    hard_target.load_state_dict(polyak_target.state_dict())
    polyak = Synchronization(online, tau=1.0)
    hard = Synchronization(online, every=1)
    for _ in range(3):
        with torch.no_grad():
            online.weight.add_(torch.randn_like(online.weight))
        polyak.step(polyak_target, None)
        hard.step(hard_target, None)
        for a, b in zip(polyak_target.parameters(), hard_target.parameters(), strict=True):
            assert torch.equal(a, b)
        assert torch.equal(hard_target.weight, online.weight)


def test_synchronization_every_n_steps_and_polyak():
    online, target = _pair()
    start = target.weight.detach().clone()
    sync = Synchronization(online, every=3)
    synced = [sync.step(target, None).statistics["synchronized"] for _ in range(6)]
    assert synced == [0.0, 0.0, 1.0, 0.0, 0.0, 1.0]
    online2, target2 = _pair(1)
    before = target2.weight.detach().clone()
    expected = 0.9 * before + 0.1 * online2.weight.detach()
    result = Synchronization(tau=0.1).step(target2, None, source=online2)
    assert torch.allclose(target2.weight, expected)
    assert torch.allclose(result.deltas[0], expected - before)
    assert not torch.equal(start, target.weight)


def test_synchronization_bad_input():
    online, target = _pair()
    with pytest.raises(ValueError, match="exactly one of every or tau"):
        Synchronization(online)
    with pytest.raises(ValueError, match="exactly one of every or tau"):
        Synchronization(online, every=2, tau=0.5)
    with pytest.raises(ValueError, match="Synchronization: tau must be"):
        Synchronization(online, tau=0.0)
    with pytest.raises(ValueError, match="Synchronization: every must be a positive integer"):
        Synchronization(online, every=0)
    with pytest.raises(ValueError, match="no source"):
        Synchronization(every=1).step(target, None)
    with pytest.raises(ValueError, match="same shapes"):
        Synchronization(torch.nn.Linear(2, 2), every=1).step(target, None)


# ---- Evolutionary ----


def test_evolutionary_minimises_without_gradients():
    w = torch.zeros(3)  # no requires_grad: the loss is never differentiated
    target = torch.tensor([1.0, -2.0, 0.5])
    es = Evolutionary(learning_rate=0.05, num_samples=10, noise_std=0.1, seed=1)
    evaluations = []

    def fn_loss():
        evaluations.append(1)
        return float(((w - target) ** 2).sum())  # a plain float is a scalar loss too

    for _ in range(200):
        result = es.step([w], fn_loss)
    assert float(((w - target) ** 2).sum()) < 0.05
    assert len(evaluations) == 200 * (2 * 10 + 1)
    assert result.estimated_improvement >= 0 and "perturbed_loss_mean" in result.statistics


def test_evolutionary_perturbations_are_antithetic():
    w = torch.zeros(2)
    points = []

    def fn_loss():
        points.append(w.clone())
        return float(w.sum())

    Evolutionary(learning_rate=0.1, num_samples=3, noise_std=0.5).step([w], fn_loss)
    base, pairs = points[0], points[1:]
    assert torch.equal(base, torch.zeros(2))
    for plus, minus in zip(pairs[::2], pairs[1::2], strict=True):
        assert torch.allclose(plus, -minus)


def test_evolutionary_is_reproducible_and_its_generator_is_saved():
    def run(es, w, steps):
        for _ in range(steps):
            es.step([w], lambda: float(((w - 1.0) ** 2).sum()))
        return w.clone()

    a, b = Evolutionary(0.1, 4, seed=7), Evolutionary(0.1, 4, seed=7)
    wa, wb = torch.zeros(3), torch.zeros(3)
    run(a, wa, 3)
    run(b, wb, 3)
    assert torch.equal(wa, wb)
    saved = encode_state(a.state_dict())  # through the checkpoint format
    expected = run(a, wa.clone(), 2)
    fresh = Evolutionary(0.1, 4, seed=99)
    fresh.load_state_dict(decode_state(*saved))
    assert torch.equal(run(fresh, wb.clone(), 2), expected)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"learning_rate": 0.1, "num_samples": 0}, "num_samples must be a positive integer, got 0"),
        ({"learning_rate": 0.1, "num_samples": -2}, "num_samples must be a positive integer"),
        ({"learning_rate": 0.0, "num_samples": 2}, "learning_rate must be a positive"),
        ({"learning_rate": 0.1, "num_samples": 2, "noise_std": -1.0}, "noise_std"),
    ],
)
def test_evolutionary_bad_settings(kwargs, message):
    with pytest.raises(ValueError, match=f"Evolutionary: {message}"):
        Evolutionary(**kwargs)


# ---- specs and rk.explain ----

TRPO_SPEC = {
    "type": "optimized_step",
    "ls_max_iterations": 10,
    "ls_accept_ratio": 0.1,
    "optimizer": {"type": "natural_gradient", "max_kl": 0.01, "cg_iterations": 15},
}


def test_make_builds_the_tree_and_round_trips_through_json():
    trpo = make(TRPO_SPEC)
    assert isinstance(trpo, OptimizedStep) and isinstance(trpo.inner, NaturalGradient)
    assert (trpo.ls_max_iterations, trpo.inner.max_kl, trpo.inner.cg_iterations) == (10, 0.01, 15)
    for module in (
        trpo,
        MultiStep(ClippedStep(GradientDescent("adam", lr=3e-4), 0.5, on="gradient"), 10, 64),
        ClippedStep(MultiStep(GradientDescent(torch.optim.SGD, lr=0.1), 2), max_norm=1.0),
        Evolutionary(0.01, 8, seed=3),
        Synchronization(every=100),
    ):
        spec = json.loads(json.dumps(module.to_spec()))
        rebuilt = make(spec)
        assert type(rebuilt) is type(module)
        assert rebuilt.to_spec() == module.to_spec()
        assert repr(rebuilt) == repr(module)


def test_a_torch_optimizer_name_may_stand_as_the_type():
    module = make({"type": "multi_step", "num_steps": 3, "optimizer": {"type": "adam", "lr": 0.1}})
    assert module.inner.torch_optimizer_cls is torch.optim.Adam
    assert module.inner.to_spec() == {"type": "gradient_descent", "optimizer": "adam", "lr": 0.1}


def test_explain_shows_the_tree_with_settings_and_roles(capsys):
    rk.explain(make({"type": "clipped_step", "max_norm": 1.0, "optimizer": TRPO_SPEC}))
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "ClippedStep(max_norm=1.0): wraps: clips the inner module's step",
        "  optimizer:",
        "    OptimizedStep(ls_max_iterations=10, ls_accept_ratio=0.1, ls_parameter=0.5): "
        "wraps: line-searches along the inner module's step",
        "      optimizer:",
        "        NaturalGradient(max_kl=0.01, cg_iterations=15, cg_damping=0.1): "
        "computes its own step",
    ]


def test_explain_without_an_env_needs_a_describable_object():
    with pytest.raises(TypeError, match="explain: give an environment"):
        rk.explain(object())


def test_an_unknown_spec_type_lists_the_known_ones():
    with pytest.raises(
        ValueError,
        match=r"unknown optimizer type 'natural_gradients'.*"
        r"'evolutionary'.*'natural_gradient'.*'optimized_step'",
    ):
        make({"type": "natural_gradients", "max_kl": 0.01})
    with pytest.raises(rk.optimizers.UnknownOptimizerError):
        make({"type": "nope"})


def test_bad_specs():
    with pytest.raises(ValueError, match="needs a 'type'"):
        make({"max_kl": 0.01})
    with pytest.raises(ValueError, match="optimized_step spec needs 'optimizer'"):
        make({"type": "optimized_step"})
    with pytest.raises(TypeError, match="bad settings for 'natural_gradient'"):
        make({"type": "natural_gradient", "max_kl": 0.01, "max_kll": 3})
    with pytest.raises(ValueError, match="NaturalGradient: max_kl must be a positive"):
        make({"type": "natural_gradient", "max_kl": -1.0})
    with pytest.raises(TypeError, match="spec must be a dict"):
        make("adam")


def test_torch_settings_are_checked_when_the_module_is_made():
    # they were accepted and failed at the first step (or, for "optimizer", replaced the type)
    with pytest.raises(TypeError, match=r"torch.optim.Adam refuses .*'lrr'"):
        make({"type": "adam", "lrr": 1e-3})
    with pytest.raises(ValueError, match=r"torch.optim.Adam refuses .*IndexError"):
        make({"type": "adam", "lr": 1e-3, "betas": [0.9]})
    with pytest.raises(ValueError, match=r"torch.optim.SGD refuses .*Invalid momentum value: -1"):
        GradientDescent("sgd", lr=1e-3, momentum=-1)
    with pytest.raises(ValueError, match=r"type 'adam' names its torch optimizer .*'sgd'"):
        make({"type": "adam", "lr": 1e-3, "optimizer": "sgd"})
    make({"type": "adam", "lr": 1e-3, "betas": (0.9, 0.99), "fused": True})


# ---- checkpoint state of a module tree ----


def test_the_state_of_a_module_tree_round_trips_through_the_checkpoint_format(problem):
    def build():
        return MultiStep(GradientDescent("adam", lr=0.01), 2, minibatch_size=16, seed=5)

    def fn_loss(indices):
        log_probs = problem.policy(problem.states[indices])
        taken = log_probs.gather(1, problem.actions[indices, None])[:, 0]
        return -(taken * problem.advantages[indices]).mean()

    module = build()
    module.step(problem.policy, fn_loss, batch_size=64)
    saved = decode_state(*encode_state(module.state_dict()))
    params_saved = [p.detach().clone() for p in problem.policy.parameters()]
    module.step(problem.policy, fn_loss, batch_size=64)
    expected = [p.detach().clone() for p in problem.policy.parameters()]

    with torch.no_grad():
        for p, s in zip(problem.policy.parameters(), params_saved, strict=True):
            p.copy_(s)
    restored = build()
    restored.load_state_dict(saved)  # before the first step: applied when the optimizer exists
    restored.step(problem.policy, fn_loss, batch_size=64)
    for p, e in zip(problem.policy.parameters(), expected, strict=True):
        assert torch.equal(p.detach(), e)
    assert np.array_equal(restored.minibatches(8)[0], module.minibatches(8)[0])


def test_loading_the_state_of_another_tree_is_an_error():
    saved = OptimizedStep(NaturalGradient(0.01)).state_dict()
    with pytest.raises(ValueError, match="expected the state of a 'multi_step' module"):
        MultiStep(GradientDescent("sgd", lr=0.1), 2).load_state_dict(saved)
    with pytest.raises(ValueError, match="natural_gradient"):
        OptimizedStep(GradientDescent("sgd", lr=0.1)).load_state_dict(saved)
    sync = Synchronization(every=3)
    sync.steps = 2
    other = Synchronization(every=3)
    other.load_state_dict(decode_state(*encode_state(sync.state_dict())))
    assert other.steps == 2
