"""Tests of rlkit/core/evaluation.py: rk.greedy and rk.evaluate."""

from __future__ import annotations

import numpy as np
import pytest

import rlkit as rk
from rlkit.hooks.evaluate import EvaluationResult


class FixedValues(rk.AbstractLearner):
    """Prefers action 1 (or 0) in every state; counts its calls."""

    def __init__(self, best: int = 1) -> None:
        self.best, self.calls = best, 0

    def __call__(self, env):
        self.calls += 1
        values = np.zeros(2)
        values[self.best] = 1.0
        return values


def agent(best: int = 1) -> rk.Agent:
    policy = rk.QBasedPolicy(FixedValues(best), rk.EpsilonGreedyExplorer(1.0, seed=0))
    return rk.Agent(policy, rk.VectorSARTTrajectory())


def test_greedy_unwraps_the_agent_and_swaps_the_explorer():
    a = agent()
    g = rk.greedy(a)
    assert isinstance(g, rk.QBasedPolicy) and isinstance(g.explorer, rk.GreedyExplorer)
    assert g.learner is a.policy.learner
    env = rk.GymEnv("CartPole-v1", seed=0)
    env.reset()
    assert all(g(env) == 1 for _ in range(20))  # epsilon 1 would act at random


def test_greedy_leaves_policies_without_a_greedy_form_alone():
    policy = rk.RandomPolicy(seed=0)
    assert rk.greedy(policy) is policy
    assert rk.greedy(rk.Agent(policy, rk.VectorSARTTrajectory())) is policy


def test_evaluate_runs_whole_greedy_episodes_without_learning():
    a = agent()
    result = rk.evaluate(a, rk.GymEnv("CartPole-v1"), 5, seed=0)
    assert isinstance(result, EvaluationResult)
    assert len(result.returns) == 5
    assert result.mean == pytest.approx(np.mean(result.returns))
    assert result.std == pytest.approx(np.std(result.returns))
    assert len(a.trajectory) == 0  # nothing recorded: the agent's trajectory is not used
    assert a.policy.explorer.step == 0  # the training explorer is untouched
    assert a.policy.learner.calls == sum(result.returns)  # one forward pass per step
    assert "over 5 episodes" in str(result)


def test_evaluate_is_reproducible_and_starts_fresh_episodes():
    env = rk.GymEnv("CartPole-v1")
    first = rk.evaluate(rk.RandomPolicy(seed=1), env, 4, seed=7)
    env.reset()
    env.act(0)  # leave an episode unfinished: evaluate must not continue it
    second = rk.evaluate(rk.RandomPolicy(seed=1), env, 4, seed=7)
    assert first == second
    other = rk.evaluate(rk.RandomPolicy(seed=1), rk.GymEnv("CartPole-v1"), 4, seed=8)
    assert other.returns != first.returns


def test_evaluate_checks_the_number_of_episodes():
    with pytest.raises(ValueError, match="evaluate: n_episodes must be a positive integer"):
        rk.evaluate(agent(), rk.GymEnv("CartPole-v1"), 0)
