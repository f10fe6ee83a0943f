"""``Evolutionary``: an evolution-strategies step from loss evaluations alone (no gradients)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..core.checks import finite_float, non_negative_int, positive_int
from .base import (
    Loss,
    OptimizerModule,
    ParamsLike,
    StepResult,
    apply_deltas,
    as_parameters,
    evaluate_loss,
    restore,
    snapshot,
)
from .finite import check_finite

__all__ = ["Evolutionary", "centered_ranks"]


def centered_ranks(values: np.ndarray) -> np.ndarray:
    """The ranks of ``values`` scaled to [-0.5, 0.5] (OpenAI ES's fitness shaping)."""
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[np.argsort(values, kind="stable")] = np.arange(len(values))
    return ranks / max(len(values) - 1, 1) - 0.5


class Evolutionary(OptimizerModule):
    """An evolution-strategies step with antithetic perturbations (Salimans et al. 2017).

    Draws ``num_samples`` Gaussian perturbations ``e_i`` from the module's own generator
    (seeded by ``seed``, saved in its state), evaluates ``fn_loss`` at ``theta + noise_std e_i``
    and ``theta - noise_std e_i`` without gradients, and moves the parameters by
    ``-learning_rate * sum_i (u+_i - u-_i) e_i / (2 num_samples noise_std)``, where ``u`` are the
    losses, or their centred ranks with ``rank_shaping`` (the default). The loss may be any
    scalar, differentiable or not (for example minus the return of rollouts). A loss that is nan
    or inf, at the parameters or at a perturbation, raises
    :class:`~rlkit.optimizers.finite.NonFiniteError`: the parameters and the generator are
    those before the step.

    Args:
        learning_rate: the step size, > 0.
        num_samples: antithetic pairs per step, >= 1 (2 * num_samples + 1 loss evaluations).
        noise_std: the perturbations' standard deviation, > 0.
        rank_shaping: use centred ranks of the losses instead of the losses.
        seed: seed of the perturbations' generator.

    Example:
        >>> import torch, rlkit as rk
        >>> w = torch.nn.Parameter(torch.tensor([2.0, -1.0]))
        >>> es = rk.optimizers.Evolutionary(learning_rate=0.1, num_samples=8, noise_std=0.1)
        >>> for _ in range(50):
        ...     _ = es.step([w], lambda: (w ** 2).sum())
        >>> bool((w ** 2).sum() < 0.1)
        True
    """

    type_name = "evolutionary"

    def __init__(
        self,
        learning_rate: float,
        num_samples: int,
        *,
        noise_std: float = 0.02,
        rank_shaping: bool = True,
        seed: int = 0,
    ) -> None:
        owner = "Evolutionary"
        self.learning_rate = finite_float(
            owner, "learning_rate", learning_rate, low=0, low_open=True
        )
        self.num_samples = positive_int(owner, "num_samples", num_samples)
        self.noise_std = finite_float(owner, "noise_std", noise_std, low=0, low_open=True)
        if not isinstance(rank_shaping, bool):
            raise TypeError(f"{owner}: rank_shaping must be a bool, got {rank_shaping!r}")
        self.rank_shaping = rank_shaping
        self.generator = torch.Generator()
        self.reseed(seed)

    def reseed(self, seed: int) -> None:
        """Restart the perturbations' generator from ``seed``."""
        self.seed = non_negative_int("Evolutionary", "seed", seed)
        entropy = np.random.SeedSequence(self.seed).generate_state(1, dtype=np.uint64)[0]
        self.generator.manual_seed(int(entropy >> np.uint64(1)))

    def settings(self) -> dict[str, Any]:
        return {
            "learning_rate": self.learning_rate,
            "num_samples": self.num_samples,
            "noise_std": self.noise_std,
            "rank_shaping": self.rank_shaping,
            "seed": self.seed,
        }

    def _evaluate(self, fn_loss: Loss) -> float:
        return float(evaluate_loss("Evolutionary", fn_loss))

    @torch.no_grad()
    def step(self, params: ParamsLike, fn_loss: Loss, **fns: Any) -> StepResult:
        params = as_parameters("Evolutionary", params)
        start = snapshot(params)
        base = check_finite("Evolutionary", "loss", self._evaluate(fn_loss))
        generator_state = self.generator.get_state()
        noises, plus, minus = [], [], []
        for _ in range(self.num_samples):
            noise = [
                torch.randn(p.shape, generator=self.generator, dtype=p.dtype).to(p.device)
                for p in params
            ]
            noises.append(noise)
            apply_deltas(params, noise, self.noise_std)
            plus.append(self._evaluate(fn_loss))
            apply_deltas(params, noise, -2.0 * self.noise_std)
            minus.append(self._evaluate(fn_loss))
            restore(params, start)
        losses = np.array(plus + minus)
        if not np.isfinite(losses).all():  # refused: the generator is rewound too
            self.generator.set_state(generator_state)
            check_finite("Evolutionary", "perturbed loss", losses[~np.isfinite(losses)][0])
        shaped = centered_ranks(losses) if self.rank_shaping else losses
        weights = shaped[: self.num_samples] - shaped[self.num_samples :]
        scale = 1.0 / (2.0 * self.num_samples * self.noise_std)
        gradient = [
            sum(float(w) * noise[i] for w, noise in zip(weights, noises, strict=True)) * scale
            for i in range(len(params))
        ]
        deltas = [-self.learning_rate * g for g in gradient]
        apply_deltas(params, deltas)
        squared = sum(float(g.pow(2).sum()) for g in gradient)
        return StepResult(
            deltas=deltas,
            loss_before=base,
            estimated_improvement=self.learning_rate * squared,
            statistics={
                "loss": base,
                "perturbed_loss_mean": float(losses.mean()),
                "perturbed_loss_min": float(losses.min()),
                "grad_norm": squared**0.5,
            },
        )

    def _own_state(self) -> Any:
        return {"generator": self.generator.get_state()}

    def _load_own_state(self, state: Any) -> None:
        self.generator.set_state(state["generator"])
