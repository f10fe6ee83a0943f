"""The pure functions on hand-computed inputs."""

import numpy as np
import pytest
import torch

from rlkit.learners.policy_gradient.functions import (
    approx_kl,
    clipped_surrogate,
    entropy_bonus,
    gae,
    normalize,
    value_loss,
)

F, T = False, True


def col(*xs, dtype=float):
    return np.array(xs, dtype=dtype).reshape(-1, 1)


def test_gae_across_termination_truncation_and_rollout_end():
    # steps: 0 normal, 1 terminated, 2 normal, 3 truncated, 4 normal (rollout end)
    r = col(1, 2, 3, 4, 5)
    v = col(0.5, 0.5, 1.0, 1.0, 2.0)
    nv = col(0.5, 9.0, 1.0, 10.0, 3.0)  # nv[1] is ignored (terminal), nv[3] bootstraps
    term = col(F, T, F, F, F, dtype=bool)
    trunc = col(F, F, F, T, F, dtype=bool)
    g, lam = 0.5, 0.5
    d = [1 + g * 0.5 - 0.5, 2 - 0.5, 3 + g * 1.0 - 1.0, 4 + g * 10.0 - 1.0, 5 + g * 3 - 2]
    a4 = d[4]
    a3 = d[3]  # truncated: no carry from step 4
    a2 = d[2] + g * lam * a3
    a1 = d[1]
    a0 = d[0] + g * lam * a1
    adv, ret = gae(r, v, nv, term, trunc, gamma=g, lam=lam)
    np.testing.assert_allclose(adv.ravel(), [a0, a1, a2, a3, a4])
    np.testing.assert_allclose(ret, adv + v)


def test_gae_with_lambda_one_is_the_bootstrapped_discounted_return():
    r = col(1, 1, 1)
    v = np.zeros((3, 1))
    nv = col(0, 0, 4.0)  # the rollout ends after step 2: bootstrap V=4
    no = col(F, F, F, dtype=bool)
    _, ret = gae(r, v, nv, no, no, gamma=0.5, lam=1.0)
    np.testing.assert_allclose(ret.ravel(), [1 + 0.5 + 0.25 + 0.125 * 4, 1 + 0.5 + 0.25 * 4, 3.0])


def test_gae_works_per_env_column():
    r = np.array([[1.0, 0.0], [0.0, 1.0]])
    z = np.zeros((2, 2))
    term = np.array([[T, F], [F, T]])
    adv, _ = gae(r, z, z, term, np.zeros((2, 2), bool), gamma=1.0, lam=1.0)
    np.testing.assert_allclose(adv, [[1.0, 1.0], [0.0, 1.0]])


def test_clipped_surrogate_by_hand():
    old = torch.zeros(3)
    new = torch.log(torch.tensor([1.5, 0.5, 1.1]))
    adv = torch.tensor([1.0, -1.0, 2.0])
    # ratios 1.5 (clipped to 1.2 for A>0), 0.5 (A<0: min(-0.5, -0.8) = -0.8), 1.1 (inside)
    expected = -(1.2 - 0.8 + 2.2) / 3
    assert clipped_surrogate(new, old, adv, 0.2).item() == pytest.approx(expected)


def test_value_loss_with_and_without_clipping():
    v, old, ret = torch.tensor([2.0, 0.0]), torch.tensor([1.0, 0.0]), torch.tensor([3.0, 1.0])
    assert value_loss(v, ret).item() == pytest.approx((1 + 1) / 2)
    # clipped prediction: 1 + clamp(1, -0.5, 0.5) = 1.5 and 0
    assert value_loss(v, ret, old, 0.5).item() == pytest.approx((1.5**2 + 1) / 2)


def test_entropy_bonus_normalize_and_kl():
    assert entropy_bonus(torch.tensor([1.0, 3.0])).item() == -2.0
    x = normalize(torch.tensor([1.0, 3.0]))
    assert x.tolist() == pytest.approx([-0.7071, 0.7071], abs=1e-4)
    assert normalize(torch.tensor([5.0])).item() == 5.0
    assert approx_kl(torch.zeros(2), torch.zeros(2)).item() == 0.0
    lr = torch.log(torch.tensor(2.0))
    assert approx_kl(lr.reshape(1), torch.zeros(1)).item() == pytest.approx(1 - lr.item())


def test_entropy_term_without_a_coefficient_is_reported_but_not_differentiated():
    from rlkit.learners.policy_gradient.functions import entropy_term

    logits = torch.tensor([[0.3, -0.2]], requires_grad=True)
    from rlkit.policies.distributions import Categorical

    dist = Categorical(logits)
    ent_loss, term = entropy_term(dist, 0.0)
    assert term == 0.0 and not ent_loss.requires_grad
    assert ent_loss.item() == pytest.approx(-dist.entropy().item())
    ent_loss, term = entropy_term(dist, 0.5)
    assert term.requires_grad and term.item() == pytest.approx(0.5 * ent_loss.item())
