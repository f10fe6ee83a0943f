"""Encoders by observation space: the input of every deep learner's network.

``encoder_for(space)`` gives a ``torch.nn.Module`` from a batch of observations of ``space``
to ``(N, n_features)`` floats, one small encoder per kind of space (Stable-Baselines3's
``CombinedExtractor`` semantics for ``Dict``/``Tuple``; ``docs/how-to/observations.md``):

===================  ========================================  =====================
space                encoder                                   features
===================  ========================================  =====================
``Box``              :class:`FlattenEncoder` (flattened)        ``prod(shape)``
image ``Box``        :class:`ImageKeyEncoder` (CNN + 256)       256
``Discrete``         :class:`OneHotEncoder`                     ``n``
``MultiBinary``      :class:`MultiBinaryEncoder` (floats)       ``prod(shape)``
``MultiDiscrete``    :class:`MultiDiscreteEncoder` (one-hots)   ``sum(nvec)``
``Dict``, ``Tuple``  :class:`CombinedEncoder` (concatenated)    the sum of the keys'
===================  ========================================  =====================

Example:
    >>> import gymnasium as gym
    >>> space = gym.spaces.Dict({"grid": gym.spaces.MultiDiscrete([3, 3]),
    ...                          "goal": gym.spaces.Tuple([gym.spaces.Discrete(4)])})
    >>> enc = encoder_for(space)
    >>> type(enc).__name__, enc.n_features
    ('CombinedEncoder', 10)
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from torch import nn

from ..cnn import image_cnn, is_image_space
from .combined import CombinedEncoder
from .flatten import FlattenEncoder
from .image import ImageKeyEncoder
from .multi_binary import MultiBinaryEncoder
from .multi_discrete import MultiDiscreteEncoder
from .one_hot import OneHotEncoder

__all__ = [
    "encoder_for",
    "ENCODERS",
    "FlattenEncoder",
    "OneHotEncoder",
    "MultiBinaryEncoder",
    "MultiDiscreteEncoder",
    "ImageKeyEncoder",
    "CombinedEncoder",
]

#: the encoder classes (a network starting with one takes batches of observations only)
ENCODERS = (
    FlattenEncoder,
    OneHotEncoder,
    MultiBinaryEncoder,
    MultiDiscreteEncoder,
    ImageKeyEncoder,
    CombinedEncoder,
)


def encoder_for(space: Any, *, cnn: str | None = None, seed: Any = 0) -> nn.Module:
    """The encoder of observations of ``space`` (see the module docstring); ``cnn`` names the
    CNN body of image ``Box`` spaces (``"nature"`` or ``"minatar"``; None: chosen by each
    image's frame size, ``rlkit.approximators.cnn.image_cnn``: the Nature CNN for 36x36 or
    more, MinAtar's below), ``seed`` seeds the initial weights of the encoders that have any
    (image keys). A space no encoder takes (``Text``, ``Graph``, ``Sequence``, ...) is a
    ``TypeError`` naming it; an image too small for the CNN a ``ValueError``.

    Example:
        >>> import gymnasium as gym
        >>> encoder_for(gym.spaces.Discrete(5)).n_features
        5
    """
    if isinstance(space, (gym.spaces.Dict, gym.spaces.Tuple)):
        return CombinedEncoder(space, cnn=cnn, seed=seed)
    if is_image_space(space):
        return ImageKeyEncoder(space, image_cnn("encoder_for", space, cnn), seed=seed)
    if isinstance(space, gym.spaces.Box):
        return FlattenEncoder(space)
    if isinstance(space, gym.spaces.Discrete):
        return OneHotEncoder(space)
    if isinstance(space, gym.spaces.MultiBinary):
        return MultiBinaryEncoder(space)
    if isinstance(space, gym.spaces.MultiDiscrete):
        return MultiDiscreteEncoder(space)
    raise TypeError(
        f"encoder_for: no encoder for the observation space {space}; expected a Box, "
        f"Discrete, MultiBinary or MultiDiscrete space, or a Dict or Tuple of them (nested)"
    )
