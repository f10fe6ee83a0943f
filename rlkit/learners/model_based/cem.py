"""The cross-entropy method over action sequences (PETS' optimiser, mbrl-lib's
``CEMOptimizer``), as one pure function.

Each iteration samples ``population`` candidates from a Gaussian truncated at two standard
deviations and at the bounds (the variance shrunk so that two standard deviations stay within
``[lower, upper]``), scores them with ``objective`` (higher is better), and moves the mean and
variance towards those of the ``n_elites`` best with momentum ``alpha``:
``mean = alpha * mean + (1 - alpha) * elite_mean`` (the same for the variance).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

__all__ = ["cem"]


def cem(
    objective: Callable[[torch.Tensor], torch.Tensor],
    mean: torch.Tensor,
    var: torch.Tensor,
    lower: torch.Tensor,
    upper: torch.Tensor,
    *,
    population: int,
    n_elites: int,
    iterations: int,
    alpha: float,
    generator: torch.Generator,
) -> torch.Tensor:
    """The mean after ``iterations`` of the cross-entropy method (module docstring):
    ``objective(candidates (population, *mean.shape)) -> scores (population,)``; ``lower`` and
    ``upper`` broadcast against ``mean``.

    Example:
        >>> import torch
        >>> target = torch.tensor([0.5, -0.25])
        >>> best = cem(lambda x: -((x - target) ** 2).sum(-1), torch.zeros(2), torch.ones(2),
        ...            -torch.ones(2), torch.ones(2), population=200, n_elites=20,
        ...            iterations=10, alpha=0.1, generator=torch.Generator().manual_seed(0))
        >>> bool((best - target).abs().max() < 0.05)
        True
    """
    for _ in range(iterations):
        room = torch.minimum((mean - lower) / 2, (upper - mean) / 2).pow(2)
        std = torch.minimum(room, var).sqrt()
        noise = torch.randn((population, *mean.shape), generator=generator).to(mean)
        noise = torch.fmod(noise, 2.0)  # mbrl-lib's truncation at two standard deviations
        candidates = torch.clamp(mean + std * noise, lower, upper)
        scores = objective(candidates)
        scores = torch.where(torch.isfinite(scores), scores, torch.full_like(scores, -1e10))
        elites = candidates[torch.topk(scores, n_elites).indices]
        mean = alpha * mean + (1 - alpha) * elites.mean(0)
        var = alpha * var + (1 - alpha) * elites.var(0, unbiased=False)
    return mean
