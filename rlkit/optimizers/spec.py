"""``make(spec)``: an optimizer-module tree from a TensorForce-style dict.

A spec is JSON/YAML-ready: ``{"type": <module type>, <settings>..., "optimizer": <inner spec>}``.
A ``gradient_descent`` spec names its torch optimizer (``"optimizer": "adam"``) and passes the
other keys to it; a torch optimizer's name may also stand as the type itself
(``{"type": "adam", "lr": 1e-3}``). ``module.to_spec()`` returns the spec of a tree, so
``make(json.loads(json.dumps(module.to_spec())))`` rebuilds it.
"""

from __future__ import annotations

import copy
from typing import Any

from .base import OptimizerModule
from .clipped import ClippedStep
from .evolutionary import Evolutionary
from .gradient import GradientDescent, torch_optimizer_names
from .multi_step import MultiStep
from .natural_gradient import NaturalGradient
from .optimized_step import OptimizedStep
from .synchronization import Synchronization

__all__ = ["make", "MODULE_TYPES", "UnknownOptimizerError"]

MODULE_TYPES: dict[str, type[OptimizerModule]] = {
    cls.type_name: cls
    for cls in (
        GradientDescent,
        MultiStep,
        ClippedStep,
        NaturalGradient,
        OptimizedStep,
        Synchronization,
        Evolutionary,
    )
}
"""The module classes by their spec's ``"type"``: what :func:`make` can build.

Example:
    >>> import rlkit as rk
    >>> sorted(rk.optimizers.MODULE_TYPES)[:3]
    ['clipped_step', 'evolutionary', 'gradient_descent']
"""

# modules that wrap another one: the spec key of the wrapped module's spec
_WRAPPERS = {"multi_step", "clipped_step", "optimized_step"}


class UnknownOptimizerError(ValueError):
    """A spec names a module type that does not exist.

    Example:
        >>> import rlkit as rk
        >>> try:
        ...     rk.optimizers.make({"type": "no_such_module"})
        ... except rk.optimizers.UnknownOptimizerError as error:
        ...     print(str(error)[:47])
        rk.optimizers.make: unknown optimizer type 'no_
    """


def make(spec: dict[str, Any] | OptimizerModule) -> OptimizerModule:
    """Build the module tree a spec describes (a module is returned as it is).

    Example:
        >>> import rlkit as rk
        >>> trpo = rk.optimizers.make({
        ...     "type": "optimized_step", "ls_max_iterations": 10, "ls_accept_ratio": 0.1,
        ...     "optimizer": {"type": "natural_gradient", "max_kl": 0.01, "cg_iterations": 10},
        ... })
        >>> rk.explain(trpo)
        OptimizedStep(ls_max_iterations=10, ls_accept_ratio=0.1, ls_parameter=0.5): wraps: line-searches along the inner module's step
          optimizer:
            NaturalGradient(max_kl=0.01, cg_iterations=10, cg_damping=0.1): computes its own step
    """  # noqa: E501
    if isinstance(spec, OptimizerModule):
        return spec
    if not isinstance(spec, dict):
        raise TypeError(
            f"rk.optimizers.make: spec must be a dict with a 'type' (or an optimizer module), "
            f"got {type(spec).__name__}: {spec!r:.80}"
        )
    spec = copy.deepcopy(spec)
    kind = spec.pop("type", None)
    if not isinstance(kind, str):
        raise ValueError(f"rk.optimizers.make: the spec needs a 'type' string, got {kind!r}")
    if kind.lower() in torch_optimizer_names() and kind not in MODULE_TYPES:
        if "optimizer" in spec:  # it would silently replace the optimizer the type names
            raise ValueError(
                f"rk.optimizers.make: a spec of type {kind!r} names its torch optimizer already; "
                f"got 'optimizer': {spec['optimizer']!r} too (use type 'gradient_descent' with "
                f"'optimizer', or only the type)"
            )
        return GradientDescent(kind, **spec)
    cls = MODULE_TYPES.get(kind)
    if cls is None:
        raise UnknownOptimizerError(
            f"rk.optimizers.make: unknown optimizer type {kind!r}; known module types: "
            f"{sorted(MODULE_TYPES)}, or a torch optimizer name: {torch_optimizer_names()}"
        )
    try:
        if cls is GradientDescent:
            if "optimizer" not in spec:
                raise ValueError("a gradient_descent spec needs 'optimizer' (e.g. 'adam')")
            return GradientDescent(spec.pop("optimizer"), **spec)
        if kind in _WRAPPERS:
            if "optimizer" not in spec:
                raise ValueError(
                    f"a {kind} spec needs 'optimizer', the spec of the module it wraps"
                )
            inner = make(spec.pop("optimizer"))
            return cls(inner, **spec)
        return cls(**spec)
    except TypeError as e:
        if "unexpected keyword" not in str(e) and "missing" not in str(e):
            raise
        raise TypeError(f"rk.optimizers.make: bad settings for {kind!r}: {e}") from e
