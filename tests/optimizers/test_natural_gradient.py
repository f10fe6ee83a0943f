"""NaturalGradient: the direction of the explicit Fisher matrix, the KL bound, bad input."""

from __future__ import annotations

import math

import pytest
import torch

from rlkit.optimizers import NaturalGradient
from rlkit.optimizers.base import flat


def _flat_params(problem) -> torch.Tensor:
    return flat([p.detach() for p in problem.policy.parameters()]).clone()


def _explicit_direction(problem, damping: float) -> torch.Tensor:
    x0 = _flat_params(problem)
    fisher = torch.autograd.functional.hessian(problem.kl_at, x0)
    g = torch.autograd.functional.jacobian(problem.loss_at, x0)
    eye = torch.eye(len(x0), dtype=x0.dtype)
    return torch.linalg.solve(fisher + damping * eye, -g), fisher, g


def test_the_direction_matches_the_explicit_fisher_matrix(problem):
    damping = 1e-2
    expected, fisher, g = _explicit_direction(problem, damping)
    x0 = _flat_params(problem)
    ng = NaturalGradient(max_kl=0.01, cg_iterations=len(x0), cg_damping=damping)
    result = ng.step(problem.policy, problem.fn_loss, fn_kl_divergence=problem.fn_kl_divergence)
    step = flat(result.deltas)
    cosine = torch.dot(step, expected) / (step.norm() * expected.norm())
    assert cosine > 0.999
    # the step is scaled to the KL bound: step^T F step / 2 == max_kl (the undamped Fisher)
    assert 0.5 * float(step @ fisher @ step) == pytest.approx(0.01, rel=1e-6)
    # Lagrange multiplier of TensorForce's derivation: sqrt(d^T F d / (2 max_kl))
    direction_fd = float(expected @ fisher @ expected)
    assert result.statistics["lagrange_multiplier"] == pytest.approx(
        math.sqrt(direction_fd / 0.02), rel=1e-3
    )
    assert result.estimated_improvement == pytest.approx(-float(g @ step), rel=1e-9)
    assert torch.allclose(_flat_params(problem), x0 + step)


@pytest.mark.parametrize("max_kl", [0.001, 0.01])
def test_the_kl_after_the_step_is_within_five_percent_of_max_kl(problem, max_kl):
    # Stable-Baselines3's TRPO settings (cg_max_steps=15, cg_damping=0.1)
    ng = NaturalGradient(max_kl=max_kl, cg_iterations=15, cg_damping=0.1)
    result = ng.step(problem.policy, problem.fn_loss, fn_kl_divergence=problem.fn_kl_divergence)
    kl = float(problem.kl_at().detach())
    assert abs(kl - max_kl) <= 0.05 * max_kl
    # and the surrogate loss went down about as much as estimated
    assert result.estimated_improvement > 0
    assert float(problem.loss_at().detach()) < result.loss_before


def test_fisher_vector_products_never_form_the_matrix(problem, monkeypatch):
    calls = []
    original = torch.autograd.grad

    def counting_grad(outputs, inputs, *args, **kwargs):
        calls.append(getattr(outputs, "shape", None))
        return original(outputs, inputs, *args, **kwargs)

    monkeypatch.setattr(torch.autograd, "grad", counting_grad)
    NaturalGradient(max_kl=0.01, cg_iterations=5).step(
        problem.policy, problem.fn_loss, fn_kl_divergence=problem.fn_kl_divergence
    )
    # every differentiated output is a scalar: products, never a Jacobian of a vector
    assert calls and all(shape == torch.Size([]) for shape in calls)
    # gradient of the loss, gradient of the KL, 5 CG products and one for d^T F d
    assert len(calls) == 2 + 5 + 1


def test_a_kl_that_ignores_the_parameters_is_refused():
    w = torch.nn.Parameter(torch.zeros(2, dtype=torch.float64))
    ng = NaturalGradient(max_kl=0.01, cg_iterations=3)
    with pytest.raises(ValueError, match="fn_kl_divergence does not depend on the parameters"):
        ng.step([w], lambda: w.sum(), fn_kl_divergence=lambda: torch.tensor(0.0))


def test_natural_gradient_without_a_kl_function_names_it(problem):
    ng = NaturalGradient(max_kl=0.01, cg_iterations=5)
    with pytest.raises(ValueError, match="needs fn_kl_divergence"):
        ng.step(problem.policy, problem.fn_loss)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_kl": 0.0}, "NaturalGradient: max_kl must be a positive finite number, got 0.0"),
        ({"max_kl": -0.01}, "NaturalGradient: max_kl must be a positive finite number"),
        ({"max_kl": 0.01, "cg_iterations": 0}, "cg_iterations must be a positive integer, got 0"),
        ({"max_kl": 0.01, "cg_iterations": -3}, "cg_iterations must be a positive integer"),
        ({"max_kl": 0.01, "cg_damping": -1.0}, "cg_damping"),
    ],
)
def test_bad_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        NaturalGradient(**kwargs)


def test_a_non_scalar_kl_is_refused_naming_the_function(problem):
    ng = NaturalGradient(max_kl=0.01, cg_iterations=5)
    with pytest.raises(ValueError, match="fn_kl_divergence .* must return a scalar"):
        ng.step(
            problem.policy,
            problem.fn_loss,
            fn_kl_divergence=lambda: problem.kl_at().reshape(1).repeat(2),
        )
