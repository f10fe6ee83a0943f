"""``GradientDescent``: one step of any ``torch.optim`` optimizer on the loss closure."""

from __future__ import annotations

import copy
from typing import Any

import torch

from ..core.checks import finite_float
from .base import (
    Loss,
    OptimizerModule,
    ParamsLike,
    StepResult,
    as_parameters,
    clear_grads,
    dot,
    evaluate_loss,
    total_norm,
)
from .finite import check_finite
from .fused_adam import fused_adam_step
from .torch_settings import check_torch_settings

__all__ = [
    "GradientDescent",
    "make_torch_optimizer",
    "torch_optimizer_class",
    "torch_optimizer_names",
]


def _torch_optimizers() -> dict[str, type]:
    return {
        name.lower(): cls
        for name, cls in vars(torch.optim).items()
        if isinstance(cls, type)
        and issubclass(cls, torch.optim.Optimizer)
        and cls is not torch.optim.Optimizer
    }


def torch_optimizer_names() -> list[str]:
    """The names ``GradientDescent`` and specs accept for the optimizers of ``torch.optim``."""
    return sorted(_torch_optimizers())


def torch_optimizer_class(owner: str, value: Any) -> Any:
    """A ``torch.optim.Optimizer`` subclass, the one of ``torch.optim`` named ``value``
    (case-insensitive: ``"adam"``, ``"SGD"``, ``"rmsprop"``), or a function ``(params, **kw) ->
    torch.optim.Optimizer`` (a factory, e.g. ``lambda p, **kw: torch.optim.Adam(p, lr=1e-3)``)."""
    if isinstance(value, type) and issubclass(value, torch.optim.Optimizer):
        return value
    if callable(value) and not isinstance(value, type):
        return value
    if isinstance(value, str):
        cls = _torch_optimizers().get(value.lower())
        if cls is not None:
            return cls
    raise ValueError(
        f"{owner}: torch_optimizer_cls must be a torch.optim.Optimizer subclass, a function "
        f"params -> Optimizer, or one of {torch_optimizer_names()}, got {value!r}"
    )


def make_torch_optimizer(
    cls: type, params: list[torch.Tensor], kwargs: dict[str, Any]
) -> torch.optim.Optimizer:
    """``cls(params, **kwargs)``; ``fused=True`` is dropped where this torch or device has no
    fused kernel (it changes speed, not the algorithm)."""
    try:
        made = cls(params, **kwargs)
    except (RuntimeError, TypeError, ValueError):
        if not kwargs.get("fused"):
            raise
        made = cls(params, **{k: v for k, v in kwargs.items() if k != "fused"})
    if not isinstance(made, torch.optim.Optimizer):
        raise TypeError(
            f"GradientDescent: the optimizer factory {cls!r} returned {type(made).__name__}, not "
            f"a torch.optim.Optimizer"
        )
    return made


def _check_torch_settings(cls: type, kwargs: dict[str, Any]) -> None:
    """Refuse settings the torch optimizer refuses (a misspelt name, ``betas="x"``, a negative
    ``momentum``) now, by building one for a placeholder parameter, rather than at the first
    step."""
    try:
        make_torch_optimizer(cls, [torch.zeros(2, 2, requires_grad=True)], kwargs)
    except (TypeError, ValueError, IndexError) as error:  # betas=[0.9]: an IndexError
        kind = TypeError if isinstance(error, TypeError) else ValueError
        raise kind(
            f"GradientDescent: torch.optim.{cls.__name__} refuses the settings {kwargs}: "
            f"{type(error).__name__}: {error}"
        ) from error


