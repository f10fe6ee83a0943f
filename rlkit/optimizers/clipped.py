"""``ClippedStep``: the wrapped module's step or gradient, shortened to a maximal global norm."""

from __future__ import annotations

from collections.abc import Callable
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
    clip_grad_norm,
    norm,
)
from .gradient import GradientDescent

__all__ = ["ClippedStep"]

_ON = ("step", "gradient")


class ClippedStep(OptimizerModule):
    """The wrapped module's step, or its gradient, scaled down to a global norm of ``max_norm``.

    ``on="step"`` (default) clips the *step* (the parameter change) after the wrapped module
    computed it, as TensorForce's ``clipped_step`` does; the estimated improvement is scaled with
    the step (first order). ``on="gradient"`` clips the *gradient* before the wrapped module's
    torch optimizer uses it (Stable-Baselines3's ``max_grad_norm``, the arithmetic of
    ``torch.nn.utils.clip_grad_norm_``): the module hands the wrapped one an ``fn_gradients``
    closure, run after any ``fn_gradients`` its own caller gave, so it wraps a module that
    back-propagates (``GradientDescent``, or a ``MultiStep`` of one). The ``grad_norm``
    statistic is the norm before clipping.

    Example:
        >>> import torch, rlkit as rk
        >>> w = torch.nn.Parameter(torch.zeros(2))
        >>> opt = rk.optimizers.ClippedStep(rk.optimizers.GradientDescent("sgd", lr=1.0), 0.5)
        >>> result = opt.step([w], lambda: -(w * torch.tensor([3.0, 4.0])).sum())
        >>> w.data
        tensor([0.3000, 0.4000])
        >>> w = torch.nn.Parameter(torch.zeros(2))
        >>> opt = rk.optimizers.ClippedStep(rk.optimizers.GradientDescent("sgd", lr=1.0), 1.0,
        ...                                 on="gradient")
        >>> result = opt.step([w], lambda: -(w * torch.tensor([3.0, 4.0])).sum())
        >>> w.data, result.grad_norm
        (tensor([0.6000, 0.8000]), 5.0)
    """

    type_name = "clipped_step"
    role = "wraps: clips the inner module's step"

    def __init__(self, inner: OptimizerModule, max_norm: float, on: str = "step") -> None:
        self.inner = check_module("ClippedStep", "inner", inner)
        self.max_norm = finite_float("ClippedStep", "max_norm", max_norm, low=0, low_open=True)
        if on not in _ON:
            raise ValueError(f"ClippedStep: on must be one of {_ON}, got {on!r}")
        if on == "gradient" and not _backpropagates(self.inner):
            raise TypeError(
                f"ClippedStep(on='gradient'): the wrapped module must back-propagate "
                f"(GradientDescent, or a MultiStep or ClippedStep of one), got {self.inner!r}"
            )
        self.on = on
        self._clip = _then_clip(None, self.max_norm)  # when the caller gives no fn_gradients
        if on == "gradient":
            self.role = "wraps: clips the gradient the inner module steps with"

    def settings(self) -> dict[str, Any]:
        out: dict[str, Any] = {"max_norm": self.max_norm}
        if self.on != "step":
            out["on"] = self.on
        return out

    def children(self) -> dict[str, OptimizerModule]:
        return {"optimizer": self.inner}

    def step(self, params: ParamsLike, fn_loss: Loss, **fns: Any) -> StepResult:
        params = as_parameters("ClippedStep", params)
        if self.on == "gradient":
            before = fns.get("fn_gradients")
            clip = self._clip if before is None else _then_clip(before, self.max_norm)
            fns["fn_gradients"] = clip
            return self.inner.step(params, fn_loss, **fns)
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


def _then_clip(before: Callable[[Any], Any] | None, max_norm: float) -> Callable[[Any], float]:
    """``fn_gradients``: the caller's (if any), then clipping; returns the norm before it."""

    def fn_gradients(params: Any) -> float:
        if before is not None:
            before(params)
        return clip_grad_norm(params, max_norm)

    fn_gradients.returns_gradient_norm = True  # the norm of the gradients it leaves (scaled)
    return fn_gradients


def _backpropagates(module: OptimizerModule) -> bool:
    if isinstance(module, GradientDescent):
        return True
    if type(module).type_name in ("multi_step", "clipped_step"):
        return all(_backpropagates(child) for child in module.children().values())
    return False
