"""``Batch``: what every deep learner learns from, one type for all of them.

A batch is a dict of arrays or tensors by key, one row per sample: ``state``, ``action``,
``reward``, ``terminal``, ``next_state`` from replay; ``state``, ``action``, ``log_prob``,
``value``, ``advantages``, ``returns`` from a rollout. A ``Dict`` observation stays a dict of
arrays under its key (never an object array), and every operation below works through it; a
legal-action mask travels as ``legal_action_mask``; per-batch numbers (a discount) and ``None``
pass through unchanged. A missing key raises a ``KeyError`` naming it and the keys there are, so
a ``postprocess_fn`` that drops a key the loss needs is found at once.

The operations a learner needs: :meth:`Batch.rows` (a subset of rows), :meth:`Batch.split`
(consecutive parts, views not copies), :meth:`Batch.minibatches` (one shuffled epoch),
:meth:`Batch.sequences` (padded sequences for recurrent models), and :func:`flatten` (a rollout's
``(n_steps, n_envs, ...)`` arrays -> ``(n_steps * n_envs, ...)`` tensors).

Example:
    >>> import numpy as np
    >>> batch = Batch(state={"pos": np.arange(4.0), "goal": np.ones(4)}, action=np.arange(4),
    ...               discount=0.99)
    >>> len(batch), batch.rows(np.array([3, 1]))["state"]["pos"].tolist()
    (4, [3.0, 1.0])
    >>> [part["action"].tolist() for part in batch.minibatches(2, np.random.default_rng(0))]
    [[2, 0], [1, 3]]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from ..optimizers.multi_step import epoch_indices

__all__ = ["Batch", "flatten", "fn_name"]

_OBSERVATIONS = ("state", "final_state", "next_state")


class Batch(dict):
    """A dict of per-sample arrays or tensors by key (see the module docstring).

    ``owner`` names the batch in error messages (``"PPO: the batch after postprocess_fn"``).
    ``len(batch)`` is the number of rows: of ``state`` when there is one, else of the first
    per-row value.

    Example:
        >>> import numpy as np
        >>> import torch
        >>> batch = Batch(state=torch.zeros(6, 4), reward=torch.arange(6.0))
        >>> len(batch), batch["reward"][:3]
        (6, tensor([0., 1., 2.]))
        >>> [len(b) for b in batch.minibatches(4, np.random.default_rng(0))]
        [4, 2]
    """

    owner = "batch"

    def __missing__(self, key: str) -> Any:
        raise KeyError(
            f"{self.owner} has no key {key!r} (keys: {sorted(self)}); did the postprocess_fn "
            f"drop it or forget to add it?"
        )

    def __len__(self) -> int:  # rows, not keys
        value = self.get("state")
        if value is None:
            value = next((v for v in self.values() if _has_rows(v)), None)
        return 0 if value is None else _n_rows(value)

    def __bool__(self) -> bool:  # a batch with keys is something, whatever its rows
        return dict.__len__(self) > 0

    def __repr__(self) -> str:
        shapes = {k: _describe(v) for k, v in self.items()}
        return f"Batch({', '.join(f'{k}={v}' for k, v in shapes.items())})"

    def _like(self, values: dict[str, Any]) -> Batch:
        out = Batch(values)
        out.owner = self.owner
        return out

    def map(self, fn: Any) -> Batch:
        """A batch with ``fn`` applied to every per-row array or tensor (through dicts)."""
        return self._like({k: _map(fn, v) for k, v in self.items()})

    def rows(self, index: Any) -> Batch:
        """The rows ``index`` (an index array, tensor or slice) of every per-row value.

        For a torch batch the index is moved to the tensors' device."""
        return self.map(lambda v: v[_index_for(v, index)])

    def split(self, size: int) -> list[Batch]:
        """Consecutive batches of ``size`` rows: views of this batch's arrays, not copies.

        Example:
            >>> import torch
            >>> [len(b) for b in Batch(state=torch.zeros(5, 2)).split(2)]
            [2, 2, 1]
        """
        n = len(self)
        return [self.rows(slice(i, i + size)) for i in range(0, n, size)]

    def minibatches(self, size: int, generator: np.random.Generator) -> list[Batch]:
        """One epoch: the rows in an order drawn from ``generator``, cut into batches of
        ``size`` (the last one smaller when ``size`` does not divide the rows). A ``size`` of
        at least the number of rows gives ``[self]``, in order, and draws nothing. The same
        minibatches as ``rk.optimizers.MultiStep`` cuts for a built policy's update (both use
        :func:`~rlkit.optimizers.multi_step.epoch_indices`)."""
        parts = epoch_indices(len(self), size, generator)
        return [self if index is None else self.rows(index) for index in parts]

    def sequences(self, length: int, starts_key: str = "episode_start") -> Batch:
        """A rollout batch of ``(n_steps, n_envs, ...)`` arrays cut into sequences of at most
        ``length`` steps that never cross an episode start (``batch[starts_key]``, a boolean
        ``(n_steps, n_envs)`` array), each padded with zeros to ``length``: every value becomes
        ``(length, n_sequences, ...)`` and ``mask`` (``(length, n_sequences)``, True for real
        steps) says which steps are padding (what a recurrent model's loss averages over).

        Example:
            >>> import numpy as np
            >>> starts = np.array([[True], [False], [True], [False], [False]])
            >>> seq = Batch(x=np.arange(5.0)[:, None], episode_start=starts).sequences(2)
            >>> seq["x"].T.tolist(), seq["mask"].T.tolist()
            ([[0.0, 1.0], [2.0, 3.0], [4.0, 0.0]], [[True, True], [True, True], [True, False]])
        """
        starts = np.asarray(self[starts_key], dtype=bool)
        if starts.ndim != 2:
            raise ValueError(
                f"{self.owner}: sequences need {starts_key!r} of shape (n_steps, n_envs), got "
                f"{starts.shape}"
            )
        n_steps, n_envs = starts.shape
        cuts = []  # (env, first step, last step + 1)
        for env in range(n_envs):
            begin = 0
            for t in range(1, n_steps + 1):
                if t == n_steps or starts[t, env] or t - begin == length:
                    cuts.append((env, begin, t))
                    begin = t
        out = self._like({k: _pad(v, cuts, length) for k, v in self.items()})
        mask = np.zeros((length, len(cuts)), dtype=bool)
        for i, (_, begin, end) in enumerate(cuts):
            mask[: end - begin, i] = True
        out["mask"] = mask
        return out


