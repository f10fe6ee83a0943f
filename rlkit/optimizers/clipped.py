"""``ClippedStep``: the wrapped module's step, shortened to a maximal global norm."""

from __future__ import annotations

from typing import Any

from ..core.checks import finite_float
from .base import (
    Loss,
    OptimizerModule,
    ParamsLike,
    StepResult,
    apply_deltas,
    as_parameters,
    check_module,
    norm,
)

__all__ = ["ClippedStep"]


class ClippedStep(OptimizerModule):
    """The wrapped module's step, scaled down when its global norm exceeds ``max_norm``.

    This clips the *step* (the parameter change), as TensorForce's ``clipped_step`` does, not
    the gradient: for Stable-Baselines3's gradient clipping give ``GradientDescent`` a
    ``max_grad_norm``. The estimated improvement is scaled with the step (first order).

    Example:
        >>> import torch, rlkit as rk
        >>> w = torch.nn.Parameter(torch.zeros(2))
        >>> opt = rk.optimizers.ClippedStep(rk.optimizers.GradientDescent("sgd", lr=1.0), 0.5)
        >>> result = opt.step([w], lambda: -(w * torch.tensor([3.0, 4.0])).sum())
        >>> w.data
        tensor([0.3000, 0.4000])
    """

    type_name = "clipped_step"
    role = "wraps: clips the inner module's step"

    def __init__(self, inner: OptimizerModule, max_norm: float) -> None:
        self.inner = check_module("ClippedStep", "inner", inner)
        self.max_norm = finite_float("ClippedStep", "max_norm", max_norm, low=0, low_open=True)

    def settings(self) -> dict[str, Any]:
        return {"max_norm": self.max_norm}

    def children(self) -> dict[str, OptimizerModule]:
        return {"optimizer": self.inner}

    def step(self, params: ParamsLike, fn_loss: Loss, **fns: Any) -> StepResult:
        params = as_parameters("ClippedStep", params)
        result = self.inner.step(params, fn_loss, **fns)
        step_norm = norm(result.deltas)
        scale = 1.0
        if step_norm > self.max_norm:
            scale = self.max_norm / step_norm
            estimate = result.estimated_improvement  # of the unclipped step
            apply_deltas(params, result.deltas, scale - 1.0)
            result.deltas = [d * scale for d in result.deltas]
            if estimate is not None:
                result.estimated_improvement = estimate * scale
            result.actual_improvement = None
        result.statistics = {**result.statistics, "step_norm": step_norm, "clip_scale": scale}
        return result
