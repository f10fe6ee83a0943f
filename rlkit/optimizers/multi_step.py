"""``MultiStep``: several steps of a wrapped module, optionally over shuffled minibatches."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import torch

from ..core.checks import non_negative_int, optional_positive_int, positive_int
from ..core.state import generator_state, set_generator_state
from .base import (
    EarlyStop,
    Loss,
    OptimizerModule,
    ParamsLike,
    StepResult,
    as_parameters,
    check_module,
    differences,
    snapshot,
)

__all__ = ["MultiStep", "bind_indices", "epoch_indices"]

_ALL = object()  # full-batch steps: the closures are called without indices


def bind_indices(fns: dict[str, Any], indices: np.ndarray) -> dict[str, Any]:
    """``fns`` with every callable named ``fn_*`` bound to ``indices`` (its first argument);
    other values, and ``fn_gradients`` (a function of the parameters, not of the samples),
    pass unchanged."""
    return {
        name: partial(value, indices) if _indexed(name) and callable(value) else value
        for name, value in fns.items()
    }


def _indexed(name: str) -> bool:
    return name.startswith("fn_") and name not in _NOT_INDEXED


_NOT_INDEXED = ("fn_gradients",)


def epoch_indices(
    n: int, size: int, generator: np.random.Generator
) -> list[np.ndarray | None]:
    """One epoch over ``n`` samples in minibatches of ``size``: index arrays cut from a
    permutation drawn from ``generator`` (the last one smaller when ``size`` does not divide
    ``n``), or ``[None]``, the whole batch in order, when ``size >= n`` (nothing is drawn).

    Example:
        >>> [i.tolist() for i in epoch_indices(5, 2, np.random.default_rng(0))]
        [[2, 4], [3, 0], [1]]
        >>> epoch_indices(5, 8, np.random.default_rng(0))
        [None]
    """
    if size >= n:
        return [None]
    order = generator.permutation(n)
    return [order[start : start + size] for start in range(0, n, size)]


class MultiStep(OptimizerModule):
    """``num_steps`` steps of the wrapped module; with ``minibatch_size``, ``num_steps`` epochs
    over shuffled minibatches.

    Without minibatches every step calls ``inner.step(params, fn_loss, **fns)`` unchanged. With
    ``minibatch_size`` the caller gives ``batch_size`` (the number of samples) to ``step`` and
    its closures take an index array: ``fn_loss(indices)``, ``fn_kl_divergence(indices)``, ...
    Each epoch draws a permutation of the samples and cuts it into minibatches of
    ``minibatch_size`` (the last one smaller when the size does not divide the batch), so every
    sample is visited exactly once per epoch, as in Stable-Baselines3's PPO. A minibatch as large
    as the batch is the whole batch, in order (``fn_loss(None)``; nothing is drawn). The
    permutation comes from the ``generator`` the caller gives to ``step`` (a learner passes its
    own, so its seed decides the shuffling) or else from the module's own generator (seeded by
    ``seed``, saved in its state). PPO's update is ``MultiStep(ClippedStep(GradientDescent(Adam),
    max_grad_norm, on="gradient"), n_epochs, minibatch_size)``.

    A closure may raise :class:`~rlkit.optimizers.base.EarlyStop` to end the steps before the
    inner module moves the parameters (PPO's ``target_kl``); the statistic ``early_stop_epoch``
    says in which epoch.

    Args:
        inner: the wrapped optimizer module.
        num_steps: steps (epochs with minibatches), >= 1.
        minibatch_size: samples per minibatch, or None for full-batch steps.
        seed: seed of the module's own shuffling generator.

    Example:
        >>> import torch, rlkit as rk
        >>> w = torch.nn.Parameter(torch.zeros(1))
        >>> x = torch.arange(6.0)
        >>> opt = rk.optimizers.MultiStep(rk.optimizers.GradientDescent("sgd", lr=0.1),
        ...                               num_steps=2, minibatch_size=4)
        >>> result = opt.step([w], lambda idx: ((w - x[idx]) ** 2).mean(), batch_size=6)
        >>> result.statistics["inner_steps"]
        4.0
    """

    type_name = "multi_step"
    role = "wraps: repeats the inner module's step"
    #: a learner shuffles with its own generator (``step(..., generator=)``), not by reseeding
    learner_reseeds = False

    def __init__(
        self,
        inner: OptimizerModule,
        num_steps: int,
        minibatch_size: int | None = None,
        *,
        seed: int = 0,
    ) -> None:
        self.inner = check_module("MultiStep", "inner", inner)
        self.num_steps = positive_int("MultiStep", "num_steps", num_steps)
        self.minibatch_size = optional_positive_int("MultiStep", "minibatch_size", minibatch_size)
        self.reseed(seed)

    def settings(self) -> dict[str, Any]:
        out: dict[str, Any] = {"num_steps": self.num_steps}
        if self.minibatch_size is not None:
            out["minibatch_size"] = self.minibatch_size
            out["seed"] = self.seed
        return out

    def children(self) -> dict[str, OptimizerModule]:
        return {"optimizer": self.inner}

    def reseed(self, seed: int) -> None:
        """Restart the shuffling generator from ``seed`` (a learner derives it from its own)."""
        self.seed = non_negative_int("MultiStep", "seed", seed)
        self.rng = np.random.default_rng(np.random.SeedSequence(self.seed))

    def minibatches(
        self, batch_size: int, generator: np.random.Generator | None = None
    ) -> list[np.ndarray | None]:
        """One epoch's minibatch index arrays (a permutation drawn from ``generator``, or the
        module's own); ``[None]`` (the whole batch) when a minibatch holds the whole batch."""
        size = self.minibatch_size or batch_size
        return epoch_indices(batch_size, size, self.rng if generator is None else generator)

    def step(
        self,
        params: ParamsLike,
        fn_loss: Loss,
        *,
        batch_size: int | None = None,
        generator: np.random.Generator | None = None,
        **fns: Any,
    ) -> StepResult:
        params = as_parameters("MultiStep", params)
        before = snapshot(params)
        results: list[StepResult] = []
        estimates: list[float | None] = []  # read after each step (a step's are computed lazily)
        stopped: float | None = None
        if self.minibatch_size is not None:
            if batch_size is None:
                raise ValueError(
                    "MultiStep: with minibatch_size, step needs batch_size (the number of "
                    "samples the closures index), got None"
                )
            batch_size = positive_int("MultiStep", "batch_size", batch_size)
        for epoch in range(self.num_steps):
            parts = [_ALL]
            if self.minibatch_size is not None:
                parts = self.minibatches(batch_size, generator)
            for indices in parts:
                bound = {"fn_loss": fn_loss, **fns}
                if indices is not _ALL:
                    bound = bind_indices(bound, indices)
                try:
                    results.append(self.inner.step(params, **bound))
                except EarlyStop:
                    stopped = float(epoch)
                    break
                estimates.append(results[-1].estimated_improvement)
            if stopped is not None:
                break
        full = self.minibatch_size is None
        result = _combine(differences(params, before), results, estimates, full)
        if stopped is not None:
            result.statistics["early_stop_epoch"] = stopped
        return result

    def _own_state(self) -> Any:
        return generator_state(self.rng)

    def _load_own_state(self, state: Any) -> None:
        set_generator_state(self.rng, state)


def _combine(
    deltas: list[torch.Tensor],
    results: list[StepResult],
    estimates: list[float | None],
    full: bool,
) -> StepResult:
    statistics: dict[str, float] = {}
    for name in results[0].statistics if results else ():
        values = [r.statistics[name] for r in results if name in r.statistics]
        statistics[name] = float(np.mean(values))
    statistics["inner_steps"] = float(len(results))
    return StepResult(
        deltas=deltas,
        loss_before=results[0].loss_before if full and results else None,
        estimated_improvement=None if None in estimates else float(sum(estimates)),
        statistics=statistics,
    )
