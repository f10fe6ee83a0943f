"""Solvers used by the optimizer modules, usable on their own: ``ConjugateGradient`` (solves
``A x = b`` from matrix-vector products) and ``LineSearch`` (backtracks along a step)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from ..core.checks import check_callable, finite_float, positive_int

__all__ = ["ConjugateGradient", "CGSolution", "LineSearch", "LineSearchResult"]


@dataclass
class CGSolution:
    """The result of :meth:`ConjugateGradient.solve`: the solution, the iterations run and the
    final residual norm ``|b - (A + damping I) x|``.

    Example:
        >>> import torch
        >>> A = torch.tensor([[4.0, 1.0], [1.0, 3.0]], dtype=torch.float64)
        >>> b = torch.ones(2, dtype=torch.float64)
        >>> solution = ConjugateGradient(max_iterations=2).solve(lambda v: A @ v, b)
        >>> solution.iterations, solution.residual_norm < 1e-8
        (2, True)
    """

    x: torch.Tensor
    iterations: int
    residual_norm: float


class ConjugateGradient:
    """Conjugate gradient for a symmetric positive (semi-)definite ``A`` known only through
    products ``fn_x(v) = A v`` (the matrix is never formed).

    Solves ``(A + damping I) x = b`` for flat tensors, stopping after ``max_iterations`` or when
    the squared residual norm falls below ``tolerance``.

    Example:
        >>> import torch
        >>> A = torch.tensor([[4.0, 1.0], [1.0, 3.0]], dtype=torch.float64)
        >>> b = torch.tensor([1.0, 2.0], dtype=torch.float64)
        >>> x = ConjugateGradient(max_iterations=2).solve(lambda v: A @ v, b).x
        >>> torch.allclose(A @ x, b)
        True
    """

    def __init__(self, max_iterations: int, damping: float = 0.0, tolerance: float = 1e-10):
        self.max_iterations = positive_int("ConjugateGradient", "max_iterations", max_iterations)
        self.damping = finite_float("ConjugateGradient", "damping", damping, low=0)
        self.tolerance = finite_float("ConjugateGradient", "tolerance", tolerance, low=0)

    def __repr__(self) -> str:
        return (
            f"ConjugateGradient(max_iterations={self.max_iterations}, damping={self.damping}, "
            f"tolerance={self.tolerance})"
        )

    def solve(
        self,
        fn_x: Callable[[torch.Tensor], torch.Tensor],
        b: torch.Tensor,
        x_init: torch.Tensor | None = None,
    ) -> CGSolution:
        """Solve ``(A + damping I) x = b`` where ``fn_x(v) = A v``."""
        check_callable("ConjugateGradient", "fn_x", fn_x, "fn_x(vector) -> vector")

        def product(v: torch.Tensor) -> torch.Tensor:
            out = fn_x(v)
            return out + self.damping * v if self.damping else out

        x = torch.zeros_like(b) if x_init is None else x_init.clone()
        r = b - product(x) if x_init is not None else b.clone()
        p = r.clone()
        rr = torch.dot(r, r)
        iterations = 0
        while iterations < self.max_iterations and float(rr) > self.tolerance:
            ap = product(p)
            alpha = rr / torch.dot(p, ap)
            x = x + alpha * p
            r = r - alpha * ap
            rr_new = torch.dot(r, r)
            p = r + (rr_new / rr) * p
            rr = rr_new
            iterations += 1
        return CGSolution(x=x, iterations=iterations, residual_norm=math.sqrt(float(rr)))


@dataclass
class LineSearchResult:
    """The result of :meth:`LineSearch.search`: whether a step fraction was accepted, which
    (0.0 when none was), the objective there, the iterations run and every ratio tried.

    Example:
        >>> search = LineSearch(max_iterations=5, accept_ratio=0.5)
        >>> result = search.search(lambda frac: (4.0 * frac - 1.0) ** 2, base_value=1.0,
        ...                        estimated_improvement=8.0)
        >>> result.accepted, result.fraction, result.iterations, result.ratios
        (True, 0.25, 3, [-1.0, 0.0, 0.5])
    """

    accepted: bool
    fraction: float
    value: float
    iterations: int
    ratios: list[float] = field(default_factory=list)


class LineSearch:
    """Backtracking line search along a step, by the improvement ratio.

    Tries the fractions ``1, parameter, parameter**2, ...`` (``max_iterations`` of them) of a
    full step whose first-order predicted improvement is ``estimated_improvement``, and accepts
    the first fraction ``f`` whose actual improvement ``base_value - fn_value(f)`` is positive
    and at least ``accept_ratio * f * estimated_improvement`` (TensorForce's and Schulman's
    TRPO line search). When none is accepted the result says so (``fraction`` 0.0), and the
    caller keeps its starting point.

    Example:
        >>> search = LineSearch(max_iterations=5, accept_ratio=0.5)
        >>> f = lambda x: (x - 1.0) ** 2           # from x = 0 a full step of 4 overshoots
        >>> result = search.search(lambda frac: f(4.0 * frac), base_value=f(0.0),
        ...                        estimated_improvement=8.0)
        >>> result.accepted, result.fraction
        (True, 0.25)
    """

    def __init__(self, max_iterations: int, accept_ratio: float, parameter: float = 0.5):
        self.max_iterations = positive_int("LineSearch", "max_iterations", max_iterations)
        self.accept_ratio = finite_float("LineSearch", "accept_ratio", accept_ratio, low=0)
        self.parameter = finite_float(
            "LineSearch", "parameter", parameter, low=0, high=1, low_open=True
        )
        if self.parameter >= 1.0:
            raise ValueError(f"LineSearch: parameter must be in (0, 1), got {parameter!r}")

    def __repr__(self) -> str:
        return (
            f"LineSearch(max_iterations={self.max_iterations}, accept_ratio={self.accept_ratio}, "
            f"parameter={self.parameter})"
        )

    def search(
        self,
        fn_value: Callable[[float], Any],
        base_value: float,
        estimated_improvement: float,
        fn_constraint: Callable[[float], bool] | None = None,
    ) -> LineSearchResult:
        """Evaluate ``fn_value(fraction)`` at decreasing fractions until one is accepted; with
        ``fn_constraint``, a fraction that passes the ratio test is accepted only if
        ``fn_constraint(fraction)`` is true as well (called right after ``fn_value`` at that
        fraction, such as a KL bound)."""
        check_callable("LineSearch", "fn_value", fn_value, "fn_value(fraction) -> float")
        ratios: list[float] = []
        value = base_value
        fraction = 1.0
        for iteration in range(1, self.max_iterations + 1):
            value = float(fn_value(fraction))
            actual = base_value - value
            expected = fraction * estimated_improvement
            ratio = actual / expected if expected > 0 else -math.inf
            ratios.append(ratio)
            if (
                actual > 0
                and ratio >= self.accept_ratio
                and math.isfinite(value)
                and (fn_constraint is None or fn_constraint(fraction))
            ):
                return LineSearchResult(True, fraction, value, iteration, ratios)
            fraction *= self.parameter
        return LineSearchResult(False, 0.0, base_value, self.max_iterations, ratios)
