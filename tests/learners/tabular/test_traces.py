"""TDLambdaLearner: TD(lambda) (accumulating, replacing, dutch), true online TD(lambda), the offline
lambda-return algorithm and SARSA(lambda), against results known exactly."""

from __future__ import annotations

import numpy as np
import pytest

import rlkit as rk

WALK = {"n_states": 19, "rewards": (-1.0, 1.0)}


def _walk_values(make_learner, *, episodes=20, seed=0, step_size=0.2, linear=False):
    env = rk.GymEnv("rlkit/RandomWalk1D-v0", seed=seed, **WALK)
    if linear:
        v = rk.LinearVApproximator(_one_hot21, 21, step_size=step_size)
    else:
        v = rk.TabularVApproximator(env.state_space, step_size=step_size)
    agent = rk.Agent(
        rk.VBasedPolicy(make_learner(v), rk.RandomPolicy(seed=seed + 1)), rk.VectorSARTTrajectory()
    )
    rk.run(agent, env, rk.StopAfterNEpisodes(episodes))
    return (v.weights if linear else v.table).copy()


def _one_hot21(state):
    x = np.zeros(21)
    x[state] = 1.0
    return x


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"trace": "replacing"}, {"trace": "dutch"}, {"true_online": True}],
    ids=["accumulating", "replacing", "dutch", "true_online"],
)
def test_lambda_zero_is_td0(kwargs):
    td0 = _walk_values(lambda v: rk.TDLearner(v, method="td0"))
    td_lambda = _walk_values(lambda v: rk.TDLambdaLearner(v, lambda_=0.0, **kwargs))
    np.testing.assert_allclose(td_lambda, td0, rtol=0, atol=1e-12)
    assert np.abs(td0).max() > 0.1  # it learned something


def test_lambda_one_accumulating_with_small_steps_is_monte_carlo():
    """lambda = 1 and a small step size: TD(1) approaches the every-visit MC update."""
    mc = _walk_values(lambda v: rk.TDLearner(v, method="td0", n=10_000), step_size=1e-3)
    td1 = _walk_values(lambda v: rk.TDLambdaLearner(v, lambda_=1.0), step_size=1e-3)
    # online updates within an episode differ by O(alpha * episode length) relative
    np.testing.assert_allclose(td1, mc, rtol=0.03, atol=1e-5)
    assert np.abs(mc).max() > 0.05


def test_linear_one_hot_equals_tabular():
    tab = _walk_values(lambda v: rk.TDLambdaLearner(v, lambda_=0.7, true_online=True))
    lin = _walk_values(lambda v: rk.TDLambdaLearner(v, lambda_=0.7, true_online=True), linear=True)
    np.testing.assert_allclose(lin, tab, atol=1e-12)


@pytest.mark.parametrize("lam", [0.5, 0.9])
def test_true_online_equals_offline_lambda_return_for_small_step_size(lam):
    """One episode from the same start: with a small alpha, true online TD(lambda) (= the
    online lambda-return algorithm) and offline TD(lambda) change the weights like the offline
    lambda-return algorithm, up to O(alpha^2)."""
    alpha = 1e-4
    init = np.linspace(-0.5, 0.5, 21)
    init[[0, 20]] = 0.0

    def change(**kwargs):
        env = rk.GymEnv("rlkit/RandomWalk1D-v0", seed=3, **WALK)
        v = rk.TabularVApproximator(env.state_space, step_size=alpha)
        v.table[:] = init
        learner = rk.TDLambdaLearner(v, lambda_=lam, gamma=0.95, **kwargs)
        agent = rk.Agent(rk.VBasedPolicy(learner, rk.RandomPolicy(seed=4)),
                         rk.VectorSARTTrajectory())
        rk.run(agent, env, rk.StopAfterNEpisodes(1))
        return (v.table - init) / alpha

    offline = change(method="lambda_return")
    assert np.abs(offline).max() > 0.5
    for kwargs in ({"true_online": True}, {}):
        np.testing.assert_allclose(change(**kwargs), offline, rtol=0, atol=0.02)


def test_lambda_return_at_lambda_one_is_monte_carlo_at_the_end_of_the_episode():
    """lambda = 1: the lambda-return is the return, so the algorithm is constant-alpha MC
    (TDLearner with n larger than any episode updates the same way at the episode's end)."""
    mc = _walk_values(lambda v: rk.TDLearner(v, method="td0", n=100_000), step_size=0.1)
    lr = _walk_values(lambda v: rk.TDLambdaLearner(v, method="lambda_return", lambda_=1.0),
                      step_size=0.1)
    np.testing.assert_allclose(lr, mc, rtol=0, atol=1e-12)
    assert np.abs(lr).max() > 0.1


