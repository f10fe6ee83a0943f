"""Replay learners on ``rk.VecNormalize`` (rlkit/envs/vec_normalize_replay.py, the off-policy
driver): the replay stores the raw transitions and each sampled batch is normalised with the
env's statistics as they are at sampling time, Stable-Baselines3's semantics; the one-step,
n-step and HER samplers and the actor-critics' batches; the training flag; backends; the
policies' frozen statistics for predict, evaluation and save/load; the DatasetRecorder's raw
transitions; refusals by name."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from observation_envs import BoxBitFlipping, DictCartPole

import rlkit as rk
from rlkit.core.dispatch import update


def by_hand_obs(raw, rms, clip=10.0, eps=1e-8):
    """SB3's VecNormalize.normalize_obs, written here."""
    return np.clip((raw - rms.mean) / np.sqrt(rms.var + eps), -clip, clip).astype(np.float32)


def by_hand_reward(raw, ret_rms, clip=10.0, eps=1e-8):
    """SB3's VecNormalize.normalize_reward (float32, as its replay buffers cast)."""
    return np.clip(raw / np.sqrt(ret_rms.var + eps), -clip, clip).astype(np.float32)


def recorded(env, steps, capacity=1000, seed=0):
    """A replay recorded on ``env`` by a random policy for ``steps`` steps."""
    t = rk.CircularArraySARTTrajectory(capacity, env.state_space, env.action_space)
    rk.run(rk.Agent(rk.RandomPolicy(seed=seed), t), env, rk.StopAfterNSteps(steps))
    return t


# ---- what the replay stores: the raw transitions ----
def test_the_replay_stores_the_raw_observations_rewards_and_final_observations():
    env = rk.VecNormalize(rk.VectorGymEnv("CartPole-v1", 3, seed=1), gamma=0.9)
    raw = rk.VectorGymEnv("CartPole-v1", 3, seed=1)
    t = rk.CircularArraySARTTrajectory(2000, env.state_space, env.action_space)
    agent = rk.Agent(rk.RandomPolicy(seed=0), t)
    rk.run(agent, env, rk.StopAfterNSteps(300))  # 100 steps of 3 sub-envs
    reference = rk.CircularArraySARTTrajectory(2000, raw.state_space, raw.action_space)
    rk.run(rk.Agent(rk.RandomPolicy(seed=0), reference), raw, rk.StopAfterNSteps(300))
    for trace in ("state", "action", "reward", "terminal", "truncated", "next_state"):
        np.testing.assert_array_equal(getattr(t, trace)[:300], getattr(reference, trace)[:300])
    assert t.terminal[:300].any()  # real final observations were recorded too
    assert not np.array_equal(env.state, env.original_state)  # the env itself normalises
    env.close()
    raw.close()


# ---- sampling: normalised with the statistics at sampling time, not at storing time ----
def test_a_sampled_batch_is_the_raw_one_normalised_with_the_statistics_at_sample_time():
    env = rk.VecNormalize(rk.VectorGymEnv("CartPole-v1", 2, seed=0), clip_obs=2.0,
                          clip_reward=3.0, gamma=0.9)  # fmt: skip
    t = recorded(env, 60)
    stored = {k: getattr(t, k)[:60].copy() for k in ("state", "next_state", "reward")}
    at_store = env.obs_rms.copy(), env.ret_rms.copy()
    # the env goes on (the statistics move) without recording into this replay
    rk.run(rk.RandomPolicy(seed=5), env, rk.StopAfterNSteps(400))
    assert env.obs_rms.count > at_store[0].count
    batch = rk.BatchSampler(40, seed=3).sample(t, normalizer=env)
    plain = rk.BatchSampler(40, seed=3).sample(t)
    np.testing.assert_array_equal(plain["state"], stored["state"][plain["indices"]])  # raw
    np.testing.assert_array_equal(batch["indices"], plain["indices"])
    np.testing.assert_array_equal(batch["state"], by_hand_obs(plain["state"], env.obs_rms, 2.0))
    np.testing.assert_array_equal(batch["next_state"],
                                  by_hand_obs(plain["next_state"], env.obs_rms, 2.0))
    np.testing.assert_array_equal(batch["reward"],
                                  by_hand_reward(plain["reward"], env.ret_rms, 3.0))
    assert batch["state"].dtype == batch["reward"].dtype == np.float32
    assert np.abs(batch["state"]).max() == np.float32(2.0)  # clipped
    # not the statistics at storing time
    assert not np.array_equal(batch["state"], by_hand_obs(plain["state"], at_store[0], 2.0))
    assert not np.array_equal(batch["reward"], by_hand_reward(plain["reward"], at_store[1], 3.0))
    # the replay itself is unchanged
    np.testing.assert_array_equal(t.state[:60], stored["state"])
    np.testing.assert_array_equal(t.reward[:60], stored["reward"])
    env.close()


