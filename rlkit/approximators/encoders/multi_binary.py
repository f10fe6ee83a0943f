"""``MultiBinaryEncoder``: the encoder of a ``MultiBinary`` observation space.

The 0/1 entries are taken as floats, flattened to one row per observation (as gymnasium's
``FlattenObservation`` does).

Example:
    >>> import gymnasium as gym, torch
    >>> enc = MultiBinaryEncoder(gym.spaces.MultiBinary((2, 2)))
    >>> enc(torch.tensor([[[1, 0], [0, 1]]])).tolist()
    [[1.0, 0.0, 0.0, 1.0]]
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import torch
from torch import nn

__all__ = ["MultiBinaryEncoder"]


class MultiBinaryEncoder(nn.Module):
    """Float rows for a ``MultiBinary`` observation space (see the module docstring).

    Example:
        >>> import gymnasium as gym
        >>> MultiBinaryEncoder(gym.spaces.MultiBinary(5)).n_features
        5
    """

    def __init__(self, space: gym.spaces.MultiBinary) -> None:
        super().__init__()
        if not isinstance(space, gym.spaces.MultiBinary):
            raise TypeError(f"MultiBinaryEncoder: needs a MultiBinary space, got {space}")
        self.n_features = int(np.prod(space.shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(x.shape[0], self.n_features).to(torch.float32)
