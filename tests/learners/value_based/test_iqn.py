"""Tests of rlkit/learners/value_based/iqn.py and IQN's network: the quantile Huber loss against
a direct formula, the cosine embedding, acting on the mean of fixed fractions, the generator of
the sampled fractions in checkpoints."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
import torch
from learner_helpers import assert_checkpoint_round_trip

import rlkit as rk
from rlkit.approximators.distributional import IQNNetwork, iqn_network
from rlkit.approximators.neural import q_network
from rlkit.learners.batch import Batch
from rlkit.learners.value_based.iqn import iqn_loss
from rlkit.learners.value_based.qr_dqn import quantile_huber_loss


def direct_quantile_huber(current, target, taus, kappa):
    """Dabney et al. (2018), eq. (10) written with loops: for each sample, sum over the
    predicted quantiles i of the mean over the targets j of
    |tau_i - 1{delta_ij < 0}| * L_kappa(delta_ij), delta_ij = target_j - current_i."""
    total = 0.0
    batch, n = current.shape
    for b in range(batch):
        for i in range(n):
            tau = float(taus[b, i] if taus.dim() == 2 else taus[i])
            inner = 0.0
            for j in range(target.shape[1]):
                d = float(target[b, j] - current[b, i])
                huber = 0.5 * d * d if abs(d) <= kappa else kappa * (abs(d) - 0.5 * kappa)
                inner += abs(tau - (1.0 if d < 0 else 0.0)) * huber
            total += inner / target.shape[1]
    return total / batch


@pytest.mark.parametrize("kappa", [1.0, 0.5, 3.0])
def test_quantile_huber_loss_equals_the_direct_formula_with_fractions_per_sample(kappa):
    g = torch.Generator().manual_seed(int(kappa * 10))
    current = torch.randn(3, 5, generator=g) * 2
    target = torch.randn(3, 7, generator=g) * 2
    taus = torch.rand(3, 5, generator=g)
    loss = quantile_huber_loss(current, target, taus, kappa)
    assert loss.item() == pytest.approx(direct_quantile_huber(current, target, taus, kappa),
                                        rel=1e-5)  # fmt: skip
    shared = torch.rand(5, generator=g)  # QR-DQN's fixed fractions: the same formula
    assert quantile_huber_loss(current, target, shared, kappa).item() == pytest.approx(
        direct_quantile_huber(current, target, shared, kappa), rel=1e-5
    )


def test_the_network_embeds_fractions_with_cosines_and_acts_on_fixed_midpoints():
    net = IQNNetwork(4, 3, (8,), n_cos=6, n_acting=4)
    tau = torch.tensor([[0.3]])
    x = torch.randn(1, 4, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        cosines = torch.tensor([math.cos(math.pi * i * 0.3) for i in range(6)])
        embedding = torch.relu(net.phi(cosines))
        expected = net.f_out(net.psi(x)[0] * embedding)
        assert torch.allclose(net.quantiles(x, tau)[0, 0], expected, atol=1e-6)
        assert net.acting_fractions.tolist() == [0.125, 0.375, 0.625, 0.875]
        by_fractions = net.quantiles(x, net.acting_fractions.unsqueeze(0))  # (1, 4, 3)
        assert torch.equal(net(x), by_fractions.flatten(1))
        assert torch.equal(net(x[0]), net(x)[0])  # one observation


def make(seed=0, double=False):
    env = rk.GymEnv("CartPole-v1", seed=seed)
    net = iqn_network(env.state_space, env.action_space, (16,), n_cos=8, n_acting=4, seed=seed)
    approx = rk.NeuralNetworkApproximator(net, lambda p: torch.optim.Adam(p, lr=1e-3))
    learner = rk.IQNLearner(
        approx,
        n_tau=6,
        n_tau_target=5,
        sampler=rk.NStepBatchSampler(8, n=2, gamma=0.9, seed=seed),
        controller=rk.InsertSampleRatioController(20, 1, 1),
        gamma=0.9,
        target=rk.TargetNetwork(approx, sync_every=10),
        double=double,
        seed=seed,
    )
    trajectory = rk.CircularArraySARTTrajectory(200, env.state_space, env.action_space)
    agent = rk.Agent(rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.3, seed=seed)), trajectory)
    return agent, env, learner


def test_q_values_are_the_means_of_the_quantiles_at_the_acting_fractions():
    _, env, learner = make()
    env.reset()
    q = learner(env)
    out = learner.model(torch.as_tensor(env.state)).detach().view(4, 2)
    assert q.shape == (2,) and np.allclose(q, out.mean(0).numpy())
    assert learner(env).tolist() == q.tolist()  # deterministic


@pytest.mark.parametrize("double", [False, True])
def test_the_loss_uses_the_learners_generator_and_the_chosen_next_action(double):
    _, _, learner = make(double=double)
    g = torch.Generator().manual_seed(1)
    batch = Batch(
        state=torch.randn(3, 4, generator=g), action=torch.tensor([0, 1, 1]),
        reward=torch.tensor([1.0, 0.0, 2.0]), terminal=torch.tensor([0.0, 1.0, 0.0]),
        next_state=torch.randn(3, 4, generator=g), discount=0.9,
    )  # fmt: skip
    state = learner.generator.get_state()
    loss, info = iqn_loss(learner, learner.model, None, batch)
    learner.generator.set_state(state)
    taus = torch.rand((3, 6), generator=learner.generator)
    taus_next = torch.rand((3, 5), generator=learner.generator)
    with torch.no_grad():
        chooser = learner.model if double else learner.target.model
        best = chooser(batch["next_state"]).view(3, 4, 2).mean(1).argmax(1)
        next_q = learner.target.model.quantiles(batch["next_state"], taus_next)
        target = batch["reward"].unsqueeze(1) + (1 - batch["terminal"].unsqueeze(1)) * 0.9 * \
            next_q[torch.arange(3), :, best]  # fmt: skip
        current = learner.model.quantiles(batch["state"], taus)[torch.arange(3), :,
                                                                 batch["action"]]  # fmt: skip
    expected = direct_quantile_huber(current, target, taus, 1.0)
    assert loss.item() == pytest.approx(expected, rel=1e-5)
    assert torch.allclose(info["target"][1], torch.tensor(0.0))  # terminal: the reward


def test_learning_is_reproducible_and_checkpoints_round_trip():
    runs = []
    for _ in range(2):
        agent, env, learner = make(seed=0)
        rk.run(agent, env, rk.StopAfterNSteps(100))
        runs.append([p.detach().clone() for p in learner.model.parameters()])
    assert all(torch.equal(a, b) for a, b in zip(*runs, strict=True))
    assert "generator" in learner.state_dict()
    assert_checkpoint_round_trip(make)


def test_bad_input_is_refused_at_construction():
    env = rk.GymEnv("CartPole-v1")
    mlp = q_network(env.state_space, env.action_space, (8,))
    approx = rk.NeuralNetworkApproximator(mlp, lambda p: torch.optim.Adam(p))
    kw = {"sampler": rk.BatchSampler(8), "controller": rk.InsertSampleRatioController(10, 1, 1)}
    with pytest.raises(TypeError, match="IQNLearner: the approximator's model must be an "
                                        "IQNNetwork .* got Sequential"):  # fmt: skip
        rk.IQNLearner(approx, **kw)
    iqn = rk.NeuralNetworkApproximator(iqn_network(env.state_space, env.action_space, (8,)),
                                       lambda p: torch.optim.Adam(p))  # fmt: skip
    with pytest.raises(ValueError, match="IQNLearner: n_tau must be a positive integer"):
        rk.IQNLearner(iqn, n_tau=0, **kw)
    with pytest.raises(ValueError, match="IQNLearner: kappa"):
        rk.IQNLearner(iqn, kappa=0.0, **kw)
    with pytest.raises(TypeError, match="iqn_network: state_space must be a gymnasium Box of "
                                        "flat observations"):  # fmt: skip
        iqn_network(gym.spaces.Box(-1, 1, (2, 3)), env.action_space)
    with pytest.raises(TypeError, match="iqn_network: encoder_for: no encoder for the "
                                        "observation space Text"):  # fmt: skip
        iqn_network(gym.spaces.Text(5), env.action_space)
    # a Discrete observation space is one-hot encoded (rlkit/approximators/encoders)
    assert type(iqn_network(rk.GymEnv("CliffWalking-v1").state_space,
                            env.action_space)).__name__ == "EncodedIQNNetwork"  # fmt: skip
