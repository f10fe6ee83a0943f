"""The optimizer-module interface: ``step(params, fn_loss, **fns) -> StepResult``.

An optimizer module receives the loss as a closure (TensorForce 0.3's design), so a
meta-optimizer can evaluate it as often as it needs: a line search evaluates it along a
direction, an evolutionary optimizer at perturbed parameters, a multi-step optimizer once per
minibatch. Other closures travel in ``fns`` under names starting with ``fn_`` (a natural-gradient
module needs ``fn_kl_divergence``); every module passes the ``fns`` it does not use on to the
modules it wraps. Modules hold their state (torch optimizer moments, counters, generators) and
save it with ``state_dict`` / ``load_state_dict``.

A module either *computes* a step itself (``GradientDescent``, ``NaturalGradient``,
``Evolutionary``, ``Synchronization``) or *wraps* another module and changes the step that
module computed (``MultiStep``, ``ClippedStep``, ``OptimizedStep``); :meth:`describe` shows
which, so wrapping is never confused with replacing.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar

import torch
from torch import nn

from ..core.checks import callable_name, check_callable

__all__ = [
    "EarlyStop",
    "OptimizerModule",
    "StepResult",
    "as_parameters",
    "evaluate_loss",
    "apply_deltas",
    "snapshot",
    "restore",
    "flat",
    "unflat",
]

ParamsLike = nn.Module | Iterable[torch.Tensor]
Loss = Callable[..., Any]


class EarlyStop(Exception):  # noqa: N818 - a signal, not an error
    """Raised by a loss closure to end a multi-step update before the next step moves the
    parameters (PPO's ``target_kl``): ``MultiStep`` catches it and reports the epoch in its
    ``early_stop_epoch`` statistic.

    Example:
        >>> import torch, rlkit as rk
        >>> w = torch.nn.Parameter(torch.zeros(1))
        >>> calls = []
        >>> def fn_loss():
        ...     calls.append(1)
        ...     if len(calls) > 2:
        ...         raise EarlyStop
        ...     return (w - 1).pow(2).sum()
        >>> opt = rk.optimizers.MultiStep(rk.optimizers.GradientDescent("sgd", lr=0.1), 5)
        >>> opt.step([w], fn_loss).statistics["early_stop_epoch"], round(w.item(), 2)
        (2.0, 0.36)
    """


class StepResult:
    """What one ``step`` did.

    Attributes:
        deltas: the change applied to each parameter (one tensor per parameter, same shapes).
        loss_before: the loss at the parameters the step started from (None if not evaluated).
        estimated_improvement: the decrease of the loss the module predicted (first order for
            gradient methods; positive when the loss should go down), or None.
        actual_improvement: the decrease measured by evaluating the loss after the step, or
            None when the module did not evaluate it.
        statistics: named numbers about the step (gradient norm, KL multiplier, ...).

    A module may give ``deltas`` and ``estimated_improvement`` as zero-argument callables: they
    are then computed when first read (a plain gradient step inside an actor-critic update is
    never asked for them, and computing them each step costs a copy of every parameter). Read
    them before the next step of the same module.

    Example:
        >>> import torch
        >>> result = StepResult(lambda: [torch.ones(2)], loss_before=1.0)
        >>> result.deltas, result.loss, result.grad_norm
        ([tensor([1., 1.])], 1.0, nan)
    """

    __slots__ = ("_deltas", "loss_before", "_estimated", "actual_improvement", "statistics")

    def __init__(
        self,
        deltas: list[torch.Tensor] | Callable[[], list[torch.Tensor]],
        loss_before: float | None = None,
        estimated_improvement: float | Callable[[], float] | None = None,
        actual_improvement: float | None = None,
        statistics: dict[str, float] | None = None,
    ) -> None:
        self._deltas = deltas
        self.loss_before = loss_before
        self._estimated = estimated_improvement
        self.actual_improvement = actual_improvement
        self.statistics = {} if statistics is None else statistics

    @property
    def deltas(self) -> list[torch.Tensor]:
        if callable(self._deltas):
            self._deltas = self._deltas()
        return self._deltas

    @deltas.setter
    def deltas(self, value: list[torch.Tensor]) -> None:
        self._deltas = value

    @property
    def estimated_improvement(self) -> float | None:
        if callable(self._estimated):
            self._estimated = self._estimated()
        return self._estimated

    @estimated_improvement.setter
    def estimated_improvement(self, value: float | None) -> None:
        self._estimated = value

    def __repr__(self) -> str:
        return (
            f"StepResult(loss_before={self.loss_before}, actual_improvement="
            f"{self.actual_improvement}, statistics={self.statistics})"
        )

    @property
    def loss(self) -> float:
        """The loss before the step (NaN when not evaluated)."""
        return math.nan if self.loss_before is None else self.loss_before

    @property
    def grad_norm(self) -> float:
        """The gradient norm the module reported in its statistics (NaN when none)."""
        return self.statistics.get("grad_norm", math.nan)


class OptimizerModule(ABC):
    """An optimizer module: :meth:`step` changes ``params`` in place to decrease ``fn_loss()``.

    Subclasses set ``type_name`` (the spec's ``"type"``), ``role`` (one line said by
    :meth:`describe`), implement :meth:`step` and :meth:`settings`, and list the modules they
    wrap in :meth:`children`.

    Example:
        >>> import torch
        >>> import rlkit as rk
        >>> class SignDescent(rk.optimizers.OptimizerModule):
        ...     \"\"\"Moves every parameter by ``lr`` against the sign of its gradient.\"\"\"
        ...     type_name = "sign_descent"
        ...     def __init__(self, lr):
        ...         self.lr = lr
        ...     def settings(self):
        ...         return {"lr": self.lr}
        ...     def step(self, params, fn_loss, **fns):
        ...         loss = fn_loss()
        ...         grads = torch.autograd.grad(loss, params)
        ...         deltas = [-self.lr * g.sign() for g in grads]
        ...         with torch.no_grad():
        ...             for p, d in zip(params, deltas):
        ...                 p += d
        ...         return rk.optimizers.StepResult(deltas, loss_before=float(loss.detach()))
        >>> w = torch.zeros(2, requires_grad=True)
        >>> result = SignDescent(0.5).step([w], lambda: ((w - 1.0) ** 2).sum())
        >>> w.tolist(), result.loss_before
        ([0.5, 0.5], 2.0)
        >>> rk.explain(SignDescent(0.5))
        SignDescent(lr=0.5): computes its own step
    """

    type_name: ClassVar[str] = ""
    role: ClassVar[str] = "computes its own step"

    @abstractmethod
    def step(self, params: ParamsLike, fn_loss: Loss, **fns: Any) -> StepResult:
        """Change ``params`` in place; returns what was done."""

    @abstractmethod
    def settings(self) -> dict[str, Any]:
        """The constructor arguments (JSON-ready) other than the wrapped modules."""

    def children(self) -> dict[str, OptimizerModule]:
        """The wrapped modules by argument name (none for a module that computes its step)."""
        return {}

    # ---- specs and descriptions ----

    def to_spec(self) -> dict[str, Any]:
        """A TensorForce-style dict that ``rk.optimizers.make`` turns back into this tree."""
        spec: dict[str, Any] = {"type": self.type_name, **self.settings()}
        for name, child in self.children().items():
            spec[name] = child.to_spec()
        return spec

    def describe(self) -> str:
        """The module tree, one module a line, with its settings and whether it wraps or
        computes the step."""
        return "\n".join(self._describe_lines(""))

    def _describe_lines(self, indent: str) -> list[str]:
        settings = ", ".join(f"{k}={v!r}" for k, v in self.settings().items())
        lines = [f"{indent}{type(self).__name__}({settings}): {self.role}"]
        for name, child in self.children().items():
            lines.append(f"{indent}  {name}:")
            lines.extend(child._describe_lines(indent + "    "))
        return lines

    def __repr__(self) -> str:
        args = [f"{k}={v!r}" for k, v in self.settings().items()]
        args = [f"{child!r}" for child in self.children().values()] + args
        return f"{type(self).__name__}({', '.join(args)})"

    # ---- state ----

    def state_dict(self) -> dict[str, Any]:
        """This module's state and its children's (nested under ``"children"``)."""
        return {
            "type": self.type_name,
            "own": self._own_state(),
            "children": {name: c.state_dict() for name, c in self.children().items()},
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned (the same module tree)."""
        owner = type(self).__name__
        if not isinstance(state, dict) or state.get("type") != self.type_name:
            got = state.get("type") if isinstance(state, dict) else type(state).__name__
            raise ValueError(
                f"{owner}.load_state_dict: expected the state of a {self.type_name!r} module, "
                f"got {got!r}"
            )
        children = self.children()
        saved = state.get("children", {})
        if set(saved) != set(children):
            raise ValueError(
                f"{owner}.load_state_dict: the saved module wraps {sorted(saved)}, this one "
                f"{sorted(children)}"
            )
        self._load_own_state(state.get("own"))
        for name, child in children.items():
            child.load_state_dict(saved[name])

    def _own_state(self) -> Any:
        return None

    def _load_own_state(self, state: Any) -> None:
        del state  # a module without state of its own


# ---- helpers shared by the modules ----


def as_parameters(owner: str, params: Any) -> list[torch.Tensor]:
    """``params`` (a ``torch.nn.Module`` or an iterable of tensors) as a list of tensors."""
    tensors = list(params.parameters()) if isinstance(params, nn.Module) else params
    try:
        tensors = list(tensors)
    except TypeError:
        raise TypeError(
            f"{owner}: params must be a torch.nn.Module or an iterable of tensors, got "
            f"{type(params).__name__}: {params!r:.80}"
        ) from None
    if not tensors or not all(isinstance(t, torch.Tensor) for t in tensors):
        raise TypeError(
            f"{owner}: params must be a torch.nn.Module or a non-empty iterable of tensors, got "
            f"{[type(t).__name__ for t in tensors]!r:.120}"
        )
    return tensors


def evaluate_loss(owner: str, fn_loss: Loss, *args: Any, name: str = "fn_loss") -> torch.Tensor:
    """``fn_loss(*args)`` as a 0-d tensor; a clear error for anything that is not a scalar."""
    check_callable(owner, name, fn_loss, f"{name}() -> a scalar tensor")
    value = fn_loss(*args)
    if isinstance(value, torch.Tensor):
        if value.dim() != 0 or not value.is_floating_point():
            raise ValueError(
                f"{owner}: {name} ({callable_name(fn_loss)}) must return a scalar floating "
                f"tensor, got a {value.dtype} tensor of shape {tuple(value.shape)}"
            )
        return value
    if isinstance(value, (float, int)) and not isinstance(value, bool):
        return torch.tensor(float(value))
    if hasattr(value, "shape") and getattr(value, "shape", None) == () and hasattr(value, "item"):
        return torch.tensor(float(value.item()))  # numpy scalars
    raise ValueError(
        f"{owner}: {name} ({callable_name(fn_loss)}) must return a scalar tensor or number, got "
        f"{type(value).__name__}: {value!r:.80}"
    )


def snapshot(params: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    """Detached copies of the parameters."""
    return [p.detach().clone() for p in params]


def restore(params: Sequence[torch.Tensor], saved: Sequence[torch.Tensor]) -> None:
    """Copy ``saved`` back into ``params`` in place."""
    with torch.no_grad():
        for p, s in zip(params, saved, strict=True):
            p.copy_(s)


def apply_deltas(params: Sequence[torch.Tensor], deltas: Sequence[torch.Tensor], scale=1.0):
    """``params += scale * deltas`` in place (without recording gradients)."""
    with torch.no_grad():
        for p, d in zip(params, deltas, strict=True):
            p.add_(d, alpha=scale)


def differences(after: Sequence[torch.Tensor], before: Sequence[torch.Tensor]):
    """``after - before`` for each parameter (detached)."""
    return [a.detach() - b for a, b in zip(after, before, strict=True)]


def flat(tensors: Sequence[torch.Tensor]) -> torch.Tensor:
    """One flat vector of all tensors."""
    return torch.cat([t.reshape(-1) for t in tensors])


def unflat(vector: torch.Tensor, like: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    """Split a flat vector back into tensors shaped like ``like``."""
    out, start = [], 0
    for t in like:
        n = t.numel()
        out.append(vector[start : start + n].view_as(t))
        start += n
    return out


def clear_grads(params: Sequence[torch.Tensor]) -> None:
    """Set every parameter's gradient to None (``optimizer.zero_grad()`` without its profiler
    bookkeeping, which costs more than the work for small networks)."""
    for p in params:
        p.grad = None


def total_norm(tensors: Sequence[torch.Tensor]) -> torch.Tensor:
    """The global Euclidean norm of a non-empty list of tensors on one device, as a 0-d tensor
    (``torch.nn.utils.get_total_norm``'s arithmetic in two calls, whatever their number)."""
    return torch.linalg.vector_norm(torch.stack(torch._foreach_norm(list(tensors))))


def clip_grad_norm(params: Sequence[torch.Tensor], max_norm: float) -> float:
    """Scale the gradients in place so their global norm is at most ``max_norm``; the norm
    before. The arithmetic of ``torch.nn.utils.clip_grad_norm_`` (same results) for parameters
    on one device, without its grouping overhead.

    Example:
        >>> w = torch.nn.Parameter(torch.zeros(2)); w.grad = torch.tensor([3.0, 4.0])
        >>> clip_grad_norm([w], 1.0), [round(g, 4) for g in w.grad.tolist()]
        (5.0, [0.6, 0.8])
    """
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return 0.0
    total = total_norm(grads)
    clip_coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
    torch._foreach_mul_(grads, clip_coef)
    return float(total)


def norm(tensors: Sequence[torch.Tensor]) -> float:
    """The global Euclidean norm of several tensors."""
    return math.sqrt(sum(float(t.detach().pow(2).sum()) for t in tensors))


def dot(a: Sequence[torch.Tensor], b: Sequence[torch.Tensor]) -> float:
    """The sum of elementwise products of two lists of tensors."""
    return float(sum((x.detach() * y.detach()).sum() for x, y in zip(a, b, strict=True)))


def check_module(owner: str, name: str, value: Any) -> OptimizerModule:
    """``value`` if it is an optimizer module."""
    if not isinstance(value, OptimizerModule):
        raise TypeError(
            f"{owner}: {name} must be an optimizer module (rk.optimizers.GradientDescent, ...), "
            f"got {type(value).__name__}: {value!r:.80}"
        )
    return value