def test_lambda_return_at_lambda_zero_uses_the_values_of_the_episode_start():
    """lambda = 0: the target of every step is R + gamma v(S'), with v from before the
    episode; from zero values only the last step (reward +-1) changes anything."""
    env = rk.GymEnv("rlkit/RandomWalk1D-v0", seed=5, **WALK)
    v = rk.TabularVApproximator(env.state_space, step_size=0.5)
    trajectory = rk.VectorSARTTrajectory()
    learner = rk.TDLambdaLearner(v, method="lambda_return", lambda_=0.0)
    rk.run(rk.Agent(rk.VBasedPolicy(learner, rk.RandomPolicy(seed=6)), trajectory), env,
           rk.StopAfterNEpisodes(1))
    expected = np.zeros(21)
    expected[trajectory.state[-1]] = 0.5 * trajectory.reward[-1]
    np.testing.assert_allclose(v.table, expected, atol=1e-12)


def test_trace_is_reset_between_episodes():
    env = rk.GymEnv("rlkit/RandomWalk1D-v0", seed=0)
    v = rk.TabularVApproximator(env.state_space, step_size=0.1)
    learner = rk.TDLambdaLearner(v, lambda_=0.9)
    agent = rk.Agent(rk.VBasedPolicy(learner, rk.RandomPolicy(seed=0)), rk.VectorSARTTrajectory())
    rk.run(agent, env, rk.StopAfterNEpisodes(1))
    assert learner.z.any()
    rk.run(agent, env, rk.StopAfterNSteps(1))
    assert np.count_nonzero(learner.z) == 1  # only the first state of the new episode


@pytest.mark.parametrize("true_online", [False, True])
def test_sarsa_lambda_learns_the_windy_gridworld(true_online):
    env = rk.GymEnv("rlkit/WindyGridWorld-v0", seed=0)
    q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.5)
    learner = rk.TDLambdaLearner(q, method="sarsa", lambda_=0.9, true_online=true_online)
    policy = rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.1, seed=0))
    hook = rk.run(rk.Agent(policy, rk.VectorSARTTrajectory()), env, rk.StopAfterNEpisodes(60),
                  rk.StepsPerEpisode())
    steps = hook.steps
    # the optimal path takes 15 steps; epsilon-greedy with epsilon = 0.1 averages about 17-25
    assert np.mean(steps[-10:]) < 30, steps[-10:]
    assert np.mean(steps[:5]) > 100


def test_sarsa_lambda_zero_is_sarsa():
    def steps(make):
        env = rk.GymEnv("rlkit/WindyGridWorld-v0", seed=0)
        q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.5)
        policy = rk.QBasedPolicy(make(q), rk.EpsilonGreedyExplorer(0.1, seed=0))
        rk.run(rk.Agent(policy, rk.VectorSARTTrajectory()), env, rk.StopAfterNEpisodes(20))
        return q.table.copy()

    sarsa = steps(lambda q: rk.TDLearner(q, method="sarsa"))
    sarsa0 = steps(lambda q: rk.TDLambdaLearner(q, method="sarsa", lambda_=0.0))
    np.testing.assert_allclose(sarsa0, sarsa, atol=1e-12)


def test_state_dict_round_trip():
    v = rk.TabularVApproximator(7, step_size=0.1)
    learner = rk.TDLambdaLearner(v, lambda_=0.5)
    learner.z[2] = 0.3
    v.table[3] = 1.0
    state = learner.state_dict()
    other = rk.TDLambdaLearner(rk.TabularVApproximator(7, step_size=0.1), lambda_=0.5)
    other.load_state_dict(state)
    assert other.z[2] == 0.3 and other.approximator.table[3] == 1.0
    with pytest.raises(ValueError, match="incompatible checkpoint"):
        rk.TDLambdaLearner(v, method="lambda_return").load_state_dict(state)


# ---- bad input ----
@pytest.mark.parametrize("lam", [-0.1, 1.5, float("nan")])
def test_lambda_outside_unit_interval(lam):
    with pytest.raises(ValueError, match=r"TDLambdaLearner: lambda_ must be a number in \[0, 1\]"):
        rk.TDLambdaLearner(rk.TabularVApproximator(5), lambda_=lam)


def test_bad_arguments():
    v = rk.TabularVApproximator(5)
    with pytest.raises(ValueError, match="trace must be one of"):
        rk.TDLambdaLearner(v, trace="eligible")
    with pytest.raises(ValueError, match="true online TD\\(lambda\\) uses the dutch trace"):
        rk.TDLambdaLearner(v, trace="replacing", true_online=True)
    with pytest.raises(ValueError, match="unknown method 'q'"):
        rk.TDLambdaLearner(v, method="q")
    with pytest.raises(TypeError, match="needs a TabularQApproximator or LinearQApproximator"):
        rk.TDLambdaLearner(v, method="sarsa")
    with pytest.raises(TypeError, match="needs a TabularVApproximator or LinearVApproximator"):
        rk.TDLambdaLearner(rk.TabularQApproximator(5, 2))
    with pytest.raises(ValueError, match="constant step size"):
        rk.TDLambdaLearner(rk.TabularVApproximator(5, step_size=None))
    with pytest.raises(ValueError, match="gamma"):
        rk.TDLambdaLearner(v, gamma=1.5)