class GradientDescent(OptimizerModule):
    """One step of a ``torch.optim`` optimizer, built for the parameters on the first step.

    The step evaluates ``fn_loss()`` (through the optimizer's closure, so optimizers that
    evaluate the loss several times, such as ``LBFGS``, work too), back-propagates, hands the
    gradients to ``fn_gradients(params)`` when the caller gives one (a wrapping
    ``ClippedStep(..., on="gradient")`` clips them there; the ``grad_norm`` statistic is the norm
    it returns, before clipping), and lets the torch optimizer move the parameters. The
    estimated improvement is first order: ``-gradient . delta``. The module is meant for one set
    of parameters: calling it with other parameters is an error (the optimizer's moments belong
    to the first ones).

    Args:
        torch_optimizer_cls: a ``torch.optim.Optimizer`` subclass, its name (``"adam"``), or a
            function ``(params, **kw) -> Optimizer``.
        keep_deltas: copy the parameters before each step so that the result's ``deltas`` and
            ``estimated_improvement`` can be read (False: no copy, and reading them is an
            error; for a learner that reads only the loss, as the off-policy actor-critics).
        lr_scheduler: a function ``torch optimizer -> torch.optim.lr_scheduler.LRScheduler``,
            stepped after every step (None: none).
        **kw: the torch optimizer's arguments (``lr=3e-4``, ...); refused now when torch
            refuses them, when a number is nan or inf, or when it lies outside its range
            (``momentum`` in [0, 1], ``weight_decay >= 0``, ...: ``torch_settings.py``).

    ``learning_rate`` reads and sets the learning rate of every parameter group (a learner with
    a learning-rate ``Schedule`` sets it before each update).

    Example:
        >>> import torch, rlkit as rk
        >>> w = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
        >>> sgd = rk.optimizers.GradientDescent("sgd", lr=0.25)
        >>> result = sgd.step([w], lambda: (w ** 2).sum())
        >>> w.data, result.loss_before
        (tensor([ 0.5000, -1.0000]), 5.0)
    """

    type_name = "gradient_descent"

    def __init__(
        self,
        torch_optimizer_cls: Any,
        *,
        keep_deltas: bool = True,
        lr_scheduler: Any = None,
        **kw: Any,
    ) -> None:
        if "max_grad_norm" in kw:
            raise TypeError(
                "GradientDescent: max_grad_norm is not a GradientDescent setting; clip the "
                "gradient with ClippedStep(GradientDescent(...), max_norm, on='gradient')"
            )
        self.torch_optimizer_cls = torch_optimizer_class("GradientDescent", torch_optimizer_cls)
        if lr_scheduler is not None and not callable(lr_scheduler):
            raise TypeError(
                f"GradientDescent: lr_scheduler must be a function optimizer -> LRScheduler or "
                f"None, got {lr_scheduler!r}"
            )
        self.lr_scheduler_fn = lr_scheduler
        self.lr_scheduler: Any = None
        self._lr_set: float | None = None  # a learning rate set before the optimizer was built
        self.kwargs = dict(kw)
        self.optimizer: torch.optim.Optimizer | None = None
        self._param_ids: tuple[int, ...] = ()
        self._pending_state: dict | None = None
        self._before: list[torch.Tensor] = []
        self._steps = 0  # steps taken (to refuse reading a step's deltas after the next one)
        self.keep_deltas = bool(keep_deltas)
        if "lr" in kw:
            finite_float("GradientDescent", "lr", kw["lr"], low=0, low_open=True)
        if isinstance(self.torch_optimizer_cls, type):
            _check_torch_settings(self.torch_optimizer_cls, self.kwargs)
        check_torch_settings("GradientDescent", self.torch_optimizer_cls, self.kwargs)

    @classmethod
    def wrap(
        cls, optimizer: torch.optim.Optimizer, *, lr_scheduler: Any = None, keep_deltas: bool = True
    ) -> GradientDescent:
        """A module that steps an already-built torch ``optimizer`` (its parameter groups,
        settings and moments), for a user who hands over an optimizer instance (as
        ``rk.NeuralNetworkApproximator`` allows). ``lr_scheduler``: an ``LRScheduler`` of
        ``optimizer``, or a function ``optimizer -> LRScheduler`` (called now). The parameters
        of its first ``step`` are the ones it steps from then on.

        Example:
            >>> import torch, rlkit as rk
            >>> w = torch.nn.Parameter(torch.tensor([1.0]))
            >>> sgd = rk.optimizers.GradientDescent.wrap(torch.optim.SGD([w], lr=0.5))
            >>> _ = sgd.step([w], lambda: (w ** 2).sum())
            >>> w.data, sgd.settings()
            (tensor([0.]), {'optimizer': 'sgd', 'lr': 0.5})
        """
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise TypeError(
                f"GradientDescent.wrap: optimizer must be a torch.optim.Optimizer, got "
                f"{type(optimizer).__name__}: {optimizer!r:.80}"
            )
        module = cls(lambda params, **kw: optimizer, keep_deltas=keep_deltas)  # no probe build
        module.torch_optimizer_cls = type(optimizer)  # named by settings()
        module.kwargs = {"lr": float(optimizer.param_groups[0]["lr"])}  # shown by settings()
        module.optimizer = optimizer
        if lr_scheduler is not None and not isinstance(
            lr_scheduler, torch.optim.lr_scheduler.LRScheduler
        ):
            if not callable(lr_scheduler):
                raise TypeError(
                    f"GradientDescent.wrap: lr_scheduler must be an LRScheduler or a function "
                    f"optimizer -> LRScheduler, got {lr_scheduler!r}"
                )
            lr_scheduler = lr_scheduler(optimizer)
        module.lr_scheduler = lr_scheduler
        return module

    @property
    def learning_rate(self) -> float | None:
        """The learning rate of the first parameter group (the ``lr`` setting before the first
        step; None when neither is known)."""
        if self.optimizer is not None:
            return float(self.optimizer.param_groups[0]["lr"])
        lr = self.kwargs.get("lr")
        return None if lr is None else float(lr)

    @learning_rate.setter
    def learning_rate(self, value: float) -> None:
        if self.optimizer is None:  # applied when the optimizer is built (after a saved state)
            self.kwargs["lr"] = value
            self._lr_set = value
            return
        for group in self.optimizer.param_groups:
            group["lr"] = value

    def settings(self) -> dict[str, Any]:
        cls = self.torch_optimizer_cls
        cls_name = getattr(cls, "__name__", "")
        known = _torch_optimizers().get(cls_name.lower()) is cls
        name = cls_name.lower() if known else f"{cls.__module__}.{cls.__qualname__}"
        out: dict[str, Any] = {"optimizer": name, **self.kwargs}
        if not self.keep_deltas:
            out["keep_deltas"] = False
        return out

    def _build(self, params: list[torch.Tensor]) -> torch.optim.Optimizer:
        ids = tuple(id(p) for p in params)
        if self.optimizer is None:
            self.optimizer = make_torch_optimizer(self.torch_optimizer_cls, params, self.kwargs)
            if self.lr_scheduler_fn is not None:
                self.lr_scheduler = self.lr_scheduler_fn(self.optimizer)
            if self._pending_state is not None:
                self._load_torch_state(self._pending_state)
                self._pending_state = None
            if self._lr_set is not None:
                self.learning_rate = self._lr_set
        elif self._param_ids and ids != self._param_ids:
            raise ValueError(
                "GradientDescent: step was called with other parameters than at its first step; "
                "use one GradientDescent module per set of parameters"
            )
        if not self._param_ids:  # the first step (of a built or a wrapped optimizer)
            self._param_ids = ids
            self._before = [torch.empty_like(p) for p in params] if self.keep_deltas else []
        return self.optimizer

    def step(self, params: ParamsLike, fn_loss: Loss, **fns: Any) -> StepResult:
        params = as_parameters("GradientDescent", params)
        optimizer = self._build(params)
        losses: list[float] = []
        grad_norms: list[float] = []
        fn_gradients = fns.get("fn_gradients")

        def closure() -> torch.Tensor:
            clear_grads(params)
            loss = evaluate_loss("GradientDescent", fn_loss)
            loss_value = check_finite("GradientDescent", "loss", loss.detach())
            loss.backward()
            norm = None if fn_gradients is None else fn_gradients(params)
            if norm is None or not getattr(fn_gradients, "returns_gradient_norm", False):
                # the norm of the gradients the torch optimizer will use (a user's
                # fn_gradients may change them and return anything)
                grads = [p.grad for p in params if p.grad is not None]
                actual = float(total_norm(grads)) if grads else 0.0
                check_finite("GradientDescent", "gradient norm", actual)
                norm = actual if norm is None else norm
            else:  # the norm before clipping: finite exactly when the clipped gradients are
                check_finite("GradientDescent", "gradient norm", norm)
            grad_norms.append(float(norm))
            losses.append(loss_value)
            return loss

        detached = [p.detach() for p in params] if self.keep_deltas else []
        if self.keep_deltas:
            torch._foreach_copy_(self._before, detached)
        if type(optimizer) is torch.optim.Adam:  # the closure, then Adam's kernels directly
            with torch.enable_grad():
                closure()
            if not fused_adam_step(optimizer):  # not the plain fused case: torch's own step
                optimizer.step()
        else:
            optimizer.step(closure)
        if self.lr_scheduler is not None:
            self.lr_scheduler.step()
        self._steps += 1
        step = self._steps

        def deltas() -> list[torch.Tensor]:
            self._check_fresh(step)
            return list(torch._foreach_sub(detached, self._before))

        def estimated() -> float:
            self._check_fresh(step)
            grads = [torch.zeros_like(p) if p.grad is None else p.grad for p in params]
            return -dot(grads, result.deltas)

        statistics = {"loss": losses[0], "grad_norm": grad_norms[0]}
        result = StepResult(
            deltas, losses[0], estimated if self.keep_deltas else None, None, statistics
        )
        return result

    def _check_fresh(self, step: int) -> None:
        if not self.keep_deltas:
            raise RuntimeError(
                "GradientDescent: made with keep_deltas=False, so its steps do not record their "
                "deltas or estimated improvement"
            )
        if step != self._steps:
            raise RuntimeError(
                "GradientDescent: a step's deltas and estimated improvement must be read before "
                "the module's next step"
            )

    def _own_state(self) -> Any:
        if self.optimizer is None:
            return copy.deepcopy(self._pending_state) or {"optimizer": None}
        state = {"optimizer": copy.deepcopy(self.optimizer.state_dict())}
        if self.lr_scheduler is not None:
            state["lr_scheduler"] = copy.deepcopy(self.lr_scheduler.state_dict())
        return state

    def _load_own_state(self, state: Any) -> None:
        saved = copy.deepcopy(state or {})
        if self.optimizer is None:
            self._pending_state = saved if saved.get("optimizer") is not None else None
        elif saved.get("optimizer") is not None:
            self._load_torch_state(saved)

    def _load_torch_state(self, state: dict[str, Any]) -> None:
        """Load a saved ``{"optimizer": ..., "lr_scheduler": ...}`` into the built optimizer."""
        if "optimizer" not in state and "state" in state:  # a bare torch state (older saves)
            state = {"optimizer": state}
        self.optimizer.load_state_dict(state["optimizer"])
        if self.lr_scheduler is not None and state.get("lr_scheduler") is not None:
            self.lr_scheduler.load_state_dict(state["lr_scheduler"])