def test_n_step_batches_scale_each_reward_before_the_sum():
    env = rk.VecNormalize(rk.VectorGymEnv("CartPole-v1", 2, seed=0), clip_reward=0.1)
    t = recorded(env, 80)
    n, gamma = 3, 0.9
    batch = rk.NStepBatchSampler(32, n=n, gamma=gamma, seed=1).sample(t, normalizer=env)
    plain = rk.NStepBatchSampler(32, n=n, gamma=gamma, seed=1).sample(t)
    scaled = by_hand_reward(np.float32(1.0), env.ret_rms, 0.1)  # CartPole's raw rewards are 1
    assert scaled == np.float32(0.1)  # clipped per step: a clipped sum would differ
    expected = np.array([sum(gamma**k * scaled for k in range(m)) for m in plain["n"]])
    np.testing.assert_array_equal(batch["reward"], expected.astype(np.float32))
    np.testing.assert_array_equal(batch["n"], plain["n"])
    assert (plain["n"] > 1).any()
    np.testing.assert_array_equal(batch["next_state"], by_hand_obs(plain["next_state"],
                                                                   env.obs_rms))
    env.close()


def test_dict_observations_are_normalised_per_key_at_sample_time():
    env = rk.VecNormalize(rk.VectorGymEnv([DictCartPole] * 2, seed=0), norm_obs_keys=["pole"])
    t = recorded(env, 50)
    batch = rk.BatchSampler(16, seed=0).sample(t, normalizer=env)
    plain = rk.BatchSampler(16, seed=0).sample(t)
    np.testing.assert_array_equal(batch["state"]["pole"],
                                  by_hand_obs(plain["state"]["pole"], env.obs_rms["pole"]))
    np.testing.assert_array_equal(batch["state"]["cart"], plain["state"]["cart"])  # not a key
    env.close()


def test_training_false_freezes_the_statistics_the_batches_use():
    env = rk.VecNormalize(rk.VectorGymEnv("CartPole-v1", 2, seed=0))
    agent = rk.DQN.agent(env, seed=0, learning_starts=40, batch_size=16, buffer_size=500)
    rk.run(agent, env, rk.StopAfterNSteps(100))
    env.training = False
    frozen = env.obs_rms.state_dict(), env.ret_rms.state_dict()
    rk.run(agent, env, rk.StopAfterNSteps(100))
    assert env.obs_rms.count == frozen[0]["count"] and env.ret_rms.count == frozen[1]["count"]
    np.testing.assert_array_equal(env.obs_rms.mean, frozen[0]["mean"])
    t = agent.trajectory
    batch = rk.BatchSampler(8, seed=0).sample(t, normalizer=env)
    np.testing.assert_array_equal(batch["state"],
                                  by_hand_obs(rk.BatchSampler(8, seed=0).sample(t)["state"],
                                              env.obs_rms))  # fmt: skip
    env.close()


