"""Optimizer modules (TensorForce 0.3's design in eager torch; ``docs/architecture.md``).

A module's ``step(params, fn_loss, **fns) -> StepResult`` receives the loss as a closure, so
meta-optimizers can evaluate it as often as they need. Modules that compute a step:
:class:`GradientDescent` (any ``torch.optim`` optimizer), :class:`NaturalGradient`,
:class:`Evolutionary`, :class:`Synchronization`; modules that wrap one: :class:`MultiStep`,
:class:`ClippedStep`, :class:`OptimizedStep`. Solvers: :class:`ConjugateGradient`,
:class:`LineSearch`. :func:`make` builds a tree from a spec; ``rk.explain(module)`` prints it.
A step whose loss or gradient is nan or inf is refused, nothing changed: a
:class:`NonFiniteError` (``finite.py``, the one check every module shares). TRPO is
``OptimizedStep(NaturalGradient(...))``, PPO's update
``MultiStep(ClippedStep(GradientDescent(Adam), max_norm, on="gradient"))``.

Example:
    >>> import torch
    >>> import rlkit as rk
    >>> adam_4 = rk.optimizers.make(
    ...     {"type": "multi_step", "num_steps": 4, "optimizer": {"type": "adam", "lr": 0.01}})
    >>> rk.explain(adam_4)
    MultiStep(num_steps=4): wraps: repeats the inner module's step
      optimizer:
        GradientDescent(optimizer='adam', lr=0.01): computes its own step
    >>> w = torch.zeros(1, requires_grad=True)
    >>> _ = adam_4.step([w], lambda: ((w - 1.0) ** 2).sum())  # four Adam steps towards 1
    >>> round(float(w.detach()), 2)
    0.04
"""

from .base import EarlyStop, OptimizerModule, StepResult
from .clipped import ClippedStep
from .evolutionary import Evolutionary
from .finite import NonFiniteError, check_finite
from .gradient import GradientDescent
from .multi_step import MultiStep
from .natural_gradient import NaturalGradient
from .optimized_step import OptimizedStep
from .solvers import CGSolution, ConjugateGradient, LineSearch, LineSearchResult
from .spec import MODULE_TYPES, UnknownOptimizerError, make
from .synchronization import Synchronization

__all__ = [
    "EarlyStop",
    "NonFiniteError",
    "check_finite",
    "OptimizerModule",
    "StepResult",
    "GradientDescent",
    "MultiStep",
    "ClippedStep",
    "NaturalGradient",
    "OptimizedStep",
    "Synchronization",
    "Evolutionary",
    "ConjugateGradient",
    "CGSolution",
    "LineSearch",
    "LineSearchResult",
    "make",
    "MODULE_TYPES",
    "UnknownOptimizerError",
]
