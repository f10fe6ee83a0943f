"""``NaturalGradient``: the steepest step within a KL-divergence bound, by conjugate gradient on
Fisher-vector products."""

from __future__ import annotations

import math
from typing import Any

import torch

from ..core.checks import finite_float, positive_int
from .base import (
    Loss,
    OptimizerModule,
    ParamsLike,
    StepResult,
    apply_deltas,
    as_parameters,
    evaluate_loss,
    flat,
    unflat,
)
from .finite import check_finite
from .solvers import ConjugateGradient

__all__ = ["NaturalGradient", "fisher_vector_product"]


def _grads(output: torch.Tensor, params: list[torch.Tensor], **kw: Any) -> list[torch.Tensor]:
    grads = torch.autograd.grad(output, params, allow_unused=True, **kw)
    return [torch.zeros_like(p) if g is None else g for p, g in zip(params, grads, strict=True)]


def fisher_vector_product(owner: str, kl: torch.Tensor, params: list[torch.Tensor]):
    """A function ``v -> F v`` for the Hessian ``F`` of ``kl`` at the current parameters (the
    Fisher information when ``kl`` is the KL divergence from a fixed copy of the policy),
    computed by double backward; the matrix is never formed."""
    grad_kl = (
        torch.autograd.grad(kl, params, create_graph=True, allow_unused=True)
        if kl.requires_grad
        else [None] * len(params)
    )
    if all(g is None or g.grad_fn is None for g in grad_kl):
        raise ValueError(
            f"{owner}: fn_kl_divergence does not depend on the parameters (its gradient has no "
            f"graph); it must compare the fixed old policy with the current parameters' policy"
        )
    pairs = [
        (p, g)
        for p, g in zip(params, grad_kl, strict=True)
        if g is not None and g.grad_fn is not None
    ]
    used = [p for p, _ in pairs]
    flat_grad_kl = flat([g for _, g in pairs])
    sizes = [p.numel() for p in params]
    used_mask = [g is not None and g.grad_fn is not None for g in grad_kl]

    def product(vector: torch.Tensor) -> torch.Tensor:
        pieces = list(torch.split(vector, sizes))
        v_used = torch.cat([piece for piece, u in zip(pieces, used_mask, strict=True) if u])
        hvp = _grads(torch.dot(flat_grad_kl, v_used), used, retain_graph=True)
        out, it = [], iter(hvp)
        for piece, u in zip(pieces, used_mask, strict=True):
            out.append(next(it).reshape(-1) if u else torch.zeros_like(piece))
        return torch.cat(out).detach()

    return product


