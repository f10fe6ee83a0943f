"""Tests of rlkit/learners/value_based/rainbow.py and noisy layers: the noise is reproducible
from the seed and off in greedy and deterministic modes, the priorities are the per-sample
cross-entropy, the replay must be prioritized, checkpoints hold the noise and its generator."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch
from learner_helpers import gradient_steps, post_act

import rlkit as rk
from rlkit.approximators.distributional import (
    NoisyLinear,
    categorical_network,
    mean_network,
    noise_off,
    noisy_layers,
)


def test_noisy_linear_initialisation_and_factorised_noise():
    layer = NoisyLinear(4, 3, sigma0=0.5, generator=torch.Generator().manual_seed(0))
    bound = 1 / math.sqrt(4)
    assert (layer.weight_mu.abs() <= bound).all() and (layer.bias_mu.abs() <= bound).all()
    assert torch.equal(layer.weight_sigma, torch.full((3, 4), 0.5 * bound))
    assert torch.equal(layer.eps_in, torch.zeros(4))  # no noise until drawn
    g = torch.Generator().manual_seed(5)
    layer.reset_noise(g)
    x = torch.randn(7, generator=torch.Generator().manual_seed(5))
    f = x.sign() * x.abs().sqrt()
    assert torch.equal(layer.eps_in, f[:4]) and torch.equal(layer.eps_out, f[4:])
    inputs = torch.randn(2, 4)
    weight = layer.weight_mu + layer.weight_sigma * torch.outer(f[4:], f[:4])
    bias = layer.bias_mu + layer.bias_sigma * f[4:]
    assert torch.allclose(layer(inputs), inputs @ weight.T + bias, atol=1e-6)
    layer.eval()
    assert torch.equal(layer(inputs), inputs @ layer.weight_mu.T + layer.bias_mu)


def make(seed=0, noise_seed=None, trajectory_cls=rk.PrioritizedCircularArraySARTTrajectory):
    env = rk.GymEnv("CartPole-v1", seed=seed)
    net = categorical_network(env.state_space, env.action_space, (16,), n_atoms=11,
                              dueling=True, noisy=True, seed=seed)  # fmt: skip
    approx = rk.NeuralNetworkApproximator(net, lambda p: torch.optim.Adam(p, lr=1e-3))
    learner = rk.RainbowLearner(
        approx,
        n_atoms=11,
        v_min=0.0,
        v_max=20.0,
        sampler=rk.NStepBatchSampler(8, n=3, gamma=0.9, seed=seed),
        controller=rk.InsertSampleRatioController(20, 1, 1),
        gamma=0.9,
        target=rk.TargetNetwork(approx, sync_every=10),
        seed=seed if noise_seed is None else noise_seed,
    )
    trajectory = trajectory_cls(200, env.state_space, env.action_space)
    agent = rk.Agent(rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.0, seed=seed)), trajectory)
    return agent, env, learner


def noise(learner):
    return [t.clone() for layer in noisy_layers(learner.model) for t in (layer.eps_in,
                                                                         layer.eps_out)]


def test_noise_is_reproducible_from_the_seed_and_differs_between_seeds():
    runs = {}
    for key, noise_seed in (("a", 0), ("b", 0), ("c", 1)):
        agent, env, learner = make(noise_seed=noise_seed)
        rk.run(agent, env, rk.StopAfterNSteps(60))
        runs[key] = (noise(learner), [p.detach().clone() for p in learner.model.parameters()],
                     agent.trajectory.action[:60].copy())  # fmt: skip
    assert all(torch.equal(x, y) for x, y in zip(runs["a"][0], runs["b"][0], strict=True))
    assert all(torch.equal(x, y) for x, y in zip(runs["a"][1], runs["b"][1], strict=True))
    assert np.array_equal(runs["a"][2], runs["b"][2])
    assert not all(torch.equal(x, y) for x, y in zip(runs["a"][0], runs["c"][0], strict=True))
    assert not np.array_equal(runs["a"][2], runs["c"][2])  # noise alone changes the actions


def test_each_step_acts_with_new_noise_and_torch_global_state_is_untouched():
    agent, env, learner = make()
    torch.manual_seed(123)
    before = torch.get_rng_state()
    env.reset()
    seen = []
    for _ in range(3):
        agent.policy(env)
        learner.due(env)  # what the driver does at PostAct
        seen.append(noise(learner)[0])
    assert not torch.equal(seen[0], seen[1]) and not torch.equal(seen[1], seen[2])
    assert torch.equal(torch.get_rng_state(), before)


def test_noise_is_off_in_greedy_and_deterministic_modes():
    agent, env, learner = make()
    rk.run(agent, env, rk.StopAfterNSteps(50))
    policy = agent.policy
    obs = np.random.default_rng(0).normal(size=(32, 4)).astype(np.float32)
    mean = mean_network(learner.model)
    with torch.no_grad():
        logits = mean(torch.as_tensor(obs)).view(32, 11, 2)
    expected = (torch.softmax(logits, 1) * learner.support.view(1, -1, 1)).sum(1).numpy()
    greedy = rk.greedy(policy)
    assert np.allclose(greedy.values(obs), expected, atol=1e-6)
    assert np.allclose(policy.values(obs, deterministic=True), expected, atol=1e-6)
    assert policy.predict(obs).tolist() == expected.argmax(1).tolist()
    noisy = policy.values(obs)  # the training policy acts with the current noise
    assert not np.allclose(noisy, expected, atol=1e-3)
    assert all(layer.training for layer in noisy_layers(learner.model))  # modes restored
    before = noise(learner)
    rk.evaluate(policy, rk.GymEnv("CartPole-v1"), 2, seed=0)  # evaluating draws no noise
    assert all(torch.equal(x, y) for x, y in zip(before, noise(learner), strict=True))
    with noise_off(learner.model):
        assert np.allclose(learner(rk.policies.q_based.ObservationView(obs, vector=True)),
                           expected, atol=1e-6)  # fmt: skip


def test_priorities_are_the_per_sample_cross_entropy():
    agent, env, learner = make()
    rk.run(agent, env, rk.StopAfterNSteps(40))
    trajectory = agent.trajectory
    seen = {}
    original = trajectory.update_priorities

    def record(indices, priorities):
        seen["indices"], seen["priorities"] = np.array(indices), priorities.clone()
        original(indices, priorities)

    trajectory.update_priorities = record
    gradient_steps(learner, trajectory, 1)
    p = seen["priorities"]
    assert p.shape == (8,) and (p > 0).all()
    # the replay's priorities are the loss's per-sample cross-entropy (rainbow_loss's doctest)
    indices, first = np.unique(seen["indices"], return_index=True)
    expected = (p.numpy()[first].astype(np.float64) + trajectory.epsilon) ** trajectory.alpha
    assert np.allclose(trajectory.tree[indices], expected, rtol=1e-6)


def test_a_replay_that_is_not_prioritized_is_refused_when_the_run_starts():
    agent, env, _ = make(trajectory_cls=rk.CircularArraySARTTrajectory)
    with pytest.raises(TypeError, match="RainbowLearner: needs an "
                                        "rk.PrioritizedCircularArraySARTTrajectory"):  # fmt: skip
        rk.run(agent, env, rk.StopAfterNSteps(5))


def test_checkpoints_hold_the_noise_and_its_generator():
    agent, env, learner = make()
    rk.run(agent, env, rk.StopAfterNSteps(40))
    state = learner.state_dict()
    assert "noise_generator" in state
    _, _, other = make(seed=1, noise_seed=7)
    other.load_state_dict(state)
    assert all(torch.equal(x, y) for x, y in zip(noise(learner), noise(other), strict=True))
    # restored, it learns as the original does (each on its own copy of the prioritized replay)
    replay = copy.deepcopy(agent.trajectory)
    for _ in range(10):
        post_act(learner, agent.trajectory, env)
    env_copy = rk.GymEnv("CartPole-v1", seed=0)
    env_copy.reset()
    for _ in range(10):
        post_act(other, replay, env_copy)
    assert other.gradient_steps == learner.gradient_steps
    assert all(torch.equal(a, b) for a, b in zip(learner.model.parameters(),
                                                 other.model.parameters(), strict=True))
    assert all(torch.equal(x, y) for x, y in zip(noise(learner), noise(other), strict=True))
