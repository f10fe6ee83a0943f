"""rlkit/envs/images.py: Atari and MinAtar envs as DQN trains on them, checkpointable."""

from __future__ import annotations

import numpy as np
import pytest

import rlkit as rk
from rlkit.core.state import get_state, set_state


def _play(env: rk.GymEnv, actions) -> list:
    out = []
    for a in actions:
        if env.done:
            env.reset()
        env.act(a)
        out.append((env.state.copy(), env.reward, env.is_terminated, env.is_truncated))
    return out


def _same(a, b):
    assert len(a) == len(b)
    for (s1, r1, t1, u1), (s2, r2, t2, u2) in zip(a, b, strict=True):
        assert np.array_equal(s1, s2) and (r1, t1, u1) == (r2, t2, u2)


@pytest.mark.parametrize("env_id", ["ALE/Breakout-v5", "MinAtar/Breakout-v1"])
def test_a_restored_env_continues_its_episode_exactly(env_id):
    if env_id.startswith("ALE"):
        pytest.importorskip("ale_py")
        make = lambda: rk.make_atari_env(env_id)  # noqa: E731
    else:
        pytest.importorskip("minatar")
        make = lambda: rk.make_minatar_env(env_id)  # noqa: E731
    env = rk.GymEnv(make(), seed=0)
    env.reset()
    rng = np.random.default_rng(0)
    _play(env, rng.integers(env.action_space.n, size=40))
    saved = get_state(env)
    actions = rng.integers(env.action_space.n, size=60)
    expected = _play(env, actions)
    other = rk.GymEnv(make(), seed=123)
    other.reset()
    set_state(other, saved)
    _same(_play(other, actions), expected)


def test_atari_wrappers_episodic_life_fire_reset_and_clipped_rewards():
    pytest.importorskip("ale_py")
    env = rk.make_atari_env("ALE/Breakout-v5")
    obs, _ = env.reset(seed=0)
    assert obs.shape == (4, 84, 84) and obs.dtype == np.uint8
    assert all((obs[i] == obs[-1]).all() for i in range(4))  # the first frame repeated
    ale = env.unwrapped.ale
    lives, rewards = ale.lives(), set()
    rng = np.random.default_rng(0)
    for _ in range(3000):
        obs, reward, terminated, truncated, info = env.step(int(rng.integers(4)))
        rewards.add(reward)
        if terminated or truncated:
            break
    assert terminated and ale.lives() == lives - 1 and not info["game_over"]  # a life lost
    env.reset()
    assert ale.lives() == lives - 1  # the game went on: no real reset
    assert rewards <= {0.0, 1.0}


def test_atari_rewards_are_clipped_to_their_sign():
    pytest.importorskip("ale_py")
    clipped, raw = (
        rk.make_atari_env("ALE/SpaceInvaders-v5"),
        rk.make_atari_env("ALE/SpaceInvaders-v5", clip_reward=False),
    )
    clipped.reset(seed=1), raw.reset(seed=1)
    rng = np.random.default_rng(1)
    pairs = []
    for _ in range(400):
        a = int(rng.integers(clipped.action_space.n))
        pairs.append((clipped.step(a)[1], raw.step(a)[1]))
    assert any(r > 1 for _, r in pairs)  # invaders are worth 5 to 30 points
    assert all(c == np.sign(r) for c, r in pairs)


def test_minatar_observations_are_channels_first_uint8():
    pytest.importorskip("minatar")
    env = rk.make_minatar_env("MinAtar/SpaceInvaders-v1")
    obs, _ = env.reset(seed=0)
    raw = env.unwrapped.game.state()
    assert obs.dtype == np.uint8 and obs.shape == (raw.shape[2], 10, 10)
    assert np.array_equal(obs, raw.transpose(2, 0, 1).astype(np.uint8))