class NaturalGradient(OptimizerModule):
    """A natural-gradient step whose size meets a bound on the KL divergence.

    Needs ``fn_kl_divergence`` in ``fns``: a closure returning the mean KL divergence between
    the policy that collected the data (held fixed, detached) and the policy at the current
    parameters. Its Hessian at the current parameters is the Fisher matrix ``F``; the module
    solves ``F d = -g`` (``g`` the loss gradient) by :class:`ConjugateGradient` on Fisher-vector
    products (double backward, ``cg_damping`` added to the diagonal) and scales the direction to
    the KL bound, as TensorForce derives it: with ``c' = d^T F d / 2`` the Lagrange multiplier is
    ``lambda = sqrt(c' / max_kl)`` and the step is ``d / lambda`` (that is ``d * sqrt(2 max_kl /
    d^T F d)``), so that the quadratic model of the KL equals ``max_kl``. When ``d^T F d`` is not
    positive the step is zero. The estimated improvement is ``-g . step``. A loss or gradient
    that is nan or inf raises :class:`~rlkit.optimizers.finite.NonFiniteError` before the
    parameters move.

    Args:
        max_kl: the KL bound of a step, > 0 (TRPO's ``target_kl``).
        cg_iterations: conjugate-gradient iterations, >= 1 (Stable-Baselines3's 15 by default).
        cg_damping: added to the Fisher matrix's diagonal in the solve, >= 0 (Stable-Baselines3's
            0.1 by default; TensorForce used 1e-3). Small values let the direction run into
            directions of low curvature, where the quadratic model of the KL is poor. The step
            size uses the undamped product ``d^T F d`` (TensorForce; Stable-Baselines3 scales with
            the damped one, a slightly shorter step).

    Example:
        >>> import torch, rlkit as rk
        >>> logits = torch.nn.Parameter(torch.zeros(3))
        >>> old = torch.softmax(logits, 0).detach()
        >>> def kl():
        ...     new = torch.log_softmax(logits, 0)
        ...     return (old * (old.log() - new)).sum()
        >>> ng = rk.optimizers.NaturalGradient(max_kl=0.01, cg_iterations=10, cg_damping=1e-4)
        >>> result = ng.step([logits], lambda: -torch.log_softmax(logits, 0)[0],
        ...                  fn_kl_divergence=kl)
        >>> round(kl().item(), 3)
        0.01
    """

    type_name = "natural_gradient"

    def __init__(self, max_kl: float, cg_iterations: int = 15, cg_damping: float = 0.1) -> None:
        self.max_kl = finite_float("NaturalGradient", "max_kl", max_kl, low=0, low_open=True)
        self.cg_iterations = positive_int("NaturalGradient", "cg_iterations", cg_iterations)
        self.cg_damping = finite_float("NaturalGradient", "cg_damping", cg_damping, low=0)
        self.solver = ConjugateGradient(self.cg_iterations, damping=self.cg_damping)

    def settings(self) -> dict[str, Any]:
        return {
            "max_kl": self.max_kl,
            "cg_iterations": self.cg_iterations,
            "cg_damping": self.cg_damping,
        }

    def step(
        self, params: ParamsLike, fn_loss: Loss, fn_kl_divergence: Loss | None = None, **fns: Any
    ) -> StepResult:
        params = as_parameters("NaturalGradient", params)
        if fn_kl_divergence is None:
            raise ValueError(
                "NaturalGradient: step needs fn_kl_divergence, a closure returning the KL "
                "divergence between the fixed old policy and the current parameters' policy "
                f"(give it as step(params, fn_loss, fn_kl_divergence=...)); got fns {sorted(fns)}"
            )
        loss = evaluate_loss("NaturalGradient", fn_loss)
        check_finite("NaturalGradient", "loss", loss.detach())
        gradient = flat(_grads(loss, params)).detach()
        grad_norm = check_finite("NaturalGradient", "gradient norm", gradient.norm())
        kl = evaluate_loss("NaturalGradient", fn_kl_divergence, name="fn_kl_divergence")
        fvp = fisher_vector_product("NaturalGradient", kl, params)
        solution = self.solver.solve(fvp, -gradient)
        direction = solution.x
        dfd = float(torch.dot(direction, fvp(direction)))
        statistics = {
            "loss": float(loss.detach()),
            "grad_norm": grad_norm,
            "cg_iterations": float(solution.iterations),
            "cg_residual": solution.residual_norm,
        }
        if not (dfd > 0 and math.isfinite(dfd)):
            deltas = [torch.zeros_like(p) for p in params]
            statistics["lagrange_multiplier"] = 0.0
            return StepResult(deltas, float(loss.detach()), 0.0, None, statistics)
        multiplier = math.sqrt(0.5 * dfd / self.max_kl)
        step = direction / multiplier
        deltas = [d.clone() for d in unflat(step, params)]
        apply_deltas(params, deltas)
        statistics["lagrange_multiplier"] = multiplier
        statistics["step_norm"] = float(step.norm())
        return StepResult(
            deltas=deltas,
            loss_before=float(loss.detach()),
            estimated_improvement=-float(torch.dot(gradient, step)),
            statistics=statistics,
        )
