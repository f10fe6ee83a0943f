"""The builder's dict of losses (build_policy(..., base=...)) and the shared base class."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.learners.actor_critic import common, sac, td3
from rlkit.learners.batch import Batch


def test_a_dict_of_losses_needs_a_base_that_steps_each():
    with pytest.raises(TypeError, match="dict of losses needs a base"):
        rk.build_policy(
            "X",
            loss_fn={"critic": td3.critic_loss},
            model_fn=td3.td3_model,
            optimizer={"critic": td3.adam},
            defaults={},
        )


def test_base_must_be_a_built_policy_and_losses_callable():
    with pytest.raises(TypeError, match="base must be a BuiltPolicy subclass"):
        rk.build_policy(
            "X",
            loss_fn=td3.actor_loss,
            model_fn=td3.td3_model,
            optimizer=None,
            defaults={},
            base=int,
        )
    with pytest.raises(TypeError, match=r"loss_fn\['actor'\] must be callable"):
        rk.build_policy(
            "X",
            loss_fn={"actor": 3},
            model_fn=td3.td3_model,
            optimizer={},
            defaults={},
            base=td3.TD3Base,
        )
    with pytest.raises(TypeError, match="must not be an empty dict"):
        rk.build_policy(
            "X", loss_fn={}, model_fn=td3.td3_model, optimizer={}, defaults={}, base=td3.TD3Base
        )


def test_loss_and_optimizer_names_must_match():
    Bad = rk.build_policy(
        "Bad",
        loss_fn={"critic": td3.critic_loss, "actor": td3.actor_loss},
        model_fn=td3.td3_model,
        optimizer={"critic": td3.adam},
        defaults=td3.TD3_DEFAULTS,
        base=td3.TD3Base,
    )
    with pytest.raises(TypeError, match="loss_fn names.*optimizer names"):
        Bad(rk.GymEnv("Pendulum-v1"))


def test_with_updates_replaces_one_loss():
    calls = []

    def my_actor_loss(policy, model, dist_class, batch):
        calls.append(1)
        return sac.actor_loss(policy, model, dist_class, batch)

    Mine = rk.SAC.with_updates(
        name="MySAC", loss_fn={**rk.SAC.loss_fn, "actor": my_actor_loss}, defaults={"lr": 1e-2}
    )
    env = rk.GymEnv("Pendulum-v1", seed=0)
    agent = Mine.agent(env, seed=0, learning_starts=20, batch_size=8, hidden=(8,))
    rk.run(agent, env, rk.StopAfterNSteps(25))
    assert len(calls) == 5 and agent.policy.config["lr"] == 1e-2
    assert rk.SAC.loss_fn["actor"] is sac.actor_loss


def test_scale_and_unscale_are_inverse_on_the_bounds():
    space = gym.spaces.Box(np.array([-2.0, 0.0], np.float32), np.array([2.0, 10.0], np.float32))
    a = np.array([[-2.0, 10.0], [1.0, 2.5]])
    assert np.allclose(common.scale_action(space, a), [[-1.0, 1.0], [0.5, -0.5]])
    assert np.allclose(common.unscale_action(space, common.scale_action(space, a)), a)


def test_explain_lists_each_loss_with_its_optimizer_and_the_targets(capsys):
    env = rk.GymEnv("Pendulum-v1", seed=0)
    agent = rk.TD3.agent(env, hidden=(8,))
    rk.explain(agent, env)
    out = capsys.readouterr().out
    assert "update(TD3, Batch)" in out and "td3.py:" in out
    assert "critic_loss = rlkit.learners.actor_critic.td3.critic_loss" in out
    assert "critic: GradientDescent(" in out
    assert "actor_target: Synchronization(tau=0.005)" in out


def test_a_loss_back_propagates_only_into_what_its_optimizer_moves():
    env = rk.GymEnv("Pendulum-v1", seed=0)
    policy = rk.SAC(env, seed=0, hidden=(8,), batch_size=4, learning_starts=0)
    replay = rk.CircularArraySARTTrajectory(100, env.state_space, env.action_space)
    rk.run(rk.Agent(policy, replay), env, rk.StopAfterNSteps(3))
    critic = list(policy.model.critic.parameters())
    before = [p.grad.clone() for p in critic]  # the critic's own step left these
    actor_grads = [p.grad.clone() for p in policy.model.actor.parameters()]
    assert all(p.requires_grad for p in critic)  # unfrozen after the actor's step
    # the actor's step did not add the critic's weight gradients (SB3 computes and drops them)
    policy.step_loss("actor", _batch_of(policy, replay))
    assert all(torch.equal(p.grad, b) for p, b in zip(critic, before, strict=True))
    changed = [p.grad for p in policy.model.actor.parameters()]
    assert any(not torch.equal(a, b) for a, b in zip(changed, actor_grads, strict=True))


def _batch_of(policy, replay):
    batch = next(policy.batches(replay, 1))
    batch["pi_noise"] = torch.zeros_like(batch["action"])
    batch["ent_coef"] = torch.tensor(0.1)
    return batch


@pytest.mark.parametrize("cls", [rk.SAC, rk.TD3, rk.DDPG])
def test_bad_hidden_device_and_observation_space_are_refused(cls):
    env = rk.GymEnv("Pendulum-v1", seed=0)
    with pytest.raises(ValueError, match=rf"{cls.name}: hidden must be .*got \(0,\)"):
        cls(env, hidden=(0,))
    with pytest.raises(TypeError, match=rf"{cls.name}: hidden must be .*got '64'"):
        cls(env, hidden="64")
    assert cls(env, hidden=64).hp("hidden") == 64  # one hidden layer of 64 (issue 21)
    with pytest.raises(ValueError, match=f"{cls.name}: device must be .*got 'gpu'"):
        cls(env, device="gpu")
    box = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    # a Dict observation gets its encoder (docs/how-to/observations.md); a Text one has none
    policy = cls(state_space=gym.spaces.Dict({"a": box}), action_space=box)
    assert policy.model.actor.encoder is not None
    with pytest.raises(TypeError, match="encoder_for: no encoder for the observation space Text"):
        cls(state_space=gym.spaces.Text(3), action_space=box)


class _MatrixActions(gym.Env):
    """A Box action space of two dimensions, float64 (SB3 flattens such actions)."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
    action_space = gym.spaces.Box(-2.0, 2.0, (2, 3), np.float64)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return self.np_random.uniform(-1, 1, 3).astype(np.float32), {}

    def step(self, action):
        assert self.action_space.contains(action), action
        obs = self.np_random.uniform(-1, 1, 3).astype(np.float32)
        return obs, -float(np.square(action).sum()), False, False, {}