# ---- HER: relabelled on the raw goals, the recomputed reward raw, then normalised ----
def test_her_relabels_raw_goals_then_normalises_goals_and_rewards():
    env = rk.VecNormalize(rk.VectorGymEnv([BoxBitFlipping] * 2, seed=0), gamma=0.95)
    t = recorded(env, 120)
    reward_fn = BoxBitFlipping().compute_reward
    batch = rk.HER("future", 4, batch_size=40, seed=2, compute_reward=reward_fn).sample(
        t, normalizer=env
    )
    raw = rk.HER("future", 4, batch_size=40, seed=2, compute_reward=reward_fn).sample(t)
    # the raw batch's relabelled rewards are the env's reward of the raw goals
    np.testing.assert_array_equal(
        raw["reward"],
        reward_fn(raw["next_state"]["achieved_goal"], raw["state"]["desired_goal"], {}),
    )
    for part in ("state", "next_state"):
        for key in ("observation", "achieved_goal", "desired_goal"):
            np.testing.assert_array_equal(batch[part][key],
                                          by_hand_obs(raw[part][key], env.obs_rms[key]))
    np.testing.assert_array_equal(batch["reward"], by_hand_reward(raw["reward"], env.ret_rms))
    assert len(set(raw["reward"].tolist())) == 2  # relabelled successes and failures
    env.close()


def test_sac_with_her_runs_and_updates_on_a_normalised_goal_env():
    env = rk.VecNormalize(rk.VectorGymEnv([BoxBitFlipping] * 2, seed=0))
    her = rk.HER("future", 4, compute_reward=BoxBitFlipping().compute_reward)
    agent = rk.SAC.agent(env, seed=0, her=her, learning_starts=64, batch_size=32,
                         buffer_size=1000, hidden=(16,))  # fmt: skip
    rk.run(agent, env, rk.StopAfterNSteps(200))
    assert agent.policy.gradient_steps > 50
    assert agent.policy.observation_normalizer is env.observation_normalizer
    env.close()


# ---- the learners: DQN, SAC, TD3, DDPG learn on it; what the driver hands them ----
def batches_seen(policy, env, trajectory):
    """The batches of the next round, as the off-policy driver draws them on ``env``."""
    from rlkit.learners.drivers.off_policy import replay_normalizer

    return list(policy.batches(trajectory, 1, replay_normalizer(env)))


def test_dqn_on_a_normalised_cartpole_learns_from_normalised_batches():
    env = rk.VecNormalize(rk.VectorGymEnv("CartPole-v1", 2, seed=0))
    agent = rk.DQN.agent(env, seed=0, learning_starts=50, batch_size=16, buffer_size=1000,
                         train_freq=2)  # fmt: skip
    rk.run(agent, env, rk.StopAfterNSteps(200))
    learner = agent.policy.learner
    assert learner.gradient_steps == 75
    assert agent.trajectory.reward[:200].tolist() == [1.0] * 200  # raw in the replay
    sampler_state = learner.sampler.state_dict()
    (batch,) = batches_seen(learner, env, agent.trajectory)
    learner.sampler.load_state_dict(sampler_state)
    plain = learner.sampler.sample(agent.trajectory)
    np.testing.assert_array_equal(batch["state"].numpy(), by_hand_obs(plain["state"],
                                                                      env.obs_rms))
    np.testing.assert_array_equal(batch["reward"].numpy(),
                                  by_hand_reward(plain["reward"], env.ret_rms))
    assert agent.policy.observation_normalizer is env.observation_normalizer
    env.close()


@pytest.mark.parametrize("algorithm", ["SAC", "TD3", "DDPG"])
def test_actor_critics_on_a_normalised_pendulum_learn_from_normalised_batches(algorithm):
    env = rk.VecNormalize(rk.VectorGymEnv("Pendulum-v1", 2, seed=0))
    agent = getattr(rk, algorithm).agent(env, seed=0, learning_starts=50, batch_size=16,
                                         buffer_size=1000, hidden=(16,))  # fmt: skip
    rk.run(agent, env, rk.StopAfterNSteps(100))
    policy = agent.policy
    assert policy.gradient_steps == 25
    rng = policy.rng.bit_generator.state
    (batch,) = batches_seen(policy, env, agent.trajectory)
    policy.rng.bit_generator.state = rng
    (plain,) = list(policy.batches(agent.trajectory, 1))  # raw: no normalizer
    raw_state = plain["state"].numpy()
    np.testing.assert_array_equal(batch["state"].numpy(), by_hand_obs(raw_state, env.obs_rms))
    np.testing.assert_array_equal(batch["reward"].numpy(),
                                  by_hand_reward(plain["reward"].numpy(), env.ret_rms))
    np.testing.assert_array_equal(batch["action"].numpy(), plain["action"].numpy())
    env.close()


