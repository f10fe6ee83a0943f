"""Dynamic programming on known models: values against closed forms and the book's figures."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk
from rlkit.learners.tabular.dynamic_programming import q_from_v, tabular_model

# A 3-state chain: 0 -(right)-> 1 -(right)-> 2 (terminal, +1); "left" stays with reward -0.1.
CHAIN = {
    0: {0: [(1.0, 0, -0.1, False)], 1: [(1.0, 1, 0.0, False)]},
    1: {0: [(1.0, 0, -0.1, False)], 1: [(1.0, 2, 1.0, True)]},
    2: {},
}


def test_value_iteration_and_policy_iteration_agree_on_the_chain():
    values, policy = rk.value_iteration(CHAIN, gamma=0.9)
    np.testing.assert_allclose(values, [0.9, 1.0, 0.0], atol=1e-9)
    assert list(policy[:2]) == [1, 1]
    values_pi, policy_pi = rk.policy_iteration(CHAIN, gamma=0.9)
    np.testing.assert_allclose(values_pi, values, atol=1e-9)
    assert list(policy_pi[:2]) == [1, 1]


def test_policy_evaluation_of_the_random_policy_matches_the_linear_system():
    gamma = 0.9
    values = rk.policy_evaluation(CHAIN, gamma=gamma)
    # v0 = .5(-.1 + g v0) + .5(g v1); v1 = .5(-.1 + g v0) + .5(1)
    a = np.array([[1 - 0.5 * gamma, -0.5 * gamma], [-0.5 * gamma, 1.0]])
    b = np.array([-0.05, -0.05 + 0.5])
    np.testing.assert_allclose(values[:2], np.linalg.solve(a, b), atol=1e-8)


def test_cliff_walking_optimal_return_from_the_start_is_minus_13():
    values, policy = rk.value_iteration(gym.make("CliffWalking-v1"), gamma=1.0)
    assert values[36] == pytest.approx(-13.0)


def test_frozen_lake_methods_agree():
    env = gym.make("FrozenLake-v1")
    values, policy = rk.value_iteration(env, gamma=0.9)
    values_pi, _ = rk.policy_iteration(env, gamma=0.9)
    np.testing.assert_allclose(values, values_pi, atol=1e-8)
    np.testing.assert_allclose(rk.policy_evaluation(env, policy, gamma=0.9), values, atol=1e-8)
    assert values[0] == pytest.approx(0.0689, abs=1e-4)


def test_q_from_v_marks_illegal_actions():
    q = q_from_v(CHAIN, np.zeros(3), 1.0)
    assert np.isneginf(q[2]).all()
    assert q[1, 1] == pytest.approx(1.0)


def test_grid_world_matches_figure_3_2_to_two_decimals():
    from rlkit.envs.toy.grid_world import FIGURE_3_2

    values = rk.policy_evaluation(gym.make("rlkit/GridWorld-v0"), gamma=0.9)
    np.testing.assert_allclose(values.reshape(5, 5), np.asarray(FIGURE_3_2), atol=0.051)


def test_gamblers_problem_value_iteration_gives_the_book_values():
    values, policy = rk.value_iteration(gym.make("rlkit/GamblersProblem-v0", p_heads=0.4))
    assert values[50] == pytest.approx(0.4, abs=1e-6)
    assert values[25] == pytest.approx(0.16, abs=1e-6)
    assert policy[50] == 50  # bet everything at 50 (Figure 4.3)


def test_bad_input_is_rejected_with_the_value():
    with pytest.raises(ValueError, match=r"gamma must be a number in \[0, 1\], got 1.5"):
        rk.value_iteration(CHAIN, gamma=1.5)
    with pytest.raises(ValueError, match="policy must have shape"):
        rk.policy_evaluation(CHAIN, np.zeros((2, 2)), gamma=0.9)
    with pytest.raises(TypeError, match="transition table"):
        tabular_model(42)
    with pytest.raises(RuntimeError, match="no convergence"):
        rk.policy_evaluation({0: {0: [(1.0, 0, 1.0, False)]}}, gamma=1.0, max_sweeps=50)
