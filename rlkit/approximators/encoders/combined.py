"""``CombinedEncoder``: the encoder of a ``Dict`` or ``Tuple`` observation space.

Stable-Baselines3's ``CombinedExtractor`` semantics: one encoder per key (per entry of a
``Tuple``), each chosen by its space (:func:`rlkit.approximators.encoders.encoder_for`, so
nested ``Dict``/``Tuple`` spaces nest), their outputs concatenated in the space's key order.
gymnasium's ``Dict`` sorts the keys of a plain dict when it is made, so that order is the
sorted one unless the space was made from an ``OrderedDict``; it is also the order in which
``gymnasium.wrappers.FlattenObservation`` concatenates them, so on ``Box``/``Discrete``/...
keys the encoder gives exactly the flattened observation.

A batch of observations is a dict of tensors by key (``(N, ...)`` each; a ``Tuple``'s: by
position, or a tuple of tensors).

Example:
    >>> import gymnasium as gym, torch
    >>> space = gym.spaces.Dict({"pos": gym.spaces.Box(-1, 1, (2,)), "k": gym.spaces.Discrete(3)})
    >>> enc = CombinedEncoder(space, seed=0)
    >>> enc.keys, enc.n_features
    (['k', 'pos'], 5)
    >>> enc({"pos": torch.ones(1, 2), "k": torch.tensor([1.0])}).tolist()
    [[0.0, 1.0, 0.0, 1.0, 1.0]]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import torch
from torch import nn
from torch.nn.modules import module as _torch_module

from ...trajectories.structured import is_structured_space, space_keys
from .flatten import FlattenEncoder
from .multi_binary import MultiBinaryEncoder

__all__ = ["CombinedEncoder"]

#: key encoders that only flatten to float32 (no parameters)
_FLAT = (FlattenEncoder, MultiBinaryEncoder)


class CombinedEncoder(nn.Module):
    """One encoder per key of a ``Dict``/``Tuple`` space, concatenated (see the module
    docstring). ``cnn`` names the CNN body of image keys (``"nature"`` or ``"minatar"``; None:
    chosen by each key's frame size, as :func:`~rlkit.encoder_for`).

    Attributes:
        space: the ``Dict``/``Tuple`` space it encodes; ``cnn``: the CNN body's name.
        keys: the space's keys in the order their features are concatenated.
        encoders: the encoders by key (a ``ModuleDict``; a ``Tuple``'s positions as strings).
        n_features: the width of the output.

    Example:
        >>> import gymnasium as gym
        >>> space = gym.spaces.Tuple([gym.spaces.Discrete(2), gym.spaces.MultiBinary(3)])
        >>> CombinedEncoder(space).n_features
        5
    """

    def __init__(self, space: gym.spaces.Dict | gym.spaces.Tuple, *, cnn: str | None = None,
                 seed: Any = 0) -> None:  # fmt: skip
        super().__init__()
        if not is_structured_space(space):
            raise TypeError(f"CombinedEncoder: needs a Dict or Tuple space, got {space}")
        from . import encoder_for  # the factory chooses each key's encoder

        self.space, self.cnn = space, cnn  # what rebuilds it (rk.save's description)
        self.keys = space_keys(space)
        subspaces = space.spaces.values() if isinstance(space, gym.spaces.Dict) else space.spaces
        self.encoders = nn.ModuleDict(
            {
                str(key): encoder_for(sub, cnn=cnn, seed=seed)
                for key, sub in zip(self.keys, subspaces, strict=True)
            }
        )
        self.n_features = sum(enc.n_features for enc in self.encoders.values())
        # every key flattened (Box, MultiBinary): the widths of the one-concatenation path
        encoders = [self.encoders[str(key)] for key in self.keys]
        flat = all(type(e) in _FLAT for e in encoders)
        self._widths = [e.n_features for e in encoders] if flat else None

    def forward(self, obs: Mapping[Any, torch.Tensor] | tuple) -> torch.Tensor:
        values = obs if type(obs) is dict or isinstance(obs, Mapping) else dict(enumerate(obs))
        modules = self.encoders._modules
        direct = not _hooked_globally()
        widths = getattr(self, "_widths", None)
        if direct and widths is not None and all(_plain(e) for e in modules.values()):
            rows = [values[key] for key in self.keys]
            first = rows[0]
            if all(isinstance(r, torch.Tensor) and r.dtype == first.dtype for r in rows):
                # Box and MultiBinary keys of one dtype: their rows side by side, converted to
                # float32 once (the same numbers as converting each key, then concatenating)
                flat = [r.reshape(r.shape[0], w) for r, w in zip(rows, widths, strict=True)]
                return torch.cat(flat, dim=-1).to(torch.float32)
        parts = []
        for key in self.keys:
            encoder = modules[str(key)]
            # a key encoder without hooks: its forward, which is all that nn.Module.__call__
            # would run, without __call__'s own cost (paid per key at every step)
            call = encoder.forward if direct and _plain(encoder) else encoder
            parts.append(call(values[key]))
        return torch.cat(parts, dim=-1)


def _plain(module: nn.Module) -> bool:
    """Whether calling ``module`` runs its ``forward`` and nothing else: no hooks of its own,
    not compiled (``Module.compile``)."""
    return not (
        module._forward_hooks
        or module._forward_pre_hooks
        or module._backward_hooks
        or module._backward_pre_hooks
        or getattr(module, "_compiled_call_impl", None) is not None
    )


def _hooked_globally() -> bool:
    """Whether global module hooks are registered or a trace is being recorded (where
    ``__call__`` names the modules' scopes): then every key encoder is called as a module."""
    m = _torch_module
    return bool(
        m._global_forward_hooks
        or m._global_forward_pre_hooks
        or m._global_backward_hooks
        or m._global_backward_pre_hooks
        or torch._C._get_tracing_state()
    )
