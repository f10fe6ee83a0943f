"""The observation statistics of a policy trained on ``rk.VecNormalize`` in its artifact
(docs/how-to/normalization.md).

``rk.save`` of a policy with an ``observation_normalizer`` adds, whatever the policy's kind,
``"observation_normalization"`` to ``policy.json`` (``clip_obs``, ``epsilon`` and the
normalised ``keys`` of a ``Dict`` observation, or null) and the statistics' ``mean`` and
``var`` (float64) to the tensors, under ``observation_normalization/``. ``rk.load`` gives the
loaded policy a frozen normaliser from them: its ``predict`` and its acting in a raw env
normalise the observations as the training env did. ``rk.export`` puts the normalisation at
the head of the ONNX graph (:mod:`rlkit.deploy.normalized_graph`), so the graph takes raw
observations. This module needs no torch (tabular artifacts save and load without it).

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

from ..envs.observation_normalizer import ObservationNormalizer
from .errors import ArtifactError

__all__ = ["add_normalization", "take_normalization", "PREFIX", "KEY"]

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
