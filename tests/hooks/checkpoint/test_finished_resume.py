"""Issue 10: resuming from the final checkpoint of a finished run runs nothing
(rlkit/hooks/checkpoint/hook.py's restore method, rk.run)."""

from __future__ import annotations

from typing import Any

import pytest

import rlkit as rk
from rlkit.core.state import get_state
from rlkit.hooks.checkpoint import CheckpointHook, latest_checkpoint, read_checkpoint


def build(seed: int = 0) -> tuple[Any, Any]:
    env = rk.GymEnv("rlkit/RandomWalk1D-v0", seed=seed, n_states=5)
    q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.5)
    learner = rk.TDLearner(q, method="qlearning", gamma=0.9)
    explorer = rk.EpsilonGreedyExplorer(0.2, seed=seed)
    return rk.Agent(rk.QBasedPolicy(learner, explorer), rk.VectorSARTTrajectory()), env


def finished_run(folder, stop: Any) -> Any:
    agent, env = build()
    hook = rk.TotalRewardPerEpisode() + CheckpointHook(folder, every_n_episodes=2)
    rk.run(agent, env, stop, hook)
    assert read_checkpoint(latest_checkpoint(folder))["meta"]["finished"]
    return agent


@pytest.mark.parametrize(
    "make_stop, count",
    [(lambda: rk.StopAfterNEpisodes(5), "episodes"), (lambda: rk.StopAfterNSteps(50), "steps")],
)
def test_resume_from_a_finished_checkpoint_runs_nothing(tmp_path, make_stop, count):
    done = finished_run(tmp_path, make_stop())
    agent, env = build(seed=7)  # a new process: same objects, then the saved state
    stop = make_stop()
    hook = rk.TotalRewardPerEpisode() + CheckpointHook(tmp_path, every_n_episodes=2)
    before = sorted(p.name for p in tmp_path.iterdir())
    assert rk.run(agent, env, stop, hook, resume_from=tmp_path) is hook
    assert getattr(stop, count) == stop.n  # not 6 episodes for 5, not step 51 for 50
    assert len(hook[0].rewards) == len(done_rewards(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written
    assert get_state(agent.policy).keys() == get_state(done.policy).keys()
    assert_same_tables(agent, done)


def done_rewards(folder) -> list:
    return read_checkpoint(latest_checkpoint(folder))["hooks"][0]["state"]["rewards"]


def assert_same_tables(a: Any, b: Any) -> None:
    import numpy as np

    ta = a.policy.learner.approximator.table
    tb = b.policy.learner.approximator.table
    assert np.array_equal(ta, tb)


def test_a_larger_budget_continues_a_finished_run(tmp_path):
    finished_run(tmp_path, rk.StopAfterNSteps(50))
    agent, env = build(seed=7)
    stop = rk.StopAfterNSteps(80)
    hook = rk.TotalRewardPerEpisode() + CheckpointHook(tmp_path, every_n_episodes=2)
    rk.run(agent, env, stop, hook, resume_from=tmp_path)
    assert stop.steps == 80 and hook[1].steps == 80


class Countdown(rk.AbstractStopCondition):
    """Stops after ``n`` steps and cannot tell its progress."""

    def __init__(self, n: int) -> None:
        self.n, self.steps = n, 0

    def step(self, policy: Any, env: Any) -> bool:
        self.steps += 1
        return self.steps >= self.n

    def state_dict(self) -> dict:
        return {"steps": self.steps}

    def load_state_dict(self, state: dict) -> None:
        self.steps = state["steps"]


def test_a_stop_condition_without_progress_is_taken_as_finished_with_a_warning(tmp_path):
    finished_run(tmp_path, Countdown(50))
    agent, env = build(seed=7)
    stop = Countdown(50)
    hook = rk.TotalRewardPerEpisode() + CheckpointHook(tmp_path, every_n_episodes=2)
    with pytest.warns(UserWarning, match="final checkpoint of a finished run"):
        rk.run(agent, env, stop, hook, resume_from=tmp_path)
    assert stop.steps == 50 and hook[1].steps == 50
