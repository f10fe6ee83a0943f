"""``rk.VecNormalize`` (rlkit/envs/vec_normalize.py): Stable-Baselines3's VecNormalize semantics
checked against a reference written here from SB3's formulas, statistics shared by the sub-envs
and equal on every backend, the training flag, Dict observations, raw returns in hooks,
checkpoints, and bad input (replay learners on it: test_vec_normalize_replay.py)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from observation_envs import DictCartPole

import rlkit as rk
from rlkit.envs.running_mean_std import RunningMeanStd


# ---- a reference from SB3's formulas (stable_baselines3/common/vec_env/vec_normalize.py) ----
class Reference:
    def __init__(self, n: int, gamma: float, clip_obs=10.0, clip_reward=10.0, eps=1e-8):
        self.mean, self.var, self.count = None, None, 1e-4
        self.ret_mean, self.ret_var, self.ret_count = 0.0, 1.0, 1e-4
        self.returns = np.zeros(n)
        self.gamma, self.clip_obs, self.clip_reward, self.eps = gamma, clip_obs, clip_reward, eps

    @staticmethod
    def merge(mean, var, count, batch):
        b_mean, b_var, n = np.mean(batch, axis=0), np.var(batch, axis=0), batch.shape[0]
        delta, total = b_mean - mean, count + n
        m2 = var * count + b_var * n + delta**2 * count * n / total
        return mean + delta * n / total, m2 / total, total

    def observe(self, obs):
        if self.mean is None:
            self.mean, self.var = np.zeros(obs.shape[1:]), np.ones(obs.shape[1:])
        self.mean, self.var, self.count = self.merge(self.mean, self.var, self.count, obs)

    def obs(self, obs):
        scaled = (obs - self.mean) / np.sqrt(self.var + self.eps)
        return np.clip(scaled, -self.clip_obs, self.clip_obs).astype(np.float32)

    def reward(self, reward, done):
        self.returns = self.returns * self.gamma + reward
        self.ret_mean, self.ret_var, self.ret_count = self.merge(
            self.ret_mean, self.ret_var, self.ret_count, self.returns
        )
        out = np.clip(reward / np.sqrt(self.ret_var + self.eps), -self.clip_reward,
                      self.clip_reward).astype(np.float32)  # fmt: skip
        self.returns[done] = 0.0
        return out


def test_running_mean_std_is_the_parallel_update_with_a_prior_count_of_1e_4():
    rms = RunningMeanStd(shape=(2,))
    batch = np.array([[1.0, 2.0], [3.0, 6.0], [5.0, 1.0]])
    rms.update(batch)
    np.testing.assert_array_equal(rms.mean, batch.mean(0) * 3 / 3.0001)
    assert rms.count == 3.0001
    # with many batches the statistics are those of all samples (the prior weighs 1e-4)
    rng = np.random.default_rng(0)
    data = rng.normal(3.0, 2.0, size=(50, 8, 2))
    rms = RunningMeanStd(shape=(2,))
    for step in data:
        rms.update(step)
    flat = data.reshape(-1, 2)
    np.testing.assert_allclose(rms.mean, flat.mean(0), rtol=1e-5)
    np.testing.assert_allclose(rms.var, flat.var(0), rtol=1e-5)


def test_observations_and_rewards_follow_sb3_step_by_step():
    env = rk.VecNormalize(rk.VectorGymEnv("CartPole-v1", 4, seed=3), gamma=0.98)
    raw = rk.VectorGymEnv("CartPole-v1", 4, seed=3)
    ref = Reference(4, 0.98)
    env.reset()
    raw.reset()
    ref.observe(raw.state)
    np.testing.assert_array_equal(env.state, ref.obs(raw.state))
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(300):
        actions = rng.integers(0, 2, size=4)
        env.act(actions)
        raw.act(actions)
        ref.observe(raw.state)  # the reset observations where an episode ended, as SB3's
        np.testing.assert_array_equal(env.state, ref.obs(raw.state))
        np.testing.assert_array_equal(env.final_state, ref.obs(raw.final_state))
        np.testing.assert_array_equal(env.reward, ref.reward(raw.reward, raw.done))
        np.testing.assert_array_equal(env.original_reward, raw.reward)
        np.testing.assert_array_equal(env.original_state, raw.state)
        np.testing.assert_array_equal(env.done, raw.done)
        ends += int(raw.done.sum())
    assert ends > 10 and env.state.dtype == np.float32
    np.testing.assert_array_equal(env.returns[raw.done], 0.0)
    env.close()
    raw.close()


def test_clipping_and_the_frozen_statistics_of_training_false():
    env = rk.VecNormalize(rk.VectorGymEnv("CartPole-v1", 2, seed=0), clip_obs=0.5,
                          clip_reward=0.25)  # fmt: skip
    env.reset()
    for _ in range(20):
        env.act([0, 0])
    assert np.abs(env.state).max() == np.float32(0.5) and env.reward.max() == 0.25
    env.training = False
    before = env.obs_rms.state_dict(), env.ret_rms.state_dict()
    for _ in range(20):
        env.act([1, 1])
    after = env.obs_rms.state_dict(), env.ret_rms.state_dict()
    for a, b in zip(before, after, strict=True):
        np.testing.assert_array_equal(a["mean"], b["mean"])
        assert a["count"] == b["count"]
    env.close()


@pytest.mark.parametrize("backend", ["subprocess", "ray"])
def test_statistics_are_shared_and_the_same_on_every_backend(backend):
    if backend == "ray":
        ray = pytest.importorskip("ray")  # in the test extra: never skipped in CI
        if not ray.is_initialized():
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    envs = [rk.VecNormalize(rk.VectorGymEnv("CartPole-v1", 3, seed=1, backend=b), gamma=0.9)
            for b in ("sync", backend)]  # fmt: skip
    try:
        for env in envs:
            env.reset()
        for step in range(60):
            actions = np.array([step % 2, 1, 0])
            for env in envs:
                env.act(actions)
        a, b = envs
        assert a.obs_rms.count == b.obs_rms.count == 3 * 61 + 1e-4  # one update for all sub-envs
        np.testing.assert_array_equal(a.obs_rms.mean, b.obs_rms.mean)
        np.testing.assert_array_equal(a.obs_rms.var, b.obs_rms.var)
        np.testing.assert_array_equal(a.ret_rms.var, b.ret_rms.var)
        np.testing.assert_array_equal(a.state, b.state)
        np.testing.assert_array_equal(a.reward, b.reward)
    finally:
        for env in envs:
            env.close()


def test_dict_observations_are_normalised_per_key():
    make = [DictCartPole] * 2
    env = rk.VecNormalize(rk.VectorGymEnv(make, seed=0), norm_obs_keys=["pole"])
    raw = rk.VectorGymEnv(make, seed=0)
    assert sorted(env.obs_rms) == ["pole"]
    env.reset()
    raw.reset()
    ref = Reference(2, 0.99)
    ref.observe(raw.state["pole"])
    for _ in range(30):
        env.act([1, 0])
        raw.act([1, 0])
        ref.observe(raw.state["pole"])
        np.testing.assert_array_equal(env.state["pole"], ref.obs(raw.state["pole"]))
        np.testing.assert_array_equal(env.state["cart"], raw.state["cart"])  # not normalised
    every = rk.VecNormalize(rk.VectorGymEnv(make, seed=0))
    assert sorted(every.obs_rms) == ["cart", "pole"]
    for e in (env, raw, every):
        e.close()


def test_hooks_report_the_raw_returns():
    returns = []
    for normalize in (False, True):
        env = rk.VectorGymEnv("CartPole-v1", 4, seed=2)
        env = rk.VecNormalize(env) if normalize else env
        hook = rk.TotalRewardPerEpisode() + rk.RewardsPerEpisode()
        rk.run(rk.RandomPolicy(seed=0), env, rk.StopAfterNSteps(800), hook)
        returns.append((hook[0].rewards, hook[1].rewards))
        env.close()
    assert returns[0] == returns[1] and len(returns[0][0]) > 20


@pytest.mark.parametrize("algorithm", ["PPO", "A2C", "VPG", "TRPO", "RecurrentPPO"])
def test_on_policy_learners_learn_on_it_and_keep_its_statistics(algorithm):
    env = rk.VecNormalize(rk.VectorGymEnv("rlkit/CartPoleNoVel-v1", 2, seed=0))
    small = {"n_steps": 8}
    if algorithm in ("PPO", "RecurrentPPO", "TRPO"):
        small["batch_size"] = 16
    if algorithm == "RecurrentPPO":
        small["lstm_hidden_size"] = 8
    agent = getattr(rk, algorithm).agent(env, seed=0, **small)
    rk.run(agent, env, rk.StopAfterNSteps(64))
    assert agent.policy.observation_normalizer is env.observation_normalizer
    assert agent.policy.updates == 4 and env.obs_rms.count == 2 * 33 + 1e-4
    env.close()


def test_a_checkpoint_resumes_the_statistics_bit_exactly(tmp_path):
    def build():
        env = rk.VecNormalize(rk.VectorGymEnv("CartPole-v1", 3, seed=4), gamma=0.98)
        return rk.PPO.agent(env, seed=1, n_steps=16, batch_size=24, n_epochs=2), env

    agent, env = build()
    rk.run(agent, env, rk.StopAfterNSteps(480), rk.TotalRewardPerEpisode())
    expected = env.state_dict(), [p.detach().clone() for p in agent.policy.model.parameters()]
    env.close()

    agent, env = build()
    rk.run(agent, env, rk.StopAfterNSteps(240), rk.CheckpointHook(tmp_path, every_n_steps=48))
    env.close()
    agent, env = build()
    rk.run(agent, env, rk.StopAfterNSteps(480), rk.CheckpointHook(tmp_path, every_n_steps=48),
           resume_from=tmp_path)  # fmt: skip
    got = env.state_dict()
    for key in ("returns", "reward", "original_reward", "state", "final_state"):
        np.testing.assert_array_equal(got[key], expected[0][key])
    for key in ("mean", "var"):
        np.testing.assert_array_equal(got["obs_rms"][key], expected[0]["obs_rms"][key])
    np.testing.assert_array_equal(got["ret_rms"]["var"], expected[0]["ret_rms"]["var"])
    assert got["ret_rms"]["count"] == expected[0]["ret_rms"]["count"]
    for a, b in zip(agent.policy.model.parameters(), expected[1], strict=True):
        assert a.detach().equal(b)
    # the policy still sees the env's (restored, in place) statistics
    assert agent.policy.observation_normalizer.rms is env.obs_rms
    env.close()


def test_a_checkpoint_of_another_layout_is_refused_unchanged():
    env = rk.VecNormalize(rk.VectorGymEnv("CartPole-v1", 2, seed=0))
    other = rk.VecNormalize(rk.VectorGymEnv("CartPole-v1", 2, seed=0), norm_obs=False)
    env.reset()
    other.reset()
    with pytest.raises(ValueError, match="observation statistics"):
        env.load_state_dict(other.state_dict())
    env.close()
    other.close()


# ---- bad input: the object, the value and what was expected ----
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"clip_obs": 0.0}, r"VecNormalize: clip_obs must be a positive number, got 0.0"),
        ({"clip_reward": -1}, r"VecNormalize: clip_reward must be a positive number, got -1"),
        ({"epsilon": 0}, r"VecNormalize: epsilon must be a positive number, got 0"),
        ({"gamma": 1.0}, r"VecNormalize: gamma .* must be in \[0, 1\), got 1.0"),
        ({"gamma": -0.1}, r"must be in \[0, 1\), got -0.1"),
        ({"norm_obs_keys": ["x"]}, r"norm_obs_keys=\['x'\] is for Dict observation spaces"),
    ],
)
def test_bad_settings_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        rk.VecNormalize(rk.VectorGymEnv("CartPole-v1", 2, seed=0), **kwargs)


def test_bad_spaces_and_envs_are_refused():
    with pytest.raises(ValueError, match=r"needs a Box or Dict observation space, got Discrete"):
        rk.VecNormalize(rk.VectorGymEnv("FrozenLake-v1", 2, seed=0))
    rk.VecNormalize(rk.VectorGymEnv("FrozenLake-v1", 2, seed=0), norm_obs=False)  # rewards only
    with pytest.raises(ValueError, match=r"norm_obs_keys names 'nope', not a key"):
        rk.VecNormalize(rk.VectorGymEnv([DictCartPole] * 2), norm_obs_keys=["nope"])
    with pytest.raises(TypeError, match=r"venv must be an rk.AbstractVectorEnv.*GymEnv"):
        rk.VecNormalize(rk.GymEnv("CartPole-v1"))
    with pytest.raises(TypeError, match="normalised already"):
        rk.VecNormalize(rk.VecNormalize(rk.VectorGymEnv("CartPole-v1", 2)))


class MixedDict(gym.ObservationWrapper):
    def __init__(self) -> None:
        super().__init__(gym.make("CartPole-v1"))
        self.observation_space = gym.spaces.Dict(
            {"x": self.env.observation_space, "n": gym.spaces.Discrete(3)}
        )

    def observation(self, observation):
        return {"x": observation, "n": 0}


def test_a_dict_key_that_is_not_a_box_is_named():
    with pytest.raises(ValueError, match=r"observation key 'n' is Discrete\(3\), not a Box"):
        rk.VecNormalize(rk.VectorGymEnv([MixedDict] * 2))
    env = rk.VecNormalize(rk.VectorGymEnv([MixedDict] * 2, seed=0), norm_obs_keys=["x"])
    env.reset()
    assert env.state["n"].tolist() == [0, 0]
    env.close()
