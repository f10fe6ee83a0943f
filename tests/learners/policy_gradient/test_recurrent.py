"""RecurrentPPO (rlkit/learners/policy_gradient/recurrent.py): the hidden state lives in the
policy's act state, per sub-env, zeroed at episode starts and carried otherwise; it is stored
with the rollout; sequences never cross an episode start; the loss ignores padding; bad
settings are refused; a run is reproducible."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.learners.batch import Batch
from rlkit.learners.policy_gradient.recurrent import (
    pack_sequences,
    recurrent_ppo_loss,
    sequence_batch,
)
from rlkit.learners.policy_gradient.recurrent_models import RecurrentActorCritic

ENV = "rlkit/CartPoleNoVel-v1"
SMALL = {"lstm_hidden_size": 16, "hidden": (16,)}


def _rollout(env, n_steps, steps, **hp):
    """An agent run for ``steps`` vector steps, less than its rollout (nothing learned)."""
    agent = rk.RecurrentPPO.agent(env, seed=0, n_steps=n_steps, batch_size=32, **SMALL, **hp)
    rk.run(agent, env, rk.StopAfterNSteps(steps * getattr(env, "n_envs", 1)))
    assert agent.policy.updates == 0
    return agent, {k: np.array(v) for k, v in agent.trajectory.batch().items()}


def test_hidden_state_is_reset_at_episode_starts_per_sub_env_and_carried_otherwise():
    env = rk.VectorGymEnv(ENV, 3, seed=0)
    agent, b = _rollout(env, 100, 90)
    starts, done = b["episode_start"], b["terminated"] | b["truncated"]
    assert starts[0].all()  # the run reset the env: every sub-env starts
    np.testing.assert_array_equal(starts[1:], done[:-1])  # a sub-env restarts after it ended
    assert starts[1:].any() and not starts[1:].all()  # some, not all, restart mid-rollout
    model = agent.policy.model
    with torch.no_grad():
        for t in range(len(starts)):
            obs = torch.as_tensor(b["state"][t], dtype=torch.float32)
            stored = torch.as_tensor(b["lstm_state"][t])
            start = torch.as_tensor(starts[t])
            _, values, after = model.step(obs, stored, start)
            np.testing.assert_allclose(values.numpy(), b["value"][t], rtol=1e-5, atol=1e-6)
            # carried: the state after step t is the one stored at step t + 1 (before a reset)
            if t + 1 < len(starts):
                torch.testing.assert_close(after, torch.as_tensor(b["lstm_state"][t + 1]))
            # reset exactly where an episode starts: as if from a zero state there, not elsewhere
            _, zero_values, _ = model.step(obs, torch.zeros_like(stored), start)
            same = np.isclose(zero_values.numpy(), values.numpy(), rtol=0, atol=1e-7)
            assert same[starts[t]].all()
            if t > 0:
                assert not same[~starts[t]].any()


def test_a_single_env_resets_the_hidden_state_at_each_episode_start():
    env = rk.GymEnv(ENV, seed=0)
    _, b = _rollout(env, 200, 150)
    starts = b["episode_start"][:, 0]
    done = (b["terminated"] | b["truncated"])[:, 0]
    assert done.sum() >= 3
    np.testing.assert_array_equal(starts[1:], done[:-1])
    assert starts[0]


def test_greedy_keeps_a_hidden_state_of_its_own():
    env = rk.VectorGymEnv(ENV, 2, seed=0)
    agent, _ = _rollout(env, 64, 10)
    before = agent.policy.act_state.hidden.clone()
    player = rk.greedy(agent.policy)
    hook = rk.run(player, rk.GymEnv(ENV, seed=1), rk.StopAfterNEpisodes(2),
                  rk.TotalRewardPerEpisode())  # fmt: skip
    assert len(hook.rewards) == 2
    assert player.act_state.hidden.shape[0] == 1
    torch.testing.assert_close(agent.policy.act_state.hidden, before, rtol=0, atol=0)


def test_sequences_never_cross_an_episode_start_and_cover_the_rollout_once():
    env = rk.VectorGymEnv(ENV, 4, seed=2)
    _, b = _rollout(env, 100, 80)
    n_steps, n_envs = b["episode_start"].shape
    index = np.arange(n_steps * n_envs).reshape(n_steps, n_envs)
    cut = Batch(index=index, episode_start=b["episode_start"]).sequences(16)
    seen = []
    for i in range(cut["mask"].shape[1]):
        length = int(cut["mask"][:, i].sum())
        assert cut["mask"][:length, i].all() and not cut["mask"][length:, i].any()
        steps = cut["index"][:length, i]
        assert (np.diff(steps) == n_envs).all()  # consecutive steps of one sub-env
        assert not cut["episode_start"][1:length, i].any()  # a start only at the first step
        assert 1 <= length <= 16
        seen.extend(steps.tolist())
    assert sorted(seen) == index.ravel().tolist()
    # each sequence begins at the rollout's start, an episode start or a 16-step cut
    firsts = cut["index"][0][cut["mask"][0]]
    begins = {tuple(x) for x in np.stack(np.divmod(firsts, n_envs), axis=1).tolist()}
    assert begins == _sequence_starts(b["episode_start"], 16)


def _sequence_starts(starts, length):
    """(t, env) where a sequence must begin: t = 0, an episode start, or ``length`` steps after
    the last beginning."""
    out = set()
    for env in range(starts.shape[1]):
        begin = 0
        out.add((0, env))
        for t in range(1, starts.shape[0]):
            if starts[t, env] or t - begin == length:
                out.add((t, env))
                begin = t
    return out


def test_minibatches_are_whole_sequences_of_at_most_batch_size_steps():
    lengths = np.array([5, 16, 3, 16, 9, 1, 12, 7])
    parts = pack_sequences(lengths, 20, np.random.default_rng(0))
    flat = np.concatenate(parts)
    assert sorted(flat.tolist()) == list(range(len(lengths)))  # each sequence once per epoch
    assert all(lengths[p].sum() <= 20 for p in parts)
    assert pack_sequences(lengths, int(lengths.sum()), np.random.default_rng(0)) == [None]


def test_the_loss_ignores_the_padding():
    env = rk.VectorGymEnv(ENV, 2, seed=0)
    agent, b = _rollout(env, 60, 50)
    policy = agent.policy
    b["advantages"] = np.random.default_rng(0).normal(size=b["reward"].shape)
    b["returns"] = b["advantages"] + b["value"]
    seq = sequence_batch(b, 60, "cpu")
    assert not seq["mask"].all()  # some padding
    loss, info = recurrent_ppo_loss(policy, policy.model, policy.dist_class, seq)
    noisy = Batch(seq)
    pad = ~seq["mask"]
    for key in ("state", "advantages", "returns", "value", "log_prob"):
        value = seq[key].clone()
        value[pad] = 1e3
        noisy[key] = value
    noisy_loss, noisy_info = recurrent_ppo_loss(policy, policy.model, policy.dist_class, noisy)
    assert loss.item() == noisy_loss.item() and info == noisy_info


def test_a_sequence_longer_than_the_rollout_is_refused():
    env = rk.VectorGymEnv(ENV, 2, seed=0)
    with pytest.raises(ValueError, match=r"RecurrentPPO: sequence_length=64 is longer than the "
                       r"rollout \(n_steps=32\).*sequence_length <= 32"):  # fmt: skip
        rk.RecurrentPPO(env, n_steps=32, sequence_length=64)
    with pytest.raises(ValueError, match="sequence_length"):
        rk.RecurrentPPO(env, n_steps=32, sequence_length=0)


def test_shared_and_critic_lstm_together_are_refused():
    with pytest.raises(ValueError, match="shared_lstm=True and enable_critic_lstm=True"):
        rk.RecurrentPPO(rk.GymEnv(ENV), shared_lstm=True)


@pytest.mark.parametrize(
    ("shared", "critic", "n_states"), [(False, True, 4), (True, False, 2), (False, False, 2)]
)
def test_the_critic_variants_learn(shared, critic, n_states):
    env = rk.VectorGymEnv(ENV, 2, seed=0)
    hp = {"shared_lstm": shared, "enable_critic_lstm": critic, **SMALL}
    agent = rk.RecurrentPPO.agent(env, seed=0, n_steps=16, batch_size=16, n_epochs=2, **hp)
    before = [p.detach().clone() for p in agent.policy.model.parameters()]
    rk.run(agent, env, rk.StopAfterNSteps(64))
    assert agent.policy.updates == 2 and agent.policy.model.n_states == n_states
    after = list(agent.policy.model.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(before, after, strict=True))
    if shared:  # the critic reads the actor's LSTM without training it: no gradient from it
        assert agent.policy.model.lstm_critic is None and agent.policy.model.critic is None


def test_continuous_actions_and_the_pendulum_task():
    env = rk.VectorGymEnv("rlkit/PendulumNoVel-v1", 2, seed=0)
    agent = rk.RecurrentPPO.agent(env, seed=0, n_steps=16, batch_size=16, n_epochs=1,
                                  **SMALL)  # fmt: skip
    rk.run(agent, env, rk.StopAfterNSteps(32))
    assert agent.policy.updates == 1 and np.isfinite(rk.statistics(agent.policy)["loss"])


def _trained_digest(seed):
    env = rk.VectorGymEnv(ENV, 2, seed=seed)
    agent = rk.RecurrentPPO.agent(env, seed=seed, n_steps=16, batch_size=12, n_epochs=2, **SMALL)
    rk.run(agent, env, rk.StopAfterNSteps(96))
    return [p.detach().clone() for p in agent.policy.model.parameters()]


def test_one_seed_gives_bit_identical_runs():
    a, b, c = _trained_digest(0), _trained_digest(0), _trained_digest(1)
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
    assert not all(torch.equal(x, y) for x, y in zip(a, c, strict=True))


def test_model_initialisation_leaves_the_global_torch_generator_alone():
    torch.manual_seed(0)
    expected = torch.rand(3)
    torch.manual_seed(0)
    RecurrentActorCritic(2, 2, lstm_hidden_size=8)
    torch.testing.assert_close(torch.rand(3), expected)


@pytest.mark.parametrize(
    ("env_id", "full", "keep"),
    [("rlkit/CartPoleNoVel-v1", "CartPole-v1", [0, 2]),
     ("rlkit/PendulumNoVel-v1", "Pendulum-v1", [0, 1])],
)  # fmt: skip
def test_the_no_velocity_tasks_drop_the_velocities(env_id, full, keep):
    env, reference = gym.make(env_id), gym.make(full)
    obs, _ = env.reset(seed=3)
    full_obs, _ = reference.reset(seed=3)
    np.testing.assert_array_equal(obs, full_obs[keep])
    for _ in range(5):
        action = reference.action_space.sample()
        obs, reward, *_ = env.step(action)
        full_obs, full_reward, *_ = reference.step(action)
        np.testing.assert_array_equal(obs, full_obs[keep])
        assert reward == full_reward
    assert env.observation_space.shape == (2,)
    assert env.spec.max_episode_steps == reference.spec.max_episode_steps
    np.testing.assert_array_equal(env.observation_space.high,
                                  reference.observation_space.high[keep])  # fmt: skip


@pytest.mark.parametrize("env_id", ["rlkit/CartPoleNoVel-v1", "rlkit/PendulumNoVel-v1"])
def test_the_no_velocity_tasks_pass_gymnasiums_check_env(env_id):
    from gymnasium.utils.env_checker import check_env

    check_env(gym.make(env_id), skip_render_check=True)  # the wrapper on top
    assert rk.check_env(rk.GymEnv(env_id)).env == env_id


def test_the_no_velocity_wrapper_refuses_bad_indices():
    from gymnasium.envs.classic_control import CartPoleEnv

    from rlkit.envs.toy.no_velocity import NoVelocityObservation

    with pytest.raises(ValueError, match=r"NoVelocityObservation: keep must be indices in "
                       r"\[0, 4\), got \(0, 7\)"):  # fmt: skip
        NoVelocityObservation(CartPoleEnv(), keep=(0, 7))


def test_a_flag_that_is_not_a_bool_is_refused():
    with pytest.raises(TypeError, match="RecurrentActorCritic: shared_lstm must be True or "
                       "False, got 'yes'"):  # fmt: skip
        rk.RecurrentPPO(rk.GymEnv(ENV), shared_lstm="yes", enable_critic_lstm=False)


def test_compile_is_refused_naming_the_reason():
    with pytest.raises(ValueError, match="RecurrentPPO: compile=True is not supported: its "
                       "model steps an LSTM"):  # fmt: skip
        rk.RecurrentPPO(rk.GymEnv(ENV), compile=True)
