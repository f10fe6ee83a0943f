"""Issue 21, item 13: PPO and TRPO on a nan observation say which observation, from which env
and sub-env, instead of torch's "probability tensor contains either inf, nan or element < 0"."""

import gymnasium as gym
import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.policies.non_finite import NonFiniteObservationError


class NanObservation(gym.ObservationWrapper):
    """Observation index 2 is nan from the ``after``-th observation on."""

    def __init__(self, env, after=0):
        super().__init__(env)
        self.after, self.seen = after, 0

    def observation(self, observation):
        self.seen += 1
        if self.seen > self.after:
            observation = observation.copy()
            observation[2] = np.nan
        return observation


@pytest.mark.parametrize("algorithm", ["PPO", "TRPO", "A2C"])
def test_a_nan_observation_names_the_observation_and_the_env(algorithm):
    env = rk.GymEnv(NanObservation(gym.make("CartPole-v1"), after=5), seed=0)
    agent = getattr(rk, algorithm).agent(env, seed=0, n_steps=64)
    with pytest.raises(NonFiniteObservationError, match=rf"{algorithm}: cannot act on a "
                       r"non-finite observation: env.state = \[.*nan.*\] of "
                       r"GymEnv\(CartPole-v1\) \(nan at index \(2,\)\)") as caught:
        rk.run(agent, env, rk.StopAfterNSteps(64))
    assert "probability tensor" in str(caught.value.__cause__)  # what torch said


def test_a_vector_env_names_the_sub_env():
    def make(i):
        return lambda: NanObservation(gym.make("CartPole-v1"), after=10**9 if i != 2 else 3)

    env = rk.VectorGymEnv([make(i) for i in range(4)], 4, seed=0)
    agent = rk.PPO.agent(env, seed=0, n_steps=16)
    with pytest.raises(NonFiniteObservationError, match=r"PPO: cannot act on a non-finite "
                       r"observation: env.state\[2\] \(sub-env 2 of 4\) = \[.*nan"):
        rk.run(agent, env, rk.StopAfterNSteps(64))


def test_a_gaussian_policy_does_not_step_the_env_with_a_nan_action():
    env = rk.GymEnv(NanObservation(gym.make("Pendulum-v1"), after=2), seed=0)
    agent = rk.PPO.agent(env, seed=0, n_steps=64)
    with pytest.raises(NonFiniteObservationError, match=r"PPO: .* of GymEnv\(Pendulum-v1\)"):
        rk.run(agent, env, rk.StopAfterNSteps(64))


def test_greedy_evaluation_says_it_too():
    env = rk.GymEnv(NanObservation(gym.make("CartPole-v1")), seed=0)
    policy = rk.PPO(env, seed=0)
    env.reset()
    with pytest.raises(NonFiniteObservationError, match=r"rk.greedy\(PPO\): cannot act"):
        rk.greedy(policy)(env)


def test_nan_parameters_with_a_finite_observation_blame_the_model():
    env = rk.GymEnv("CartPole-v1", seed=0)
    policy = rk.PPO(env, seed=0)
    with torch.no_grad():
        for p in policy.model.parameters():
            p.fill_(float("nan"))
    env.reset()
    with pytest.raises(RuntimeError, match="probability tensor"):
        policy(env)  # torch's own error: the observation is not at fault
