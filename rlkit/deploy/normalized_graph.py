"""The observation normalisation of a policy trained in ``rk.VecNormalize`` at the head of
the ONNX graph ``rk.export`` writes (rlkit/deploy/normalization.py keeps the statistics in the
artifact): the graph takes raw observations.

Example:
    >>> import torch
    >>> from rlkit.envs.observation_normalizer import ObservationNormalizer
    >>> from rlkit.envs.running_mean_std import RunningMeanStd
    >>> normalizer = ObservationNormalizer(RunningMeanStd(shape=(1,)), 1.0, 0.0)
    >>> class P: observation_normalizer = normalizer
    >>> module = normalized_module(torch.nn.Identity(), P())
    >>> module(torch.tensor([[3.0], [-0.5]])).tolist()
    [[1.0], [-0.5]]
"""

from __future__ import annotations

from typing import Any

import torch

from ..envs.observation_normalizer import ObservationNormalizer

__all__ = ["normalized_module"]


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
