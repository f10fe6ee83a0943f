"""``Synchronization``: parameters that follow a source (target networks)."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from ..core.checks import exactly_one_of, finite_float, positive_int
from .base import Loss, OptimizerModule, StepResult, as_parameters

__all__ = ["Synchronization"]


def _tensors(owner: str, name: str, value: Any) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """(parameters, buffers) of a module, or (tensors, []) for an iterable of tensors."""
    if isinstance(value, nn.Module):
        return list(value.parameters()), list(value.buffers())
    return as_parameters(f"{owner}: {name}", value), []


_NOT = {"synchronized": 0.0}
_SYNCHRONIZED = {"synchronized": 1.0}


def _no_deltas() -> list[torch.Tensor]:
    raise RuntimeError(
        "Synchronization: this module was made with keep_deltas=False (a target network that "
        "nothing wraps), so its steps do not record their deltas"
    )


class Synchronization(OptimizerModule):
    """Move the parameters towards a source's: a hard copy every ``every`` steps, or Polyak
    averaging ``target <- (1 - tau) * target + tau * source`` at every step (buffers of modules
    are copied). Give exactly one of ``every`` and ``tau``. ``fn_loss`` is not used (pass None);
    the source is given at construction or to each ``step`` as ``source=``. A target network is
    ``Synchronization(online_network, every=n)`` stepped once per update unit. A step that does
    not synchronise changes nothing and copies nothing; ``keep_deltas=False`` skips copying the
    parameters to report a synchronising step's deltas too (for a target network stepped on
    its own every gradient step, where nothing reads them; the DQN family's
    ``learner.target_sync``, stepped on its ``rk.TargetNetwork``'s copy). Polyak averaging is
    ``TargetNetwork.polyak``'s arithmetic (one ``torch._foreach_lerp_``): bit-identical results.

    Example:
        >>> import torch, rlkit as rk
        >>> online, target = torch.nn.Linear(2, 1), torch.nn.Linear(2, 1)
        >>> sync = rk.optimizers.Synchronization(online, every=2)
        >>> [sync.step(target, None).statistics["synchronized"] for _ in range(2)]
        [0.0, 1.0]
        >>> bool(torch.equal(target.weight, online.weight))
        True
    """

    type_name = "synchronization"
    role = "computes its own step: follows a source"

    def __init__(
        self,
        source: Any = None,
        *,
        every: int | None = None,
        tau: float | None = None,
        keep_deltas: bool = True,
    ) -> None:
        exactly_one_of("Synchronization", every=every, tau=tau)
        self.every = None if every is None else positive_int("Synchronization", "every", every)
        self.tau = (
            None
            if tau is None
            else finite_float("Synchronization", "tau", tau, low=0, high=1, low_open=True)
        )
        if source is not None:
            _tensors("Synchronization", "source", source)
        self.source = source
        self.steps = 0
        self._keep_deltas = keep_deltas
        self._cache: tuple[Any, Any, tuple[list[torch.Tensor], ...]] | None = None

    def settings(self) -> dict[str, Any]:
        return {"every": self.every} if self.tau is None else {"tau": self.tau}

    def step(
        self, params: Any, fn_loss: Loss | None = None, *, source: Any = None, **fns: Any
    ) -> StepResult:
        source = self.source if source is None else source
        if source is None:
            raise ValueError(
                "Synchronization: no source; give it at construction or as step(..., source=...)"
            )
        targets, target_buffers, sources, source_buffers = self._pairs(params, source)
        self.steps += 1
        synchronize = self.tau is not None or self.steps % self.every == 0
        if not synchronize:
            return StepResult(lambda: [torch.zeros_like(t) for t in targets], statistics=dict(_NOT))
        before = [t.detach().clone() for t in targets] if self._keep_deltas else None
        with torch.no_grad():
            if self.tau is None or self.tau == 1.0:
                torch._foreach_copy_(targets, sources)
            else:
                torch._foreach_lerp_(targets, [s.detach() for s in sources], self.tau)
            if target_buffers:
                torch._foreach_copy_(target_buffers, source_buffers)
        if before is None:
            return StepResult(_no_deltas, statistics=dict(_SYNCHRONIZED))
        deltas = [t.detach() - b for t, b in zip(targets, before, strict=True)]
        return StepResult(deltas=deltas, statistics=dict(_SYNCHRONIZED))

    def _pairs(self, params: Any, source: Any) -> tuple[list[torch.Tensor], ...]:
        """The target's and the source's (parameters, buffers), checked to match; kept for the
        next step with the same two objects (a module's tensors are found once)."""
        if self._cache is not None and self._cache[0] is params and self._cache[1] is source:
            return self._cache[2]
        targets, target_buffers = _tensors("Synchronization", "params", params)
        sources, source_buffers = _tensors("Synchronization", "source", source)
        if [t.shape for t in targets] != [s.shape for s in sources]:
            raise ValueError(
                "Synchronization: params and source must have tensors of the same shapes, got "
                f"{[tuple(t.shape) for t in targets]} and {[tuple(s.shape) for s in sources]}"
            )
        pairs = (targets, target_buffers, sources, source_buffers)
        if isinstance(params, nn.Module) and isinstance(source, nn.Module):
            self._cache = (params, source, pairs)
        return pairs

    def _own_state(self) -> Any:
        return {"steps": self.steps}

    def _load_own_state(self, state: Any) -> None:
        self.steps = int(state["steps"])
