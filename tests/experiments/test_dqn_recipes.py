"""Tests of experiments/dqn.py (rlkit.experiments.dqn): the DQN-family recipes."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from rlkit.experiments.dqn import ACROBOT, CARTPOLE, MOUNTAIN_CAR, DQNParams

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
    returns, evaluation = exp.hook.hooks
    assert isinstance(returns, rk.TotalRewardPerEpisode)
    # model selection as rl-baselines3-zoo's EvalCallback: 5 greedy episodes every 10%
    assert isinstance(evaluation, rk.EvaluationHook) and evaluation.env is not exp.env
    assert (evaluation.every_n_steps, evaluation.n_episodes) == (5000, 5)
    assert evaluation.restore_best


def test_dqn_mountain_car_uses_the_rl_baselines3_zoo_hyperparameters():
    exp = rk.make_experiment("DQN_MountainCar", seed=0)
    agent = exp.policy
    learner, explorer = agent.policy.learner, agent.policy.explorer
    assert exp.env.name == "MountainCar-v0" and exp.stop_condition.n == 120_000
    assert isinstance(learner, rk.DQNLearner) and not learner.double
    assert learner.approximator.lr == pytest.approx(4e-3)
    assert learner.approximator.optimizer.param_groups[0]["eps"] == 1e-8
    assert learner.approximator.optimizer.param_groups[0]["betas"] == (0.9, 0.999)
    assert learner.approximator.max_grad_norm == 10.0
    assert learner.sampler.batch_size == 128 and agent.trajectory.capacity == 10_000
    c = learner.controller
    assert (c.warmup_steps, c.update_every, c.n_updates) == (1000, 16, 8)
    assert learner.gamma == 0.98 and learner.loss_kind == "huber"
    assert learner.target.sync_every == 600 and learner.target_update_on == "env_step"
    linears = [m for m in learner.model.modules() if isinstance(m, torch.nn.Linear)]
    assert [(m.in_features, m.out_features) for m in linears] == [(2, 256), (256, 256), (256, 3)]
    assert explorer.random_steps == 1000


def sb3_epsilon(t: int, total: int, fraction: float, final: float, learning_starts: int):
    """Stable-Baselines3's epsilon for the action taken after ``t`` environment steps: uniformly
    random before ``learning_starts``, else get_linear_fn(1, final, fraction) of the progress."""
    if t < learning_starts:
        return 1.0
    progress = t / total
    return final if progress > fraction else 1.0 + progress * (final - 1.0) / fraction


@pytest.mark.parametrize("name", ["DQN_CartPole", "DQN_MountainCar", "DQN_Acrobot"])
def test_exploration_follows_stable_baselines3_step_by_step(name):
    exp = rk.make_experiment(name, seed=0)
    explorer = exp.policy.policy.explorer
    config = {"DQN_CartPole": CARTPOLE, "DQN_MountainCar": MOUNTAIN_CAR}.get(name, ACROBOT)
    total = exp.stop_condition.n
    for t in [*range(0, 1100, 7), *range(1100, total, 997), total - 1]:
        expected = sb3_epsilon(
            t,
            total,
            config.exploration_fraction,
            config.exploration_final_eps,
            config.learning_starts,
        )
        assert explorer.epsilon_at(t) == pytest.approx(expected, abs=1e-12), t


def test_warm_up_actions_are_uniformly_random_whatever_the_network_says():
    exp = rk.make_experiment("DQN_MountainCar", seed=0)
    explorer = exp.policy.policy.explorer
    values = np.array([0.0, 5.0, 0.0])  # a greedy choice would always be action 1
    actions = np.array([explorer(values) for _ in range(999)])
    assert explorer.epsilon == 1.0  # the 1000th call is still random
    counts = np.bincount(actions, minlength=3)
    assert counts.min() > 270, counts  # about 333 each; greedy leakage would inflate action 1
    assert explorer(values) in (0, 1, 2) and explorer.epsilon < 1.0  # then epsilon-greedy
    state = explorer.state_dict()
    again = [explorer(values) for _ in range(50)]
    explorer.load_state_dict(state)
    assert [explorer(values) for _ in range(50)] == again


@pytest.mark.parametrize("name", RECIPES)
def test_every_recipe_runs_a_short_training(name):
    exp = rk.make_experiment(name, seed=1, total_steps=1100)
    returns, evaluation = exp.hook.hooks
    evaluation.restore_best = False  # look at the final state here
    rk.run(exp)
    learner = exp.policy.policy.learner
    assert learner.env_steps == 1100
    assert learner.gradient_steps > 0
    assert returns.rewards  # finished episodes were recorded
    assert [r.step for r in evaluation.results] == list(range(110, 1101, 110))


def test_recipes_end_with_the_policy_that_evaluated_best():
    exp = rk.make_experiment("DQN_CartPole", seed=1, total_steps=3000)
    evaluation = exp.hook.hooks[1]
    states = {}
    evaluate = evaluation.evaluate

    def evaluate_and_keep(policy):
        record = evaluate(policy)
        states[record.step] = [p.detach().clone() for p in policy.policy.learner.model.parameters()]
        return record

    evaluation.evaluate = evaluate_and_keep
    rk.run(exp)
    means = [r.mean for r in evaluation.results]
    best = max(r.step for r in evaluation.results if r.mean == max(means))  # later of equals
    assert evaluation.restored_step == best < 3000 and len(means) == 10  # not the last one
    learner = exp.policy.policy.learner
    assert learner.env_steps == best
    assert all(
        torch.equal(a, b) for a, b in zip(states[best], learner.model.parameters(), strict=True)
    )


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


# ---- the recipes' parameters ----


@pytest.mark.parametrize("name", RECIPES)
def test_a_recipe_declares_its_hyperparameters_and_records_them(name):
    exp = rk.make_experiment(name, seed=0, total_steps=2000, lr=1e-3, hidden=[32])
    assert exp.stop_condition.n == 2000
    assert exp.threads == 1  # small MLPs: one torch thread
    learner = exp.policy.policy.learner
    assert learner.approximator.lr == 1e-3
    linears = [m for m in learner.model.modules() if isinstance(m, torch.nn.Linear)]
    assert linears[0].out_features == 32 and len(linears) == 2
    assert exp.params["total_steps"] == 2000 and exp.params["hidden"] == (32,)
    assert set(exp.params) == {f.name for f in dataclasses.fields(DQNParams)}


def test_a_zero_budget_is_refused_naming_the_recipe_and_the_parameter():
    with pytest.raises(ValueError) as info:
        rk.make_experiment("DQN_CartPole", total_steps=0)
    assert str(info.value) == "DQN_CartPole: total_steps must be a positive integer, got 0"
    with pytest.raises(ValueError, match="QRDQN_CartPole: gamma must be"):
        rk.make_experiment("QRDQN_CartPole", gamma=1.5)


def test_an_unknown_keyword_lists_the_recipes_parameters():
    with pytest.raises(TypeError) as info:
        rk.make_experiment("DQN_CartPole", learning_rat=1e-3)
    message = str(info.value)
    assert message.startswith(
        "DQN_CartPole: unknown parameter 'learning_rat'; it accepts seed, total_steps"
    )
    assert "lr" in message and "device" in message


def test_the_former_name_learning_rate_still_works_with_a_warning():
    with pytest.warns(FutureWarning, match="'learning_rate' is now called 'lr'"):
        exp = rk.make_experiment("DQN_CartPole", seed=0, learning_rate=1e-3)
    assert exp.params["lr"] == 1e-3 and exp.policy.policy.learner.approximator.lr == 1e-3
    with pytest.raises(TypeError, match="'learning_rate' and 'lr' are the same parameter"):
        rk.make_experiment("DQN_CartPole", learning_rate=1e-3, lr=1e-3)


def test_n_step_returns_use_the_n_step_sampler():
    exp = rk.make_experiment("DQN_CartPole", seed=0, n_step=3)
    sampler = exp.policy.policy.learner.sampler
    assert isinstance(sampler, rk.NStepBatchSampler) and sampler.n == 3
