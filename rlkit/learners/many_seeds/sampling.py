"""``sample_blocks``: one categorical action per row, block ``i`` of the rows drawn with
generator ``i``, exactly as ``torch.multinomial(block, 1, generator=generators[i])`` draws them,
in a few tensor operations for all blocks (many seeds in one process, docs/how-to/speed.md).

``torch.multinomial`` draws one sample per row on the CPU by the exponential (Gumbel-max) trick:
``q = empty_like(probs).exponential_(1, generator)``, then ``argmax(probs / q)``, after checking
that the probabilities are finite, non-negative and not all zero in a row. ``sample_blocks``
draws each block's ``q`` with its own generator (the same call on a tensor of the same shape:
the same numbers, the generator left in the same state), then divides and takes the argmax once
for every block, and checks the probabilities once. Where the check fails it calls
``torch.multinomial`` block by block, which raises torch's own error. A test compares it with
``torch.multinomial`` (tests/learners/test_many_seeds_sampling.py), so a torch release that
samples otherwise is noticed.

Example:
    >>> import torch
    >>> probs = torch.tensor([[0.2, 0.8], [0.5, 0.5], [1.0, 0.0], [0.3, 0.7]])
    >>> gens = [torch.Generator().manual_seed(s) for s in (0, 1)]
    >>> again = [torch.Generator().manual_seed(s) for s in (0, 1)]
    >>> drawn = sample_blocks(probs, gens, 2)
    >>> expected = torch.cat([torch.multinomial(probs[2 * i:2 * i + 2], 1, generator=g)
    ...                       for i, g in enumerate(again)]).reshape(-1)
    >>> torch.equal(drawn, expected)
    True
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

__all__ = ["sample_blocks"]


def sample_blocks(
    probs: torch.Tensor, generators: Sequence[torch.Generator], block: int
) -> torch.Tensor:
    """One action per row of ``probs`` (``(len(generators) * block, n)``, on the generators'
    device), rows ``i * block`` to ``(i + 1) * block - 1`` drawn with ``generators[i]`` as
    ``torch.multinomial`` draws them (module docstring); shape ``(rows,)``, int64."""
    if probs.device.type != "cpu" or not _valid(probs):
        return torch.cat([
            torch.multinomial(probs[i * block:(i + 1) * block], 1, generator=g)
            for i, g in enumerate(generators)
        ]).reshape(-1)  # fmt: skip
    shape = (block, probs.shape[-1])
    q = torch.cat([
        torch.empty(shape, dtype=probs.dtype).exponential_(1, generator=g) for g in generators
    ])  # fmt: skip
    return torch.argmax(probs / q, dim=-1)


def _valid(probs: torch.Tensor) -> bool:
    """``torch.multinomial``'s check: finite, non-negative, no row summing to zero."""
    return bool(torch.isfinite(probs).all() & (probs >= 0).all() & (probs.sum(1) != 0).all())
