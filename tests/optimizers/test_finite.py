"""The one finiteness check of the optimizer modules (rlkit/optimizers/finite.py): a step whose
loss or gradient is nan or inf is refused, and nothing changes."""

import math

import pytest
import torch

import rlkit as rk
from rlkit.optimizers import NonFiniteError


def _weights():
    return torch.nn.Parameter(torch.tensor([1.0, -2.0]))


def _nan_gradient(params):
    for p in params:
        p.grad.fill_(math.nan)


def test_a_nan_gradient_with_a_finite_loss_is_refused_and_changes_nothing():
    w = _weights()
    adam = rk.optimizers.GradientDescent("adam", lr=0.1)
    adam.step([w], lambda: (w**2).sum())
    before, state = w.detach().clone(), adam.state_dict()
    with pytest.raises(NonFiniteError, match="GradientDescent refused the step: the gradient "
                       "norm is nan; the parameters are unchanged") as caught:
        adam.step([w], lambda: (w**2).sum(), fn_gradients=_nan_gradient)
    assert isinstance(caught.value, FloatingPointError)
    assert torch.equal(w.detach(), before)
    assert str(adam.state_dict()) == str(state)  # the moments and step count too


def test_an_infinite_gradient_under_gradient_clipping_is_refused():
    w = _weights()
    clipped = rk.optimizers.ClippedStep(
        rk.optimizers.GradientDescent("sgd", lr=0.1), 1.0, on="gradient"
    )

    def inf_gradient(params):
        params[0].grad[0] = math.inf

    before = w.detach().clone()
    with pytest.raises(NonFiniteError, match="gradient norm"):
        clipped.step([w], lambda: (w**2).sum(), fn_gradients=inf_gradient)
    assert torch.equal(w.detach(), before)


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_every_module_that_computes_a_step_refuses_a_non_finite_loss(bad):
    modules = [
        rk.optimizers.GradientDescent("adam", lr=0.1),
        rk.optimizers.NaturalGradient(max_kl=0.01),
        rk.optimizers.OptimizedStep(rk.optimizers.NaturalGradient(max_kl=0.01)),
        rk.optimizers.Evolutionary(learning_rate=0.1, num_samples=2),
        rk.optimizers.MultiStep(rk.optimizers.GradientDescent("sgd", lr=0.1), 3),
    ]
    for module in modules:
        w = _weights()
        old = torch.softmax(w, 0).detach()

        def kl(w=w, old=old):
            return (old * (old.log() - torch.log_softmax(w, 0))).sum()

        before = w.detach().clone()
        with pytest.raises(NonFiniteError, match=f"the loss is {bad}"):
            module.step([w], lambda w=w: (w**2).sum() * bad, fn_kl_divergence=kl)
        assert torch.equal(w.detach(), before), module


def test_natural_gradient_refuses_a_nan_gradient_of_a_finite_loss():
    w = _weights()
    old = torch.softmax(w, 0).detach()
    before = w.detach().clone()

    def nan_grad_loss():  # the value is finite; d sqrt(x)/dx at x = 0 is inf, times 0: nan
        return torch.sqrt(torch.clamp(w, max=0.0) * 0.0).sum() + w.sum()

    with pytest.raises(NonFiniteError, match="NaturalGradient .* gradient norm is nan"):
        rk.optimizers.NaturalGradient(max_kl=0.01).step(
            [w],
            nan_grad_loss,
            fn_kl_divergence=lambda: (old * (old.log() - torch.log_softmax(w, 0))).sum(),
        )
    assert torch.equal(w.detach(), before)


def test_evolutionary_refuses_a_nan_perturbed_loss_and_rewinds_its_generator():
    w = _weights()
    es = rk.optimizers.Evolutionary(learning_rate=0.1, num_samples=3)
    calls = []

    def loss():
        calls.append(1)
        return math.nan if len(calls) == 4 else float((w**2).sum())

    before, generator = w.detach().clone(), es.generator.get_state()
    with pytest.raises(NonFiniteError, match="Evolutionary refused the step: the perturbed "
                       "loss is nan"):
        es.step([w], loss)
    assert torch.equal(w.detach(), before)
    assert torch.equal(es.generator.get_state(), generator)
