"""``MultiDiscreteEncoder``: the encoder of a ``MultiDiscrete`` observation space.

Each entry ``i`` (of ``nvec`` flattened, row-major) becomes the one-hot row of ``nvec[i]``
floats (at ``x[i] - start[i]``); the rows are concatenated in entry order, as gymnasium's
``FlattenObservation`` does: ``MultiDiscrete([3, 2])`` gives 5 features.

Example:
    >>> import gymnasium as gym, torch
    >>> enc = MultiDiscreteEncoder(gym.spaces.MultiDiscrete([3, 2]))
    >>> enc(torch.tensor([[2, 0]])).tolist()
    [[0.0, 0.0, 1.0, 1.0, 0.0]]
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from .one_hot import one_hot

__all__ = ["MultiDiscreteEncoder"]


class MultiDiscreteEncoder(nn.Module):
    """Concatenated one-hot rows for a ``MultiDiscrete`` observation space (see the module
    docstring); ``n_features`` is ``sum(nvec)``.

    Example:
        >>> import gymnasium as gym
        >>> MultiDiscreteEncoder(gym.spaces.MultiDiscrete([[2, 3], [4, 5]])).n_features
        14
    """

    def __init__(self, space: gym.spaces.MultiDiscrete) -> None:
        super().__init__()
        if not isinstance(space, gym.spaces.MultiDiscrete):
            raise TypeError(f"MultiDiscreteEncoder: needs a MultiDiscrete space, got {space}")
        self.nvec = [int(n) for n in np.asarray(space.nvec).reshape(-1)]
        start = getattr(space, "start", None)
        starts = np.zeros(len(self.nvec), np.int64) if start is None else np.asarray(start)
        self.starts = [int(s) for s in starts.reshape(-1)]
        self.n_features = int(sum(self.nvec))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.reshape(x.shape[0], len(self.nvec))
        parts = [
            one_hot("MultiDiscreteEncoder", x[:, i], n, start)
            for i, (n, start) in enumerate(zip(self.nvec, self.starts, strict=True))
        ]
        return torch.cat(parts, dim=-1)
