"""The networks of Stable-Baselines3's off-policy actor-critics (``MlpPolicy`` of DDPG, TD3, SAC):
ReLU MLPs with torch's default ``nn.Linear`` initialisation (uniform in ``+-1/sqrt(fan_in)``),
drawn from a local ``torch.Generator`` so torch's global random state is neither read nor changed.

* :class:`DeterministicActor`: ``obs -> tanh(MLP(obs))`` in ``[-1, 1]`` (DDPG, TD3);
* :class:`GaussianActor`: ``obs -> (mean, log_std)`` of the Gaussian SAC squashes, ``log_std``
  clamped to ``[-20, 2]``;
* :class:`ContinuousCritic`: ``n_critics`` Q-networks ``(obs, action) -> Q``.

Each takes an optional ``encoder`` of the observation space (``Dict``, ``Tuple``, ``Discrete``,
...: ``rlkit/approximators/encoders``; images: :func:`observation_features`); without one a
``Box`` observation is flattened.

Example:
    >>> import torch
    >>> critic = ContinuousCritic(3, 1, (8, 8), n_critics=2, generator=torch.Generator())
    >>> [q.shape for q in critic(torch.zeros(5, 3), torch.zeros(5, 1))]
    [torch.Size([5]), torch.Size([5])]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

__all__ = [
    "observation_features",
    "torch_generator",
    "mlp",
    "MLP",
    "DeterministicActor",
    "GaussianActor",
    "ContinuousCritic",
    "LOG_STD_BOUNDS",
]

LOG_STD_BOUNDS = (-20.0, 2.0)


def torch_generator(seed: int | np.random.SeedSequence) -> torch.Generator:
    """A ``torch.Generator`` seeded from an int or a ``numpy.random.SeedSequence``."""
    if isinstance(seed, np.random.SeedSequence):
        seed = int(seed.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
    return torch.Generator().manual_seed(int(seed))


def observation_features(owner: str, space: Any, config: dict, seed: Any) -> nn.Module | None:
    """The encoder the actor and each critic put before their MLPs: for ``uint8`` images
    ``(C, H, W)`` (``rlkit/approximators/cnn.py``) a CNN body (the one the frame size fits,
    ``image_cnn``: the Nature CNN for 36x36 or more, MinAtar's below), a 512-unit ``Linear``
    and a ReLU, Stable-Baselines3's ``CnnPolicy`` (``NatureCNN``, ``features_dim=512``) of
    SAC, TD3 and DDPG; otherwise the policy-gradient models' ``observation_encoder`` (None
    for a ``Box``: flattened).

    Example:
        >>> import gymnasium as gym
        >>> frames = gym.spaces.Box(0, 255, (1, 10, 10), np.uint8)
        >>> observation_features("SAC", frames, {}, 0).n_features
        512
    """
    from ...approximators.cnn import image_cnn, is_image_space
    from ...approximators.encoders import ImageKeyEncoder
    from ..policy_gradient.cnn_models import FEATURES
    from ..policy_gradient.models import observation_encoder

    if is_image_space(space):
        return ImageKeyEncoder(space, image_cnn(owner, space), features=FEATURES, seed=seed)
    return observation_encoder(owner, space, config, seed)


def _linear(n_in: int, n_out: int, generator: torch.Generator) -> nn.Linear:
    layer = nn.Linear(n_in, n_out, device="meta").to_empty(device="cpu")
    bound = 1.0 / math.sqrt(n_in) if n_in > 0 else 0.0
    with torch.no_grad():
        layer.weight.uniform_(-bound, bound, generator=generator)
        layer.bias.uniform_(-bound, bound, generator=generator)
    return layer


class MLP(nn.Sequential):
    """Linear layers with ReLU between them: an ``nn.Sequential`` (same parameters and state
    dict) whose forward pass calls ``F.linear`` and ``torch.relu`` directly, the same
    arithmetic without the per-module call overhead (a few percent of a SAC gradient step).
    The weights are read at each call, so ``torch.func.functional_call`` works. A ReLU right
    after a linear layer is applied in place on the layer's fresh output (no new tensor: the
    same values and gradients, as ``nn.ReLU(inplace=True)``); the input is never modified. An
    ``nn.LayerNorm`` between a linear layer and its ReLU (``mlp(..., layer_norm=True)``) is
    applied as its module does, and the ReLU runs in place on its fresh output."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        fresh = False  # whether x is this call's own linear (or layer-norm) output
        for m in self:
            if type(m) is nn.Linear:
                x, fresh = F.linear(x, m.weight, m.bias), True
            elif type(m) is nn.LayerNorm:
                x, fresh = F.layer_norm(x, m.normalized_shape, m.weight, m.bias, m.eps), True
            else:
                x = torch.relu_(x) if fresh else torch.relu(x)
                fresh = False
        return x


