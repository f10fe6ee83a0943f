"""Convolutional bodies for image observations: the Nature-DQN CNN (Mnih et al. 2015) and
MinAtar's small CNN (Young & Tian 2019), and ``is_image_space``.

**Layout.** Image observations are ``uint8`` arrays laid out channels first, ``(C, H, W)``,
as gymnasium's Atari frame stack gives them (``(4, 84, 84)``: four grayscale frames) and as
torch's ``Conv2d`` reads them; MinAtar's ``(10, 10, C)`` boolean grids are transposed to
``(C, 10, 10)`` ``uint8`` by ``rlkit.envs.images.make_minatar``. A batch is ``(N, C, H, W)``;
a single observation ``(C, H, W)`` gets a batch dimension of one and loses it again.

**Scaling.** The pixels are scaled to [0, 1] inside the model (``x.float() / scale``, 255 for
Atari frames, 1 for MinAtar's 0/1 channels), so replay keeps ``uint8`` and the learner hands
``uint8`` tensors to the network; float inputs holding the same values give the same outputs.

Weights are initialised like torch's default ``Conv2d``/``Linear`` init, but from a local
``torch.Generator`` (no global random state is read or changed).

Example:
    >>> import gymnasium as gym, numpy as np, torch
    >>> space = gym.spaces.Box(0, 255, (4, 84, 84), np.uint8)
    >>> is_image_space(space), nature_cnn_features(space)
    (True, 3136)
    >>> body = ImageEncoder(space, "nature", seed=0)
    >>> body(torch.zeros(2, 4, 84, 84, dtype=torch.uint8)).shape
    torch.Size([2, 3136])
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from torch import nn

__all__ = [
    "CNN_NAMES",
    "ImageEncoder",
    "is_image_space",
    "nature_cnn_features",
    "cnn_hidden",
    "image_cnn",
    "cnn_for",
    "init_default",
]

#: the convolutional bodies by name: (out_channels, kernel, stride) per layer
CNN_LAYERS: dict[str, tuple[tuple[int, int, int], ...]] = {
    # Mnih et al. 2015 ("Human-level control through deep RL"), Methods: 32 8x8/4, 64 4x4/2,
    # 64 3x3/1, then a 512-unit fully connected layer
    "nature": ((32, 8, 4), (64, 4, 2), (64, 3, 1)),
    # Young & Tian 2019 (MinAtar), section 5: one 16-channel 3x3 stride-1 convolution, then a
    # 128-unit fully connected layer
    "minatar": ((16, 3, 1),),
}
#: the fully connected layer after each body (the ``hidden`` of its Q-network)
CNN_HIDDEN: dict[str, tuple[int, ...]] = {"nature": (512,), "minatar": (128,)}
CNN_NAMES = tuple(CNN_LAYERS)


def is_image_space(space: Any) -> bool:
    """Whether ``space`` holds images: a ``uint8`` ``Box`` of shape ``(C, H, W)``.

    Example:
        >>> import gymnasium as gym, numpy as np
        >>> is_image_space(gym.spaces.Box(0, 255, (1, 10, 10), np.uint8))
        True
        >>> is_image_space(gym.spaces.Box(-1.0, 1.0, (4,)))
        False
    """
    return (
        isinstance(space, gym.spaces.Box)
        and space.dtype == np.uint8
        and len(space.shape) == 3
    )


def cnn_hidden(cnn: str) -> tuple[int, ...]:
    """The fully connected layer widths that follow the body ``cnn`` in its paper.

    Example:
        >>> cnn_hidden("nature"), cnn_hidden("minatar")
        ((512,), (128,))
    """
    _check_name("cnn_hidden", cnn)
    return CNN_HIDDEN[cnn]


def image_cnn(owner: str, space: Any, cnn: str | None = None) -> str:
    """The CNN body for image observations of ``space`` (:func:`is_image_space`), as the image
    recipes pick it: ``cnn`` when given, else ``"nature"`` (Mnih et al. 2015) when the frames
    are large enough for its 8x8/4, 4x4/2, 3x3/1 kernels (36x36 or more: Atari's 84x84),
    else ``"minatar"`` (Young & Tian 2019: one 3x3/1 kernel, MinAtar's 10x10). A space that
    is not an image, frames laid out ``(H, W, C)`` (the last dimension the smallest), frames
    too small for the body, or an unknown ``cnn`` is a ``ValueError`` naming ``owner``, the
    space and what is expected.

    Example:
        >>> import gymnasium as gym, numpy as np
        >>> image_cnn("DQN", gym.spaces.Box(0, 255, (4, 84, 84), np.uint8))
        'nature'
        >>> image_cnn("DQN", gym.spaces.Box(0, 1, (4, 10, 10), np.uint8))
        'minatar'
        >>> image_cnn("DQN", gym.spaces.Box(0, 255, (1, 2, 2), np.uint8))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: DQN: the image observations of Box(0, 255, (1, 2, 2), uint8) are 2x2 ...
    """
    if cnn is not None:
        _check_name(owner, cnn)
    if not is_image_space(space):
        raise ValueError(
            f"{owner}: a CNN needs image observations (a uint8 Box of shape (C, H, W), "
            f"channels first), got {space}"
            + (f" with cnn={cnn!r}; leave cnn=None for an MLP" if cnn is not None else "")
        )
    c, h, w = (int(n) for n in space.shape)
    if w < min(c, h):
        raise ValueError(
            f"{owner}: the image observations of {space} look laid out (H, W, C) (the last "
            f"dimension is the smallest); rlkit's CNNs read (C, H, W): wrap the gymnasium env "
            f"with rlkit.envs.images.ChannelsFirst"
        )
    names = (cnn,) if cnn is not None else CNN_NAMES  # the larger body first
    for name in names:
        if _conv_output((c, h, w), CNN_LAYERS[name]) > 0:
            return name
    needs = {n: _smallest_frame(CNN_LAYERS[n]) for n in names}
    raise ValueError(
        f"{owner}: the image observations of {space} are {h}x{w} frames, too small for "
        + " or ".join(f"the {n!r} CNN (at least {k}x{k})" for n, k in needs.items())
    )


def cnn_for(owner: str, space: Any, cnn: str | None) -> str | None:
    """The CNN body a model puts first for observations of ``space``: None (no CNN) when
    ``cnn`` is None and ``space`` is not an image space, else :func:`image_cnn` (``cnn``, or
    the body the frame size fits; a ``cnn`` asked for observations that are not images is
    refused naming ``owner``).

    Example:
        >>> import gymnasium as gym, numpy as np
        >>> cnn_for("PPO", gym.spaces.Box(-1.0, 1.0, (4,)), None) is None
        True
        >>> cnn_for("PPO", gym.spaces.Box(0, 255, (4, 84, 84), np.uint8), None)
        'nature'
    """
    if cnn is None and not is_image_space(space):
        return None
    return image_cnn(owner, space, cnn)


def _smallest_frame(layers: tuple[tuple[int, int, int], ...]) -> int:
    """The side of the smallest square frame ``layers`` give one output position for."""
    side = 1
    for _, kernel, stride in reversed(layers):
        side = (side - 1) * stride + kernel
    return side


def _check_name(owner: str, cnn: Any) -> None:
    if cnn not in CNN_LAYERS:
        raise ValueError(f"{owner}: cnn must be one of {list(CNN_NAMES)}, got {cnn!r}")


def _conv_output(shape: tuple[int, ...], layers: tuple[tuple[int, int, int], ...]) -> int:
    _, h, w = shape
    for _, kernel, stride in layers:
        h, w = (h - kernel) // stride + 1, (w - kernel) // stride + 1
    return layers[-1][0] * h * w if h > 0 and w > 0 else 0


def nature_cnn_features(space: gym.spaces.Box) -> int:
    """Features the Nature-DQN body outputs for observations of ``space`` (3136 for 84x84).

    Example:
        >>> import gymnasium as gym, numpy as np
        >>> nature_cnn_features(gym.spaces.Box(0, 255, (4, 84, 84), np.uint8))
        3136
    """
    return _conv_output(tuple(space.shape), CNN_LAYERS["nature"])


class ImageEncoder(nn.Module):
    """A CNN body: ``uint8`` images ``(N, C, H, W)`` (or one ``(C, H, W)``) -> features
    ``(N, n_features)``; the pixels are divided by ``scale`` inside (255 for Atari frames).

    Args:
        space: the observation space, an image ``Box`` (see :func:`is_image_space`); its
            shape fixes the input channels and the number of output features.
        cnn: ``"nature"`` (Mnih et al. 2015) or ``"minatar"`` (Young & Tian 2019).
        scale: the pixels are divided by this (default: the space's upper bound, 255 for
            Atari frames, 1 for MinAtar's 0/1 channels).
        seed: seed of the local generator the weights are initialised from.

    Attributes:
        n_features: the width of the output.
        input_shape: the shape of one observation, ``(C, H, W)``.

    Example:
        >>> import gymnasium as gym, numpy as np, torch
        >>> space = gym.spaces.Box(0, 1, (4, 10, 10), np.uint8)
        >>> body = ImageEncoder(space, "minatar", seed=0)
        >>> body.n_features, body(torch.ones(4, 10, 10, dtype=torch.uint8)).shape
        (1024, torch.Size([1024]))
    """

    pixel_input = True  # the learners hand it uint8 observations as they are

    def __init__(
        self,
        space: gym.spaces.Box,
        cnn: str = "nature",
        *,
        scale: float | None = None,
        seed: int | np.random.SeedSequence | None = 0,
    ) -> None:
        super().__init__()
        _check_name("ImageEncoder", cnn)
        if not is_image_space(space):
            raise ValueError(
                f"ImageEncoder: needs an image observation space (a uint8 Box of shape "
                f"(C, H, W), channels first), got {space}"
            )
        layers = CNN_LAYERS[cnn]
        n_features = _conv_output(tuple(space.shape), layers)
        if n_features == 0:
            raise ValueError(
                f"ImageEncoder: observations of shape {tuple(space.shape)} are too small for "
                f"the {cnn!r} CNN's kernels and strides {[(k, s) for _, k, s in layers]}"
            )
        if scale is None:
            scale = float(np.max(space.high))
        if not (math.isfinite(scale) and scale > 0):
            raise ValueError(f"ImageEncoder: scale must be a positive number, got {scale!r}")
        self.cnn = cnn
        self.scale = float(scale)
        self.input_shape = tuple(int(n) for n in space.shape)
        self.n_features = n_features
        modules: list[nn.Module] = []
        channels = int(space.shape[0])
        for out, kernel, stride in layers:
            modules += [nn.Conv2d(channels, out, kernel, stride, device="meta"), nn.ReLU()]
            channels = out
        self.body = nn.Sequential(*modules, nn.Flatten(start_dim=-3)).to_empty(device="cpu")
        init_default(self.body, seed)

    def extra_repr(self) -> str:
        return f"cnn={self.cnn!r}, scale={self.scale}, n_features={self.n_features}"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        single = x.dim() == 3
        x = x.unsqueeze(0) if single else x
        out = self.body(x.to(torch.float32) / self.scale)
        return out.squeeze(0) if single else out


def init_default(module: nn.Module, seed: Any) -> torch.Generator:
    """Initialise every ``Conv2d`` and ``Linear`` of ``module`` as torch's default
    ``reset_parameters`` does, from a local generator seeded with ``seed``; returns it.

    Example:
        >>> import torch
        >>> a, b = torch.nn.Conv2d(1, 2, 3), torch.nn.Conv2d(1, 2, 3)
        >>> _ = init_default(a, 0), init_default(b, 0)
        >>> bool(torch.equal(a.weight, b.weight))
        True
    """
    from .neural import torch_generator

    generator = seed if isinstance(seed, torch.Generator) else torch_generator(seed)
    for layer in module.modules():
        if isinstance(layer, (nn.Conv2d, nn.Linear)):
            _reset(layer, generator)
    return generator


@torch.no_grad()
def _reset(layer: nn.Conv2d | nn.Linear, generator: torch.Generator) -> None:
    # torch's _ConvNd / Linear reset_parameters, with an explicit generator
    nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)
    if layer.bias is not None:
        fan_in, _ = nn.init._calculate_fan_in_and_fan_out(layer.weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        nn.init.uniform_(layer.bias, -bound, bound, generator=generator)
