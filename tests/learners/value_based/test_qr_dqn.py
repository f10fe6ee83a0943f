"""Tests of rlkit/learners/qr_dqn.py: the quantile Huber loss, Q-values from quantiles, targets."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from learner_helpers import assert_checkpoint_round_trip, gradient_steps
from torch import nn

import rlkit as rk
from rlkit.approximators.neural import q_network
from rlkit.learners.value_based.qr_dqn import quantile_huber_loss


def test_quantile_huber_loss_by_hand():
    taus = torch.tensor([0.25, 0.75])
    current = torch.tensor([[0.0, 1.0]])
    target = torch.tensor([[0.5, 3.0]])
    # pairs (i, j): delta = target_j - current_i
    # i=0 (tau .25): d=0.5 -> .25*.125 ; d=3 -> .25*2.5     (both >= 0: weight tau)
    # i=1 (tau .75): d=-0.5 -> .25*.125 ; d=2 -> .75*1.5    (negative: weight 1 - tau)
    expected = ((0.25 * 0.125 + 0.25 * 2.5) + (0.25 * 0.125 + 0.75 * 1.5)) / 2
    assert float(quantile_huber_loss(current, target, taus)) == pytest.approx(expected)
    # the minimiser of the quantile loss is the quantile: the median of {0, 10, 20} for tau .5
    x = torch.zeros(1, 1, requires_grad=True)
    opt = torch.optim.SGD([x], lr=0.5)
    for _ in range(400):
        opt.zero_grad()
        quantile_huber_loss(x, torch.tensor([[0.0, 10.0, 20.0]]), torch.tensor([0.5])).backward()
        opt.step()
    assert x.item() == pytest.approx(10.0, abs=0.2)


def make(n_quantiles=5, seed=0, net=None):
    env = rk.GymEnv("CartPole-v1", seed=seed)
    net = net or q_network(
        env.state_space, env.action_space, (16,), n_quantiles=n_quantiles, seed=seed
    )
    approx = rk.NeuralNetworkApproximator(net, lambda p: torch.optim.Adam(p, lr=1e-3))
    learner = rk.QRDQNLearner(
        approx,
        n_quantiles=n_quantiles,
        sampler=rk.NStepBatchSampler(8, n=2, gamma=0.9, seed=seed),
        controller=rk.InsertSampleRatioController(20, 1, 1),
        gamma=0.9,
        target=rk.TargetNetwork(approx, sync_every=10),
    )
    trajectory = rk.CircularArraySARTTrajectory(200, env.state_space, env.action_space)
    agent = rk.Agent(rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.3, seed=seed)), trajectory)
    return agent, env, learner


def test_q_values_are_the_means_of_the_quantiles():
    agent, env, learner = make()
    env.reset()
    q = learner(env)
    out = learner.model(torch.as_tensor(env.state)).detach().view(5, 2)
    assert q.shape == (2,)
    assert np.allclose(q, out.mean(dim=0).numpy())


def test_targets_shift_every_target_quantile():
    # state (1,), 2 actions x 2 quantiles; target quantiles of s' = 3: [[3, 6], [-3, 30]]
    # (quantile-major: q0 = (a0, a1), q1 = (a0, a1)); means: a0 = 0, a1 = 18 -> a* = 1
    net = nn.Linear(1, 4, bias=False)
    with torch.no_grad():
        net.weight.copy_(torch.tensor([[1.0], [2.0], [-1.0], [10.0]]))
    approx = rk.NeuralNetworkApproximator(net, lambda p: torch.optim.SGD(p, lr=0.0))
    learner = rk.QRDQNLearner(
        approx,
        n_quantiles=2,
        sampler=rk.BatchSampler(1, seed=0),
        controller=rk.InsertSampleRatioController(0, 1, 1),
        gamma=0.5,
    )
    t = rk.CircularArraySARTTrajectory(2, state_shape=(1,))
    t.append(np.float32([1]), 1, 1.0, False, True, np.float32([3]))
    gradient_steps(learner, t)
    # target quantiles 1 + 0.5 * [6, 30] = [4, 16] (mean 10); current ones of (s=1, a=1): [2, 10]
    assert float(learner._last_target) == pytest.approx(10.0)
    assert float(learner._last_q) == pytest.approx(6.0)


def test_learns_at_post_act():
    agent, env, learner = make()
    rk.run(agent, env, rk.StopAfterNSteps(60))
    assert learner.gradient_steps == 40 and np.isfinite(learner.loss)
    assert learner.target.updates == 60


def test_output_size_must_be_actions_times_quantiles():
    agent, env, _ = make(n_quantiles=5, net=nn.Linear(4, 2))
    match = r"outputs 2 values .* needs 10 \(2 actions x 5 outputs"
    with pytest.raises(ValueError, match=match):
        rk.run(agent, env, rk.StopAfterNSteps(5))
    with pytest.raises(ValueError, match="QRDQNLearner: n_quantiles must be a positive integer"):
        make(n_quantiles=0, net=nn.Linear(4, 2))


def test_checkpoint_round_trip():
    assert_checkpoint_round_trip(make)
