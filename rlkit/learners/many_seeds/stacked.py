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
    module to call (``stacked(x, method="value")``).

    For the policy-gradient learners' ``ActorCritic`` MLPs (rlkit/learners/policy_gradient/
    models.py: ``forward`` and ``value``, each a stack of linear layers and one activation)
    ``stacked(x)`` computes the same layers as batched matrix products (``torch.baddbmm`` on the
    stacked weights) instead: the same arithmetic per model, without ``vmap``'s and
    ``functional_call``'s per-call overhead, which costs more than the work for networks this
    small. The same holds for an ``nn.Sequential`` of only ``nn.Linear`` (with bias) and
    ``nn.ReLU`` layers (what ``rlkit.approximators.neural.q_network`` builds for the DQN
    family): ``stacked(x)`` is then a chain of ``torch.baddbmm`` and ``torch.relu``.
    ``fast=False`` keeps the ``vmap`` for them too."""

    def __init__(self, models: Sequence[nn.Module], *, fast: bool = True) -> None:
        models = list(models)
        if not models:
            raise ValueError("StackedModel: models must be a non-empty list of torch modules")
        params, buffers = stack_module_state(models)
        self.params = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
        self.buffers = {k: v.detach().clone() for k, v in buffers.items()}
        self.base = copy.deepcopy(models[0]).to("meta")
        self.n = len(models)
        self._calls: dict[str | None, Callable] = {}
        self.mlps = _mlp_layers(models[0], self.params) if fast else None
        self.sequential = (
            _sequential_layers(models[0], self.params) if fast and self.mlps is None else None
        )

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
        if self.mlps is not None:
            return self._mlp_call(args[0], method)
        if self.sequential is not None and method is None:
            return self._sequential_call(args[0])
        if method not in self._calls:
            self._calls[method] = vmap(self.function(method))
        return self._calls[method](self.params, self.buffers, *args)

    def _mlp_call(self, x: torch.Tensor, method: str | None) -> torch.Tensor:
        """``forward`` (``method`` None) or ``value`` of the stacked ``ActorCritic`` MLPs on
        ``x`` of shape ``(n, batch, *obs_shape)``."""
        act, layers = self.mlps["activation"], self.mlps["vf" if method == "value" else "pi"]
        x = x.flatten(2)
        last = len(layers) - 1
        for i, (w, b) in enumerate(layers):
            x = torch.baddbmm(b.unsqueeze(1), x, w.transpose(1, 2))
            if i < last:
                x = act(x)
        if method == "value":
            return x.squeeze(-1)
        log_std = self.mlps["log_std"]
        if log_std is None:
            return x
        return torch.cat([x, log_std.unsqueeze(1).expand_as(x)], dim=-1)

    def _sequential_call(self, x: torch.Tensor) -> torch.Tensor:
        """The stacked ``nn.Sequential`` of linear layers and ReLUs on ``x`` of shape
        ``(n, batch, features)``."""
        for layer in self.sequential:
            if layer is None:
                x = torch.relu(x)
            else:
                w, b = layer
                x = torch.baddbmm(b.unsqueeze(1), x, w.transpose(1, 2))
        return x

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


def _mlp_layers(model: nn.Module, params: dict[str, torch.Tensor]) -> dict | None:
    """The stacked weights and biases of an ``ActorCritic``'s ``pi`` and ``vf`` MLPs (from its
    ``_linears``), its activation and stacked ``log_std``; None for any other model."""
    linears = getattr(model, "_linears", None)
    activation = getattr(model, "_activation", None)
    if not isinstance(linears, dict) or set(linears) != {"pi", "vf"} or activation is None:
        return None
    names = {id(p): k for k, p in model.named_parameters()}
    try:
        layers = {
            net: [(params[names[id(m.weight)]], params[names[id(m.bias)]]) for m in modules]
            for net, modules in linears.items()
        }
    except KeyError:  # a linear layer without bias, or not among the parameters
        return None
    expected = {names[id(t)] for m in linears["pi"] + linears["vf"] for t in (m.weight, m.bias)}
    log_std = params.get("log_std")
    if set(params) - expected - {"log_std"}:
        return None  # parameters the MLPs do not use: not the ActorCritic layout
    return {**layers, "activation": activation, "log_std": log_std}


def _sequential_layers(model: nn.Module, params: dict[str, torch.Tensor]) -> list | None:
    """The stacked ``(weight, bias)`` of each linear layer of an ``nn.Sequential`` of
    ``nn.Linear`` (with bias) and ``nn.ReLU`` layers without hooks, None for a ReLU; None for
    any other model."""
    if type(model) is not nn.Sequential or model._forward_hooks or model._forward_pre_hooks:
        return None
    layers: list = []
    for name, layer in model.named_children():
        if layer._forward_hooks or layer._forward_pre_hooks:
            return None
        if type(layer) is nn.ReLU:
            layers.append(None)
        elif type(layer) is nn.Linear and layer.bias is not None:
            layers.append((params[f"{name}.weight"], params[f"{name}.bias"]))
        else:
            return None
    used = {f"{n}.{t}" for n, layer in model.named_children() if type(layer) is nn.Linear
            for t in ("weight", "bias")}
    return layers if set(params) == used else None
