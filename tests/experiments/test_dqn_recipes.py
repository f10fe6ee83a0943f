"""Tests of experiments/dqn.py (rlkit.experiments.dqn): the DQN-family recipes."""

from __future__ import annotations

import pytest
import torch

import rlkit as rk

RECIPES = [
    "BasicDQN_CartPole",
    "DQN_CartPole",
    "DQN_Acrobot",
    "DQN_MountainCar",
    "PrioritizedDQN_CartPole",
    "QRDQN_CartPole",
]


def test_recipes_are_registered_with_descriptions():
    listed = rk.list_experiments()
    for name in RECIPES:
        assert name in listed and listed[name]


def test_dqn_cartpole_uses_the_rl_baselines3_zoo_hyperparameters():
    exp = rk.make_experiment("DQN_CartPole", seed=0)
    agent = exp.policy
    learner, explorer = agent.policy.learner, agent.policy.explorer
    assert isinstance(learner, rk.DQNLearner) and not learner.double
    assert exp.stop_condition.n == 50_000
    assert learner.approximator.lr == pytest.approx(2.3e-3)
    assert isinstance(learner.approximator.optimizer, torch.optim.Adam)
    assert learner.approximator.max_grad_norm == 10.0
    assert learner.sampler.batch_size == 64
    assert agent.trajectory.capacity == 100_000
    c = learner.controller
    assert (c.warmup_steps, c.update_every, c.n_updates) == (1000, 256, 128)
    assert learner.gamma == 0.99 and learner.loss_kind == "huber"
    assert learner.target.sync_every == 10 and learner.target_update_on == "env_step"
    assert (explorer.epsilon_start, explorer.epsilon_end) == (1.0, 0.04)
    assert explorer.kind == "linear" and explorer.decay_steps == 8000  # 16% of 50k
    linears = [m for m in learner.model.modules() if isinstance(m, torch.nn.Linear)]
    assert [m.out_features for m in linears] == [256, 256, 2]
    assert isinstance(exp.hook, rk.TotalRewardPerEpisode)


@pytest.mark.parametrize("name", RECIPES)
def test_every_recipe_runs_a_short_training(name):
    exp = rk.make_experiment(name, seed=1, total_steps=1100)
    rk.run(exp)
    learner = exp.policy.policy.learner
    assert learner.env_steps == 1100
    assert learner.gradient_steps > 0
    assert exp.hook.rewards  # finished episodes were recorded


def parameters_after_short_run(seed: int) -> list[torch.Tensor]:
    exp = rk.make_experiment("DQN_CartPole", seed=seed, total_steps=1100)
    rk.run(exp)
    return [p.detach().clone() for p in exp.policy.policy.learner.model.parameters()]


def test_same_seed_twice_gives_identical_parameters():
    a, b, c = (
        parameters_after_short_run(5),
        parameters_after_short_run(5),
        parameters_after_short_run(6),
    )
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
    assert not all(torch.equal(x, y) for x, y in zip(a, c, strict=True))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_recipe_trains_on_cuda():
    exp = rk.make_experiment("DQN_CartPole", seed=0, total_steps=1100, device="cuda")
    rk.run(exp)
    assert next(exp.policy.policy.learner.model.parameters()).is_cuda
