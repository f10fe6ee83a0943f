import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk
from rlkit.envs.toy.random_walk_1000 import RandomWalk1000Env


def test_passes_gymnasium_env_checker(check_both):
    check_both("rlkit/RandomWalk1000-v0")
    check_both("rlkit/RandomWalk1000-v0", n_states=20, max_jump=3)


def test_jumps_are_uniform_up_to_max_jump_and_end_at_the_edges():
    env = RandomWalk1000Env()
    env.reset(seed=0)
    jumps = []
    for _ in range(2000):
        env.s = 500
        jumps.append(env.step(1)[0] - 500)
    assert min(jumps) == 1 and max(jumps) == 100
    assert abs(np.mean(jumps) - 50.5) < 2.0
    env.s = 3
    s, r, terminated, _, _ = env.step(0)
    assert (s, r, terminated) == (0, -1.0, True) or (1 <= s <= 2 and r == 0.0)
    env.reset(seed=1)
    env.s = 999
    s, r, terminated, truncated, _ = env.step(1)
    assert (s, r, terminated, truncated) == (1001, 1.0, True, False)


def test_true_values_satisfy_the_bellman_equation():
    env = RandomWalk1000Env(n_states=30, max_jump=5)
    v = env.true_values()
    for s in range(1, 31):
        targets = [t for t in range(s - 5, s + 6) if t != s]
        expected = np.mean([-1.0 if t < 1 else 1.0 if t > 30 else v[t] for t in targets])
        assert v[s] == pytest.approx(expected)
    big = gym.make("rlkit/RandomWalk1000-v0").unwrapped.true_values()
    assert np.all(np.diff(big[1:-1]) > 0) and big[500] == pytest.approx(-big[501], abs=1e-3)


def test_public_name_and_state_dict():
    assert rk.RandomWalk1000Env is RandomWalk1000Env
    env = RandomWalk1000Env()
    env.reset(seed=0)
    env.step(1)
    other = RandomWalk1000Env()
    other.load_state_dict(env.state_dict())
    assert other.s == env.s and other.step(0) == env.step(0)


def test_bad_input():
    with pytest.raises(ValueError, match="max_jump must be a positive integer"):
        RandomWalk1000Env(max_jump=0)
    env = RandomWalk1000Env()
    env.reset(seed=0)
    with pytest.raises(rk.InvalidActionError, match="expected 0 \\(left\\) or 1 \\(right\\)"):
        env.step(2)
