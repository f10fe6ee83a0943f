"""Issue 21 item 5: a refused checkpoint load leaves a subprocess VectorGymEnv's workers
running and its state unchanged (rlkit/envs/vector.py check_state_dict,
rlkit/hooks/checkpoint/run_state.py)."""

from __future__ import annotations

import functools
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.classic_control import CartPoleEnv
from gymnasium.wrappers import TimeLimit

import rlkit as rk
from rlkit.core.state import get_state
from rlkit.hooks.checkpoint import CheckpointError, CheckpointHook, load_checkpoint


def same(a: Any, b: Any) -> bool:
    """Exact equality of two nested states."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def limited() -> gym.Env:
    return TimeLimit(CartPoleEnv(), 100)


def bare() -> gym.Env:
    return CartPoleEnv()


def build(fn, backend: str) -> tuple[rk.Agent, rk.VectorGymEnv]:
    env = rk.VectorGymEnv([fn, fn], seed=0, backend=backend)
    trajectory = rk.CircularArraySARTTrajectory(500, env.state_space, env.action_space)
    return rk.Agent(rk.RandomPolicy(seed=0), trajectory), env


@pytest.mark.parametrize("backend", ["subprocess", "sync"])
def test_a_refused_load_leaves_the_workers_running(tmp_path, backend):
    agent, env = build(limited, backend)
    rk.run(agent, env, rk.StopAfterNSteps(100), CheckpointHook(tmp_path, every_n_steps=50))
    env.close()

    agent, env = build(bare, backend)  # sub-envs without the TimeLimit the saved ones had
    rk.run(agent, env, rk.StopAfterNSteps(20))
    before = [get_state(agent), get_state(env)]
    with pytest.raises(CheckpointError, match="nothing was changed") as error:
        load_checkpoint(tmp_path, agent, env)
    assert "sub-env 0" in str(error.value) and "TimeLimit" in str(error.value)
    with pytest.raises(CheckpointError):
        rk.run(agent, env, rk.StopAfterNSteps(60), resume_from=tmp_path)
    after = [get_state(agent), get_state(env)]  # read back from the living workers
    assert same(after, before)
    hook = rk.TotalRewardPerEpisode()
    rk.run(agent, env, rk.StopAfterNSteps(60), hook)  # the workers still step
    assert env.state.shape == (2, 4)
    env.close()


def test_check_state_dict_changes_nothing_and_names_the_sub_env():
    saved_env = rk.VectorGymEnv([limited, bare], seed=1)
    saved_env.reset()
    state = saved_env.state_dict()
    env = rk.VectorGymEnv([bare, bare], seed=1, backend="subprocess")
    env.reset()
    before = env.state_dict()
    with pytest.raises(ValueError, match="saved state of sub-env 0 does not fit"):
        env.check_state_dict(state)
    state["sub_envs"] = state["sub_envs"][1:] * 2  # both bare: fits
    env.check_state_dict(state)
    assert same(env.state_dict(), before)
    env.load_state_dict(state)
    env.act(np.zeros(2, dtype=np.int64))
    env.close()
    saved_env.close()


def test_sub_envs_of_one_id_are_checked_with_one_local_env(monkeypatch):
    env = rk.VectorGymEnv("CartPole-v1", 3, seed=0, backend="subprocess")
    env.reset()
    state = env.state_dict()
    made = []
    original = gym.make
    monkeypatch.setattr(gym, "make", functools.partial(_counting, original, made))
    env.check_state_dict(state)
    assert len(made) == 1
    env.close()


def _counting(make, made, *args, **kwargs):
    made.append(args)
    return make(*args, **kwargs)
