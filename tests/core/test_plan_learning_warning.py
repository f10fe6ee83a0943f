"""Issue 10: a policy whose learner can learn, run without an Agent, gets a warning at plan
time (rlkit/core/plan.py, docs/concepts/dispatch.md)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import rlkit as rk


def q_policy(env: rk.GymEnv) -> rk.QBasedPolicy:
    q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.5)
    return rk.QBasedPolicy(rk.TDLearner(q, gamma=0.9), rk.EpsilonGreedyExplorer(0.1, seed=0))


def test_a_learning_policy_without_an_agent_warns_before_the_first_step():
    env = rk.GymEnv("CliffWalking-v1", seed=0)
    policy = q_policy(env)
    with pytest.warns(UserWarning, match=r"QLearningLearner has learning methods .* rk\.Agent"):
        rk.explain(policy, env)
    with pytest.warns(UserWarning, match="nothing will be learned") as record:
        rk.run(policy, env, rk.StopAfterNSteps(20))
    assert record[0].filename == __file__  # points at the user's rk.run call
    assert not policy.learner.approximator.table.any()  # indeed nothing was learned


def test_no_warning_with_an_agent_for_evaluation_or_without_a_learner():
    env = rk.GymEnv("CliffWalking-v1", seed=0)
    policy = q_policy(env)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agent = rk.Agent(policy, rk.VectorSARTTrajectory())
        rk.run(agent, env, rk.StopAfterNSteps(50))
        assert np.any(policy.learner.approximator.table)
        rk.evaluate(agent, rk.GymEnv("CliffWalking-v1", seed=1, max_episode_steps=30), 1)
        rk.run(rk.RandomPolicy(seed=0), env, rk.StopAfterNSteps(5))
        rk.run(rk.greedy(policy), env, rk.StopAfterNSteps(5))  # evaluation by hand


def test_a_built_policy_without_its_agent_warns_and_names_the_fix():
    env = rk.GymEnv("CartPole-v1", seed=0)
    policy = rk.PPO(env, seed=0, n_steps=8, batch_size=8)
    with pytest.warns(UserWarning, match=r"PPO has learning methods .* use PPO\.agent\(env\)"):
        rk.run(policy, env, rk.StopAfterNSteps(20))
    assert policy.updates == 0  # indeed nothing was learned
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rk.run(rk.PPO.agent(env, seed=0, n_steps=8, batch_size=8), env, rk.StopAfterNSteps(20))
        rk.run(rk.greedy(policy), env, rk.StopAfterNSteps(5))
        rk.evaluate(policy, env, 1)
