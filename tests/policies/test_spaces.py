"""A policy run or evaluated on an env whose spaces do not fit its network
(rlkit/policies/spaces.py)."""

from __future__ import annotations

import gymnasium as gym
import pytest

import rlkit as rk
from rlkit.policies.spaces import spaces_fit


def test_spaces_fit_compares_what_the_network_depends_on():
    box4, wide4, box6 = (gym.spaces.Box(-b, b, (n,)) for b, n in ((1, 4), (5, 4), (1, 6)))
    two = gym.spaces.Discrete(2)
    assert spaces_fit(box4, two, wide4, two)  # bounds are free
    assert not spaces_fit(box4, two, box6, two)
    assert not spaces_fit(box4, two, box4, gym.spaces.MultiBinary(2))
    assert not spaces_fit(
        box4, gym.spaces.MultiDiscrete([2, 3]), box4, gym.spaces.MultiDiscrete([3, 2])
    )


def test_a_policy_for_another_env_is_refused_at_plan_time():
    # it failed at the first step: "mat1 and mat2 shapes cannot be multiplied (1x6 and 4x64)"
    policy = rk.PPO(rk.GymEnv("CartPole-v1"), seed=0)
    acrobot = rk.GymEnv("Acrobot-v1", seed=0)
    expected = (
        r"made for observations Box\(shape=\(4,\)\) and actions Discrete\(2\), but the env "
        r"GymEnv\(Acrobot-v1\) has observations Box\(shape=\(6,\)\) and actions Discrete\(3\)"
    )
    with pytest.raises(ValueError, match=rf"^rk.greedy\(PPO\): {expected}"):
        rk.evaluate(policy, acrobot, 1)
    with pytest.raises(ValueError, match=rf"^PPO: {expected}"):
        rk.run(rk.PPO.agent(rk.GymEnv("CartPole-v1")), acrobot, rk.StopAfterNSteps(5))


@pytest.mark.parametrize("make", [lambda p: p, rk.greedy])
def test_off_policy_actor_critics_too(make):
    policy = rk.SAC(rk.GymEnv("Pendulum-v1"), seed=0, hidden=(8,))
    with pytest.raises(ValueError, match=r"SAC\)?: made for observations Box\(shape=\(3,\)\)"):
        rk.run(make(policy), rk.GymEnv("MountainCarContinuous-v0", seed=0), rk.StopAfterNSteps(3))
