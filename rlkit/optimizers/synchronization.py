"""``Synchronization``: parameters that follow a source (target networks)."""

from __future__ import annotations

from dataclasses import dataclass
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


@dataclass
class _Pairs:
    params: Any
    source: Any
    targets: list[torch.Tensor]
    sources: list[torch.Tensor]
    target_buffers: list[torch.Tensor]
    source_buffers: list[torch.Tensor]
    zeros: list[torch.Tensor]


class Synchronization(OptimizerModule):
    """Move the parameters towards a source's: a hard copy every ``every`` steps, or Polyak
    averaging ``target <- (1 - tau) * target + tau * source`` at every step (buffers of modules
    are copied). Give exactly one of ``every`` and ``tau``. ``fn_loss`` is not used (pass None);
    the source is given at construction or to each ``step`` as ``source=``. A target network is
    ``Synchronization(online_network, every=n)`` stepped once per update unit (the DQN family's
    ``learner.target_sync``, stepped on its ``rk.TargetNetwork``'s copy).

    Stepping is cheap when nothing changes: the tensors are collected and checked once while
    ``params`` and the source are the same objects, and a hard-sync step that is not due only
    counts. Polyak averaging is ``TargetNetwork.polyak``'s arithmetic (torch's ``lerp``), so
    results are bit-identical to it.

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
        self, source: Any = None, *, every: int | None = None, tau: float | None = None
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
        self._cache: _Pairs | None = None

    def settings(self) -> dict[str, Any]:
        return {"every": self.every} if self.tau is None else {"tau": self.tau}

    def step(
        self,
        params: Any,
        fn_loss: Loss | None = None,
        *,
        source: Any = None,
        with_deltas: bool = True,
        **fns: Any,
    ) -> StepResult:
        """Count one step; copy or average when due. A step that changes nothing (a hard sync
        not due) only counts: its deltas are zero tensors made once per (params, source) and
        shared by such steps (do not modify them). ``with_deltas=False`` skips computing the
        deltas of a step that changes the parameters (the result's ``deltas`` is then empty):
        a target network's stepper does not need them, and they cost a copy of every
        parameter."""
        source = self.source if source is None else source
        if source is None:
            raise ValueError(
                "Synchronization: no source; give it at construction or as step(..., source=...)"
            )
        pairs = self._pairs(params, source)
        self.steps += 1
        if self.tau is None and self.steps % self.every != 0:
            return StepResult(deltas=pairs.zeros, statistics={"synchronized": 0.0})
        before = [t.detach().clone() for t in pairs.targets] if with_deltas else None
        with torch.no_grad():
            for t, s in zip(pairs.targets, pairs.sources, strict=True):
                if self.tau is None or self.tau == 1.0:
                    t.copy_(s)
                else:  # the arithmetic of TargetNetwork.polyak (torch's lerp)
                    t.lerp_(s.detach(), self.tau)
            for t, s in zip(pairs.target_buffers, pairs.source_buffers, strict=True):
                t.copy_(s)
        if before is None:
            return StepResult(deltas=[], statistics={"synchronized": 1.0})
        deltas = [t.detach() - b for t, b in zip(pairs.targets, before, strict=True)]
        return StepResult(deltas=deltas, statistics={"synchronized": 1.0})

    def _pairs(self, params: Any, source: Any) -> _Pairs:
        """The target and source tensors, checked once and kept while ``params`` and ``source``
        are the same objects (so stepping every environment step costs little)."""
        cached = self._cache
        if cached is not None and cached.params is params and cached.source is source:
            return cached
        targets, target_buffers = _tensors("Synchronization", "params", params)
        sources, source_buffers = _tensors("Synchronization", "source", source)
        if [t.shape for t in targets] != [s.shape for s in sources]:
            raise ValueError(
                "Synchronization: params and source must have tensors of the same shapes, got "
                f"{[tuple(t.shape) for t in targets]} and {[tuple(s.shape) for s in sources]}"
            )
        zeros = [torch.zeros_like(t) for t in targets]
        self._cache = _Pairs(
            params, source, targets, sources, target_buffers, source_buffers, zeros
        )
        return self._cache

    def _own_state(self) -> Any:
        return {"steps": self.steps}

    def _load_own_state(self, state: Any) -> None:
        self.steps = int(state["steps"])
