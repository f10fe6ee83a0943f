"""Checkpoint/resume of SAC, TD3 (with Ornstein-Uhlenbeck noise) and DDPG, on single and vector
envs: a run interrupted after a checkpoint and resumed equals the uninterrupted run bit for bit
(networks, targets, both optimizers, the entropy coefficient, noise state, generators, replay)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hooks.checkpoint.test_resume import Boom, Trap, assert_same

import rlkit as rk
from rlkit.core.state import get_state
from rlkit.hooks.checkpoint import CheckpointHook


def _setup(kind: str, n_envs: int) -> tuple[Any, Any]:
    if n_envs == 1:
        env = rk.GymEnv("Pendulum-v1", seed=3)
    else:
        env = rk.VectorGymEnv("Pendulum-v1", n_envs, seed=3)
    common = {"learning_starts": 30, "batch_size": 8, "hidden": (8, 8), "buffer_size": 500}
    if kind == "sac":
        return rk.SAC.agent(env, seed=1, **common), env
    noise = rk.OrnsteinUhlenbeckActionNoise(0.3, theta=0.5, dt=0.1)
    cls = rk.TD3 if kind == "td3" else rk.DDPG
    return cls.agent(env, seed=1, action_noise=noise, **common), env


def _run(kind, n_envs, steps, folder: Path, trap: Trap, resume=False):
    agent, env = _setup(kind, n_envs)
    hook = rk.TotalRewardPerEpisode() + trap + CheckpointHook(folder, every_n_steps=20)
    stop = rk.StopAfterNSteps(steps)
    rk.run(agent, env, stop, hook, resume_from=folder if resume else None)
    return agent, env, hook


@pytest.mark.parametrize(
    "kind, n_envs", [("sac", 1), ("td3", 1), ("ddpg", 1), ("sac", 2), ("td3", 2)]
)
def test_resume_equals_the_uninterrupted_run(tmp_path, kind, n_envs):
    steps = 90 * n_envs  # StopAfterNSteps counts transitions
    reference = _run(kind, n_envs, steps, tmp_path / "ref", Trap())
    with pytest.raises(Boom):
        _run(kind, n_envs, steps, tmp_path / "run", Trap(70))
    resumed = _run(kind, n_envs, steps, tmp_path / "run", Trap(), resume=True)
    assert resumed[0].policy.gradient_steps == reference[0].policy.gradient_steps > 0
    assert_same(get_state(resumed[0]), get_state(reference[0]), "agent")
    assert resumed[2][0].rewards == reference[2][0].rewards


def test_another_algorithms_checkpoint_is_refused_naming_both(tmp_path):
    from rlkit.hooks.checkpoint import CheckpointError

    env = rk.GymEnv("Pendulum-v1", seed=0)
    small = {"learning_starts": 5, "batch_size": 4, "hidden": (8,)}
    rk.run(rk.SAC.agent(env, **small), env, rk.StopAfterNSteps(10),
           CheckpointHook(tmp_path, every_n_steps=10))
    with pytest.raises(CheckpointError, match="TD3.load_state_dict: the state was saved by SAC"):
        rk.run(rk.TD3.agent(env, **small), env, rk.StopAfterNSteps(20), resume_from=tmp_path)
