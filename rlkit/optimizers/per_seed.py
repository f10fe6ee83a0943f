"""``PerSeedClippedGradient``: gradient clipping for the stacked parameters of several seeds.

Many seeds trained in one process (docs/how-to/speed.md) hold each parameter as one tensor whose
first dimension is the seed. Adam, and any element-wise torch optimizer, then steps every seed
exactly as it would step that seed alone; a global gradient norm does not: it would mix the
seeds. This module clips each seed's gradient to ``max_norm`` by that seed's own global norm
(``torch.nn.utils.clip_grad_norm_``'s arithmetic, per slice), then lets the wrapped module step.
"""

from __future__ import annotations

from typing import Any

import torch

from ..core.checks import finite_float
from .base import Loss, OptimizerModule, ParamsLike, StepResult, as_parameters, check_module

__all__ = ["PerSeedClippedGradient", "clip_per_seed"]


def clip_per_seed(params: list[torch.Tensor], max_norm: float) -> torch.Tensor:
    """Scale the gradients in place so that each seed's (each slice along the first dimension)
    global norm is at most ``max_norm``; the norms before, one per seed.

    Example:
        >>> w = torch.nn.Parameter(torch.zeros(2, 2))
        >>> w.grad = torch.tensor([[3.0, 4.0], [0.3, 0.4]])
        >>> clip_per_seed([w], 1.0).tolist(), [round(g, 4) for g in w.grad[0].tolist()]
        ([5.0, 0.5], [0.6, 0.8])
    """
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return torch.zeros(0)
    # as torch.nn.utils.clip_grad_norm_: each tensor's norm, then the norm of those norms
    per_tensor = [torch.linalg.vector_norm(g.reshape(g.shape[0], -1), dim=1) for g in grads]
    norms = torch.linalg.vector_norm(torch.stack(per_tensor), dim=0)
    coef = (max_norm / (norms + 1e-6)).clamp(max=1.0)
    torch._foreach_mul_(grads, [coef.reshape(-1, *([1] * (g.dim() - 1))) for g in grads])
    return norms


class PerSeedClippedGradient(OptimizerModule):
    """The wrapped module's step with each seed's gradient clipped to a global norm of
    ``max_norm`` first (module docstring). The ``grad_norm`` statistic is the largest seed's
    norm before clipping; ``last_norms`` holds every seed's.

    Example:
        >>> import torch, rlkit as rk
        >>> w = torch.nn.Parameter(torch.zeros(2, 2))
        >>> opt = PerSeedClippedGradient(rk.optimizers.GradientDescent("sgd", lr=1.0), 1.0)
        >>> target = torch.tensor([[3.0, 4.0], [0.3, 0.4]])
        >>> result = opt.step([w], lambda: -(w * target).sum())
        >>> [[round(x, 4) for x in row] for row in w.data.tolist()], result.grad_norm
        ([[0.6, 0.8], [0.3, 0.4]], 5.0)
    """

    type_name = "per_seed_clipped_gradient"
    role = "wraps: clips each seed's gradient the inner module steps with"

    def __init__(self, inner: OptimizerModule, max_norm: float) -> None:
        self.inner = check_module("PerSeedClippedGradient", "inner", inner)
        self.max_norm = finite_float(
            "PerSeedClippedGradient", "max_norm", max_norm, low=0, low_open=True
        )
        self.last_norms = torch.zeros(0)

    def settings(self) -> dict[str, Any]:
        return {"max_norm": self.max_norm}

    def children(self) -> dict[str, OptimizerModule]:
        return {"optimizer": self.inner}

    def step(self, params: ParamsLike, fn_loss: Loss, **fns: Any) -> StepResult:
        params = as_parameters("PerSeedClippedGradient", params)

        def fn_gradients(ps: Any) -> float:
            self.last_norms = clip_per_seed(list(ps), self.max_norm)
            return float(self.last_norms.max()) if self.last_norms.numel() else 0.0

        fn_gradients.returns_gradient_norm = True
        return self.inner.step(params, fn_loss, **{**fns, "fn_gradients": fn_gradients})
