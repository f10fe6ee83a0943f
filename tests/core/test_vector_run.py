"""The run loop of vector envs: stages, stop conditions counting transitions and sub-env episodes,
plan-time errors for single-env-only parts, hooks seeing every sub-env's episodes."""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np
import pytest

import rlkit as rk
from rlkit.core.dispatch import DispatchError


def venv(n: int = 4, seed: int = 0, **kwargs: Any) -> rk.VectorGymEnv:
    return rk.VectorGymEnv("CartPole-v1", n, seed=seed, **kwargs)


class StageLog(rk.AbstractHook):
    def __init__(self) -> None:
        self.log: list[str] = []

    def pre_experiment(self, policy, env):
        self.log.append("PreExperiment")

    def pre_act(self, policy, env, action):
        assert np.shape(action) == (env.n_envs,)
        self.log.append("PreAct")

    def post_act(self, policy, env):
        self.log.append("PostAct")

    def post_experiment(self, policy, env):
        self.log.append("PostExperiment")


def test_stages_of_the_vector_loop_and_steps_count_transitions():
    env, hook, stop = venv(4), StageLog(), rk.StopAfterNSteps(10)
    rk.run(rk.RandomPolicy(seed=0), env, stop, hook)
    assert hook.log == ["PreExperiment"] + ["PreAct", "PostAct"] * 3 + ["PostExperiment"]
    assert stop.steps == 12  # three steps of four transitions
    env.close()


def test_a_second_run_continues_the_sub_envs_episodes():
    env, hook = venv(2), rk.StepsPerEpisode()
    rk.run(rk.RandomPolicy(seed=0), env, rk.StopAfterNSteps(6), hook)
    state = env.state.copy()
    rk.run(rk.RandomPolicy(seed=1), env, rk.StopAfterNSteps(2), hook)
    assert not np.array_equal(env.state, state)
    assert hook.current.sum() + sum(hook.steps) == 8  # no reset between the runs
    env.close()


def test_stop_after_n_episodes_counts_finished_sub_env_episodes():
    env = venv(4)
    stop, hook = rk.StopAfterNEpisodes(7), rk.TotalRewardPerEpisode()
    rk.run(rk.RandomPolicy(seed=0), env, stop, hook)
    assert stop.episodes == len(hook.rewards) >= 7
    assert stop.episodes - 7 < 4  # stopped at the step where the count reached 7
    env.close()


def test_post_experiment_is_announced_when_the_policy_raises():
    class Failing(rk.AbstractPolicy):
        def act(self, env):
            raise RuntimeError("no action")

    hook = StageLog()
    with pytest.raises(RuntimeError, match="no action"):
        rk.run(Failing(), venv(2), rk.StopAfterNSteps(10), hook)
    assert hook.log == ["PreExperiment", "PostExperiment"]


def test_single_env_only_hooks_are_refused_before_the_first_step_naming_them():
    hook = StageLog() + rk.DoEveryNEpisodes(lambda t, policy, env: None, n=1)
    with pytest.raises(TypeError, match=r"VectorGymEnv.*DoEveryNEpisodes\.post_episode"):
        rk.run(rk.RandomPolicy(seed=0), venv(2), rk.StopAfterNSteps(10), hook)
    assert hook[0].log == []  # refused before PreExperiment


class SingleEnvLearner(rk.AbstractLearner):
    def __call__(self, env):
        return np.zeros(2)


@rk.update.dispatch
def _(
    learner: SingleEnvLearner,
    trajectory: rk.AbstractTrajectory,
    env: rk.AbstractEnv,
    stage: rk.PostActStage,
    /,
):
    return None


def test_learners_without_vector_methods_are_refused_naming_the_types():
    agent = rk.Agent(
        rk.QBasedPolicy(SingleEnvLearner(), rk.GreedyExplorer(seed=0)),
        rk.CircularArraySARTTrajectory(100, state_shape=(4,)),
    )
    with pytest.raises(DispatchError, match=r"SingleEnvLearner.*VectorGymEnv"):
        rk.run(agent, venv(2), rk.StopAfterNSteps(10))


