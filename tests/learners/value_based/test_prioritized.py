"""Tests of rlkit/learners/prioritized_dqn.py: importance weights and priority updates."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.approximators.neural import q_network


def make(prioritized: bool = True, seed: int = 0):
    env = rk.GymEnv("CartPole-v1", seed=seed)
    approx = rk.NeuralNetworkApproximator(
        q_network(env.state_space, env.action_space, (16,), seed=seed),
        lambda p: torch.optim.Adam(p, lr=1e-3),
    )
    learner = rk.PrioritizedDQNLearner(
        approx,
        sampler=rk.BatchSampler(8, seed=seed),
        controller=rk.InsertSampleRatioController(20, 1, 1),
        gamma=0.99,
        target=rk.TargetNetwork(approx, sync_every=10),
        double=True,
    )
    cls = (
        rk.PrioritizedCircularArraySARTTrajectory if prioritized else rk.CircularArraySARTTrajectory
    )
    kwargs = dict(alpha=0.6, beta=0.4, beta_steps=100) if prioritized else {}
    trajectory = cls(200, env.state_space, env.action_space, **kwargs)
    agent = rk.Agent(rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.3, seed=seed)), trajectory)
    return agent, env, learner, trajectory


class Recording(rk.BatchSampler):
    def sample(self, trajectory):
        self.last = super().sample(trajectory)
        return self.last


def test_priorities_become_the_absolute_td_errors():
    agent, env, learner, trajectory = make()
    learner.sampler = sampler = Recording(8, seed=0)
    rk.run(agent, env, rk.StopAfterNSteps(21))  # one gradient step, at step 21
    assert learner.gradient_steps == 1
    indices = sampler.last["indices"]
    td = (learner._last_target - learner._last_q).abs().numpy().astype(np.float64)
    last = {}
    for i, e in zip(indices.tolist(), td.tolist(), strict=True):
        last[i] = e  # a slot drawn twice keeps the last error
    for i, e in last.items():
        assert trajectory.tree[i] == pytest.approx((e + trajectory.epsilon) ** 0.6, rel=1e-5)
    untouched = set(range(len(trajectory))) - set(last)
    for i in untouched:  # new transitions keep the maximal priority
        assert trajectory.tree[i] == pytest.approx(1.0)


def test_importance_weights_scale_the_loss():
    agent, env, learner, trajectory = make()
    rk.run(agent, env, rk.StopAfterNSteps(30))
    batch = rk.BatchSampler(8, seed=5).sample(trajectory)
    from rlkit.learners.value_based.common import to_tensors

    tensors = to_tensors(batch, learner.gamma, learner.device)
    weighted = learner.compute_loss(tensors)[0].detach()
    tensors["weights"] = torch.ones_like(tensors["weights"])
    unweighted, info = learner.compute_loss(tensors)
    q, y = info["q"], info["target"]
    per_sample = torch.nn.functional.smooth_l1_loss(q, y, reduction="none")
    assert float(unweighted) == pytest.approx(float(per_sample.mean()), rel=1e-6)
    expected = float((torch.as_tensor(batch["weights"]) * per_sample).mean())
    assert float(weighted) == pytest.approx(expected, rel=1e-6)


def test_learns_and_anneals_beta():
    agent, env, learner, trajectory = make()
    rk.run(agent, env, rk.StopAfterNSteps(120))
    assert learner.gradient_steps == 100 == trajectory.n_sampled
    assert trajectory.beta == pytest.approx(1.0)
    assert np.isfinite(learner.loss)


def test_needs_a_prioritized_trajectory():
    agent, env, learner, trajectory = make(prioritized=False)
    with pytest.raises(TypeError, match="PrioritizedDQNLearner: needs an rk.PrioritizedCircular"):
        rk.run(agent, env, rk.StopAfterNSteps(5))
    assert len(trajectory) == 0
