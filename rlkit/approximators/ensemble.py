"""A batched ensemble of probabilistic MLPs (the network of :class:`~rlkit.EnsembleDynamicsModel`).

:class:`EnsembleLinear` holds the weights of ``ensemble_size`` linear layers in one tensor
``(ensemble_size, in, out)`` and applies them with one batched matrix product to inputs of shape
``(ensemble_size, batch, in)``: every member runs in the same kernel, as MBPO's ``FC`` layers
and mbrl-lib's ``EnsembleLinearLayer``, never in a Python loop over members.

:class:`ProbabilisticEnsemble` stacks them into MLPs (SiLU activations, as MBPO's swish) whose
last layer gives the mean and the log-variance of a diagonal Gaussian; the log-variance is
kept between the learned soft bounds ``min_logvar`` and ``max_logvar`` (PETS, Chua et al. 2018,
appendix A.1)::

    logvar = max_logvar - softplus(max_logvar - logvar)
    logvar = min_logvar + softplus(logvar - min_logvar)

:func:`gaussian_nll` is the loss the ensemble is trained with (MBPO's): per member the mean over
the batch and the output dimensions of ``(mean - target)^2 * exp(-logvar) + logvar``, summed
over the members, plus ``0.01 * (sum(max_logvar) - sum(min_logvar))``, the regulariser that
keeps the bounds tight.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn

__all__ = [
    "EnsembleLinear",
    "ProbabilisticEnsemble",
    "SelectedMembers",
    "gaussian_nll",
    "soft_bounds",
]


class EnsembleLinear(nn.Module):
    """``ensemble_size`` linear layers ``in_features -> out_features`` applied at once:
    ``x (E, B, in) -> x @ weight (E, in, out) + bias (E, 1, out)``. Initialised as
    ``torch.nn.Linear`` is, member by member (uniform in ``+-1/sqrt(in)``), from ``generator``.

    Example:
        >>> import torch
        >>> layer = EnsembleLinear(3, 2, 4, generator=torch.Generator().manual_seed(0))
        >>> layer(torch.zeros(3, 5, 2)).shape
        torch.Size([3, 5, 4])
    """

    def __init__(
        self,
        ensemble_size: int,
        in_features: int,
        out_features: int,
        *,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        bound = 1.0 / math.sqrt(in_features)
        shape = (ensemble_size, in_features, out_features)
        weight = (torch.rand(shape, generator=generator) * 2.0 - 1.0) * bound
        bias = (torch.rand((ensemble_size, 1, out_features), generator=generator) * 2 - 1) * bound
        self.weight = nn.Parameter(weight)
        self.bias = nn.Parameter(bias)

    def forward(self, x: torch.Tensor, members: torch.Tensor | None = None) -> torch.Tensor:
        """``x (E, B, in) -> (E, B, out)``; with ``members`` (an index tensor of length
        ``len(x)``), row ``i`` of ``x`` goes through member ``members[i]``."""
        if members is None:
            return torch.baddbmm(self.bias, x, self.weight)
        return torch.baddbmm(self.bias[members], x, self.weight[members])


def soft_bounds(
    logvar: torch.Tensor, min_logvar: torch.Tensor, max_logvar: torch.Tensor
) -> torch.Tensor:
    """``logvar`` softly kept in ``[min_logvar, max_logvar]`` (PETS' bounds, module docstring).

    Example:
        >>> import torch
        >>> out = soft_bounds(torch.tensor([100.0, -100.0]), torch.tensor(-1.0), torch.tensor(1.0))
        >>> [round(v, 3) for v in out.tolist()]
        [1.127, -1.0]
    """
    logvar = max_logvar - nn.functional.softplus(max_logvar - logvar)
    return min_logvar + nn.functional.softplus(logvar - min_logvar)


class ProbabilisticEnsemble(nn.Module):
    """``ensemble_size`` MLPs ``in_features -> hidden -> 2 * out_features`` (SiLU), batched:
    ``forward(x (E, B, in)) -> (mean (E, B, out), logvar (E, B, out))``, the log-variance within
    the learned soft bounds ``min_logvar`` (initially -10) and ``max_logvar`` (initially 0.5),
    one per output dimension, shared by the members (MBPO's initial values).

    Example:
        >>> import torch
        >>> net = ProbabilisticEnsemble(5, 4, 3, (8, 8), generator=torch.Generator().manual_seed(0))
        >>> mean, logvar = net(torch.zeros(5, 2, 4))
        >>> mean.shape, bool((logvar <= net.max_logvar).all())
        (torch.Size([5, 2, 3]), True)
    """

    def __init__(
        self,
        ensemble_size: int,
        in_features: int,
        out_features: int,
        hidden: Sequence[int],
        *,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        sizes = [in_features, *hidden]
        self.ensemble_size = int(ensemble_size)
        self.out_features = int(out_features)
        self.hidden = nn.ModuleList(
            EnsembleLinear(ensemble_size, a, b, generator=generator)
            for a, b in zip(sizes[:-1], sizes[1:], strict=True)
        )
        self.head = EnsembleLinear(ensemble_size, sizes[-1], 2 * out_features, generator=generator)
        self.max_logvar = nn.Parameter(torch.full((out_features,), 0.5))
        self.min_logvar = nn.Parameter(torch.full((out_features,), -10.0))

    def forward(
        self, x: torch.Tensor, members: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(mean, logvar)`` for ``x (E, B, in)``, every member on its own batch; with
        ``members`` (indices), the selected members only (``x`` then has ``len(members)``
        batches)."""
        for layer in self.hidden:
            x = nn.functional.silu(layer(x, members))
        mean, logvar = self.head(x, members).split(self.out_features, dim=-1)
        return mean, soft_bounds(logvar, self.min_logvar, self.max_logvar)

    def select(self, members: torch.Tensor) -> SelectedMembers:
        """The members ``members`` (indices) as a :class:`SelectedMembers`: their weights
        gathered once, for many forward passes without gradients (a planner's rollout)."""
        return SelectedMembers(self, members)


class SelectedMembers:
    """Some members of a :class:`ProbabilisticEnsemble` with their weights gathered once (a
    detached copy, no gradients): ``selected(x (len(members), B, in)) -> (mean, logvar)``
    computes exactly what ``network(x, members)`` does, with the same kernels, without
    gathering the weights again at every call nor ``torch.nn.Module``'s call overhead (PETS
    calls it ``horizon`` times per CEM iteration, ``rlkit/learners/model_based/pets.py``).
    The copy does not follow later training: select again after a fit.

    Example:
        >>> import torch
        >>> net = ProbabilisticEnsemble(5, 4, 3, (8, 8), generator=torch.Generator().manual_seed(0))
        >>> members, x = torch.tensor([1, 3]), torch.randn(2, 6, 4)
        >>> with torch.no_grad():
        ...     fast, slow = net.select(members)(x), net(x, members)
        >>> all(torch.equal(a, b) for a, b in zip(fast, slow))
        True
    """

    def __init__(self, network: ProbabilisticEnsemble, members: torch.Tensor) -> None:
        with torch.no_grad():
            self.hidden = [
                (layer.weight[members].detach(), layer.bias[members].detach())
                for layer in network.hidden
            ]
            self.head = (network.head.weight[members].detach(), network.head.bias[members].detach())
            self.min_logvar = network.min_logvar.detach().clone()
            self.max_logvar = network.max_logvar.detach().clone()
        self.out_features = network.out_features

    def __call__(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(mean, logvar)`` for ``x (len(members), B, in)``, member ``i`` on batch ``i``."""
        for weight, bias in self.hidden:
            x = nn.functional.silu(torch.baddbmm(bias, x, weight), inplace=True)
        weight, bias = self.head
        mean, logvar = torch.baddbmm(bias, x, weight).split(self.out_features, dim=-1)
        return mean, soft_bounds(logvar, self.min_logvar, self.max_logvar)


def gaussian_nll(
    mean: torch.Tensor,
    logvar: torch.Tensor,
    target: torch.Tensor,
    min_logvar: torch.Tensor,
    max_logvar: torch.Tensor,
    bound_coef: float = 0.01,
) -> torch.Tensor:
    """The ensemble's training loss (MBPO's, module docstring): ``sum_e mean_{b,d}[(mean -
    target)^2 exp(-logvar) + logvar] + bound_coef * (sum max_logvar - sum min_logvar)``;
    ``mean``, ``logvar`` and ``target`` are ``(E, B, D)``.

    Example:
        >>> import torch
        >>> z = torch.zeros(2, 3, 1)
        >>> gaussian_nll(z, z, z + 1.0, torch.zeros(1), torch.zeros(1)).item()
        2.0
    """
    per_member = ((mean - target).pow(2) * torch.exp(-logvar) + logvar).mean(dim=(1, 2))
    return per_member.sum() + bound_coef * (max_logvar.sum() - min_logvar.sum())
