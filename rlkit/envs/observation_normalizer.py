"""``ObservationNormalizer``: observations as :class:`~rlkit.VecNormalize` shows them to the
policy, ``clip((obs - mean) / sqrt(var + epsilon), -clip_obs, clip_obs)`` as float32
(Stable-Baselines3's ``VecNormalize.normalize_obs``), from running statistics it does not
update itself (docs/how-to/normalization.md).

``VecNormalize`` owns one and updates its statistics while training; a policy built on that
env keeps a reference to the same object (``policy.observation_normalizer``), so
``policy.predict(raw_obs)``, a greedy evaluation on a raw env and ``rk.save`` see the training
statistics as they are now, frozen (nothing but the env updates them). A ``Dict`` observation
is normalised per key of ``keys`` (the others pass as they are).

Example:
    >>> import numpy as np
    >>> from rlkit.envs.running_mean_std import RunningMeanStd
    >>> rms = RunningMeanStd(shape=(2,))
    >>> rms.mean[...], rms.var[...] = [1.0, 0.0], [4.0, 1.0]
    >>> normalize = ObservationNormalizer(rms, clip_obs=10.0, epsilon=0.0)
    >>> normalize(np.array([3.0, 50.0])).tolist()
    [1.0, 10.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.state import require_keys
from .running_mean_std import RunningMeanStd

__all__ = ["ObservationNormalizer"]


class ObservationNormalizer:
    """Normalise observations (one or a batch) with the statistics ``rms``: a
    :class:`RunningMeanStd`, or for ``Dict`` observations a dict of them by key (the keys
    normalised; the others pass unchanged). See the module docstring.

    Example:
        >>> import numpy as np
        >>> from rlkit.envs.running_mean_std import RunningMeanStd
        >>> n = ObservationNormalizer({"x": RunningMeanStd(shape=(1,))}, 5.0, 1e-8)
        >>> out = n({"x": np.array([[2.0]]), "y": np.array([[7]])})
        >>> out["x"].tolist(), out["y"].tolist(), out["x"].dtype
        ([[2.0]], [[7]], dtype('float32'))
    """

    def __init__(
        self, rms: RunningMeanStd | dict[str, RunningMeanStd], clip_obs: float, epsilon: float
    ) -> None:
        self.rms = rms
        self.clip_obs = float(clip_obs)
        self.epsilon = float(epsilon)

    def __repr__(self) -> str:
        keys = f", keys={sorted(self.rms)}" if isinstance(self.rms, dict) else ""
        return f"ObservationNormalizer(clip_obs={self.clip_obs:g}{keys})"

    @property
    def keys(self) -> list[str] | None:
        """The normalised keys of a ``Dict`` observation (None: a ``Box`` observation)."""
        return list(self.rms) if isinstance(self.rms, dict) else None

    def one(self, obs: Any, rms: RunningMeanStd) -> np.ndarray:
        """One array normalised with ``rms`` (float32, clipped)."""
        scaled = (np.asarray(obs) - rms.mean) / np.sqrt(rms.var + self.epsilon)
        return np.clip(scaled, -self.clip_obs, self.clip_obs).astype(np.float32)

    def __call__(self, obs: Any) -> Any:
        """``obs`` normalised (a new array or dict; ``obs`` is not changed)."""
        if not isinstance(self.rms, dict):
            return self.one(obs, self.rms)
        if not isinstance(obs, dict):
            raise TypeError(
                f"{self!r}: expected a Dict observation (a dict of arrays by key), got "
                f"{type(obs).__name__}"
            )
        out = dict(obs)
        for key, rms in self.rms.items():
            out[key] = self.one(obs[key], rms)
        return out

    def frozen_copy(self) -> ObservationNormalizer:
        """A copy with statistics of its own (an ``rk.load``-ed policy's)."""
        if isinstance(self.rms, dict):
            rms: Any = {k: v.copy() for k, v in self.rms.items()}
        else:
            rms = self.rms.copy()
        return ObservationNormalizer(rms, self.clip_obs, self.epsilon)

    # ---- what rk.save keeps: the arrays by name, and the settings ----
    def arrays(self) -> dict[str, np.ndarray]:
        """``{"mean": ..., "var": ...}`` (``"mean/<key>"`` per key of a ``Dict``)."""
        if not isinstance(self.rms, dict):
            return {"mean": self.rms.mean.copy(), "var": self.rms.var.copy()}
        out = {}
        for key, rms in self.rms.items():
            out[f"mean/{key}"], out[f"var/{key}"] = rms.mean.copy(), rms.var.copy()
        return out

    def settings(self) -> dict[str, Any]:
        """The JSON part: ``clip_obs``, ``epsilon``, ``keys``."""
        return {"clip_obs": self.clip_obs, "epsilon": self.epsilon, "keys": self.keys}

    @classmethod
    def from_saved(cls, settings: dict[str, Any], arrays: dict[str, Any]) -> ObservationNormalizer:
        """The normaliser :meth:`settings` and :meth:`arrays` describe (frozen statistics).

        Example:
            >>> n = ObservationNormalizer(RunningMeanStd(shape=(3,)), 10.0, 1e-8)
            >>> ObservationNormalizer.from_saved(n.settings(), n.arrays()).rms.mean.shape
            (3,)
        """
        require_keys("ObservationNormalizer", settings, "clip_obs", "epsilon", "keys")
        keys = settings["keys"]

        def rms(suffix: str) -> RunningMeanStd:
            mean = np.asarray(arrays["mean" + suffix], dtype=np.float64)
            out = RunningMeanStd(shape=mean.shape)
            out.mean[...] = mean
            out.var[...] = np.asarray(arrays["var" + suffix], dtype=np.float64)
            return out

        stats: Any = rms("") if keys is None else {k: rms(f"/{k}") for k in keys}
        return cls(stats, float(settings["clip_obs"]), float(settings["epsilon"]))
