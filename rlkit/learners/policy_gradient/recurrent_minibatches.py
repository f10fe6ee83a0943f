"""sb3-contrib's minibatch layout for RecurrentPPO (``minibatch_layout="sb3"``, the default).

sb3-contrib's ``RecurrentRolloutBuffer.get`` (sb3_contrib/common/recurrent/buffers.py) flattens
the rollout env-major (sub-env 0's ``n_steps`` steps, then sub-env 1's, ...), and each epoch
draws a split point uniformly from the ``n_steps * n_envs`` transitions, rotates the order to
start there ("keep the sequence order but split the indices in two") and cuts it into
minibatches of ``batch_size`` consecutive transitions, taken in that order. Inside a minibatch,
a sequence begins at every episode start, at every sub-env's first step of the rollout and at
the minibatch's first transition; each starts from the hidden state the rollout stored at its
first step (zeroed there where an episode starts) and is padded to the minibatch's longest.

So the back-propagation through time is cut at the minibatch boundaries, which move each epoch:
even when one minibatch holds the whole rollout (the zoo's CartPoleNoVel settings: 256
transitions, ``batch_size`` 256) the split point cuts one sub-env's sequence in two, and the
LSTM's gradients differ from those of uncut sequences (benchmarks/recurrent_lockstep.py
measures it; benchmarks/results_recurrent.txt). :func:`rotated_minibatches` draws the
minibatches, :class:`StepSequences` builds each one's sequences, :class:`RotatedMultiStep`
takes one optimizer step per minibatch. rlkit's other layout (``minibatch_layout=
"sequences"``: sequences cut once, shuffled and packed whole) is in
rlkit/learners/policy_gradient/recurrent.py.

Example:
    >>> import numpy as np
    >>> [m.tolist() for m in rotated_minibatches(6, 4, np.random.default_rng(1))]
    [[2, 3, 4, 5], [0, 1]]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from ...optimizers import MultiStep
from ...trajectories.structured import map_leaves
from ..batch import Batch

__all__ = ["rotated_minibatches", "StepSequences", "RotatedMultiStep"]


def rotated_minibatches(n: int, size: int, generator: np.random.Generator) -> list[np.ndarray]:
    """One epoch's minibatches over ``n`` env-major transitions: the order ``0 .. n-1`` rotated
    to start at a split point drawn uniformly from ``generator``, cut into runs of ``size``
    (the last one shorter when ``size`` does not divide ``n``). A split is drawn even when one
    minibatch holds everything: it is where the sequences are cut.

    Example:
        >>> import numpy as np
        >>> [m.tolist() for m in rotated_minibatches(5, 8, np.random.default_rng(0))]
        [[4, 0, 1, 2, 3]]
    """
    split = int(generator.integers(n))
    order = np.concatenate([np.arange(split, n), np.arange(split)])
    return [order[i : i + size] for i in range(0, n, size)]


class StepSequences:
    """A rollout's ``(n_steps, n_envs, ...)`` arrays held env-major as tensors; :meth:`rows`
    gives the sequence batch of one minibatch of transition indices (sb3-contrib's
    ``_get_samples``, module docstring): ``(n_seq, length, ...)`` values of ``keys``, ``mask``
    (real steps), and the ``lstm_state`` and ``episode_start`` of each sequence's first step.
    ``sequence_length`` (None: no limit) also cuts a sequence every ``sequence_length`` steps
    from the rollout's start.

    Example:
        >>> import numpy as np
        >>> rollout = {"state": np.zeros((4, 1, 2)), "lstm_state": np.zeros((4, 1, 2, 1, 3)),
        ...            "episode_start": np.array([[True], [False], [True], [False]])}
        >>> seq = StepSequences(rollout, ["state"], "cpu").rows(np.array([1, 2, 3, 0]))
        >>> seq["mask"].tolist(), seq["episode_start"].tolist()
        ([[True, False], [True, True], [True, False]], [False, True, True])
    """

    owner = "RecurrentPPO: a minibatch's sequences"

    def __init__(
        self,
        batch: Mapping[str, Any],
        keys: Sequence[str],
        device: Any,
        sequence_length: int | None = None,
    ) -> None:
        starts = np.asarray(batch["episode_start"], dtype=bool)
        self.n_steps = starts.shape[0]
        self.sequence_length = sequence_length
        self.episode_start = _env_major(starts)
        self.steps = {
            key: map_leaves(lambda a, key=key: _tensor(_env_major(np.asarray(a)), key, device),
                            batch[key])  # fmt: skip
            for key in keys
        }
        lstm = _env_major(np.asarray(batch["lstm_state"]))
        self.lstm_state = torch.as_tensor(lstm, dtype=torch.float32, device=device)
        self.device = device

    def __len__(self) -> int:
        return len(self.episode_start)

    def starts(self, indices: np.ndarray) -> np.ndarray:
        """Where, along ``indices`` (one minibatch, consecutive in the rotated order), a
        sequence begins."""
        step = indices % self.n_steps
        out = self.episode_start[indices] | (step == 0)
        if self.sequence_length is not None:
            out |= step % self.sequence_length == 0
        out[0] = True
        return out

    def rows(self, indices: Any) -> Batch:
        """The sequence batch of the transitions ``indices`` (see the class docstring)."""
        indices = np.asarray(indices)
        starts = self.starts(indices)
        first = np.flatnonzero(starts)
        seq = np.cumsum(starts) - 1
        pos = np.arange(len(indices)) - first[seq]
        n_seq, length = len(first), int(pos.max()) + 1
        where = (torch.as_tensor(seq), torch.as_tensor(pos))
        rows = torch.as_tensor(indices, device=self.device)
        out = Batch()
        out.owner = self.owner
        for key, value in self.steps.items():
            out[key] = map_leaves(lambda v: _padded(v[rows], where, n_seq, length), value)
        mask = torch.zeros((n_seq, length), dtype=torch.bool, device=self.device)
        mask[where] = True
        out["mask"] = mask
        heads = torch.as_tensor(indices[first], device=self.device)
        out["lstm_state"] = self.lstm_state[heads]
        out["episode_start"] = torch.as_tensor(self.episode_start[indices[first]],
                                               device=self.device)  # fmt: skip
        return out


def _env_major(array: np.ndarray) -> np.ndarray:
    """``(n_steps, n_envs, ...)`` -> ``(n_envs * n_steps, ...)``, each sub-env's steps in
    order (sb3's ``swap_and_flatten``)."""
    array = np.swapaxes(array, 0, 1)
    return np.ascontiguousarray(array.reshape(-1, *array.shape[2:]))


def _tensor(array: np.ndarray, key: str, device: Any) -> torch.Tensor:
    dtype = torch.float32 if array.dtype.kind == "f" or key == "state" else None
    return torch.as_tensor(array, dtype=dtype, device=device)


def _padded(values: torch.Tensor, where: tuple, n_seq: int, length: int) -> torch.Tensor:
    out = values.new_zeros((n_seq, length, *values.shape[1:]))
    out[where] = values
    return out


class RotatedMultiStep(MultiStep):
    """``MultiStep`` whose epochs are sb3-contrib's rotated minibatches
    (:func:`rotated_minibatches`) of ``minibatch_size`` transitions; ``step`` takes
    ``batch_size`` (the rollout's transitions) and the closures index a
    :class:`StepSequences`.

    Example:
        >>> import rlkit as rk
        >>> RotatedMultiStep(rk.optimizers.GradientDescent("adam"), 2, 128)
        RotatedMultiStep(GradientDescent(optimizer='adam'), num_steps=2, minibatch_size=128, seed=0)
    """  # noqa: E501

    type_name = "rotated_multi_step"
    role = "wraps: repeats the inner module's step over sb3-contrib's rotated minibatches"

    def minibatches(
        self, batch_size: int, generator: np.random.Generator | None = None
    ) -> list[np.ndarray]:
        size = self.minibatch_size or batch_size
        return rotated_minibatches(batch_size, size, self.rng if generator is None else generator)
