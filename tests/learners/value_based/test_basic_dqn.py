"""Tests of rlkit/learners/basic_dqn.py: deep Q-learning without a target network."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from learner_helpers import assert_checkpoint_round_trip, gradient_steps
from torch import nn

import rlkit as rk
from rlkit.approximators.neural import q_network


def frozen_linear(weights: list[float]) -> rk.NeuralNetworkApproximator:
    net = nn.Linear(1, len(weights), bias=False)
    with torch.no_grad():
        net.weight.copy_(torch.tensor(weights).view(-1, 1))
    return rk.NeuralNetworkApproximator(net, lambda p: torch.optim.SGD(p, lr=0.0))


class RecordingSampler(rk.BatchSampler):
    def sample(self, trajectory):
        self.last = super().sample(trajectory)
        return self.last


def test_targets_bootstrap_from_the_network_itself():
    # Q(s) = [s, 2s]; transitions (s, r, terminal, truncated, s')
    t = rk.CircularArraySARTTrajectory(4, state_shape=(1,))
    t.append(np.float32([1]), 0, 1.0, False, False, np.float32([2]))
    t.append(np.float32([2]), 1, 1.0, True, False, np.float32([3]))
    t.append(np.float32([5]), 1, 0.0, False, True, np.float32([6]))
    sampler = RecordingSampler(3, seed=0)
    learner = rk.BasicDQNLearner(
        frozen_linear([1.0, 2.0]),
        sampler=sampler,
        controller=rk.InsertSampleRatioController(0, 1, 1),
        gamma=0.5,
    )
    expected = {0: 1 + 0.5 * 4, 1: 1.0, 2: 0 + 0.5 * 12}
    found = {}
    for _ in range(10):
        gradient_steps(learner, t)
        found.update(
            zip(sampler.last["indices"].tolist(), learner._last_target.tolist(), strict=True)
        )
    assert found == pytest.approx(expected)
    assert learner.state_dict()["target"] is None


def make_agent(seed=0, warmup=20, out=None):
    env = rk.GymEnv("CartPole-v1", seed=seed)
    net = (
        q_network(env.state_space, env.action_space, (16,), seed=seed)
        if out is None
        else nn.Linear(4, out)
    )
    learner = rk.BasicDQNLearner(
        rk.NeuralNetworkApproximator(net, lambda p: torch.optim.Adam(p, lr=1e-3)),
        sampler=rk.BatchSampler(8, seed=seed),
        controller=rk.InsertSampleRatioController(warmup, 1, 1),
        gamma=0.99,
        loss="mse",
    )
    trajectory = rk.CircularArraySARTTrajectory(200, env.state_space, env.action_space)
    agent = rk.Agent(rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.3, seed=seed)), trajectory)
    return agent, env, learner


def test_learns_at_post_act_and_reports_statistics():
    agent, env, learner = make_agent()
    rk.run(agent, env, rk.StopAfterNSteps(50))
    assert learner.gradient_steps == 30
    stats = rk.statistics(learner)
    assert set(stats) >= {"loss", "q_mean", "td_error", "lr"}
    assert all(np.isfinite(v) for v in stats.values())


def test_errors():
    with pytest.raises(ValueError, match="BasicDQNLearner: loss must be one of"):
        make_agent()[2].__class__(
            make_agent()[2].approximator,
            sampler=rk.BatchSampler(4),
            controller=rk.InsertSampleRatioController(),
            loss="hinge",
        )
    agent, env, _ = make_agent(out=5)
    with pytest.raises(ValueError, match="BasicDQNLearner: the approximator outputs 5 values"):
        rk.run(agent, env, rk.StopAfterNSteps(5))
    agent, env, _ = make_agent(warmup=3)
    with pytest.raises(ValueError, match="fewer than batch_size 8"):
        rk.run(agent, env, rk.StopAfterNSteps(10))


def test_checkpoint_round_trip():
    assert_checkpoint_round_trip(make_agent)


@pytest.mark.parametrize("residual, expected", [(False, 1.8), (True, 1.9)])
def test_residual_gradient_flows_through_the_bootstrap_term(residual, expected):
    # Q(s) = [2s, s], one transition s = 1, a = 0, r = 0, s' = 1, gamma 0.5, MSE, SGD lr 0.1:
    # q = 2, y = 0.5 * max(2, 1) = 1. Semi-gradient: dL/dw0 = 2 (q - y) s = 2;
    # residual: 2 (q - y) (s - gamma s') = 1.
    net = nn.Linear(1, 2, bias=False)
    with torch.no_grad():
        net.weight.copy_(torch.tensor([[2.0], [1.0]]))
    t = rk.CircularArraySARTTrajectory(2, state_shape=(1,))
    t.append(np.float32([1]), 0, 0.0, False, False, np.float32([1]))
    learner = rk.BasicDQNLearner(
        rk.NeuralNetworkApproximator(net, lambda p: torch.optim.SGD(p, lr=0.1)),
        sampler=rk.BatchSampler(1, seed=0),
        controller=rk.InsertSampleRatioController(0, 1, 1),
        gamma=0.5,
        loss="mse",
        residual=residual,
    )
    gradient_steps(learner, t)
    assert net.weight[0, 0].item() == pytest.approx(expected)
    assert net.weight[1, 0].item() == pytest.approx(1.0)
