"""``OptimizedStep``: the wrapped module's step, shortened by a backtracking line search."""

from __future__ import annotations

from typing import Any

import torch

from ..core.checks import finite_float, positive_int
from .base import (
    Loss,
    OptimizerModule,
    ParamsLike,
    StepResult,
    as_parameters,
    check_module,
    evaluate_loss,
    restore,
    snapshot,
)
from .finite import check_finite
from .solvers import LineSearch

__all__ = ["OptimizedStep"]


class OptimizedStep(OptimizerModule):
    """Take the wrapped module's step, then line-search along it (:class:`LineSearch`).

    The loss is evaluated before the step (unless the wrapped module reports it) and at the
    fractions ``1, ls_parameter, ls_parameter**2, ...`` of the wrapped module's step; the first
    fraction whose actual improvement reaches ``ls_accept_ratio`` times its first-order estimate
    is kept. When none does (or the wrapped module predicts no improvement) the parameters are
    restored to where they were, and the result's deltas are zero. TRPO is
    ``OptimizedStep(NaturalGradient(...))``.

    Args:
        inner: the wrapped module; it must report an ``estimated_improvement``.
        ls_max_iterations: fractions tried, >= 1.
        ls_accept_ratio: the ratio of actual to expected improvement to accept, >= 0.
        ls_parameter: the backtracking factor in (0, 1).
        ls_max_kl: None, or a KL bound every accepted fraction must also meet: the line search
            then needs ``fn_kl_divergence`` in ``fns`` (Stable-Baselines3's TRPO accepts a step
            only if its KL divergence stays below ``target_kl``; TensorForce has no such test).

    Example:
        >>> import torch, rlkit as rk
        >>> w = torch.nn.Parameter(torch.tensor([0.0]))
        >>> opt = rk.optimizers.OptimizedStep(rk.optimizers.GradientDescent("sgd", lr=2.0),
        ...                                   ls_max_iterations=5, ls_accept_ratio=0.5)
        >>> result = opt.step([w], lambda: ((w - 1.0) ** 2).sum())
        >>> w.data, result.statistics["ls_fraction"]
        (tensor([1.]), 0.25)
    """

    type_name = "optimized_step"
    role = "wraps: line-searches along the inner module's step"

    def __init__(
        self,
        inner: OptimizerModule,
        ls_max_iterations: int = 10,
        ls_accept_ratio: float = 0.1,
        ls_parameter: float = 0.5,
        ls_max_kl: float | None = None,
    ) -> None:
        self.inner = check_module("OptimizedStep", "inner", inner)
        self.ls_max_iterations = positive_int(
            "OptimizedStep", "ls_max_iterations", ls_max_iterations
        )
        self.ls_accept_ratio = finite_float(
            "OptimizedStep", "ls_accept_ratio", ls_accept_ratio, low=0
        )
        self.ls_parameter = finite_float(
            "OptimizedStep", "ls_parameter", ls_parameter, low=0, high=1, low_open=True
        )
        self.ls_max_kl = (
            None
            if ls_max_kl is None
            else finite_float("OptimizedStep", "ls_max_kl", ls_max_kl, low=0, low_open=True)
        )
        self.line_search = LineSearch(ls_max_iterations, ls_accept_ratio, ls_parameter)

    def settings(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ls_max_iterations": self.ls_max_iterations,
            "ls_accept_ratio": self.ls_accept_ratio,
            "ls_parameter": self.ls_parameter,
        }
        if self.ls_max_kl is not None:
            out["ls_max_kl"] = self.ls_max_kl
        return out

    def children(self) -> dict[str, OptimizerModule]:
        return {"optimizer": self.inner}

    def step(self, params: ParamsLike, fn_loss: Loss, **fns: Any) -> StepResult:
        params = as_parameters("OptimizedStep", params)
        fn_kl = fns.get("fn_kl_divergence")
        if self.ls_max_kl is not None and fn_kl is None:
            raise ValueError(
                "OptimizedStep: with ls_max_kl the line search needs fn_kl_divergence in fns "
                "(step(params, fn_loss, fn_kl_divergence=...))"
            )
        start = snapshot(params)
        result = self.inner.step(params, fn_loss, **fns)
        if result.estimated_improvement is None:
            restore(params, start)
            raise ValueError(
                f"OptimizedStep: the wrapped {type(self.inner).__name__} reports no "
                f"estimated_improvement, which the line search needs"
            )
        base = result.loss_before
        if base is None:
            restore(params, start)
            with torch.no_grad():
                base = check_finite(
                    "OptimizedStep", "loss", evaluate_loss("OptimizedStep", fn_loss)
                )
        full = [d.clone() for d in result.deltas]

        def value_at(fraction: float) -> float:
            with torch.no_grad():
                for p, s, d in zip(params, start, full, strict=True):
                    p.copy_(s + fraction * d)
                return float(evaluate_loss("OptimizedStep", fn_loss))

        constraint = None
        if self.ls_max_kl is not None:
            max_kl = self.ls_max_kl
            kls: list[float] = []

            def constraint(fraction: float) -> bool:  # the parameters stand at the fraction
                with torch.no_grad():
                    kls.append(
                        float(evaluate_loss("OptimizedStep", fn_kl, name="fn_kl_divergence"))
                    )
                return kls[-1] <= max_kl

        if result.estimated_improvement > 0:
            found = self.line_search.search(
                value_at, base, result.estimated_improvement, constraint
            )
        else:  # the inner step predicts no decrease: nothing to search
            found = None
        statistics = dict(result.statistics)
        if found is None or not found.accepted:
            restore(params, start)
            deltas = [torch.zeros_like(d) for d in full]
            statistics.update(ls_accepted=0.0, ls_fraction=0.0)
            estimated, actual = 0.0, 0.0
        else:
            # the parameters stand at the accepted fraction: the search stops at the first
            deltas = [found.fraction * d for d in full]
            statistics.update(ls_accepted=1.0, ls_fraction=found.fraction)
            estimated = found.fraction * result.estimated_improvement
            actual = base - found.value
        statistics["ls_iterations"] = float(0 if found is None else found.iterations)
        return StepResult(
            deltas=deltas,
            loss_before=base,
            estimated_improvement=estimated,
            actual_improvement=actual,
            statistics=statistics,
        )
