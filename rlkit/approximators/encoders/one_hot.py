"""``OneHotEncoder``: the encoder of a ``Discrete`` observation space.

An observation ``k`` of ``Discrete(n, start)`` becomes the one-hot row of ``n`` floats with a
1 at ``k - start`` (gymnasium's ``FlattenObservation`` gives the same row). Observations may
come as integers or as floats holding integers (the learners hand observations over as float32).
A value outside the space is refused naming it.

Example:
    >>> import gymnasium as gym, torch
    >>> enc = OneHotEncoder(gym.spaces.Discrete(3))
    >>> enc(torch.tensor([2.0, 0.0])).tolist()
    [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
"""

from __future__ import annotations

import gymnasium as gym
import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["OneHotEncoder", "one_hot"]


def one_hot(owner: str, x: torch.Tensor, n: int, start: int = 0) -> torch.Tensor:
    """The float one-hot rows of ``n`` for the integer values ``x - start``; values outside
    ``[start, start + n)`` are a ``ValueError`` naming ``owner`` and the value.

    Example:
        >>> import torch
        >>> one_hot("enc", torch.tensor([1]), 2, start=0).tolist()
        [[0.0, 1.0]]
    """
    index = x.to(torch.int64) - int(start)
    if index.numel() and (int(index.min()) < 0 or int(index.max()) >= n):
        bad = x[(index < 0) | (index >= n)].flatten()[0].item()
        bad = int(bad) if float(bad).is_integer() else bad
        raise ValueError(
            f"{owner}: observation value {bad} is outside the space's values "
            f"{int(start)} .. {int(start) + n - 1}"
        )
    return F.one_hot(index, n).to(torch.float32)


class OneHotEncoder(nn.Module):
    """One-hot rows for a ``Discrete`` observation space (see the module docstring); a batch
    ``(N,)`` (or ``(N, 1)``) gives ``(N, n)``.

    Example:
        >>> import gymnasium as gym
        >>> OneHotEncoder(gym.spaces.Discrete(16)).n_features
        16
    """

    def __init__(self, space: gym.spaces.Discrete) -> None:
        super().__init__()
        if not isinstance(space, gym.spaces.Discrete):
            raise TypeError(f"OneHotEncoder: needs a Discrete space, got {space}")
        self.n_features = int(space.n)
        self.start = int(space.start)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return one_hot("OneHotEncoder", x.reshape(x.shape[0]), self.n_features, self.start)