def test_prioritized_replay_and_n_step_rainbow_work_on_it():
    env = rk.VecNormalize(rk.VectorGymEnv("CartPole-v1", 2, seed=0))
    for algorithm in (rk.PrioritizedDQN, rk.Rainbow):
        agent = algorithm.agent(env, seed=0, learning_starts=50, batch_size=16,
                                buffer_size=500, total_steps=120)  # fmt: skip
        rk.run(agent, env, rk.StopAfterNSteps(120))
        assert agent.policy.learner.gradient_steps > 0
    env.close()


def test_the_same_statistics_and_parameters_on_the_sync_and_subprocess_backends():
    results = []
    for backend in ("sync", "subprocess"):
        env = rk.VecNormalize(rk.VectorGymEnv("Pendulum-v1", 2, seed=3, backend=backend))
        agent = rk.SAC.agent(env, seed=1, learning_starts=40, batch_size=16, buffer_size=500,
                             hidden=(16,))  # fmt: skip
        rk.run(agent, env, rk.StopAfterNSteps(120))
        results.append((env.obs_rms.state_dict(), env.ret_rms.state_dict(),
                        [p.detach().clone() for p in agent.policy.model.parameters()],
                        agent.trajectory.state[:120].copy()))  # fmt: skip
        env.close()
    (a_obs, a_ret, a_params, a_replay), (b_obs, b_ret, b_params, b_replay) = results
    np.testing.assert_array_equal(a_obs["mean"], b_obs["mean"])
    np.testing.assert_array_equal(a_obs["var"], b_obs["var"])
    np.testing.assert_array_equal(a_ret["var"], b_ret["var"])
    np.testing.assert_array_equal(a_replay, b_replay)
    for a, b in zip(a_params, b_params, strict=True):
        assert a.equal(b)


# ---- the policies keep the statistics: predict, evaluation, save and load ----
def raw_pendulum_obs(n=32, seed=0):
    rng = np.random.default_rng(seed)
    angle = rng.uniform(-np.pi, np.pi, n)
    return np.stack([np.cos(angle), np.sin(angle), rng.uniform(-8, 8, n)], 1).astype(np.float32)


@pytest.mark.parametrize("algorithm", ["SAC", "TD3"])
def test_actor_critic_predict_evaluate_save_and_load_use_the_frozen_statistics(
    algorithm, tmp_path
):
    env = rk.VecNormalize(rk.VectorGymEnv("Pendulum-v1", 2, seed=0))
    agent = getattr(rk, algorithm).agent(env, seed=0, learning_starts=50, batch_size=16,
                                         buffer_size=500, hidden=(16,))  # fmt: skip
    rk.run(agent, env, rk.StopAfterNSteps(150))
    policy = agent.policy
    raw = raw_pendulum_obs()
    with torch.no_grad():
        scaled = policy.model(torch.as_tensor(env.normalize_obs(raw))).numpy()
    expected = np.clip(2.0 * scaled, -2.0, 2.0).astype(np.float32)  # Box(-2, 2): unscaled
    np.testing.assert_allclose(agent.predict(raw), expected, rtol=1e-6)
    path = tmp_path / "policy.rlkit"
    rk.save(agent, path)
    loaded = rk.load(path)
    np.testing.assert_array_equal(loaded.observation_normalizer.rms.mean, env.obs_rms.mean)
    np.testing.assert_array_equal(loaded.predict(raw), agent.predict(raw))
    before = env.obs_rms.state_dict()
    returns = [rk.evaluate(p, rk.GymEnv("Pendulum-v1"), 2, seed=7).returns
               for p in (agent, loaded)]  # fmt: skip
    assert returns[0] == returns[1]
    assert env.obs_rms.count == before["count"]  # evaluation does not update the statistics
    unnormalised = rk.load(path)
    unnormalised.observation_normalizer = None
    assert not np.array_equal(unnormalised.predict(raw), loaded.predict(raw))
    env.close()


