"""``rk.check_env``: gymnasium's checker plus rlkit's contract (spaces, seeding, dtypes)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk


class Walk(gym.Env):
    """A small well-behaved env: position in [-5, 5], actions left/right, noisy rewards drawn
    from the env's own generator; ``broken`` picks one way to break rlkit's contract."""

    def __init__(self, broken: str = "") -> None:
        self.broken = broken
        self.observation_space = gym.spaces.Box(-5.0, 5.0, (1,), np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.x = 0.0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.x = 0.0
        return self._obs(), {}

    def step(self, action):
        self.x = float(np.clip(self.x + (1.0 if action else -1.0), -5, 5))
        noise = np.random.random() if self.broken == "global_rng" else self.np_random.random()
        reward = float("nan") if self.broken == "nan_reward" else float(noise)
        return self._obs(), reward, abs(self.x) >= 5, False, {}

    def _obs(self):
        dtype = np.float64 if self.broken == "float64" else np.float32
        return np.array([self.x], dtype=dtype)


def test_a_well_behaved_env_passes_and_the_report_says_which_learners_fit():
    report = rk.check_env(Walk(), n_steps=50)
    assert report.learners == (
        "value-based (DQN family)",
        "policy-gradient (VPG, A2C, PPO, TRPO, ES)",
    )
    assert report.steps_checked == 50 and report.env == "Walk"


def test_the_bundled_and_gymnasium_envs_pass():
    assert rk.check_env("CliffWalking-v1").learners[0] == "tabular"
    assert "continuous actor-critic (SAC, TD3, DDPG)" in rk.check_env("Pendulum-v1").learners
    assert rk.check_env(rk.GymEnv("rlkit/RandomWalk1D-v0")).env == "rlkit/RandomWalk1D-v0"


def test_an_env_drawing_from_the_global_generator_is_not_deterministic():
    with pytest.raises(rk.EnvCheckError) as info:
        rk.check_env(Walk("global_rng"))
    message = str(info.value)
    assert message.startswith("check_env: Walk does not work with rlkit:\n- ")
    assert "- not deterministic: reset(seed=0) and the same actions gave different results at " \
        "step 0" in message
    assert "(self.np_random)" in message


def test_observations_of_another_dtype_than_the_space_are_refused():
    with pytest.raises(rk.EnvCheckError) as info:
        rk.check_env(Walk("float64"))
    assert "the observation's dtype is float64, the observation space's float32" in str(info.value)
    assert "gymnasium.wrappers.DtypeObservation" in str(info.value)


def test_a_non_finite_reward_is_refused():
    with pytest.raises(rk.EnvCheckError, match="the reward must be a finite number, got nan"):
        rk.check_env(Walk("nan_reward"))


def test_unsupported_spaces_are_refused_naming_what_rlkit_supports():
    class Unbounded(Walk):
        def __init__(self):
            super().__init__()
            self.action_space = gym.spaces.Box(-np.inf, np.inf, (1,), np.float32)

    with pytest.raises(rk.EnvCheckError, match="a Box of actions needs finite bounds"):
        rk.check_env(Unbounded())

    class Text(Walk):
        def __init__(self):
            super().__init__()
            self.observation_space = gym.spaces.Text(5)

    with pytest.raises(rk.EnvCheckError, match="rlkit supports Box, Discrete, MultiDiscrete"):
        rk.check_env(Text())


def test_something_that_is_not_an_env_is_a_type_error():
    with pytest.raises(TypeError, match="check_env: env must be a gymnasium id, a gymnasium.Env"):
        rk.check_env(42)