def features(encoder: nn.Module | None, obs: Any) -> torch.Tensor:
    """The MLP input: a ``Box`` observation flattened, or ``encoder``'s features of a
    ``Dict``/``Tuple``/``Discrete``/... observation (``rlkit/approximators/encoders``)."""
    return obs.flatten(1) if encoder is None else encoder(obs)


def mlp(
    sizes: Sequence[int], generator: torch.Generator, *, last_activation: bool = False,
    layer_norm: bool = False,
):  # fmt: skip
    """Linear layers of ``sizes`` with ReLU between them (and after the last one when asked);
    with ``layer_norm``, an ``nn.LayerNorm`` before each ReLU (no random initialisation: the
    linear layers draw the same weights from ``generator`` either way)."""
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        layers.append(_linear(a, b, generator))
        if i < len(sizes) - 2 or last_activation:
            if layer_norm:
                layers.append(nn.LayerNorm(b))
            layers.append(nn.ReLU())
    return MLP(*layers)


class DeterministicActor(nn.Module):
    """``obs -> tanh(MLP(obs))``: actions in the scaled space ``[-1, 1]``."""

    def __init__(
        self, n_obs: int, n_actions: int, hidden: Sequence[int], generator: torch.Generator,
        encoder: nn.Module | None = None,
    ) -> None:  # fmt: skip
        super().__init__()
        self.mu = nn.Sequential(*mlp([n_obs, *hidden, n_actions], generator), nn.Tanh())
        self.encoder = encoder

    def forward(self, obs: Any) -> torch.Tensor:
        return self.mu(features(self.encoder, obs))


class GaussianActor(nn.Module):
    """``obs -> (mean, log_std)``: a ReLU MLP trunk and two linear heads (SB3's SAC ``Actor``)."""

    def __init__(
        self, n_obs: int, n_actions: int, hidden: Sequence[int], generator: torch.Generator,
        encoder: nn.Module | None = None,
    ) -> None:  # fmt: skip
        super().__init__()
        self.latent = mlp([n_obs, *hidden], generator, last_activation=True)
        width = hidden[-1] if hidden else n_obs
        self.mu = _linear(width, n_actions, generator)
        self.log_std = _linear(width, n_actions, generator)
        self.encoder = encoder

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        latent = self.latent(features(self.encoder, obs))
        log_std = self.log_std(latent).clamp(*LOG_STD_BOUNDS)
        return self.mu(latent), log_std


class ContinuousCritic(nn.Module):
    """``n_critics`` Q-networks on the concatenated observation and scaled action (with
    ``layer_norm``, an ``nn.LayerNorm`` before each hidden ReLU)."""

    def __init__(
        self,
        n_obs: int,
        n_actions: int,
        hidden: Sequence[int],
        *,
        n_critics: int = 2,
        generator: torch.Generator,
        encoder: nn.Module | None = None,
        layer_norm: bool = False,
    ) -> None:
        super().__init__()
        self.qs = nn.ModuleList(
            mlp([n_obs + n_actions, *hidden, 1], generator, layer_norm=layer_norm)
            for _ in range(n_critics)
        )
        self.encoder = encoder

    def forward(self, obs: torch.Tensor, actions: torch.Tensor) -> tuple[torch.Tensor, ...]:
        x = torch.cat([features(self.encoder, obs), actions], dim=1)
        return tuple(q(x).squeeze(-1) for q in self.qs)

    def q1(self, obs: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """The first Q-network only (TD3's and DDPG's actor loss)."""
        return self.qs[0](torch.cat([features(self.encoder, obs), actions], dim=1)).squeeze(-1)
