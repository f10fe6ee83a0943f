"""``ImageKeyEncoder``: the encoder of an image ``Box`` inside a ``Dict`` or ``Tuple`` space.

Stable-Baselines3's ``CombinedExtractor`` encodes each image key with a ``NatureCNN`` of
``cnn_output_dim=256`` features: the CNN body of ``rlkit/approximators/cnn.py`` (``uint8``
images ``(C, H, W)`` scaled to [0, 1] inside), then a ``Linear`` to 256 units and a ReLU.
Initialised as torch's default layers are, from a local generator (a learner may
re-initialise it, as PPO's orthogonal initialisation does).

Example:
    >>> import gymnasium as gym, numpy as np, torch
    >>> space = gym.spaces.Box(0, 255, (1, 10, 10), np.uint8)
    >>> enc = ImageKeyEncoder(space, "minatar", seed=0)
    >>> enc.n_features, enc(torch.zeros(2, 1, 10, 10)).shape
    (256, torch.Size([2, 256]))
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import torch
from torch import nn

from ..cnn import ImageEncoder, init_default

__all__ = ["ImageKeyEncoder", "IMAGE_FEATURES"]

#: Stable-Baselines3's CombinedExtractor cnn_output_dim
IMAGE_FEATURES = 256


class ImageKeyEncoder(nn.Module):
    """A CNN body, a ``Linear`` to ``features`` units and a ReLU (see the module docstring).

    Example:
        >>> import gymnasium as gym, numpy as np
        >>> space = gym.spaces.Box(0, 255, (4, 84, 84), np.uint8)
        >>> ImageKeyEncoder(space, "nature", features=64).n_features
        64
    """

    def __init__(
        self, space: gym.spaces.Box, cnn: str = "nature", *, features: int = IMAGE_FEATURES,
        seed: Any = 0,
    ) -> None:  # fmt: skip
        super().__init__()
        self.body = ImageEncoder(space, cnn, seed=seed)
        self.linear = nn.Linear(self.body.n_features, int(features), device="meta")
        self.linear.to_empty(device="cpu")
        init_default(self.linear, seed)
        self.n_features = int(features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(self.body(x)))
