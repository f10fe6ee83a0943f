"""DynaLearner: Dyna-Q, Dyna-Q+ and prioritized sweeping on the mazes of chapter 8."""

from __future__ import annotations

import numpy as np
import pytest

import rlkit as rk


def _agent(env, run, **dyna_options):
    q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.1)
    dyna = rk.DynaLearner(rk.TDLearner(q, gamma=0.95), seed=run, **dyna_options)
    policy = rk.QBasedPolicy(dyna, rk.EpsilonGreedyExplorer(0.1, seed=100 + run))
    return rk.Agent(policy, rk.VectorSARTTrajectory()), dyna


def _steps(run, episodes, **dyna_options):
    env = rk.GymEnv("rlkit/DynaMaze-v0", seed=run)
    agent, dyna = _agent(env, run, **dyna_options)
    hook = rk.run(agent, env, rk.StopAfterNEpisodes(episodes), rk.StepsPerEpisode())
    return np.array(hook.steps), dyna


def test_no_planning_is_q_learning():
    steps, dyna = _steps(0, 5, n_planning=0)
    env = rk.GymEnv("rlkit/DynaMaze-v0", seed=0)
    q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.1)
    policy = rk.QBasedPolicy(rk.TDLearner(q, gamma=0.95), rk.EpsilonGreedyExplorer(0.1, seed=100))
    hook = rk.run(rk.Agent(policy, rk.VectorSARTTrajectory()), env, rk.StopAfterNEpisodes(5),
                  rk.StepsPerEpisode())
    assert list(steps) == hook.steps
    np.testing.assert_array_equal(dyna.approximator.table, q.table)
    assert dyna.n_updates == steps.sum()


def test_a_planning_update_is_a_q_learning_update_from_the_model():
    q = rk.TabularQApproximator(4, 2, step_size=0.5)
    dyna = rk.DynaLearner(rk.TDLearner(q, gamma=0.9), n_planning=1, seed=0)
    q.table[3] = [2.0, 4.0]
    dyna._record(1, 0, 1.0, 3, False)
    dyna._plan_random()
    assert q.table[1, 0] == pytest.approx(0.5 * (1.0 + 0.9 * 4.0))
    dyna._record(2, 1, 5.0, 0, True)
    for _ in range(20):
        dyna._plan_random()
    assert q.table[2, 1] == pytest.approx(5.0, abs=1e-3)  # terminal: no bootstrap


def test_dyna_q_plus_models_untried_actions_and_adds_the_bonus():
    q = rk.TabularQApproximator(4, 3, step_size=1.0)
    dyna = rk.DynaLearner(rk.TDLearner(q, gamma=0.0), n_planning=1, kappa=0.5, seed=0)
    dyna._record(1, 0, 0.0, 2, False)
    assert dyna.model[(1, 1)] == (0.0, 1, False) and dyna.model[(1, 2)] == (0.0, 1, False)
    dyna.time = 16
    for _ in range(30):
        dyna._plan_random()
    # gamma = 0 and step size 1: Q = r + kappa sqrt(tau), tau = 16 (never tried since time 0)
    np.testing.assert_allclose(q.table[1], [0.5 * 4.0] * 3)


@pytest.mark.slow
def test_planning_makes_the_second_episode_much_shorter():
    """Figure 8.2: the first episode is the same; by the second, 50 planning steps per real
    step make the episode far shorter than no planning."""
    without = np.array([_steps(run, 2, n_planning=0)[0] for run in range(5)])
    with_planning = np.array([_steps(run, 2, n_planning=50)[0] for run in range(5)])
    np.testing.assert_array_equal(without[:, 0], with_planning[:, 0])
    assert with_planning[:, 1].mean() * 5 < without[:, 1].mean()


@pytest.mark.slow
def test_prioritized_sweeping_finds_the_optimal_path_with_fewer_updates():
    def updates_until_optimal(run, planning):
        env = rk.GymEnv("rlkit/DynaMaze-v0", seed=run)
        agent, dyna = _agent(env, run, n_planning=5, planning=planning)
        eval_env = rk.GymEnv("rlkit/DynaMaze-v0", seed=0, max_episode_steps=100)
        for _ in range(200):
            rk.run(agent, env, rk.StopAfterNEpisodes(1))
            hook = rk.run(rk.greedy(agent.policy), eval_env, rk.StopAfterNEpisodes(1),
                          rk.StepsPerEpisode())
            if hook.steps[-1] == 14:
                return dyna.n_updates
        return np.inf

    dyna_q = [updates_until_optimal(run, "random") for run in range(5)]
    sweeping = [updates_until_optimal(run, "prioritized") for run in range(5)]
    assert np.median(sweeping) < np.median(dyna_q), (sweeping, dyna_q)


def test_statistics_and_state_dict():
    steps, dyna = _steps(0, 2, n_planning=5)
    assert rk.statistics(dyna) == {"model_size": len(dyna.model), "n_updates": dyna.n_updates}
    env = rk.GymEnv("rlkit/DynaMaze-v0", seed=0)
    _, other = _agent(env, 0, n_planning=5)
    other.load_state_dict(dyna.state_dict())
    assert other.model == dyna.model and other.n_updates == dyna.n_updates
    np.testing.assert_array_equal(other.approximator.table, dyna.approximator.table)


def test_bad_input():
    q = rk.TabularQApproximator(4, 2)
    learner = rk.TDLearner(q)
    with pytest.raises(TypeError, match="DynaLearner: learner must be an rk.AbstractLearner"):
        rk.DynaLearner(q)
    with pytest.raises(TypeError, match="TabularQApproximator with a constant step size"):
        rk.DynaLearner(rk.TDLearner(rk.TabularQApproximator(4, 2, step_size=None)))
    with pytest.raises(ValueError, match="n_planning must be"):
        rk.DynaLearner(learner, n_planning=-1)
    with pytest.raises(ValueError, match="planning must be one of"):
        rk.DynaLearner(learner, planning="sweeping")
    with pytest.raises(ValueError, match="kappa"):
        rk.DynaLearner(learner, kappa=-1.0)
    with pytest.raises(ValueError, match="needs planning='random'"):
        rk.DynaLearner(learner, kappa=0.1, planning="prioritized")
