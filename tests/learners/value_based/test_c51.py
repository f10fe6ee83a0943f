"""Tests of rlkit/learners/value_based/c51.py: the categorical projection on hand-computed
distributions, the cross-entropy loss, Q-values as expectations, bad supports."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from learner_helpers import assert_checkpoint_round_trip

import rlkit as rk
from rlkit.approximators.distributional import categorical_network
from rlkit.learners.batch import Batch
from rlkit.learners.value_based.c51 import c51_loss, categorical_projection

SUPPORT = torch.tensor([-2.0, -1.0, 0.0, 1.0, 2.0])  # v_min -2, v_max 2, spacing 1


def project(probs, reward, terminal, discount=1.0, support=SUPPORT):
    return categorical_projection(
        torch.tensor(probs, dtype=torch.float32),
        torch.tensor(reward, dtype=torch.float32),
        torch.tensor(terminal, dtype=torch.float32),
        discount,
        support,
    )


def test_projection_by_hand_splits_mass_between_neighbours():
    # Z = 0 w.p. 1; r + 0.5 * Z = 0.25: 3/4 of the mass to atom 0 (index 2), 1/4 to atom 1
    m = project([[0, 0, 1.0, 0, 0]], [0.25], [0.0], 0.5)
    assert m.tolist() == [[0.0, 0.0, 0.75, 0.25, 0.0]]
    # Z in {-1, 1} w.p. 1/2 each; r = 0.5, gamma 0.5: -> 0 and 1 exactly (on atoms)
    m = project([[0, 0.5, 0, 0.5, 0]], [0.5], [0.0], 0.5)
    assert m.tolist() == [[0.0, 0.0, 0.5, 0.5, 0.0]]
    # the identity: r = 0, gamma = 1 leaves the distribution as it is
    p = [[0.1, 0.2, 0.3, 0.25, 0.15]]
    assert torch.allclose(project(p, [0.0], [0.0], 1.0), torch.tensor(p))


def test_projection_clips_at_the_ends_of_the_support():
    p = [[0.2, 0.2, 0.2, 0.2, 0.2]]
    # r = +10: every shifted atom is beyond v_max -> all mass at v_max
    assert project(p, [10.0], [0.0]).tolist() == [[0.0, 0.0, 0.0, 0.0, 1.0]]
    # r = -10: all mass at v_min
    assert project(p, [-10.0], [0.0]).tolist() == [[1.0, 0.0, 0.0, 0.0, 0.0]]
    # r = +1.5, gamma 1: atoms -0.5, 0.5, 1.5, 2.5 -> 2, 3.5 -> 2 (clipped)
    m = project(p, [1.5], [0.0])
    expected = [0.0, 0.1, 0.2, 0.2, 0.5]  # -0.5: .1/.1; 0.5: .1/.1; 1.5: .1/.1; 2 and 2: .4
    assert torch.allclose(m, torch.tensor([expected]))


def test_terminal_transitions_put_all_mass_at_the_reward():
    p = [[0.0, 0.0, 0.0, 0.0, 1.0], [0.5, 0.0, 0.0, 0.0, 0.5]]
    m = project(p, [1.0, -0.5], [1.0, 1.0], 0.99)
    assert m.tolist() == [[0.0, 0.0, 0.0, 1.0, 0.0], [0.0, 0.5, 0.5, 0.0, 0.0]]
    # a terminal reward beyond the support is clipped too
    assert project([[1.0, 0, 0, 0, 0]], [7.0], [1.0]).tolist() == [[0, 0, 0, 0, 1.0]]


def test_projection_conserves_mass_and_takes_a_discount_per_sample():
    g = torch.Generator().manual_seed(0)
    support = torch.linspace(-10, 10, 51)
    probs = torch.softmax(torch.randn(256, 51, generator=g), dim=1)
    reward = torch.randn(256, generator=g) * 5
    terminal = (torch.rand(256, generator=g) < 0.2).float()
    discount = 0.99 ** torch.randint(1, 4, (256,), generator=g).float()
    m = categorical_projection(probs, reward, terminal, discount, support)
    assert (m >= 0).all()
    assert torch.allclose(m.sum(1), torch.ones(256), atol=1e-5)
    # the projection keeps the mean where nothing is clipped
    inside = ((reward.abs() + discount * 10) < 10).nonzero().squeeze(1)
    shifted_mean = reward + (1 - terminal) * discount * (probs * support).sum(1)
    assert torch.allclose((m * support).sum(1)[inside], shifted_mean[inside], atol=1e-4)
    # row by row with a float discount: the same
    row = categorical_projection(probs[:1], reward[:1], terminal[:1], float(discount[0]), support)
    assert torch.allclose(row, m[:1])


def make(seed=0, double=False, n_atoms=11):
    env = rk.GymEnv("CartPole-v1", seed=seed)
    net = categorical_network(env.state_space, env.action_space, (16,), n_atoms=n_atoms,
                              seed=seed)  # fmt: skip
    approx = rk.NeuralNetworkApproximator(net, lambda p: torch.optim.Adam(p, lr=1e-3))
    learner = rk.C51Learner(
        approx,
        n_atoms=n_atoms,
        v_min=0.0,
        v_max=20.0,
        sampler=rk.NStepBatchSampler(8, n=2, gamma=0.9, seed=seed),
        controller=rk.InsertSampleRatioController(20, 1, 1),
        gamma=0.9,
        target=rk.TargetNetwork(approx, sync_every=10),
        double=double,
    )
    trajectory = rk.CircularArraySARTTrajectory(200, env.state_space, env.action_space)
    agent = rk.Agent(rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.3, seed=seed)), trajectory)
    return agent, env, learner


def test_q_values_are_the_expectations_of_the_distributions():
    _, env, learner = make()
    env.reset()
    q = learner(env)
    logits = learner.model(torch.as_tensor(env.state)).detach().view(11, 2)
    expected = (torch.softmax(logits, 0) * torch.linspace(0, 20, 11).unsqueeze(1)).sum(0)
    assert q.shape == (2,) and np.allclose(q, expected.numpy(), atol=1e-6)


def test_loss_is_the_cross_entropy_with_the_projected_target():
    _, _, learner = make(double=True)
    g = torch.Generator().manual_seed(3)
    batch = Batch(
        state=torch.randn(4, 4, generator=g), action=torch.tensor([0, 1, 1, 0]),
        reward=torch.tensor([1.0, 0.0, 2.5, 1.0]), terminal=torch.tensor([0.0, 1.0, 0.0, 0.0]),
        next_state=torch.randn(4, 4, generator=g), discount=torch.tensor([0.9, 0.9, 0.81, 0.9]),
    )  # fmt: skip
    loss, info = c51_loss(learner, learner.model, None, batch)
    support = learner.support
    with torch.no_grad():  # the same, written out row by row
        total = 0.0
        for i in range(4):
            logits = learner.model(batch["state"][i]).view(11, 2)
            log_p = torch.log_softmax(logits[:, batch["action"][i]], 0)
            online_next = torch.softmax(learner.model(batch["next_state"][i]).view(11, 2), 0)
            a_star = int((online_next * support.unsqueeze(1)).sum(0).argmax())  # double
            target_next = torch.softmax(learner.target.model(batch["next_state"][i]).view(11, 2), 0)
            m = categorical_projection(
                target_next[:, a_star].unsqueeze(0), batch["reward"][i : i + 1],
                batch["terminal"][i : i + 1], float(batch["discount"][i]), support,
            )[0]  # fmt: skip
            total += float(-(m * log_p).sum())
    assert loss.item() == pytest.approx(total / 4, rel=1e-5)
    assert info["q"].shape == (4,) and info["target"].shape == (4,)


def test_learning_is_reproducible_and_checkpoints_round_trip():
    runs = []
    for _ in range(2):
        agent, env, learner = make(seed=0)
        rk.run(agent, env, rk.StopAfterNSteps(120))
        runs.append([p.detach().clone() for p in learner.model.parameters()])
    assert learner.gradient_steps == 100
    assert all(torch.equal(a, b) for a, b in zip(*runs, strict=True))
    assert_checkpoint_round_trip(make)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"v_min": 1.0, "v_max": 1.0}, "C51Learner: the support needs v_min < v_max, got "
                                       "v_min=1.0, v_max=1.0"),
        ({"v_min": 5.0, "v_max": -5.0}, "v_min < v_max, got v_min=5.0, v_max=-5.0"),
        ({"n_atoms": 1}, "C51Learner: n_atoms must be at least 2 .* got 1"),
        ({"n_atoms": 0}, "n_atoms"),
        ({"v_max": float("nan")}, "v_max"),
    ],
)  # fmt: skip
def test_a_bad_support_is_refused_at_construction(kwargs, message):
    env = rk.GymEnv("CartPole-v1")
    net = categorical_network(env.state_space, env.action_space, (8,), n_atoms=11)
    approx = rk.NeuralNetworkApproximator(net, lambda p: torch.optim.Adam(p))
    with pytest.raises(ValueError, match=message):
        rk.C51Learner(approx, **{"n_atoms": 11, **kwargs}, sampler=rk.BatchSampler(8),
                      controller=rk.InsertSampleRatioController(10, 1, 1))  # fmt: skip


def test_a_bad_support_in_the_network_and_the_recipe_is_refused():
    env = rk.GymEnv("CartPole-v1")
    with pytest.raises(ValueError, match="categorical_network: n_atoms must be at least 2"):
        categorical_network(env.state_space, env.action_space, (8,), n_atoms=1)
    with pytest.raises(ValueError, match="C51_CartPole: the support needs v_min < v_max"):
        rk.make_experiment("C51_CartPole", v_min=3.0, v_max=-3.0)
    with pytest.raises(ValueError, match="Rainbow_CartPole: n_atoms must be at least 2"):
        rk.make_experiment("Rainbow_CartPole", n_atoms=1)


def test_a_network_with_the_wrong_number_of_atoms_is_refused_when_the_run_starts():
    env = rk.GymEnv("CartPole-v1")
    net = categorical_network(env.state_space, env.action_space, (8,), n_atoms=5)
    approx = rk.NeuralNetworkApproximator(net, lambda p: torch.optim.Adam(p))
    learner = rk.C51Learner(approx, n_atoms=11, sampler=rk.BatchSampler(8),
                            controller=rk.InsertSampleRatioController(10, 1, 1))  # fmt: skip
    agent = rk.Agent(rk.QBasedPolicy(learner, rk.GreedyExplorer(seed=0)),
                     rk.CircularArraySARTTrajectory(50, env.state_space, env.action_space))
    with pytest.raises(ValueError, match=r"outputs 10 values per state, but the action space "
                                         r"Discrete\(2\) needs 22 \(2 actions x 11 outputs"):
        rk.run(agent, env, rk.StopAfterNSteps(5))


@pytest.mark.parametrize("name", ["C51_CartPole", "IQN_CartPole", "Rainbow_CartPole"])
def test_the_recipes_run_on_acrobot_with_set_env(name):
    experiment = rk.make_experiment(name, seed=0, env="Acrobot-v1", total_steps=150,
                                    learning_starts=100, train_freq=10, gradient_steps=1,
                                    batch_size=16, hidden=(16,))  # fmt: skip
    rk.run(experiment.policy, experiment.env, experiment.stop_condition)  # without evaluations
    assert experiment.env.name == "Acrobot-v1"
    assert experiment.hook[rk.EvaluationHook].env.name == "Acrobot-v1"
    assert experiment.policy.policy.learner.gradient_steps == 5
    assert experiment.policy.policy.learner.action_space.n == 3


@pytest.mark.parametrize("name", ["C51_CartPole", "IQN_CartPole", "Rainbow_CartPole"])
def test_the_recipes_learn_from_a_vector_env(name):
    experiment = rk.make_experiment(name, seed=0, n_envs=2, total_steps=200, learning_starts=100,
                                    train_freq=10, gradient_steps=1, batch_size=16,
                                    hidden=(16,))  # fmt: skip
    rk.run(experiment.policy, experiment.env, experiment.stop_condition)
    learner = experiment.policy.policy.learner
    assert learner.env_steps == 200 and learner.gradient_steps == 10
    assert len(experiment.policy.trajectory) == 200
