import numpy as np
import pytest

import rlkit as rk


def _one_hot(s, a):
    return np.eye(3)[a]


def test_probabilities_and_grad_log_match_finite_differences():
    rng = np.random.default_rng(0)
    w = rng.normal(size=(3, 4))
    policy = rk.LinearSoftmaxPolicy(lambda s, a: w[a] * s, 4, 3, init=rng.normal(size=4))
    p = policy.prob(1.5)
    assert p.sum() == pytest.approx(1.0) and (p > 0).all()
    for a in range(3):
        grad = policy.grad_log(1.5, a)
        numeric = np.zeros(4)
        for i in range(4):
            theta = policy.theta.copy()
            policy.theta[i] += 1e-6
            up = np.log(policy.prob(1.5)[a])
            policy.theta[:] = theta
            policy.theta[i] -= 1e-6
            down = np.log(policy.prob(1.5)[a])
            policy.theta[:] = theta
            numeric[i] = (up - down) / 2e-6
        np.testing.assert_allclose(grad, numeric, atol=1e-6)


def test_act_draws_with_the_probabilities():
    policy = rk.LinearSoftmaxPolicy(_one_hot, 3, 3, init=np.log([0.2, 0.3, 0.5]), seed=0)
    env = rk.GymEnv("rlkit/ShortCorridor-v0", seed=0)
    env.reset()
    counts = np.bincount([policy(env) for _ in range(4000)], minlength=3)
    np.testing.assert_allclose(counts / 4000, [0.2, 0.3, 0.5], atol=0.03)


def test_state_dict_round_trip():
    policy = rk.LinearSoftmaxPolicy(_one_hot, 3, 3, init=[1.0, 2.0, 3.0], seed=0)
    other = rk.LinearSoftmaxPolicy(_one_hot, 3, 3, seed=1)
    other.load_state_dict(policy.state_dict())
    np.testing.assert_array_equal(other.theta, policy.theta)
    assert other.rng.random() == policy.rng.random()


def test_bad_input():
    with pytest.raises(ValueError, match="init must be a finite number or a vector of "
                       "n_features=3"):
        rk.LinearSoftmaxPolicy(_one_hot, 3, 3, init=[1.0, 2.0])
    with pytest.raises(TypeError, match="features must be callable"):
        rk.LinearSoftmaxPolicy(None, 3, 3)
    with pytest.raises(ValueError, match=r"returned vectors of shape \(3,\), expected \(4,\)"):
        rk.LinearSoftmaxPolicy(_one_hot, 4, 3).prob(0)
