"""Torch networks described as JSON (never pickled): a module tree of ``nn.Sequential``,
``nn.Linear``, activations, ``nn.Flatten``, ``nn.Identity``, ``nn.LayerNorm`` and rlkit's
``DuelingHead``, ``ImageEncoder`` (the CNN bodies of ``rlkit/approximators/cnn.py``) and
``CombinedEncoder`` (``Dict``/``Tuple`` observations, rlkit/approximators/encoders/combined.py)
(what ``q_network`` and most hand-written Q-networks are made of). The weights go to
safetensors under the module's own ``state_dict`` names; :func:`module_from_json` builds the
same tree and ``load_state_dict(strict=True)`` fills it.

A network with another module type is refused at save time naming it; add a description with
:func:`register_module` (two small functions) to save it.

Example:
    >>> import torch
    >>> net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    >>> module_from_json(module_to_json(net))
    Sequential(
      (0): Linear(in_features=4, out_features=8, bias=True)
      (1): ReLU()
      (2): Linear(in_features=8, out_features=2, bias=True)
    )
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch import nn

from ..approximators.cnn import ImageEncoder
from ..approximators.encoders.combined import CombinedEncoder
from ..approximators.neural import DuelingHead
from .errors import ArtifactError

__all__ = ["module_to_json", "module_from_json", "register_module", "load_parameters"]

# type name -> (class, to_json(module) -> dict of arguments, from_json(arguments) -> module)
_KINDS: dict[str, tuple[type, Callable[[Any], dict], Callable[[dict], nn.Module]]] = {}


def register_module(
    name: str,
    cls: type,
    to_json: Callable[[Any], dict[str, Any]],
    from_json: Callable[[dict[str, Any]], nn.Module],
) -> None:
    """Let artifacts describe modules of exactly ``cls`` as ``{"type": name, **to_json(m)}``
    and rebuild them with ``from_json(arguments)`` (parameters are loaded afterwards)."""
    _KINDS[name] = (cls, to_json, from_json)


def _no_arguments(cls: type) -> tuple[type, Callable, Callable]:
    return cls, lambda m: {}, lambda a: cls()


for _cls in (nn.ReLU, nn.Tanh, nn.Sigmoid, nn.ELU, nn.GELU, nn.SiLU, nn.Identity, nn.Softplus):
    register_module(_cls.__name__, *_no_arguments(_cls))
register_module(
    "LeakyReLU", nn.LeakyReLU, lambda m: {"negative_slope": m.negative_slope},
    lambda a: nn.LeakyReLU(float(a["negative_slope"])),
)  # fmt: skip
register_module(
    "Linear",
    nn.Linear,
    lambda m: {"in": m.in_features, "out": m.out_features, "bias": m.bias is not None},
    lambda a: nn.Linear(int(a["in"]), int(a["out"]), bias=bool(a["bias"])),
)
register_module(
    "Flatten", nn.Flatten, lambda m: {"start_dim": m.start_dim, "end_dim": m.end_dim},
    lambda a: nn.Flatten(int(a["start_dim"]), int(a["end_dim"])),
)  # fmt: skip
register_module(
    "LayerNorm",
    nn.LayerNorm,
    lambda m: {"shape": list(m.normalized_shape), "eps": m.eps, "affine": m.elementwise_affine},
    lambda a: nn.LayerNorm(a["shape"], eps=float(a["eps"]), elementwise_affine=bool(a["affine"])),
)
register_module(
    "DuelingHead",
    DuelingHead,
    lambda m: {"in": m.value.in_features, "n_actions": m.advantage.out_features},
    lambda a: DuelingHead(int(a["in"]), int(a["n_actions"])),
)



def _image_encoder(a: dict[str, Any]) -> nn.Module:
    import gymnasium as gym
    import numpy as np

    shape = tuple(int(n) for n in a["shape"])
    space = gym.spaces.Box(0, 255, shape, np.uint8)
    return ImageEncoder(space, str(a["cnn"]), scale=float(a["scale"]), seed=0)


# the CNN bodies of rlkit/approximators/cnn.py (uint8 images, scaled inside)
register_module(
    "ImageEncoder",
    ImageEncoder,
    lambda m: {"shape": list(m.input_shape), "cnn": m.cnn, "scale": m.scale},
    _image_encoder,
)


def _combined_encoder(a: dict[str, Any]) -> nn.Module:
    from .spaces import space_from_json

    return CombinedEncoder(space_from_json(a["space"]), cnn=_cnn_name(a["cnn"]), seed=0)


def _cnn_name(cnn: Any) -> str | None:
    """A saved ``CombinedEncoder``'s ``cnn``: a body's name, or None (chosen per image key)."""
    return None if cnn is None else str(cnn)


def _combined_to_json(m: CombinedEncoder) -> dict[str, Any]:
    from .spaces import space_to_json

    return {"space": space_to_json(m.space), "cnn": m.cnn}


# the encoder of Dict and Tuple observations (rlkit/approximators/encoders/combined.py), rebuilt
# from its space: one encoder per key, each chosen by the key's space
register_module("CombinedEncoder", CombinedEncoder, _combined_to_json, _combined_encoder)


def module_to_json(module: nn.Module, where: str = "network") -> dict[str, Any]:
    """The description of ``module`` (a ``Sequential`` of described modules, recursively);
    any other module type is refused naming where it is and its type."""
    if type(module) is nn.Sequential:
        return {
            "type": "Sequential",
            "children": [module_to_json(m, f"{where}[{i}]") for i, m in enumerate(module)],
        }
    for name, (cls, to_json, _) in _KINDS.items():
        if type(module) is cls:
            return {"type": name, **to_json(module)}
    raise TypeError(
        f"rk.save: cannot describe {where} = {type(module).__module__}."
        f"{type(module).__qualname__}; artifacts rebuild Q-networks from nn.Sequential and "
        f"{', '.join(sorted(_KINDS))} (describe your module with "
        f"rlkit.deploy.networks.register_module)"
    )


def module_from_json(data: Any) -> nn.Module:
    """The module tree :func:`module_to_json` described (freshly initialised: load the
    parameters next); an unknown type is an :class:`ArtifactError`."""
    try:
        kind = data["type"]
        if kind == "Sequential":
            return nn.Sequential(*(module_from_json(c) for c in data["children"]))
        if kind not in _KINDS:
            raise ArtifactError(
                f"the network names a module type {kind!r} this rlkit cannot build (known: "
                f"Sequential, {', '.join(sorted(_KINDS))})"
            )
        return _KINDS[kind][2](data)
    except (KeyError, TypeError, ValueError) as error:
        if isinstance(error, ArtifactError):
            raise
        raise ArtifactError(f"malformed network description {data!r:.200}: {error}") from error


def load_parameters(model: nn.Module, tensors: dict[str, Any]) -> None:
    """Fill ``model`` with the artifact's arrays (every parameter and buffer, no other)."""
    import numpy as np
    import torch

    state = {k: torch.from_numpy(np.array(v)) for k, v in tensors.items()}
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as error:
        raise ArtifactError(f"the tensors do not fit the network: {error}") from error