def test_trajectories_that_do_not_record_vector_envs_are_refused():
    agent = rk.Agent(rk.RandomPolicy(seed=0), rk.VectorSARTTrajectory())
    with pytest.raises(DispatchError, match=r"VectorSARTTrajectory.*VectorGymEnv"):
        rk.run(agent, venv(2), rk.StopAfterNSteps(10))


# ---- hooks see every sub-env's finished episodes ----


def test_episode_recorders_agree_and_order_episodes_by_sub_env_within_a_step():
    env = venv(3, max_episode_steps=20)
    hook = rk.TotalRewardPerEpisode() + rk.StepsPerEpisode() + rk.RewardsPerEpisode()
    rk.run(rk.RandomPolicy(seed=0), env, rk.StopAfterNSteps(600), hook)
    totals, steps, rewards = hook[0], hook[1], hook[2]
    assert len(totals.rewards) == len(steps.steps) == len(rewards.rewards) > 20
    assert totals.rewards == [sum(r) for r in rewards.rewards]  # CartPole: reward 1 per step
    assert steps.steps == [len(r) for r in rewards.rewards]
    assert totals.current.shape == (3,) and len(rewards.current) == 3
    env.close()


def test_loggers_and_progress_bar_log_every_sub_env_episode(tmp_path):
    env = venv(3)
    path = tmp_path / "log.jsonl"
    out = io.StringIO()
    stop = rk.StopAfterNSteps(300)
    hook = (
        rk.TotalRewardPerEpisode()
        + rk.JSONLinesLogger(path, stats_every_n_steps=100)
        + rk.ProgressBar(stop, file=out)
    )
    rk.run(rk.RandomPolicy(seed=0), env, stop, hook)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    episodes = [line for line in lines if "return" in line]
    assert [e["return"] for e in episodes] == hook[0].rewards
    assert [e["episode"] for e in episodes] == list(range(len(episodes)))
    assert hook[1].total_steps == 300
    assert hook[2].episodes == len(hook[0].rewards) and "300/300" in out.getvalue()
    env.close()


def test_evaluation_hook_counts_transitions():
    hook = rk.EvaluationHook(rk.GymEnv("CartPole-v1"), every_n_steps=100, n_episodes=1, seed=0)
    rk.run(rk.RandomPolicy(seed=0), venv(4), rk.StopAfterNSteps(400), hook)
    assert [r.step for r in hook.results] == [100, 200, 300, 400]


def test_hooks_holding_a_single_env_episode_refuse_a_vector_run():
    hook = rk.TotalRewardPerEpisode()
    rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(3), hook)
    with pytest.raises(ValueError, match="unfinished single-env episode"):
        rk.run(rk.RandomPolicy(seed=0), venv(2), rk.StopAfterNSteps(3), hook)


# ---- batched acting ----


@pytest.mark.parametrize(
    "explorer",
    [
        rk.EpsilonGreedyExplorer(0.3, seed=0),
        rk.GreedyExplorer(seed=0),
        rk.UCBExplorer(2.0, n_actions=2, seed=0),
        rk.SoftmaxExplorer(1.0, seed=0),
    ],
    ids=lambda e: type(e).__name__,
)
def test_q_based_policy_acts_on_the_whole_batch(explorer):
    class RowValues(rk.AbstractLearner):
        calls = 0

        def __call__(self, env):
            RowValues.calls += 1
            return np.stack([np.array([s[2], -s[2]]) for s in env.state])

    env = venv(5)
    env.reset()
    policy = rk.QBasedPolicy(RowValues(), explorer)
    actions = policy(env)
    assert actions.shape == (5,) and actions.dtype == np.int64
    assert set(actions.tolist()) <= {0, 1}
    assert RowValues.calls == 1
    env.close()


def test_batched_explorer_rows_equal_single_calls():
    values = np.random.default_rng(0).normal(size=(6, 3))
    batched = rk.EpsilonGreedyExplorer(0.5, seed=3).batch(values)
    single = rk.EpsilonGreedyExplorer(0.5, seed=3)
    assert batched.tolist() == [single(row) for row in values]


def test_random_policy_draws_one_action_per_sub_env():
    env = venv(6)
    env.reset()
    actions = rk.RandomPolicy(seed=0)(env)
    assert actions.shape == (6,) and env.action_space.contains(int(actions[0]))
    env.close()
