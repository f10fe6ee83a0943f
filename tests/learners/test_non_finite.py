"""Issue 21, items 2 and 3: every learner refuses a nan/inf loss or gradient through the
optimizer modules' one check (rlkit/optimizers/finite.py), told with its own name, and its
parameters stay finite and unchanged."""

import math

import gymnasium as gym
import pytest
import torch

import rlkit as rk
from rlkit.learners.policy_gradient.vpg import vpg_loss


def _nan_reward_env(seed=0, reward=math.nan):
    return rk.GymEnv(
        gym.wrappers.TransformReward(gym.make("CartPole-v1"), lambda r: reward), seed=seed
    )


def _params(policy):
    return {n: p.detach().clone() for n, p in policy.model.named_parameters()}


def _unchanged(policy, before):
    for name, p in policy.model.named_parameters():
        assert torch.isfinite(p).all(), name
        assert torch.equal(p.detach(), before[name]), name


@pytest.mark.parametrize("reward", [math.nan, math.inf])
def test_trpo_refuses_a_non_finite_reward_with_finite_unchanged_parameters(reward):
    env = _nan_reward_env(reward=reward)
    agent = rk.TRPO.agent(env, seed=0, n_steps=64)
    before = _params(agent.policy)
    with pytest.raises(FloatingPointError, match=r"TRPO: loss_fn .*trpo_loss returned a "
                       r"non-finite loss nan at update 1 \(NaturalGradient refused the step; "
                       r"the parameters are unchanged\)"):
        rk.run(agent, env, rk.StopAfterNSteps(128))
    _unchanged(agent.policy, before)


def test_trpo_refuses_a_non_finite_value_loss_and_undoes_its_policy_step():
    def nan_value_loss(policy, model, batch):
        return model.value(batch["state"]).mean() * math.nan

    import rlkit.learners.policy_gradient.trpo as trpo

    env = rk.GymEnv("CartPole-v1", seed=0)
    agent = rk.TRPO.agent(env, seed=0, n_steps=64)
    before = _params(agent.policy)
    original = trpo.trpo_value_loss
    trpo.trpo_value_loss = nan_value_loss
    try:
        with pytest.raises(FloatingPointError, match=r"TRPO: the value network's loss "
                           r"\(trpo_value_loss\) is nan at update 1; the update's policy step "
                           r"was undone"):
            rk.run(agent, env, rk.StopAfterNSteps(64))
    finally:
        trpo.trpo_value_loss = original
    _unchanged(agent.policy, before)


def test_es_refuses_a_nan_fitness_with_unchanged_parameters():
    gym.register(
        "NanRewardCartPole-v0",
        entry_point=lambda: gym.wrappers.TransformReward(
            gym.make("CartPole-v1"), lambda r: math.nan
        ),
    )
    env = rk.GymEnv("CartPole-v1", seed=0)
    agent = rk.ES.agent(env, seed=0, num_samples=2, fitness_env="NanRewardCartPole-v0")
    before = _params(agent.policy)
    generator = agent.policy.optimizer.generator.get_state()
    with pytest.raises(FloatingPointError, match=r"ES: the fitness is nan at generation 1 .*"
                       r"NanRewardCartPole-v0.*Evolutionary refused the step"):
        rk.run(agent, env, rk.StopAfterNEpisodes(1))
    _unchanged(agent.policy, before)
    assert torch.equal(agent.policy.optimizer.generator.get_state(), generator)
    assert agent.policy.fitness_steps == 0


def _nan_gradients(params):
    for p in params:
        if p.grad is not None:
            p.grad.fill_(math.nan)


@pytest.mark.parametrize("algorithm", ["VPG", "PPO", "A2C"])
def test_a_nan_gradient_from_gradients_fn_is_refused_before_any_parameter_changes(algorithm):
    Broken = getattr(rk, algorithm).with_updates(gradients_fn=_nan_gradients)
    env = rk.GymEnv("CartPole-v1", seed=0)
    agent = Broken.agent(env, seed=0, n_steps=64)
    before = _params(agent.policy)
    with pytest.raises(FloatingPointError, match=rf"{algorithm}: the gradient norm of loss_fn "
                       r".* is nan at update 1 \(GradientDescent refused the step; the "
                       r"parameters are unchanged\)"):
        rk.run(agent, env, rk.StopAfterNSteps(64))
    _unchanged(agent.policy, before)


def test_a_user_built_policy_with_a_nan_gradient_keeps_its_optimizer_state():
    Broken = rk.VPG.with_updates(
        name="NanGradientVPG",
        loss_fn=vpg_loss,
        gradients_fn=_nan_gradients,
        optimizer=rk.optimizers.make({"type": "adam", "lr": 1e-3}),
    )
    env = rk.GymEnv("CartPole-v1", seed=0)
    agent = Broken.agent(env, seed=0, n_steps=64)
    with pytest.raises(FloatingPointError, match="NanGradientVPG: the gradient norm"):
        rk.run(agent, env, rk.StopAfterNSteps(64))
    assert agent.policy.updates == 0 and agent.policy.gradient_steps == 0
    adam = agent.policy.optimizer.optimizer
    assert adam.state == {}  # no moments: the refused step was never taken


@pytest.mark.parametrize("algorithm", ["SAC", "TD3"])
def test_off_policy_actor_critics_tell_the_refusal_with_their_loss(algorithm):
    env = rk.GymEnv(
        gym.wrappers.TransformReward(gym.make("Pendulum-v1"), lambda r: math.nan), seed=0
    )
    agent = getattr(rk, algorithm).agent(env, seed=0, learning_starts=10, batch_size=8)
    before = _params(agent.policy)
    with pytest.raises(FloatingPointError, match=rf"{algorithm}: the critic loss is nan at "
                       r"gradient step \d \(transition 11\) \(GradientDescent refused the "
                       r"step; the critic parameters are unchanged\)"):
        rk.run(agent, env, rk.StopAfterNSteps(20))
    for name, p in agent.policy.model.named_parameters():
        assert torch.isfinite(p).all(), name
        if name.startswith("critic") or name.startswith("qf"):
            assert torch.equal(p.detach(), before[name]), name  # the refused step's network
