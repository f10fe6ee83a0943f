"""``RunningMeanStd``: the running mean and variance of a stream of batches, as
Stable-Baselines3's ``stable_baselines3/common/running_mean_std.py`` keeps them (the statistics
of :class:`~rlkit.VecNormalize`, docs/how-to/normalization.md).

The count starts at ``epsilon`` (1e-4: a tiny prior of mean 0 and variance 1, so the first
batch is not divided by zero), and each batch (the sub-envs' observations of one step) is
merged with the parallel-variance formula of Chan et al.:

    delta = batch_mean - mean,  total = count + batch_count
    mean += delta * batch_count / total
    var = (var * count + batch_var * batch_count + delta**2 * count * batch_count / total) / total
    count = total

Example:
    >>> import numpy as np
    >>> rms = RunningMeanStd(shape=(2,))
    >>> rms.update(np.array([[1.0, 2.0], [3.0, 6.0]]))
    >>> np.round(rms.mean, 3).tolist(), np.round(rms.var, 3).tolist()
    ([2.0, 4.0], [1.0, 4.001])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.state import require_keys

__all__ = ["RunningMeanStd"]


class RunningMeanStd:
    """Mean ``mean`` and (population) variance ``var`` (float64, of ``shape``) of every batch
    given to :meth:`update`, over ``count`` samples (plus the initial ``epsilon``).

    Example:
        >>> import numpy as np
        >>> rms = RunningMeanStd()
        >>> rms.update(np.array([1.0, 3.0]))
        >>> round(float(rms.mean), 4), round(float(rms.var), 4), rms.count
        (1.9999, 1.0002, 2.0001)
    """

    def __init__(self, epsilon: float = 1e-4, shape: tuple[int, ...] = ()) -> None:
        self.mean = np.zeros(shape, np.float64)
        self.var = np.ones(shape, np.float64)
        self.count = float(epsilon)

    def __repr__(self) -> str:
        return f"RunningMeanStd(shape={self.mean.shape}, count={self.count:g})"

    def update(self, batch: np.ndarray) -> None:
        """Merge a batch (first axis: the samples) into the statistics."""
        batch = np.asarray(batch)
        self.update_from_moments(np.mean(batch, axis=0), np.var(batch, axis=0), batch.shape[0])

    def update_from_moments(self, batch_mean: Any, batch_var: Any, batch_count: float) -> None:
        """Merge a batch given by its mean, variance and size (the parallel formula)."""
        delta = batch_mean - self.mean
        total = self.count + batch_count
        new_mean = self.mean + delta * batch_count / total
        m_a = self.var * self.count
        m_b = batch_var * batch_count
        m_2 = m_a + m_b + np.square(delta) * self.count * batch_count / total
        # written into the arrays in place: whoever holds them (a policy's frozen view of
        # the training statistics, rlkit/envs/observation_normalizer.py) sees them current
        self.mean[...] = new_mean
        self.var[...] = m_2 / total
        self.count = float(total)

    def copy(self) -> RunningMeanStd:
        """An independent copy (its arrays are new)."""
        new = RunningMeanStd(shape=self.mean.shape)
        new.load_state_dict(self.state_dict())
        return new

    # ---- checkpoints: plain arrays and a number ----
    def state_dict(self) -> dict[str, Any]:
        return {"mean": self.mean.copy(), "var": self.var.copy(), "count": self.count}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore in place (the arrays keep their identity), checking the shapes."""
        require_keys("RunningMeanStd", state, "mean", "var", "count")
        mean = np.asarray(state["mean"], dtype=np.float64)
        var = np.asarray(state["var"], dtype=np.float64)
        if mean.shape != self.mean.shape or var.shape != self.var.shape:
            raise ValueError(
                f"RunningMeanStd.load_state_dict: the saved statistics have shapes "
                f"{mean.shape} and {var.shape}, these {self.mean.shape}"
            )
        self.mean[...] = mean
        self.var[...] = var
        self.count = float(state["count"])
