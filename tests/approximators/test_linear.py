"""LinearVApproximator / LinearQApproximator / StateAggregation, and semi-gradient TD through
rk.TDLearner."""

from __future__ import annotations

import numpy as np
import pytest

import rlkit as rk


def test_semi_gradient_step():
    v = rk.LinearVApproximator(lambda s: np.array([1.0, s]), 2, step_size=0.1, init=[0.5, 0.0])
    error = v.update(2.0, 1.5)  # v = 0.5, error 1.0, w += 0.1 * 1.0 * [1, 2]
    assert error == pytest.approx(1.0)
    np.testing.assert_allclose(v.weights, [0.6, 0.2])
    assert v(3.0) == pytest.approx(1.2)


def test_q_values_and_update():
    def x(s, a):
        out = np.zeros(4)
        out[2 * a : 2 * a + 2] = (1.0, s)
        return out

    q = rk.LinearQApproximator(x, 4, 2, step_size=0.5)
    q.update(1.0, 1, 2.0)
    np.testing.assert_allclose(q.q(1.0), [0.0, 2.0])
    np.testing.assert_allclose(q(0.0), [0.0, 1.0])


def test_state_aggregation_groups():
    agg = rk.StateAggregation(1000, 10, first=1)
    assert [agg.group(s) for s in (1, 100, 101, 1000, 0, 1001)] == [0, 0, 1, 9, None, None]
    v = rk.LinearVApproximator(agg, agg.n_features, step_size=1.0)
    v.update(5, 3.0)
    assert v(50) == 3.0 and v(150) == 0.0 and v(0) == 0.0  # one value per group


def test_one_hot_linear_td0_equals_tabular_td0():
    def values(make_v):
        env = rk.GymEnv("rlkit/RandomWalk1D-v0", seed=0, n_states=19, rewards=(-1.0, 1.0))
        v = make_v(env)
        agent = rk.Agent(
            rk.VBasedPolicy(rk.TDLearner(v, method="td0", n=4), rk.RandomPolicy(seed=1)),
            rk.VectorSARTTrajectory(),
        )
        rk.run(agent, env, rk.StopAfterNEpisodes(10))
        return np.array([v(s) for s in range(21)])

    tab = values(lambda env: rk.TabularVApproximator(env.state_space, step_size=0.2))
    lin = values(lambda env: rk.LinearVApproximator(lambda s: np.eye(21)[s], 21, step_size=0.2))
    np.testing.assert_allclose(lin, tab, atol=1e-12)
    assert np.abs(tab).max() > 0.1


@pytest.mark.parametrize("method", ["sarsa", "qlearning", "expected_sarsa"])
def test_one_hot_linear_control_equals_tabular(method):
    def table(make_q):
        env = rk.GymEnv("rlkit/WindyGridWorld-v0", seed=0)
        q = make_q(env)
        learner = rk.TDLearner(q, method=method)
        policy = rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.1, seed=0))
        rk.run(rk.Agent(policy, rk.VectorSARTTrajectory()), env, rk.StopAfterNSteps(500))
        return np.array([q.q(s) for s in range(70)])

    eye = np.eye(280)
    tab = table(lambda env: rk.TabularQApproximator(70, 4, step_size=0.5))
    lin = table(lambda env: rk.LinearQApproximator(lambda s, a: eye[4 * s + a], 280, 4,
                                                   step_size=0.5))
    np.testing.assert_allclose(lin, tab, atol=1e-12)


def test_state_dict_round_trip():
    v = rk.LinearVApproximator(lambda s: np.ones(3), 3, init=[1.0, 2.0, 3.0])
    other = rk.LinearVApproximator(lambda s: np.ones(3), 3)
    other.load_state_dict(v.state_dict())
    np.testing.assert_array_equal(other.weights, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="checkpoint weights have shape"):
        rk.LinearVApproximator(lambda s: np.ones(2), 2).load_state_dict(v.state_dict())


# ---- bad input ----
def test_feature_length_does_not_match_the_weights():
    v = rk.LinearVApproximator(lambda s: np.ones(5), 4)
    with pytest.raises(ValueError, match=r"LinearVApproximator: features\(state\) returned a "
                       r"feature vector of shape \(5,\), expected \(4,\)"):
        v(0)
    q = rk.LinearQApproximator(lambda s, a: np.ones(3), 4, 2)
    with pytest.raises(ValueError, match=r"LinearQApproximator: features\(state, action\) "
                       r"returned a feature vector of shape \(3,\)"):
        q.update(0, 1, 1.0)


def test_bad_arguments():
    with pytest.raises(TypeError, match="features must be callable"):
        rk.LinearVApproximator(np.ones(3), 3)
    with pytest.raises(ValueError, match="n_features must be a positive integer"):
        rk.LinearVApproximator(lambda s: s, 0)
    with pytest.raises(ValueError, match="step_size must be"):
        rk.LinearVApproximator(lambda s: s, 3, step_size=0.0)
    with pytest.raises(ValueError, match="init must be a number or a vector of n_features=3"):
        rk.LinearVApproximator(lambda s: s, 3, init=[1.0, 2.0])
    with pytest.raises(ValueError, match="n_actions must be a positive integer"):
        rk.LinearQApproximator(lambda s, a: s, 3, 0)
    with pytest.raises(ValueError, match="n_groups must be at most n_states=10"):
        rk.StateAggregation(10, 11)
    with pytest.raises(TypeError, match="needs a TabularVApproximator or LinearVApproximator"):
        rk.TDLearner(rk.LinearQApproximator(lambda s, a: s, 3, 2), method="td0")
    with pytest.raises(TypeError, match="'double_qlearning' needs a TabularQApproximator"):
        rk.TDLearner(rk.LinearQApproximator(lambda s, a: s, 3, 2), method="double_qlearning")
