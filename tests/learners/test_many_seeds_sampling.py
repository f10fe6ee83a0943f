"""sample_blocks (rlkit/learners/many_seeds/sampling.py) draws exactly what torch.multinomial
draws block by block with each block's generator, and leaves the generators as it does."""

from __future__ import annotations

import pytest
import torch

from rlkit.learners.many_seeds.sampling import sample_blocks


def _multinomial(probs, generators, block):
    return torch.cat([
        torch.multinomial(probs[i * block:(i + 1) * block], 1, generator=g)
        for i, g in enumerate(generators)
    ]).reshape(-1)  # fmt: skip


@pytest.mark.parametrize("n_actions", [2, 3, 7])
def test_it_draws_what_multinomial_draws_block_by_block(n_actions):
    torch.manual_seed(0)
    seeds, block = [3, 4, 5, 6, 7], 8
    ours = [torch.Generator().manual_seed(s) for s in seeds]
    theirs = [torch.Generator().manual_seed(s) for s in seeds]
    for step in range(300):
        probs = torch.softmax(3 * torch.randn(len(seeds) * block, n_actions), -1)
        if step % 3 == 0:
            probs[::5, 0] = 0.0  # impossible actions are never drawn
        drawn = sample_blocks(probs, ours, block)
        assert torch.equal(drawn, _multinomial(probs, theirs, block)), step
        assert drawn.dtype == torch.int64 and drawn.shape == (len(seeds) * block,)
    for a, b in zip(ours, theirs, strict=True):
        assert torch.equal(a.get_state(), b.get_state())


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -0.5])
def test_invalid_probabilities_raise_torchs_error(bad):
    probs = torch.full((4, 2), 0.5)
    probs[3, 1] = bad
    generators = [torch.Generator().manual_seed(s) for s in (0, 1)]
    with pytest.raises(RuntimeError, match="probability tensor contains"):
        sample_blocks(probs, generators, 2)
    zero = torch.full((4, 2), 0.5)
    zero[1] = 0.0
    with pytest.raises(RuntimeError, match="invalid multinomial distribution"):
        sample_blocks(zero, generators, 2)
