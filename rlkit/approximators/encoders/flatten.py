"""``FlattenEncoder``: the encoder of a (non-image) ``Box`` observation space.

Each observation is flattened to one row of floats, ``(N, *shape) -> (N, prod(shape))``: the
same arithmetic as the ``obs.flatten(1)`` every deep learner applies to a ``Box`` observation
(it has no parameters).

Example:
    >>> import gymnasium as gym, torch
    >>> enc = FlattenEncoder(gym.spaces.Box(-1, 1, (2, 3)))
    >>> enc.n_features, enc(torch.zeros(5, 2, 3)).shape
    (6, torch.Size([5, 6]))
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import torch
from torch import nn

__all__ = ["FlattenEncoder"]


class FlattenEncoder(nn.Module):
    """Flatten a ``Box`` observation (see the module docstring); ``n_features`` is the
    number of numbers in one observation.

    Example:
        >>> import gymnasium as gym, torch
        >>> FlattenEncoder(gym.spaces.Box(-1, 1, (4,)))(torch.ones(2, 4)).tolist()[0]
        [1.0, 1.0, 1.0, 1.0]
    """

    def __init__(self, space: gym.spaces.Box) -> None:
        super().__init__()
        if not isinstance(space, gym.spaces.Box):
            raise TypeError(f"FlattenEncoder: needs a Box space, got {space}")
        self.n_features = max(1, int(np.prod(space.shape)))
        self.shape = tuple(space.shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.to(torch.float32)
        return x.reshape(x.shape[0], self.n_features)
