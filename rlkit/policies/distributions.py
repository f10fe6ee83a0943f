"""Action distributions for stochastic policies (torch): ``Categorical``, ``DiagGaussian``,
``SquashedDiagGaussian``, ``MultiCategorical``, ``Bernoulli`` and ``distribution_for``.

A distribution is built from the flat tensor a policy network outputs
(``dist_class.from_inputs(inputs, action_space)``, ``dist_class.n_inputs(action_space)`` of
them per state) and offers ``log_prob(actions)``, ``entropy()``, ``kl(other)``,
``sample(generator)`` and ``mode()``. Every quantity is per state (summed over action dimensions),
shape ``batch``. Sampling takes an explicit ``torch.Generator``: nothing reads torch's global
random state. Categorical ones accept a legal-action mask (illegal actions get probability 0).

Example:
    >>> import torch, gymnasium as gym
    >>> dist = distribution_for(gym.spaces.Discrete(3))
    >>> d = dist.from_inputs(torch.zeros(2, 3), gym.spaces.Discrete(3),
    ...                      mask=torch.tensor([[True, True, False], [True, True, True]]))
    >>> d.entropy()
    tensor([0.6931, 1.0986])
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import torch
from torch.nn import functional as F

__all__ = [
    "ActionDistribution",
    "Categorical",
    "DiagGaussian",
    "SquashedDiagGaussian",
    "MultiCategorical",
    "Bernoulli",
    "distribution_for",
]

_LOG_2PI = math.log(2 * math.pi)


class ActionDistribution:
    """Base class of action distributions (a batch of them: one per state)."""

    @classmethod
    def n_inputs(cls, action_space: Any) -> int:
        """How many network outputs parameterise the distribution of one state."""
        raise NotImplementedError

    @classmethod
    def from_inputs(
        cls, inputs: torch.Tensor, action_space: Any, mask: Any = None
    ) -> ActionDistribution:
        """The distribution parameterised by ``inputs`` (``(batch, n_inputs)``)."""
        raise NotImplementedError

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def entropy(self) -> torch.Tensor:
        raise NotImplementedError

    def kl(self, other: ActionDistribution) -> torch.Tensor:
        """KL(self || other), per state."""
        raise NotImplementedError

    def sample(self, generator: torch.Generator | None = None) -> torch.Tensor:
        raise NotImplementedError

    def mode(self) -> torch.Tensor:
        """The most likely action (the deterministic action for evaluation)."""
        raise NotImplementedError


# ---- categorical ----


def _masked_logits(logits: torch.Tensor, mask: Any) -> torch.Tensor:
    if mask is None:
        return logits
    mask = torch.as_tensor(mask, dtype=torch.bool, device=logits.device)
    if mask.shape != logits.shape[-mask.dim() :] and mask.shape != logits.shape:
        raise ValueError(
            f"Categorical: mask shape {tuple(mask.shape)} does not match logits "
            f"{tuple(logits.shape)}"
        )
    if not bool(mask.any(dim=-1).all()):
        raise ValueError("Categorical: a legal-action mask allows no action in some state")
    return logits.masked_fill(~mask, torch.finfo(logits.dtype).min)


def _drawn_on(generator: torch.Generator | None, like: torch.Tensor) -> torch.device:
    """Where random numbers are drawn: on the generator's device (the policies keep theirs on
    the CPU, so a seed gives the same draws whatever device the model is on)."""
    return like.device if generator is None else generator.device


def _categorical_sample(probs: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
    flat = probs.reshape(-1, probs.shape[-1]).to(_drawn_on(generator, probs))
    draws = torch.multinomial(flat, 1, generator=generator)
    return draws.to(probs.device).reshape(probs.shape[:-1])


class Categorical(ActionDistribution):
    """A categorical distribution over ``n`` actions from logits, with an optional legal-action
    mask (illegal actions get probability 0 and never contribute to the entropy).

    Example:
        >>> import torch
        >>> d = Categorical(torch.log(torch.tensor([[0.25, 0.75]])))
        >>> d.log_prob(torch.tensor([1])).exp(), d.mode()
        (tensor([0.7500]), tensor([1]))
    """

    def __init__(self, logits: torch.Tensor, mask: Any = None) -> None:
        self.logits = torch.log_softmax(_masked_logits(logits, mask), dim=-1)

    @classmethod
    def n_inputs(cls, action_space: Any) -> int:
        return int(action_space.n)

    @classmethod
    def from_inputs(cls, inputs, action_space, mask=None):
        return cls(inputs, mask)

    @property
    def probs(self) -> torch.Tensor:
        return self.logits.exp()

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        index = torch.as_tensor(actions, device=self.logits.device).long().unsqueeze(-1)
        return self.logits.gather(-1, index).squeeze(-1)

    def entropy(self) -> torch.Tensor:
        p = self.probs
        return -(p * self.logits).where(p > 0, torch.zeros_like(p)).sum(-1)

    def kl(self, other: Categorical) -> torch.Tensor:
        p = self.probs
        return (p * (self.logits - other.logits)).where(p > 0, torch.zeros_like(p)).sum(-1)

    def sample(self, generator: torch.Generator | None = None) -> torch.Tensor:
        return _categorical_sample(self.probs, generator)

    def mode(self) -> torch.Tensor:
        return self.logits.argmax(-1)


class MultiCategorical(ActionDistribution):
    """Independent categorical distributions for a ``MultiDiscrete`` space (``nvec`` sizes);
    logits (and an optional mask) are the concatenation of each dimension's.

    Example:
        >>> import torch
        >>> d = MultiCategorical(torch.tensor([[0.0, 5.0, 5.0, 0.0, 0.0]]), nvec=[2, 3])
        >>> d.mode()
        tensor([[1, 0]])
    """

    def __init__(self, logits: torch.Tensor, nvec: Any, mask: Any = None) -> None:
        self.nvec = [int(n) for n in nvec]
        masks = (
            [None] * len(self.nvec)
            if mask is None
            else torch.split(torch.as_tensor(mask, dtype=torch.bool), self.nvec, dim=-1)
        )
        self.parts = [
            Categorical(chunk, m)
            for chunk, m in zip(torch.split(logits, self.nvec, dim=-1), masks, strict=True)
        ]

    @classmethod
    def n_inputs(cls, action_space: Any) -> int:
        return int(sum(int(n) for n in action_space.nvec.reshape(-1)))

    @classmethod
    def from_inputs(cls, inputs, action_space, mask=None):
        return cls(inputs, action_space.nvec.reshape(-1), mask)

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        actions = torch.as_tensor(actions)
        return sum(part.log_prob(actions[..., i]) for i, part in enumerate(self.parts))

    def entropy(self) -> torch.Tensor:
        return sum(part.entropy() for part in self.parts)

    def kl(self, other: MultiCategorical) -> torch.Tensor:
        return sum(a.kl(b) for a, b in zip(self.parts, other.parts, strict=True))

    def sample(self, generator: torch.Generator | None = None) -> torch.Tensor:
        return torch.stack([part.sample(generator) for part in self.parts], dim=-1)

    def mode(self) -> torch.Tensor:
        return torch.stack([part.mode() for part in self.parts], dim=-1)


class Bernoulli(ActionDistribution):
    """Independent Bernoulli variables for a ``MultiBinary`` space, from logits.

    Example:
        >>> import torch
        >>> d = Bernoulli(torch.tensor([[0.0, 10.0]]))
        >>> d.mode(), d.log_prob(torch.tensor([[0.0, 1.0]])).exp().round(decimals=2)
        (tensor([[0, 1]]), tensor([0.5000]))
    """

    def __init__(self, logits: torch.Tensor) -> None:
        self.logits = logits

    @classmethod
    def n_inputs(cls, action_space: Any) -> int:
        return int(math.prod(action_space.shape))

    @classmethod
    def from_inputs(cls, inputs, action_space, mask=None):
        return cls(inputs)

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        actions = torch.as_tensor(actions, dtype=self.logits.dtype)
        return -F.binary_cross_entropy_with_logits(self.logits, actions, reduction="none").sum(-1)

    def entropy(self) -> torch.Tensor:
        p = torch.sigmoid(self.logits)
        return F.binary_cross_entropy_with_logits(self.logits, p, reduction="none").sum(-1)

    def kl(self, other: Bernoulli) -> torch.Tensor:
        p = torch.sigmoid(self.logits)
        log_p, log_q = F.logsigmoid(self.logits), F.logsigmoid(other.logits)
        log_1p, log_1q = F.logsigmoid(-self.logits), F.logsigmoid(-other.logits)
        return (p * (log_p - log_q) + (1 - p) * (log_1p - log_1q)).sum(-1)

    def sample(self, generator: torch.Generator | None = None) -> torch.Tensor:
        p = torch.sigmoid(self.logits)
        u = torch.rand(p.shape, generator=generator, dtype=p.dtype, device=_drawn_on(generator, p))
        return (u.to(p.device) < p).to(torch.int64)

    def mode(self) -> torch.Tensor:
        return (self.logits > 0).to(torch.int64)


# ---- Gaussian ----


class DiagGaussian(ActionDistribution):
    """A Gaussian with diagonal covariance for a ``Box`` space. The inputs are the means
    followed by the log standard deviations (a network usually outputs the means and appends a
    state-independent ``log_std`` parameter, as Stable-Baselines3 does).

    Example:
        >>> import torch
        >>> d = DiagGaussian(torch.zeros(1, 2), torch.zeros(1, 2))
        >>> d.log_prob(torch.zeros(1, 2))
        tensor([-1.8379])
    """

    def __init__(self, mean: torch.Tensor, log_std: torch.Tensor) -> None:
        self.mean = mean
        self.log_std = log_std.expand_as(mean)

    @classmethod
    def n_inputs(cls, action_space: Any) -> int:
        return 2 * int(math.prod(action_space.shape))

    @classmethod
    def from_inputs(cls, inputs, action_space, mask=None):
        mean, log_std = torch.chunk(inputs, 2, dim=-1)
        shape = tuple(inputs.shape[:-1]) + tuple(action_space.shape)
        return cls(mean.reshape(shape), log_std.reshape(shape))

    def _event_sum(self, x: torch.Tensor) -> torch.Tensor:
        n_event = self.mean.dim() - 1 if self.mean.dim() > 1 else self.mean.dim()
        return x.reshape(*x.shape[: x.dim() - n_event], -1).sum(-1) if n_event else x

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        actions = torch.as_tensor(actions, dtype=self.mean.dtype)
        z = (actions - self.mean) * torch.exp(-self.log_std)
        return self._event_sum(-0.5 * z.pow(2) - self.log_std - 0.5 * _LOG_2PI)

    def entropy(self) -> torch.Tensor:
        return self._event_sum(self.log_std + 0.5 * (1.0 + _LOG_2PI))

    def kl(self, other: DiagGaussian) -> torch.Tensor:
        var_ratio = torch.exp(2 * (self.log_std - other.log_std))
        t = ((self.mean - other.mean) * torch.exp(-other.log_std)).pow(2)
        return self._event_sum(0.5 * (var_ratio + t - 1) - (self.log_std - other.log_std))

    def sample(self, generator: torch.Generator | None = None) -> torch.Tensor:
        where = _drawn_on(generator, self.mean)
        noise = torch.randn(
            self.mean.shape, generator=generator, dtype=self.mean.dtype, device=where
        )
        return self.mean + noise.to(self.mean.device) * torch.exp(self.log_std)

    def mode(self) -> torch.Tensor:
        return self.mean


class SquashedDiagGaussian(DiagGaussian):
    """``tanh`` of a diagonal Gaussian, scaled to the bounds of a ``Box`` space (SAC's action
    distribution). ``log_prob`` includes the change of variables; ``kl`` is exact (KL is
    invariant under the bijection, so it is the Gaussians'); the entropy has no closed form
    and raises (use ``-log_prob`` of a sample, as Stable-Baselines3 does).

    Example:
        >>> import torch
        >>> d = SquashedDiagGaussian(torch.zeros(1, 1), torch.zeros(1, 1), low=-2.0, high=2.0)
        >>> bool((d.sample().abs() <= 2.0).all()), d.mode()
        (True, tensor([[0.]]))
    """

    _EPS = 1e-6

    def __init__(
        self, mean: torch.Tensor, log_std: torch.Tensor, low: Any = -1.0, high: Any = 1.0
    ) -> None:
        super().__init__(mean, log_std)
        self.low = torch.as_tensor(low, dtype=mean.dtype)
        self.high = torch.as_tensor(high, dtype=mean.dtype)

    @classmethod
    def from_inputs(cls, inputs, action_space, mask=None):
        base = DiagGaussian.from_inputs(inputs, action_space)
        return cls(base.mean, base.log_std, action_space.low, action_space.high)

    def _scale(self) -> tuple[torch.Tensor, torch.Tensor]:
        return (self.high - self.low) / 2, (self.high + self.low) / 2

    def _squash(self, u: torch.Tensor) -> torch.Tensor:
        half, mid = self._scale()
        return torch.tanh(u) * half + mid

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        half, mid = self._scale()
        y = ((torch.as_tensor(actions, dtype=self.mean.dtype) - mid) / half).clamp(
            -1 + self._EPS, 1 - self._EPS
        )
        u = torch.atanh(y)
        correction = torch.log(half) + torch.log1p(-y.pow(2))
        return super().log_prob(u) - self._event_sum(correction.expand_as(u))

    def entropy(self) -> torch.Tensor:
        raise NotImplementedError(
            "SquashedDiagGaussian: the entropy of a tanh-squashed Gaussian has no closed form; "
            "estimate it with -log_prob(sample)"
        )

    def sample(self, generator: torch.Generator | None = None) -> torch.Tensor:
        return self._squash(super().sample(generator))

    def mode(self) -> torch.Tensor:
        return self._squash(self.mean)


# ---- choosing one ----


def distribution_for(action_space: Any) -> type[ActionDistribution]:
    """The distribution class for a gymnasium action space: ``Discrete`` -> ``Categorical``,
    ``Box`` -> ``DiagGaussian``, ``MultiDiscrete`` -> ``MultiCategorical``, ``MultiBinary`` ->
    ``Bernoulli``. Any other space raises ``TypeError`` naming it.

    Example:
        >>> import gymnasium as gym
        >>> distribution_for(gym.spaces.Discrete(3)).__name__
        'Categorical'
        >>> distribution_for(gym.spaces.Box(-1.0, 1.0, (2,))).__name__
        'DiagGaussian'
    """
    if isinstance(action_space, gym.spaces.Discrete):
        if int(action_space.start) != 0:
            raise TypeError(
                f"distribution_for: Discrete spaces must start at 0, got {action_space}; wrap the "
                f"env to shift its actions"
            )
        return Categorical
    if isinstance(action_space, gym.spaces.Box):
        return DiagGaussian
    if isinstance(action_space, gym.spaces.MultiDiscrete):
        if any(action_space.start.flat) or action_space.nvec.ndim != 1:
            raise TypeError(
                f"distribution_for: MultiDiscrete spaces must be one-dimensional and start at 0, "
                f"got {action_space!r}; wrap the env to shift or flatten its actions"
            )
        return MultiCategorical
    if isinstance(action_space, gym.spaces.MultiBinary):
        if len(action_space.shape) != 1:
            raise TypeError(
                f"distribution_for: MultiBinary spaces must be one-dimensional, got "
                f"{action_space!r}; wrap the env to flatten its actions"
            )
        return Bernoulli
    raise TypeError(
        f"distribution_for: no action distribution supports the action space {action_space!r}; "
        f"supported: Discrete, Box, MultiDiscrete, MultiBinary"
    )
