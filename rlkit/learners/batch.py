"""The batch a built policy learns from: a dict of traces that names a missing key, and its
flattening to tensors."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

__all__ = ["Batch", "flatten", "fn_name"]

_OBSERVATIONS = ("state", "final_state")


class Batch(dict):
    """A dict of traces; a missing key raises a ``KeyError`` that names it and the keys there
    are (so a ``postprocess_fn`` that drops a key the loss needs is found at once)."""

    owner = "batch"

    def __missing__(self, key: str) -> Any:
        raise KeyError(
            f"{self.owner} has no key {key!r} (keys: {sorted(self)}); did the postprocess_fn "
            f"drop it or forget to add it?"
        )


def flatten(batch: Batch, device: torch.device) -> Batch:
    """(n_steps, n_envs, ...) numpy traces -> (n_steps * n_envs, ...) tensors (floats as
    ``float32``; the observations ``state`` and ``final_state`` always)."""
    flat = Batch()
    flat.owner = batch.owner
    for key, value in batch.items():
        array = np.asarray(value)
        array = array.reshape(-1, *array.shape[2:]) if array.ndim >= 2 else array
        # observations are floats, as when acting (integer Box observations, e.g. images)
        dtype = torch.float32 if array.dtype.kind == "f" or key in _OBSERVATIONS else None
        flat[key] = torch.as_tensor(array, dtype=dtype, device=device)
    return flat


def fn_name(fn: Any) -> str:
    """``module.qualname`` of a function (how errors and ``rk.explain`` name the functions)."""
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"
