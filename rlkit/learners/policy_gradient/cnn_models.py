"""The actor-critic network of Stable-Baselines3's ``CnnPolicy`` for image observations: a CNN
body shared by the policy and the value function (``rlkit/approximators/cnn.py``: ``uint8``
images ``(C, H, W)`` scaled to [0, 1] inside), a fully connected layer of 512 units (SB3's
``NatureCNN`` ``features_dim``), then a linear action head and a linear value head; orthogonal
initialisation (gain sqrt(2) for the body and the 512 layer, 0.01 for the action head, 1 for
the value head, zero biases), from a local ``torch.Generator``.

``actor_critic_model`` builds it for an image observation space when the policy's ``cnn``
hyperparameter names a body (``rk.PPO(env, cnn="nature")``; ``"minatar"`` for MinAtar's small
grids).

Example:
    >>> import gymnasium as gym, numpy as np, torch
    >>> space = gym.spaces.Box(0, 255, (4, 84, 84), np.uint8)
    >>> net = CnnActorCritic(space, 6, cnn="nature", seed=0)
    >>> obs = torch.zeros(3, 4, 84, 84, dtype=torch.uint8)
    >>> net(obs).shape, net.value(obs).shape
    (torch.Size([3, 6]), torch.Size([3]))
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import torch
from torch import nn

from ...approximators.cnn import ImageEncoder

__all__ = ["CnnActorCritic", "FEATURES"]

#: Stable-Baselines3's NatureCNN features_dim: the fully connected layer after the body
FEATURES = 512


class CnnActorCritic(nn.Module):
    """``forward(obs)``: the action distribution's inputs; ``value(obs)``: state values; both
    from one CNN body and a 512-unit layer (see the module docstring)."""

    pixel_input = True  # uint8 images go in as they are

    def __init__(
        self,
        space: gym.spaces.Box,
        n_dist_inputs: int,
        *,
        cnn: str = "nature",
        features: int = FEATURES,
        gaussian_actions: int = 0,
        log_std_init: float = 0.0,
        seed: int = 0,
    ) -> None:
        super().__init__()
        self.encoder = ImageEncoder(space, cnn, seed=seed)
        self.features = nn.Sequential(nn.Linear(self.encoder.n_features, features), nn.ReLU())
        n_head = n_dist_inputs - gaussian_actions if gaussian_actions else n_dist_inputs
        self.pi = nn.Linear(features, n_head)
        self.vf = nn.Linear(features, 1)
        self.log_std = (
            nn.Parameter(torch.full((gaussian_actions,), float(log_std_init)))
            if gaussian_actions
            else None
        )
        generator = torch.Generator().manual_seed(int(seed))
        with torch.no_grad():
            layers = [m for m in self.encoder.modules() if isinstance(m, nn.Conv2d)]
            layers.append(self.features[0])
            gains = [math.sqrt(2)] * len(layers) + [0.01, 1.0]
            for layer, gain in zip([*layers, self.pi, self.vf], gains, strict=True):
                nn.init.orthogonal_(layer.weight, gain=gain, generator=generator)
                layer.bias.zero_()

    def _latent(self, obs: torch.Tensor) -> torch.Tensor:
        return self.features(self.encoder(obs))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        out = self.pi(self._latent(obs))
        if self.log_std is None:
            return out
        return torch.cat([out, self.log_std.expand_as(out)], dim=-1)

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.vf(self._latent(obs)).squeeze(-1)


def cnn_actor_critic(space: Any, n_dist_inputs: int, config: dict, seed: int, **kw: Any):
    """:class:`CnnActorCritic` for ``config["cnn"]``."""
    return CnnActorCritic(space, n_dist_inputs, cnn=config["cnn"], seed=seed, **kw)
