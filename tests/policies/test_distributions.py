"""Distributions against torch.distributions."""

import gymnasium as gym
import pytest
import torch
from torch import distributions as td

from rlkit.policies.distributions import (
    Bernoulli,
    Categorical,
    DiagGaussian,
    MultiCategorical,
    SquashedDiagGaussian,
    distribution_for,
)

G = torch.Generator().manual_seed(0)


def randn(*shape):
    return torch.randn(*shape, generator=G, dtype=torch.float64)


def test_categorical_matches_torch():
    a, b = randn(5, 4), randn(5, 4)
    mine, other = Categorical(a), Categorical(b)
    ref, ref_other = td.Categorical(logits=a), td.Categorical(logits=b)
    actions = torch.tensor([0, 1, 2, 3, 1])
    torch.testing.assert_close(mine.log_prob(actions), ref.log_prob(actions))
    torch.testing.assert_close(mine.entropy(), ref.entropy())
    torch.testing.assert_close(mine.kl(other), td.kl_divergence(ref, ref_other))
    assert torch.equal(mine.mode(), a.argmax(-1))


def test_categorical_mask_gives_illegal_actions_zero_probability():
    logits = randn(3, 4)
    mask = torch.tensor([[1, 0, 1, 0], [0, 0, 0, 1], [1, 1, 1, 1]], dtype=torch.bool)
    d = Categorical(logits, mask)
    samples = torch.stack([d.sample(torch.Generator().manual_seed(s)) for s in range(200)])
    assert mask.gather(1, samples.T).all()
    assert d.mode()[1] == 3
    ref = td.Categorical(logits=logits[0, [0, 2]])
    torch.testing.assert_close(d.entropy()[0], ref.entropy())
    assert d.entropy()[1] == 0
    with pytest.raises(ValueError, match="allows no action"):
        Categorical(logits, torch.zeros(3, 4, dtype=torch.bool))


def test_sampling_is_reproducible_with_a_generator():
    d = DiagGaussian(randn(3, 2), randn(3, 2))
    x = d.sample(torch.Generator().manual_seed(3))
    y = d.sample(torch.Generator().manual_seed(3))
    assert torch.equal(x, y)
    c = Categorical(randn(3, 5))
    assert torch.equal(c.sample(torch.Generator().manual_seed(1)),
                       c.sample(torch.Generator().manual_seed(1)))


def test_diag_gaussian_matches_torch():
    m, s, m2, s2 = randn(4, 3), randn(4, 3) * 0.3, randn(4, 3), randn(4, 3) * 0.3
    mine, other = DiagGaussian(m, s), DiagGaussian(m2, s2)
    ref = td.Independent(td.Normal(m, s.exp()), 1)
    ref2 = td.Independent(td.Normal(m2, s2.exp()), 1)
    x = randn(4, 3)
    torch.testing.assert_close(mine.log_prob(x), ref.log_prob(x))
    torch.testing.assert_close(mine.entropy(), ref.entropy())
    torch.testing.assert_close(mine.kl(other), td.kl_divergence(ref, ref2))
    assert torch.equal(mine.mode(), m)


def test_diag_gaussian_from_inputs_splits_mean_and_log_std():
    space = gym.spaces.Box(-1, 1, (2,))
    assert DiagGaussian.n_inputs(space) == 4
    d = DiagGaussian.from_inputs(torch.tensor([[1.0, 2.0, 0.0, -1.0]]), space)
    assert d.mean.tolist() == [[1.0, 2.0]] and d.log_std.tolist() == [[0.0, -1.0]]


def test_squashed_gaussian_matches_torch_transformed():
    m, s = randn(4, 2), randn(4, 2) * 0.3
    low, high = torch.tensor([-2.0, 0.0]), torch.tensor([2.0, 1.0])
    mine = SquashedDiagGaussian(m, s, low, high)
    low, high = low.double(), high.double()
    base = td.Normal(m, s.exp())
    u = base.sample()
    a = torch.tanh(u) * (high - low) / 2 + (high + low) / 2
    expected = (base.log_prob(u) - torch.log((high - low) / 2 * (1 - torch.tanh(u) ** 2))).sum(-1)
    torch.testing.assert_close(mine.log_prob(a), expected, rtol=1e-4, atol=1e-4)
    x = mine.sample(torch.Generator().manual_seed(0))
    assert ((x >= low) & (x <= high)).all()
    other = SquashedDiagGaussian(m + 1, s, low, high)
    torch.testing.assert_close(mine.kl(other), DiagGaussian(m, s).kl(DiagGaussian(m + 1, s)))
    with pytest.raises(NotImplementedError, match="no closed form"):
        mine.entropy()


def test_multi_categorical_matches_sum_of_torch_categoricals():
    nvec = [3, 2]
    logits, logits2 = randn(4, 5), randn(4, 5)
    mine, other = MultiCategorical(logits, nvec), MultiCategorical(logits2, nvec)
    refs = [td.Categorical(logits=c) for c in torch.split(logits, nvec, -1)]
    refs2 = [td.Categorical(logits=c) for c in torch.split(logits2, nvec, -1)]
    actions = torch.tensor([[0, 1], [2, 0], [1, 1], [2, 1]])
    expected = sum(r.log_prob(actions[:, i]) for i, r in enumerate(refs))
    torch.testing.assert_close(mine.log_prob(actions), expected)
    torch.testing.assert_close(mine.entropy(), sum(r.entropy() for r in refs))
    kl = sum(td.kl_divergence(a, b) for a, b in zip(refs, refs2, strict=True))
    torch.testing.assert_close(mine.kl(other), kl)
    assert mine.sample(torch.Generator().manual_seed(0)).shape == (4, 2)


def test_bernoulli_matches_torch():
    a, b = randn(4, 3), randn(4, 3)
    mine, other = Bernoulli(a), Bernoulli(b)
    ref = td.Independent(td.Bernoulli(logits=a), 1)
    ref2 = td.Independent(td.Bernoulli(logits=b), 1)
    x = torch.tensor([[0, 1, 1], [1, 1, 1], [0, 0, 0], [1, 0, 1]])
    torch.testing.assert_close(mine.log_prob(x), ref.log_prob(x.double()))
    torch.testing.assert_close(mine.entropy(), ref.entropy())
    torch.testing.assert_close(mine.kl(other), td.kl_divergence(ref, ref2))
    assert torch.equal(mine.mode(), (a > 0).long())


def test_distribution_for_spaces():
    assert distribution_for(gym.spaces.Discrete(3)) is Categorical
    assert distribution_for(gym.spaces.Box(-1, 1, (2,))) is DiagGaussian
    assert distribution_for(gym.spaces.MultiDiscrete([2, 3])) is MultiCategorical
    assert distribution_for(gym.spaces.MultiBinary(3)) is Bernoulli
    with pytest.raises(TypeError, match="Dict"):
        distribution_for(gym.spaces.Dict({"a": gym.spaces.Discrete(2)}))
    with pytest.raises(TypeError, match="start at 0"):
        distribution_for(gym.spaces.Discrete(3, start=1))


@pytest.mark.parametrize(
    "space",
    [
        gym.spaces.MultiDiscrete([3, 2], start=[1, 0]),  # acted 0-based: outside the space
        gym.spaces.MultiDiscrete([[3, 2], [2, 2]]),  # acted flat: the wrong shape
        gym.spaces.MultiBinary([2, 2]),
    ],
)
def test_spaces_whose_actions_would_be_wrong_are_refused(space):
    with pytest.raises(TypeError, match="distribution_for: Multi.* must be one-dimensional"):
        distribution_for(space)
