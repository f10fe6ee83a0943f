"""Issue 10: TensorBoard events of a run restarted from scratch in the same folder are not
shown twice, and statistics such as grad_norm are restored with the rest (rlkit/hooks/logging.py,
rlkit/approximators/neural.py)."""

from __future__ import annotations

import math

import pytest

import rlkit as rk
from rlkit.core.dispatch import collect_statistics

torch = pytest.importorskip("torch")
pytest.importorskip("tensorboard")


def scalar_steps(logdir, tag: str) -> list[int]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(logdir))
    events.Reload()
    return [e.step for e in events.Scalars(tag)]


def test_a_run_restarted_from_scratch_in_the_same_folder_shows_each_step_once(tmp_path):
    def run(steps: int) -> rk.TensorBoardLogger:
        logger = rk.TensorBoardLogger(tmp_path, stats_every_n_steps=None)
        rk.run(
            rk.RandomPolicy(seed=0),
            rk.GymEnv("CartPole-v1", seed=0),
            rk.StopAfterNSteps(steps),
            logger,
        )
        return logger

    run(150)  # killed before its first checkpoint: its events stay in the folder
    run(300)  # started again from scratch
    steps = scalar_steps(tmp_path, "episode/return")
    assert len(steps) == len(set(steps)) and steps == sorted(steps)
    assert steps[-1] <= 300


def test_a_second_run_of_the_same_logger_continues(tmp_path):
    logger = rk.TensorBoardLogger(tmp_path, stats_every_n_steps=None)
    policy, env = rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0)
    rk.run(policy, env, rk.StopAfterNEpisodes(3), logger)
    rk.run(policy, env, rk.StopAfterNEpisodes(3), logger)
    assert len(scalar_steps(tmp_path, "episode/return")) == 6


def dqn(seed: int, max_grad_norm: float | None):
    env = rk.GymEnv("CartPole-v1", seed=seed)
    torch.manual_seed(seed)
    net = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    approximator = rk.NeuralNetworkApproximator(
        net, lambda p: torch.optim.Adam(p, lr=1e-3), max_grad_norm=max_grad_norm
    )
    learner = rk.DQNLearner(
        approximator,
        target=rk.TargetNetwork(approximator, sync_every=10),
        sampler=rk.BatchSampler(16, seed=seed),
        controller=rk.InsertSampleRatioController(32, 4, 1),
        gamma=0.99,
    )
    trajectory = rk.CircularArraySARTTrajectory(500, env.state_space, env.action_space)
    policy = rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.1, seed=seed))
    return rk.Agent(policy, trajectory), env


@pytest.mark.parametrize("max_grad_norm", [None, 10.0])
def test_statistics_read_the_same_after_a_restore(max_grad_norm):
    agent, env = dqn(0, max_grad_norm)
    rk.run(agent, env, rk.StopAfterNSteps(100))
    stats = collect_statistics(agent)
    assert math.isfinite(stats["approximator/grad_norm"])
    restored, _ = dqn(1, max_grad_norm)
    restored.load_state_dict(agent.state_dict())
    assert collect_statistics(restored) == stats