@pytest.mark.parametrize("cls", [rk.SAC, rk.TD3, rk.DDPG])
def test_multi_dimensional_box_actions_learn(cls):
    # the losses got (batch, 2, 3) actions from the replay and (batch, 6) from the actor
    env = rk.GymEnv(_MatrixActions(), seed=0)
    agent = cls.agent(env, seed=0, learning_starts=5, batch_size=4, hidden=(8,))
    rk.run(agent, env, rk.StopAfterNSteps(12))
    assert agent.policy.gradient_steps > 0
    assert np.isfinite(rk.statistics(agent.policy)["critic_loss"])


@pytest.mark.parametrize(
    "noise",
    [rk.GaussianActionNoise(np.full(3, 0.1)), rk.OrnsteinUhlenbeckActionNoise(np.full(2, 0.1))],
)
def test_action_noise_for_another_number_of_action_dimensions_is_refused(noise):
    # it was broadcast: 3 noisy actions for Pendulum's one, the env got the first
    env = rk.GymEnv("Pendulum-v1", seed=0)
    with pytest.raises(
        ValueError,
        match=r"TD3: action_noise .* has a sigma of \d values; expected "
        r"one number or one per action dimension \(1\)",
    ):
        rk.TD3(env, action_noise=noise)
    rk.TD3(env, action_noise=rk.GaussianActionNoise(np.full(1, 0.1)))


def test_a_box_with_equal_bounds_is_refused():
    # scaling to [-1, 1] divided by high - low = 0: a NaN critic loss at the first step
    space = gym.spaces.Box(np.array([-1.0, 1.0]), np.array([1.0, 1.0]), dtype=np.float32)
    with pytest.raises(ValueError, match="SAC: the action space .* high <= low"):
        rk.SAC(state_space=gym.spaces.Box(-1.0, 1.0, (2,), np.float32), action_space=space)


def test_a_learning_rate_schedule_is_refused_by_name():
    with pytest.raises(TypeError, match=r"SAC: lr cannot be a Schedule .*LinearSchedule"):
        rk.SAC(rk.GymEnv("Pendulum-v1"), lr=rk.LinearSchedule(1e-3, 0.0, 100))


def test_the_off_policy_driver_protocol_counts_and_says_when_to_learn():
    env = rk.VectorGymEnv("Pendulum-v1", 2, seed=0)
    policy = rk.TD3(env, seed=0, hidden=(8,), batch_size=4, learning_starts=3, train_freq=2,
                    gradient_steps=3)  # fmt: skip
    env.reset()
    assert [policy.due(env) for _ in range(4)] == [0, 3, 0, 3]  # transitions 2, 4, 6, 8
    assert (policy.transitions, policy.steps) == (8, 4)
    replay = rk.CircularArraySARTTrajectory(10, env.state_space, env.action_space)
    with pytest.raises(ValueError, match="the replay is empty"):
        next(policy.batches(replay, 1))
    policy.end_round(3, {"critic_loss": 1.5})
    assert policy.updates == 1 and policy.stats == {"critic_loss": 1.5, "gradient_steps": 0.0}


def test_a_policy_on_the_base_without_its_own_update_is_refused():
    Bare = rk.build_policy(
        "Bare",
        loss_fn={"critic": td3.critic_loss, "actor": td3.actor_loss},
        model_fn=td3.td3_model,
        optimizer={"critic": common.adam, "actor": common.adam},
        defaults=td3.TD3_DEFAULTS,
        base=common.OffPolicyActorCritic,
    )
    policy = Bare(rk.GymEnv("Pendulum-v1", seed=0), hidden=(8,))
    with pytest.raises(NotImplementedError, match=r"Bare: .*needs its own update"):
        rk.update(policy, Batch())
