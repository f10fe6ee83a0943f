"""Issue 10: a refused checkpoint load changes nothing, and files are checked before use
(rlkit/hooks/checkpoint/run_state.py, files.py)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

import rlkit as rk
from rlkit.core.state import get_state
from rlkit.hooks.checkpoint import CheckpointError, load_checkpoint, save_checkpoint

torch = pytest.importorskip("torch")


def same(a: Any, b: Any) -> bool:
    """Exact equality of two nested states (types, dtypes, values)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, torch.Tensor):
        return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and a != a:
        return b != b
    return a == b


def dqn_agent(hidden: int = 8, capacity: int = 200, seed: int = 0) -> tuple[rk.Agent, rk.GymEnv]:
    env = rk.GymEnv("CartPole-v1", seed=seed)
    torch.manual_seed(seed)
    net = torch.nn.Sequential(
        torch.nn.Linear(4, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 2)
    )
    approximator = rk.NeuralNetworkApproximator(net, lambda p: torch.optim.Adam(p, lr=1e-3))
    learner = rk.DQNLearner(
        approximator,
        target=rk.TargetNetwork(approximator, sync_every=10),
        sampler=rk.BatchSampler(8, seed=seed),
        controller=rk.InsertSampleRatioController(20, 4, 1),
        gamma=0.99,
    )
    trajectory = rk.CircularArraySARTTrajectory(capacity, env.state_space, env.action_space)
    explorer = rk.EpsilonGreedyExplorer(0.1, seed=seed)
    return rk.Agent(rk.QBasedPolicy(learner, explorer), trajectory), env


def tabular_agent(n_states: int, gamma: float, seed: int = 0) -> tuple[rk.Agent, rk.GymEnv]:
    env = rk.GymEnv("rlkit/RandomWalk1D-v0", seed=seed, n_states=n_states)
    q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.5)
    learner = rk.TDLearner(q, method="qlearning", gamma=gamma)
    explorer = rk.EpsilonGreedyExplorer(0.1, seed=seed)
    return rk.Agent(rk.QBasedPolicy(learner, explorer), rk.VectorSARTTrajectory()), env


def saved_run(tmp_path, agent: Any, env: Any, steps: int = 60):
    stop, hook = rk.StopAfterNSteps(steps), rk.TotalRewardPerEpisode()
    rk.run(agent, env, stop, hook)
    return save_checkpoint(
        tmp_path / "checkpoint-000000000060.npz", agent, env, stop, hook, step=steps, format="npz"
    )


def assert_refused_and_unchanged(path, agent, env, match: str) -> None:
    stop, hook = rk.StopAfterNSteps(100), rk.TotalRewardPerEpisode()
    rk.run(agent, env, rk.StopAfterNSteps(30), hook)  # some state of its own
    before = [get_state(x) for x in (agent, env, stop, hook)]
    with pytest.raises(CheckpointError, match=match) as error:
        load_checkpoint(path, agent, env, stop, hook)
    assert str(path) in str(error.value)
    after = [get_state(x) for x in (agent, env, stop, hook)]
    assert same(before, after)


def test_network_shape_mismatch_is_a_checkpoint_error_and_changes_nothing(tmp_path):
    path = saved_run(tmp_path, *dqn_agent(hidden=8, seed=1))
    agent, env = dqn_agent(hidden=16)
    assert_refused_and_unchanged(path, agent, env, r"size mismatch|shape")


def test_replay_capacity_mismatch_changes_nothing(tmp_path):
    path = saved_run(tmp_path, *dqn_agent(capacity=200, seed=1))
    agent, env = dqn_agent(capacity=100)
    assert_refused_and_unchanged(path, agent, env, "capacity=200")


def test_learner_settings_mismatch_leaves_gamma_and_table(tmp_path):
    # the learner's gamma is restored before its table is found not to fit
    path = saved_run(tmp_path, *tabular_agent(n_states=5, gamma=0.5, seed=1))
    agent, env = tabular_agent(n_states=7, gamma=0.9)
    assert_refused_and_unchanged(path, agent, env, "table has shape")
    assert agent.policy.learner.gamma == 0.9


def test_wrapper_mismatch_changes_nothing(tmp_path):
    import gymnasium as gym

    agent, env = tabular_agent(n_states=5, gamma=0.9, seed=1)
    path = saved_run(tmp_path, agent, env)
    wrapped = rk.GymEnv(gym.wrappers.RecordEpisodeStatistics(env.env), seed=0)
    agent2, _ = tabular_agent(n_states=5, gamma=0.9)
    assert_refused_and_unchanged(path, agent2, wrapped, "wrapper chain")


# ---- folder entries that lead out of the folder ----


def test_a_symlink_out_of_the_checkpoint_folder_is_refused(tmp_path):
    agent, env = tabular_agent(n_states=5, gamma=0.9, seed=1)
    outside = saved_run(tmp_path, agent, env)  # a valid checkpoint, outside the folder below
    folder = tmp_path / "run"
    folder.mkdir()
    link = folder / "checkpoint-000000000999.npz"
    os.symlink(outside, link)
    agent, env = tabular_agent(n_states=5, gamma=0.9)
    with pytest.raises(CheckpointError, match="symbolic link .* outside the checkpoint folder"):
        load_checkpoint(folder, agent, env)
    with pytest.raises(CheckpointError, match="outside the checkpoint folder"):
        rk.run(agent, env, rk.StopAfterNSteps(5), resume_from=folder)


def test_a_symlink_inside_the_folder_and_a_named_file_are_loaded(tmp_path):
    agent, env = tabular_agent(n_states=5, gamma=0.9, seed=1)
    path = saved_run(tmp_path, agent, env)
    os.symlink(path.name, tmp_path / "checkpoint-000000000999.npz")
    agent, env = tabular_agent(n_states=5, gamma=0.9)
    assert load_checkpoint(tmp_path, agent, env).step == 60
    assert load_checkpoint(path, agent, env).step == 60
