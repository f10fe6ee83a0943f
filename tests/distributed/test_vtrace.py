"""V-trace (IMPALA) against a hand-computed example, and its limits."""

from __future__ import annotations

import numpy as np
import pytest

from rlkit.learners.policy_gradient.vtrace import vtrace


def test_vtrace_matches_a_hand_computed_example():
    # one env, three steps, gamma 0.9, rho_bar = c_bar = 1; pi/mu = 2, 0.5, 1
    mu = np.log([[0.25], [0.8], [0.5]])
    pi = np.log([[0.5], [0.4], [0.5]])
    rewards = np.array([[1.0], [0.0], [2.0]])
    values = np.array([[0.5], [1.0], [1.5]])
    next_values = np.array([[1.0], [1.5], [3.0]])  # V(x_1), V(x_2), V(x_3): bootstrap at the end
    no = np.zeros((3, 1), bool)
    vs, adv = vtrace(mu, pi, rewards, values, next_values, no, no, gamma=0.9)
    # rho = c = (1, 0.5, 1)
    # delta_2 = 1 * (2 + 0.9 * 3 - 1.5) = 3.2                 vs_2 = 1.5 + 3.2 = 4.7
    # delta_1 = 0.5 * (0 + 0.9 * 1.5 - 1) = 0.175
    # vs_1 - V_1 = 0.175 + 0.9 * 0.5 * 3.2 = 1.615            vs_1 = 2.615
    # delta_0 = 1 * (1 + 0.9 * 1 - 0.5) = 1.4
    # vs_0 - V_0 = 1.4 + 0.9 * 1 * 1.615 = 2.8535             vs_0 = 3.3535
    np.testing.assert_allclose(vs.ravel(), [3.3535, 2.615, 4.7])
    # advantages: rho_s * (r_s + gamma * vs_{s+1} - V(x_s)); the last step bootstraps V(x_3)
    # 1 * (1 + 0.9 * 2.615 - 0.5) = 2.8535; 0.5 * (0 + 0.9 * 4.7 - 1) = 1.615; 3.2
    np.testing.assert_allclose(adv.ravel(), [2.8535, 1.615, 3.2])


def test_episode_ends_cut_the_traces():
    zeros = np.zeros((2, 1))
    rewards = np.array([[1.0], [1.0]])
    terminated = np.array([[True], [False]])
    truncated = np.zeros((2, 1), bool)
    next_values = np.array([[7.0], [2.0]])  # V(final) of a termination is not used
    vs, adv = vtrace(zeros, zeros, rewards, zeros, next_values, terminated, truncated, gamma=0.5)
    np.testing.assert_allclose(vs.ravel(), [1.0, 2.0])  # 1 + 0; 1 + 0.5 * 2
    np.testing.assert_allclose(adv.ravel(), [1.0, 2.0])
    # truncation bootstraps from the final state's value but does not carry the trace over
    vs, _ = vtrace(zeros, zeros, rewards, zeros, next_values, truncated, terminated, gamma=0.5)
    np.testing.assert_allclose(vs.ravel(), [4.5, 2.0])


def test_on_policy_vtrace_is_the_n_step_return():
    rng = np.random.default_rng(0)
    rewards, values = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    next_values = np.concatenate([values[1:], rng.normal(size=(1, 3))])
    logp = rng.normal(size=(5, 3))
    no = np.zeros((5, 3), bool)
    vs, adv = vtrace(logp, logp, rewards, values, next_values, no, no, gamma=0.9)
    returns = np.zeros(3) + next_values[-1]
    for t in range(4, -1, -1):
        returns = rewards[t] + 0.9 * returns
        np.testing.assert_allclose(vs[t], returns)
    np.testing.assert_allclose(adv, vs - values)


def test_truncation_levels_are_checked():
    z = np.zeros((1, 1))
    with pytest.raises(ValueError, match="vtrace: rho_bar"):
        vtrace(z, z, z, z, z, z.astype(bool), z.astype(bool), gamma=0.9, rho_bar=0.0)
