"""The observation statistics of a policy trained on ``rk.VecNormalize`` in its artifact
(docs/how-to/normalization.md).

``rk.save`` of a policy with an ``observation_normalizer`` adds, whatever the policy's kind,
``"observation_normalization"`` to ``policy.json`` (``clip_obs``, ``epsilon`` and the
normalised ``keys`` of a ``Dict`` observation, or null) and the statistics' ``mean`` and
``var`` (float64) to the tensors, under ``observation_normalization/``. ``rk.load`` gives the
loaded policy a frozen normaliser from them: its ``predict`` and its acting in a raw env
normalise the observations as the training env did. ``rk.export`` puts the normalisation at
the head of the ONNX graph (:func:`normalized_module`), so the graph takes raw observations.

Example:
    >>> import numpy as np
    >>> from rlkit.envs.observation_normalizer import ObservationNormalizer
    >>> from rlkit.envs.running_mean_std import RunningMeanStd
    >>> normalizer = ObservationNormalizer(RunningMeanStd(shape=(2,)), 10.0, 1e-8)
    >>> class P: observation_normalizer = normalizer
    >>> meta, tensors = {}, {}
    >>> add_normalization(P(), meta, tensors)
    >>> sorted(tensors), meta["observation_normalization"]["keys"]
    (['observation_normalization/mean', 'observation_normalization/var'], None)
"""

from __future__ import annotations

from typing import Any

import torch

from ..envs.observation_normalizer import ObservationNormalizer
from .errors import ArtifactError

__all__ = ["add_normalization", "take_normalization", "normalized_module", "PREFIX", "KEY"]

#: the tensors' prefix and the key of ``policy.json``
PREFIX = "observation_normalization/"
KEY = "observation_normalization"


def add_normalization(policy: Any, meta: dict[str, Any], tensors: dict[str, Any]) -> None:
    """Add ``policy``'s observation statistics (if it has any) to an artifact's meta and
    tensors, in place."""
    normalizer = getattr(policy, "observation_normalizer", None)
    if normalizer is None:
        return
    meta[KEY] = normalizer.settings()
    for name, array in normalizer.arrays().items():
        tensors[PREFIX + name] = array


def take_normalization(
    where: str, meta: dict[str, Any], tensors: dict[str, Any]
) -> tuple[dict[str, Any], ObservationNormalizer | None]:
    """``(tensors without the statistics, the frozen normaliser or None)`` of an artifact."""
    rest = {k: v for k, v in tensors.items() if not k.startswith(PREFIX)}
    settings = meta.get(KEY)
    if settings is None:
        return rest, None
    arrays = {k[len(PREFIX) :]: v for k, v in tensors.items() if k.startswith(PREFIX)}
    try:
        return rest, ObservationNormalizer.from_saved(settings, arrays)
    except (KeyError, TypeError, ValueError) as error:
        raise ArtifactError(
            f"{where}: malformed observation normalisation in the artifact: {error!r}"
        ) from error


class _Normalized(torch.nn.Module):
    """``clamp((obs - mean) / sqrt(var + epsilon), -clip, clip)`` (in float64, as numpy
    computes it in ``predict``), then the wrapped greedy module with the other inputs."""

    def __init__(self, inner: torch.nn.Module, normalizer: ObservationNormalizer) -> None:
        super().__init__()
        self.inner = inner
        stats = normalizer.rms
        self.register_buffer("mean", torch.as_tensor(stats.mean, dtype=torch.float64))
        var = torch.as_tensor(stats.var, dtype=torch.float64)
        self.register_buffer("scale", torch.sqrt(var + normalizer.epsilon))
        self.clip = float(normalizer.clip_obs)
        for name in ("input_names", "output_names", "dynamic_axes", "description"):
            if hasattr(inner, name):
                setattr(self, name, getattr(inner, name))

    def forward(self, obs: torch.Tensor, *rest: torch.Tensor) -> Any:
        scaled = (obs.to(torch.float64) - self.mean) / self.scale
        return self.inner(torch.clamp(scaled, -self.clip, self.clip).to(torch.float32), *rest)


def normalized_module(module: torch.nn.Module, policy: Any) -> torch.nn.Module:
    """``module`` (a greedy module of ``rk.export``) preceded by ``policy``'s observation
    normalisation when it has one (a ``Dict`` observation's is refused: a graph here takes
    one observation array)."""
    normalizer = getattr(policy, "observation_normalizer", None)
    if normalizer is None:
        return module
    if normalizer.keys is not None:
        raise TypeError(
            "rk.export: the policy normalises Dict observations per key (rk.VecNormalize); an "
            "ONNX graph here takes one observation array: use rk.save / rk.load"
        )
    wrapped = _Normalized(module, normalizer)
    if hasattr(module, "description"):
        description = dict(module.description)
        description["input"] = (
            f"{description['input']}; obs raw: normalised inside the graph with the training "
            f"statistics (rk.VecNormalize)"
        )
        wrapped.description = description
    return wrapped
