"""rk.PETS and its cross-entropy method: CEM on a known quadratic cost, TS-∞ returns, the
model's timing, greedy evaluation that leaves the learner alone, checkpoints and bad input
(issue 27)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from rlkit.experiments.model_based import pendulum_reward

import rlkit as rk
from rlkit.learners.model_based.cem import cem
from rlkit.learners.model_based.pets import expected_returns

SMALL = dict(
    learning_starts=50, model_train_freq=50, model_hidden=(16,), horizon=3, population=20,
    cem_elites=4, cem_iterations=2, particles=5, model_max_epochs=2, reward_fn=pendulum_reward,
)  # fmt: skip


def test_cem_finds_the_minimum_of_a_quadratic_cost():
    target = torch.tensor([[0.3, -0.7], [0.9, 0.1], [-0.2, 0.0]])  # a horizon of 3, 2 actions

    def objective(x):
        return -((x - target) ** 2).sum(dim=(-1, -2))

    best = cem(
        objective, torch.zeros(3, 2), torch.full((3, 2), 0.25), torch.full((3, 2), -1.0),
        torch.ones(3, 2), population=300, n_elites=30, iterations=15, alpha=0.1,
        generator=torch.Generator().manual_seed(0),
    )  # fmt: skip
    torch.testing.assert_close(best, target, atol=0.03, rtol=0)


def test_cem_stays_within_the_bounds():
    best = cem(
        lambda x: x.sum(-1), torch.zeros(2), torch.ones(2), -torch.ones(2), torch.ones(2),
        population=100, n_elites=10, iterations=10, alpha=0.1,
        generator=torch.Generator().manual_seed(0),
    )  # fmt: skip
    assert torch.all(best <= 1.0) and torch.all(best > 0.9)


def test_expected_returns_with_a_known_model_and_reward():
    env = rk.GymEnv("Pendulum-v1")

    def reward(state, action, next_state):
        return -(action[..., 0] ** 2)

    model = rk.EnsembleDynamicsModel(
        env.state_space, env.action_space, ensemble_size=5, hidden=(8,), reward_fn=reward
    )
    actions = torch.tensor([[[0.0], [0.0]], [[1.0], [2.0]]])
    returns = expected_returns(model, torch.zeros(3), actions, 10, torch.Generator())
    torch.testing.assert_close(returns, torch.tensor([0.0, -5.0]))


@torch.no_grad()
def _reference_expected_returns(model, state, actions, particles, generator):
    """The planner's rollout as it was before the elites' weights were gathered once per
    rollout (rlkit 3552e97): each step through ``model.network(x, elites)``, which
    gathers them again, the termination mask always applied."""
    n_pop, horizon, _ = actions.shape
    n_elites = len(model.elites)
    per_member = particles // n_elites
    rows = n_pop * per_member
    s = state.reshape(1, 1, -1).expand(n_elites, rows, state.shape[-1]).contiguous()
    total = torch.zeros(n_elites, rows)
    alive = torch.ones(n_elites, rows, dtype=torch.bool)
    elites = torch.as_tensor(model.elites)
    for t in range(horizon):
        a = actions[:, t].repeat_interleave(per_member, dim=0).expand(n_elites, rows, -1)
        mean, logvar = model.network(model._inputs(s, a), elites)
        noise = torch.randn(mean.shape, generator=generator)
        s, reward, terminated = model._outcome(s, a, mean + noise * torch.exp(0.5 * logvar))
        total = total + torch.where(alive, reward, torch.zeros_like(reward))
        alive = alive & ~terminated
    return total.reshape(n_elites, n_pop, per_member).mean(dim=(0, 2))


def _fitted_model(**kw):
    env = rk.GymEnv("Pendulum-v1")
    model = rk.EnsembleDynamicsModel(env.state_space, env.action_space, ensemble_size=7,
                                     n_elites=5, hidden=(32, 32), max_epochs=3, seed=0,
                                     **kw)  # fmt: skip
    rng = np.random.default_rng(0)
    s = rng.uniform(-1, 1, size=(300, 3)).astype(np.float32)
    a = rng.uniform(-2, 2, size=(300, 1)).astype(np.float32)
    model.fit(dict(state=s, action=a, reward=-(s**2).sum(1), next_state=s + 0.05 * a))
    return model


def _falls(state, action, next_state):
    return next_state[..., 0] < -0.2


@pytest.mark.parametrize(
    "model_settings",
    [{}, {"reward_fn": pendulum_reward}, {"reward_fn": pendulum_reward, "termination_fn": _falls}],
    ids=["learned reward", "known reward", "known reward and termination"],
)
def test_the_planner_s_returns_are_bit_for_bit_those_of_the_step_by_step_rollout(model_settings):
    # the speed-up (weights gathered once, no mask without a termination function) computes
    # exactly what the rollout did before, with the same draws of the generator
    model = _fitted_model(**model_settings)
    state = torch.tensor([0.3, -0.9, 1.5])
    actions = torch.rand(40, 8, 1, generator=torch.Generator().manual_seed(1)) * 4 - 2
    fast_g, slow_g = torch.Generator().manual_seed(2), torch.Generator().manual_seed(2)
    fast = expected_returns(model, state, actions, 10, fast_g)
    slow = _reference_expected_returns(model, state, actions, 10, slow_g)
    assert torch.equal(fast, slow)
    assert torch.equal(fast_g.get_state(), slow_g.get_state())


def test_a_whole_planning_call_is_bit_for_bit_the_step_by_step_planner():
    env = rk.GymEnv("Pendulum-v1", seed=0)
    agent = rk.PETS.agent(env, seed=0, **SMALL)
    rk.run(agent, env, rk.StopAfterNSteps(60))
    policy = agent.policy
    fast_g, slow_g = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    s = torch.as_tensor(np.asarray(env.state, np.float32))
    warm = policy.initial_plan()
    var = ((policy.high - policy.low) / 4).pow(2).expand_as(warm).clone()
    c = policy.config
    slow = cem(
        lambda x: _reference_expected_returns(policy.dynamics, s, x, c["particles"], slow_g),
        warm, var, policy.low, policy.high, population=c["population"],
        n_elites=c["cem_elites"], iterations=c["cem_iterations"], alpha=c["alpha"],
        generator=slow_g,
    )  # fmt: skip
    action, shifted = policy.plan_action(env.state, warm, fast_g)
    assert torch.equal(shifted[:-1], slow[1:])
    assert np.array_equal(action, slow[0].numpy().astype(np.float32).reshape(1))
    assert torch.equal(fast_g.get_state(), slow_g.get_state())


def test_rewards_after_a_predicted_termination_count_zero():
    env = rk.GymEnv("Pendulum-v1")

    def one(state, action, next_state):
        return torch.ones(next_state.shape[:-1])

    def always(state, action, next_state):
        return torch.ones(next_state.shape[:-1], dtype=torch.bool)

    model = rk.EnsembleDynamicsModel(env.state_space, env.action_space, ensemble_size=5,
                                     hidden=(8,), reward_fn=one, termination_fn=always)  # fmt: skip
    returns = expected_returns(model, torch.zeros(3), torch.zeros(4, 6, 1), 5, torch.Generator())
    torch.testing.assert_close(returns, torch.ones(4))  # the first reward, then nothing


def test_the_model_is_trained_at_learning_starts_then_every_model_train_freq():
    env = rk.GymEnv("Pendulum-v1", seed=0)
    agent = rk.PETS.agent(env, seed=0, **SMALL)
    rk.run(agent, env, rk.StopAfterNSteps(49))
    assert agent.policy.model_fits == 0
    rk.run(agent, env, rk.StopAfterNSteps(1))
    assert agent.policy.model_fits == 1
    rk.run(agent, env, rk.StopAfterNSteps(50))
    assert agent.policy.model_fits == 2 and agent.policy.transitions == 100


def test_greedy_plans_without_changing_the_learner():
    env = rk.GymEnv("Pendulum-v1", seed=0)
    agent = rk.PETS.agent(env, seed=0, **SMALL)
    rk.run(agent, env, rk.StopAfterNSteps(60))
    before = agent.policy.state_dict()
    result = rk.evaluate(agent.policy, rk.GymEnv("Pendulum-v1"), 1, seed=0)
    after = agent.policy.state_dict()
    assert np.isfinite(result.mean)
    assert torch.equal(before["generator"], after["generator"])
    assert torch.equal(before["plan_mean"], after["plan_mean"])


def test_the_same_seed_gives_the_same_run_and_a_checkpoint_restores_it():
    def run(steps, state=None):
        env = rk.GymEnv("Pendulum-v1", seed=1)
        agent = rk.PETS.agent(env, seed=2, **SMALL)
        hook = rk.run(agent, env, rk.StopAfterNSteps(steps), rk.TotalRewardPerEpisode())
        return agent, hook

    a, _ = run(70)
    b, _ = run(70)
    assert torch.equal(a.policy.plan_mean, b.policy.plan_mean)
    fresh = rk.PETS(rk.GymEnv("Pendulum-v1"), seed=9, **SMALL)
    fresh.load_state_dict(a.policy.state_dict())
    state = rk.GymEnv("Pendulum-v1", seed=3)
    state.reset()
    assert np.array_equal(fresh.act(state), a.policy.act(state))


# ---- bad input ----


@pytest.mark.parametrize(
    ("changes", "error", "match"),
    [
        ({"horizon": 0}, ValueError, "horizon .* must be a positive integer, got 0"),
        ({"ensemble_size": 3}, ValueError, "ensemble_size 3 is below n_elites 5"),
        ({"reward_fn": lambda s: s}, TypeError, r"reward_fn <lambda>\(s\) cannot be called"),
        ({"particles": 7}, ValueError, "particles 7 must be a multiple of n_elites 5"),
        ({"cem_elites": 30}, ValueError, "cem_elites 30 exceeds population 20"),
        ({"alpha": 1.5}, ValueError, "alpha"),
        ({"typo": 1}, TypeError, "unknown hyperparameter"),
    ],
)
def test_bad_input_is_refused_at_construction(changes, error, match):
    with pytest.raises(error, match=match):
        rk.PETS(rk.GymEnv("Pendulum-v1"), **{**SMALL, **changes})


def test_rk_save_refuses_a_planner_and_says_how_to_keep_it(tmp_path):
    with pytest.raises(TypeError, match="PETS has no inference artifact.*CheckpointHook"):
        rk.save(rk.PETS(rk.GymEnv("Pendulum-v1"), **SMALL), tmp_path / "pets.rlkit")


def test_a_discrete_action_space_is_refused():
    with pytest.raises(TypeError, match="continuous"):
        rk.PETS(rk.GymEnv("CartPole-v1"))


def test_the_known_pendulum_reward_is_gymnasium_s():
    env = rk.GymEnv("Pendulum-v1", seed=0)
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(20):
        state = np.asarray(env.state, np.float32)
        action = rng.uniform(-2, 2, size=1).astype(np.float32)
        env.act(action)
        predicted = pendulum_reward(torch.tensor(state), torch.tensor(action), None)
        assert float(predicted) == pytest.approx(env.reward, abs=1e-4)


@pytest.mark.slow
def test_pets_swings_the_pendulum_up_within_a_few_hundred_steps():
    # PETS_Pendulum's planner and model with its known reward: 200 random steps, then 200
    # planned ones; the deterministic planner's mean over 3 episodes
    experiment = rk.make_experiment("PETS_Pendulum", 0, total_steps=400)
    rk.run(experiment)
    result = rk.evaluate(experiment.policy.policy, rk.GymEnv("Pendulum-v1"), 3, seed=0)
    assert result.mean >= -200, result
