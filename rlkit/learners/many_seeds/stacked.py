"""``StackedModel``: ``N`` copies of one network as stacked parameters and a ``vmap``-ed call.

Example:
    >>> import torch
    >>> nets = [torch.nn.Linear(3, 2) for _ in range(4)]
    >>> stacked = StackedModel(nets)
    >>> stacked(torch.zeros(4, 5, 3)).shape, len(stacked.parameters())
    (torch.Size([4, 5, 2]), 2)
    >>> torch.equal(stacked.unstacked(2)["bias"], nets[2].bias.detach())
    True
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

__all__ = ["StackedModel"]


class StackedModel:
    """The modules ``models`` (the same architecture) as one set of stacked leaf tensors, first
    dimension the model, and ``stacked(x)``: every model on its slice of ``x`` (``vmap`` of
    ``functional_call`` on a parameter-less copy). ``method`` names another method of the
    module to call (``stacked(x, method="value")``)."""

    def __init__(self, models: Sequence[nn.Module]) -> None:
        models = list(models)
        if not models:
            raise ValueError("StackedModel: models must be a non-empty list of torch modules")
        params, buffers = stack_module_state(models)
        self.params = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
        self.buffers = {k: v.detach().clone() for k, v in buffers.items()}
        self.base = copy.deepcopy(models[0]).to("meta")
        self.n = len(models)
        self._calls: dict[str | None, Callable] = {}

    def parameters(self) -> list[torch.Tensor]:
        """The stacked parameters (leaf tensors an optimizer steps), in the modules' order."""
        return list(self.params.values())

    def function(self, method: str | None = None) -> Callable:
        """``f(params, buffers, *args)`` of ONE model, ``method`` (None: ``forward``) — what
        ``torch.func.vmap`` maps over the stacked dimension."""
        base = self.base
        wrapped = None if method is None else _Method(base, method)

        def call(params: dict, buffers: dict, *args: Any) -> Any:
            if wrapped is None:
                return functional_call(base, (params, buffers), args)
            return functional_call(wrapped, (_prefixed(params), _prefixed(buffers)), args)

        return call

    def __call__(self, *args: Any, method: str | None = None) -> Any:
        if method not in self._calls:
            self._calls[method] = vmap(self.function(method))
        return self._calls[method](self.params, self.buffers, *args)

    def unstacked(self, i: int) -> dict[str, torch.Tensor]:
        """Model ``i``'s state dict (copies)."""
        out = {k: v[i].detach().clone() for k, v in self.params.items()}
        out.update({k: v[i].detach().clone() for k, v in self.buffers.items()})
        return out

    def load(self, params: dict[str, torch.Tensor], buffers: dict[str, torch.Tensor]) -> None:
        """Copy stacked ``params`` and ``buffers`` into this model's tensors (in place: an
        optimizer keeps stepping the same tensors)."""
        with torch.no_grad():
            for k, v in self.params.items():
                v.copy_(params[k])
            for k, v in self.buffers.items():
                v.copy_(buffers[k])


class _Method(nn.Module):
    """``forward`` is ``module.<method>`` (``functional_call`` only calls ``forward``)."""

    def __init__(self, module: nn.Module, method: str) -> None:
        super().__init__()
        self.module = module
        self.method = method

    def forward(self, *args: Any) -> Any:
        return getattr(self.module, self.method)(*args)


def _prefixed(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {f"module.{k}": v for k, v in tensors.items()}
