"""Checkpoint and resume of vector runs: bit for bit on the sync and subprocess backends, equal
statistics on Ray."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import rlkit as rk
from rlkit.hooks.checkpoint import CheckpointHook


@pytest.fixture(scope="module")
def ray_session():
    ray = pytest.importorskip("ray")  # installed in CI (the test extra): never skipped there
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()


def build(backend: str) -> tuple[rk.Agent, rk.VectorGymEnv]:
    env = rk.VectorGymEnv("CartPole-v1", 3, seed=0, backend=backend, max_episode_steps=30)
    trajectory = rk.CircularArraySARTTrajectory(1000, env.state_space, env.action_space)
    return rk.Agent(rk.RandomPolicy(seed=0), trajectory), env


def hooks(folder: Any, **every: int) -> Any:
    return rk.TotalRewardPerEpisode() + rk.StepsPerEpisode() + CheckpointHook(folder, **every)


@pytest.mark.parametrize("every", [{"every_n_steps": 100}, {"every_n_episodes": 4}])
@pytest.mark.parametrize("backend", ["sync", "subprocess", "ray"])
def test_a_resumed_vector_run_continues_exactly(backend, every, tmp_path, request):
    if backend == "ray":
        request.getfixturevalue("ray_session")
    agent, env = build(backend)
    full = rk.TotalRewardPerEpisode() + rk.StepsPerEpisode()
    rk.run(agent, env, rk.StopAfterNSteps(600), full)
    expected_state, expected_replay = env.state.copy(), agent.trajectory.state.copy()
    env.close()

    agent, env = build(backend)
    rk.run(agent, env, rk.StopAfterNSteps(300), hooks(tmp_path, **every))
    env.close()
    agent, env = build(backend)  # a fresh process would build the same objects
    resumed = hooks(tmp_path, **every)
    rk.run(agent, env, rk.StopAfterNSteps(600), resumed, resume_from=tmp_path)
    try:
        assert resumed[0].rewards == full[0].rewards and len(full[0].rewards) > 20
        assert resumed[1].steps == full[1].steps
        np.testing.assert_array_equal(resumed[0].current, full[0].current)
        if backend != "ray":  # bit for bit, the environments' states included
            assert np.array_equal(env.state, expected_state)
            assert np.array_equal(agent.trajectory.state, expected_replay)
    finally:
        env.close()


def test_vector_env_state_round_trip_restores_every_sub_env():
    a = rk.VectorGymEnv("CartPole-v1", 2, seed=1)
    a.reset()
    for _ in range(7):
        a.act([1, 0])
    saved = a.state_dict()
    b = rk.VectorGymEnv("CartPole-v1", 2, seed=99)
    b.load_state_dict(saved)
    for _ in range(30):
        a.act([0, 1])
        b.act([0, 1])
        assert np.array_equal(a.state, b.state) and np.array_equal(a.reward, b.reward)
        assert np.array_equal(a.final_state, b.final_state)
    a.close()
    b.close()


def test_a_checkpoint_of_another_number_of_sub_envs_is_refused():
    saved = rk.VectorGymEnv("CartPole-v1", 2, seed=1).state_dict()
    with pytest.raises(ValueError, match="2 sub-envs, this env 3"):
        rk.VectorGymEnv("CartPole-v1", 3).load_state_dict(saved)


@pytest.mark.parametrize("at_episode_end", [False, True])
def test_a_stop_signal_on_a_vector_run_writes_an_unfinished_final_checkpoint(
    tmp_path, at_episode_end
):
    """Issue 21 item 18: a vector run stopped by Ctrl-C (a set StopSignal) is not over: its
    final checkpoint is not marked finished, so resuming continues it (as on a single env)."""
    from rlkit.hooks.checkpoint import latest_checkpoint, read_checkpoint

    agent, env = build("sync")
    stop = rk.StopSignal()

    def ask(t, policy, env):
        if at_episode_end == bool(env.done.any()) and t >= 5:
            stop.set()

    hook = rk.DoEveryNSteps(ask, n=1) + CheckpointHook(tmp_path, every_n_steps=10_000)
    rk.run(agent, env, rk.StopAfterNSteps(10_000) | stop, hook)
    meta = read_checkpoint(latest_checkpoint(tmp_path))["meta"]
    assert meta["step"] < 10_000 and not meta["finished"]
    env.close()