def test_dqn_predict_evaluate_save_load_and_export_use_the_frozen_statistics(tmp_path):
    env = rk.VecNormalize(rk.VectorGymEnv("CartPole-v1", 2, seed=0))
    agent = rk.DQN.agent(env, seed=0, learning_starts=50, batch_size=16, buffer_size=500)
    rk.run(agent, env, rk.StopAfterNSteps(200))
    rng = np.random.default_rng(0)
    raw = (rng.normal(size=(64, 4)) * [1.0, 2.0, 0.1, 1.5]).astype(np.float32)
    values = agent.policy.values(env.normalize_obs(raw), deterministic=True)
    np.testing.assert_array_equal(agent.predict(raw), values.argmax(1))
    assert not np.array_equal(agent.policy.values(raw).argmax(1), values.argmax(1))
    path = tmp_path / "dqn.rlkit"
    rk.save(agent, path)
    loaded = rk.load(path)
    np.testing.assert_array_equal(loaded.predict(raw), agent.predict(raw))
    returns = [rk.evaluate(p, rk.GymEnv("CartPole-v1"), 2, seed=3).returns
               for p in (agent, loaded)]  # fmt: skip
    assert returns[0] == returns[1]
    onnxruntime = pytest.importorskip("onnxruntime")  # the test extra has it
    rk.export(loaded, tmp_path / "dqn.onnx")
    session = onnxruntime.InferenceSession(str(tmp_path / "dqn.onnx"))
    out = session.run(None, {"obs": raw})[0]
    np.testing.assert_array_equal(np.asarray(out).reshape(-1), agent.predict(raw))
    env.close()


# ---- DatasetRecorder: the raw transitions ----
def test_the_dataset_recorder_records_raw_observations_and_rewards(tmp_path):
    datasets = []
    for normalize in (False, True):
        env = rk.VectorGymEnv("CartPole-v1", 2, seed=4)
        env = rk.VecNormalize(env) if normalize else env
        path = tmp_path / f"d{int(normalize)}.npz"
        rk.run(rk.RandomPolicy(seed=0), env, rk.StopAfterNSteps(200),
               rk.DatasetRecorder(path, seed=4))  # fmt: skip
        datasets.append(rk.Dataset.load(path))
        env.close()
    plain, normalized = datasets
    for field in ("observations", "actions", "rewards", "terminations", "truncations",
                  "next_observations"):  # fmt: skip
        np.testing.assert_array_equal(getattr(normalized, field), getattr(plain, field))
    assert normalized.rewards.tolist() == [1.0] * 200
    assert normalized.observation_space == plain.observation_space


# ---- refused by name ----
def test_learners_that_cannot_normalise_their_batches_are_refused_by_name():
    env = rk.VecNormalize(rk.VectorGymEnv("Pendulum-v1", 2, seed=0))
    agent = rk.MBPO.agent(env, seed=0)
    with pytest.raises(ValueError, match=r"MBPO learns from replay .* without rk.VecNormalize"):
        rk.run(agent, env, rk.StopAfterNSteps(10))
    env.close()

    class OwnSampler(rk.BatchSampler):
        def sample(self, trajectory, n_batches=1):  # no normalizer
            return super().sample(trajectory, n_batches)

    env = rk.VecNormalize(rk.VectorGymEnv("CartPole-v1", 2, seed=0))
    agent = rk.DQN.agent(env, seed=0)
    agent.policy.learner.sampler = OwnSampler(32, seed=0)
    with pytest.raises(ValueError, match=r"DQNLearner .* its sampler OwnSampler.sample takes "
                                         r"no normalizer"):  # fmt: skip
        rk.run(agent, env, rk.StopAfterNSteps(10))
    env.close()


def test_the_recording_methods_are_the_env_classes_own():
    env = rk.VecNormalize(rk.VectorGymEnv("CartPole-v1", 2, seed=0))
    t = rk.CircularArraySARTTrajectory(10, env.state_space, env.action_space)
    env.reset()
    update(t, rk.RandomPolicy(), env, rk.PRE_ACT_STAGE, np.array([0, 1]))
    np.testing.assert_array_equal(t.state[:2], env.original_state)
    env.close()