def flatten(batch: Mapping[str, Any], device: torch.device) -> Batch:
    """(n_steps, n_envs, ...) numpy traces -> (n_steps * n_envs, ...) tensors (floats as
    ``float32``; the observations ``state``, ``final_state`` and ``next_state`` always, through
    a ``Dict`` observation's dict). Values of fewer than two dimensions pass as tensors."""
    flat = Batch()
    flat.owner = getattr(batch, "owner", Batch.owner)
    for key, value in batch.items():
        flat[key] = _map(lambda v, key=key: _flat_tensor(v, key, device), value)
    return flat


def _flat_tensor(value: Any, key: str, device: torch.device) -> torch.Tensor:
    array = np.asarray(value)
    array = array.reshape(-1, *array.shape[2:]) if array.ndim >= 2 else array
    # observations are floats, as when acting (integer Box observations, e.g. images)
    dtype = torch.float32 if array.dtype.kind == "f" or key in _OBSERVATIONS else None
    return torch.as_tensor(array, dtype=dtype, device=device)


def fn_name(fn: Any) -> str:
    """``module.qualname`` of a function (how errors and ``rk.explain`` name the functions)."""
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


# ---- per-row values, through dicts ----
def _has_rows(value: Any) -> bool:
    if isinstance(value, Mapping):
        return any(_has_rows(v) for v in value.values())
    return isinstance(value, (np.ndarray, torch.Tensor)) and value.ndim > 0


def _n_rows(value: Any) -> int:
    if isinstance(value, Mapping):
        return next(_n_rows(v) for v in value.values() if _has_rows(v))
    return int(value.shape[0])


def _map(fn: Any, value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _map(fn, v) for k, v in value.items()}
    if isinstance(value, (np.ndarray, torch.Tensor)) and value.ndim > 0:
        return fn(value)
    return value  # numbers, None, 0-d values: per batch, not per row


def _index_for(value: Any, index: Any) -> Any:
    if isinstance(value, torch.Tensor) and isinstance(index, (np.ndarray, list)):
        return torch.as_tensor(index, device=value.device)
    if isinstance(value, np.ndarray) and isinstance(index, torch.Tensor):
        return index.cpu().numpy()
    return index


def _pad(value: Any, cuts: list[tuple[int, int, int]], length: int) -> Any:
    def pad(array: Any) -> Any:
        array = np.asarray(array)
        out = np.zeros((length, len(cuts), *array.shape[2:]), dtype=array.dtype)
        for i, (env, begin, end) in enumerate(cuts):
            out[: end - begin, i] = array[begin:end, env]
        return out

    return _map(pad, value)


def _describe(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {_describe(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (np.ndarray, torch.Tensor)):
        return f"{type(value).__name__}{tuple(value.shape)}"
    return repr(value)
