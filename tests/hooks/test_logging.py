"""Tests of rlkit/core/logging.py: TensorBoardLogger, CSVLogger, JSONLinesLogger."""

from __future__ import annotations

import csv
import json
import sys

import pytest

import rlkit as rk
from rlkit.core.dispatch import forward
from rlkit.hooks.logging import (
    EPISODE_FIELDS,
    AbstractLogger,
    CSVLogger,
    JSONLinesLogger,
    TensorBoardLogger,
)


# ---- a tiny learner that reports a statistic through the dispatched protocol ----
class CountingLearner(rk.AbstractLearner):
    def __init__(self) -> None:
        self.updates = 0


@rk.update.dispatch
def _(
    learner: CountingLearner,
    trajectory: rk.AbstractTrajectory,
    env: rk.AbstractEnv,
    stage: rk.PostActStage,
    /,
):
    learner.updates += 1


@rk.statistics.dispatch
def _(learner: CountingLearner, /):
    return {"updates": learner.updates, "half_updates": learner.updates / 2}


class LearningRandomPolicy(rk.RandomPolicy):
    """Random actions; a learner that counts its PostAct updates."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.learner = CountingLearner()


@rk.update.dispatch
@forward("learner")
def _(
    policy: LearningRandomPolicy,
    trajectory: rk.AbstractTrajectory,
    env: rk.AbstractEnv,
    stage: rk.AbstractStage,
    /,
):
    return rk.update(policy.learner, trajectory, env, stage)


def counting_agent(seed: int = 0) -> rk.Agent:
    return rk.Agent(LearningRandomPolicy(seed), rk.VectorSARTTrajectory())


class Finished(rk.AbstractHook):
    """The truth to compare with: (return, length, total steps) of each finished episode."""

    def __init__(self) -> None:
        self.steps, self.ret, self.length, self.episodes = 0, 0.0, 0, []

    def pre_episode(self, policy, env):
        self.ret, self.length = 0.0, 0

    def post_act(self, policy, env):
        self.steps += 1
        self.length += 1
        self.ret += env.reward

    def post_episode(self, policy, env):
        self.episodes.append((self.ret, self.length, self.steps))


def cartpole(seed: int = 0) -> rk.GymEnv:
    return rk.GymEnv("CartPole-v1", seed=seed)


def read_csv(path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


# ---- CSVLogger ----
def test_csv_one_row_per_finished_episode_with_documented_columns(tmp_path):
    path = tmp_path / "episodes.csv"
    truth = Finished()
    stop = rk.StopAfterNSteps(250)  # stops in the middle of an episode
    env = cartpole()
    rk.run(rk.RandomPolicy(seed=1), env, stop, CSVLogger(path) + truth)
    assert not env.done, "the run should have stopped in the middle of an episode"
    with open(path) as f:
        header = f.readline().strip().split(",")
    assert (
        tuple(header)
        == EPISODE_FIELDS
        == (
            "episode",
            "return",
            "length",
            "total_steps",
            "wall_time_s",
        )
    )
    rows = read_csv(path)
    assert len(rows) == len(truth.episodes) > 3  # no row for the unfinished episode
    for i, (row, (ret, length, steps)) in enumerate(zip(rows, truth.episodes, strict=True)):
        assert int(row["episode"]) == i
        assert float(row["return"]) == ret
        assert int(row["length"]) == length
        assert int(row["total_steps"]) == steps
        assert float(row["wall_time_s"]) >= 0
    assert int(rows[-1]["total_steps"]) < 250
    times = [float(r["wall_time_s"]) for r in rows]
    assert times == sorted(times)


def test_csv_unfinished_episode_is_written_when_a_later_run_finishes_it(tmp_path):
    path = tmp_path / "episodes.csv"
    logger, truth = CSVLogger(path), Finished()
    policy, env = rk.RandomPolicy(seed=2), cartpole(2)
    rk.run(policy, env, rk.StopAfterNSteps(30), logger + truth)
    rk.run(policy, env, rk.StopAfterNEpisodes(3), logger + truth)
    rows = read_csv(path)
    assert [int(r["episode"]) for r in rows] == list(range(len(truth.episodes)))
    assert [(float(r["return"]), int(r["length"])) for r in rows] == [
        (ret, length) for ret, length, _ in truth.episodes
    ]
    with open(path) as f:
        assert f.read().count("episode,return") == 1  # the second run appended, no header


def test_csv_rows_are_flushed_and_file_closed_when_the_run_raises(tmp_path):
    path = tmp_path / "episodes.csv"
    logger, truth = CSVLogger(path), Finished()

    class Boom(rk.AbstractHook):
        def post_act(self, policy, env):
            if truth.steps == 120:
                raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        rk.run(
            rk.RandomPolicy(seed=0), cartpole(), rk.StopAfterNSteps(1000), truth + logger + Boom()
        )
    assert logger.file is None  # closed at PostExperiment
    assert len(read_csv(path)) == len(truth.episodes) > 0


def test_csv_new_logger_overwrites_unless_append(tmp_path):
    path = tmp_path / "episodes.csv"
    rk.run(rk.RandomPolicy(seed=0), cartpole(), rk.StopAfterNEpisodes(3), CSVLogger(path))
    rk.run(rk.RandomPolicy(seed=0), cartpole(), rk.StopAfterNEpisodes(2), CSVLogger(path))
    assert len(read_csv(path)) == 2
    rk.run(
        rk.RandomPolicy(seed=0),
        cartpole(),
        rk.StopAfterNEpisodes(2),
        CSVLogger(path, append=True),
    )
    rows = read_csv(path)
    assert len(rows) == 4 and rows[2]["episode"] == "0"
    with open(path) as f:
        assert f.read().count("episode,return") == 1


def test_csv_resume_from_state_does_not_duplicate_header_or_episodes(tmp_path):
    path = tmp_path / "episodes.csv"
    logger = CSVLogger(path)
    policy, env = rk.RandomPolicy(seed=3), cartpole(3)
    rk.run(policy, env, rk.StopAfterNEpisodes(3), logger)
    state = json.loads(json.dumps(logger.state_dict()))  # plain data only
    # work after the checkpoint that a crash loses: two more episodes written
    rk.run(policy, env, rk.StopAfterNEpisodes(2), logger)
    assert len(read_csv(path)) == 5

    resumed = CSVLogger(path)
    resumed.load_state_dict(state)
    assert resumed.episodes == 3 and resumed.state_dict() == state
    truth = Finished()
    rk.run(rk.RandomPolicy(seed=4), cartpole(4), rk.StopAfterNEpisodes(4), resumed + truth)
    rows = read_csv(path)
    assert [int(r["episode"]) for r in rows] == list(range(7))
    assert [float(r["return"]) for r in rows[3:]] == [ret for ret, _, _ in truth.episodes]
    with open(path) as f:
        assert f.read().count("episode,return") == 1


def test_csv_rejects_a_directory(tmp_path):
    with pytest.raises(ValueError, match="CSVLogger: path .* is a directory"):
        CSVLogger(tmp_path)


# ---- JSONLinesLogger ----
def test_jsonl_episode_and_statistics_lines(tmp_path):
    path = tmp_path / "log.jsonl"
    truth = Finished()
    agent = counting_agent()
    logger = JSONLinesLogger(path, stats_every_n_steps=100)
    rk.run(agent, cartpole(), rk.StopAfterNSteps(450), logger + truth)
    with open(path) as f:
        lines = [json.loads(line) for line in f]
    episodes = [line for line in lines if line["type"] == "episode"]
    stats = [line for line in lines if line["type"] == "statistics"]
    assert len(episodes) + len(stats) == len(lines)
    assert [(e["return"], e["length"], e["total_steps"]) for e in episodes] == truth.episodes
    assert [e["episode"] for e in episodes] == list(range(len(truth.episodes)))
    assert set(episodes[0]) == {"type", *EPISODE_FIELDS}
    assert [s["total_steps"] for s in stats] == [100, 200, 300, 400]
    for s in stats:
        # the learner updated at every PostAct before the hooks ran
        assert s["learner/updates"] == s["total_steps"]
        assert s["learner/half_updates"] == s["total_steps"] / 2
        assert s["time/steps_per_second"] is None or s["time/steps_per_second"] > 0
    # lines are in the order things happened
    steps = [line["total_steps"] for line in lines]
    assert steps == sorted(steps)


def test_jsonl_statistics_can_be_switched_off(tmp_path):
    path = tmp_path / "log.jsonl"
    rk.run(
        rk.RandomPolicy(seed=0),
        cartpole(),
        rk.StopAfterNSteps(300),
        JSONLinesLogger(path, stats_every_n_steps=None),
    )
    with open(path) as f:
        assert {json.loads(line)["type"] for line in f} == {"episode"}


def test_statistics_frequency_counts_env_steps_across_runs(tmp_path):
    path = tmp_path / "log.jsonl"
    logger = JSONLinesLogger(path, stats_every_n_steps=100)
    policy, env = rk.RandomPolicy(seed=0), cartpole()
    for n in (70, 70, 70):  # 210 steps in three runs: reports at 100 and 200
        rk.run(policy, env, rk.StopAfterNSteps(n), logger)
    with open(path) as f:
        stats = [d for d in map(json.loads, f) if d["type"] == "statistics"]
    assert [s["total_steps"] for s in stats] == [100, 200]


@pytest.mark.parametrize("value", [0, -5, 1.5, True, "10"])
def test_bad_stats_frequency_is_rejected(tmp_path, value):
    with pytest.raises(ValueError, match="JSONLinesLogger: stats_every_n_steps must be"):
        JSONLinesLogger(tmp_path / "x.jsonl", stats_every_n_steps=value)


# ---- TensorBoardLogger ----
def read_scalars(logdir) -> dict[str, list[tuple[int, float]]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(logdir), size_guidance={"scalars": 0})
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def test_tensorboard_event_files_contain_the_expected_tags(tmp_path):
    truth = Finished()
    logger = TensorBoardLogger(tmp_path, stats_every_n_steps=100)
    rk.run(counting_agent(), cartpole(), rk.StopAfterNSteps(350), logger + truth)
    assert logger.writer is None  # closed at PostExperiment
    scalars = read_scalars(tmp_path)
    assert {
        "episode/return",
        "episode/length",
        "time/steps_per_second",
        "learner/updates",
        "learner/half_updates",
    } <= set(scalars)
    assert scalars["episode/return"] == [(steps, ret) for ret, _, steps in truth.episodes]
    assert scalars["episode/length"] == [(steps, length) for _, length, steps in truth.episodes]
    assert scalars["learner/updates"] == [(s, float(s)) for s in (100, 200, 300)]
    assert [s for s, _ in scalars["time/steps_per_second"]] == [100, 200, 300]


def test_tensorboard_resume_purges_events_after_the_checkpoint(tmp_path):
    logger = TensorBoardLogger(tmp_path, stats_every_n_steps=None)
    policy, env = rk.RandomPolicy(seed=0), cartpole()
    rk.run(policy, env, rk.StopAfterNEpisodes(3), logger)
    state = logger.state_dict()
    rk.run(policy, env, rk.StopAfterNEpisodes(3), logger)  # lost by a "crash"
    resumed = TensorBoardLogger(tmp_path, stats_every_n_steps=None)
    resumed.load_state_dict(state)
    rk.run(rk.RandomPolicy(seed=9), cartpole(9), rk.StopAfterNEpisodes(2), resumed)
    steps = [s for s, _ in read_scalars(tmp_path)["episode/return"]]
    assert len(steps) == 5 and steps == sorted(steps)


def test_tensorboard_missing_gives_a_clear_import_error(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)
    with pytest.raises(ImportError, match=r"pip install tensorboard"):
        TensorBoardLogger(tmp_path)


# ---- the shared base ----
def test_custom_logger_sees_records_and_statistics():
    class Collect(AbstractLogger):
        def __init__(self):
            super().__init__(stats_every_n_steps=50)
            self.records, self.reports = [], []

        def log_episode(self, record):
            self.records.append(record)

        def log_statistics(self, step, stats):
            self.reports.append((step, stats))

    logger, truth = Collect(), Finished()
    rk.run(counting_agent(), cartpole(), rk.StopAfterNSteps(120), logger + truth)
    assert [(r["return"], r["length"], r["total_steps"]) for r in logger.records] == (
        truth.episodes
    )
    assert [step for step, _ in logger.reports] == [50, 100]
    assert logger.reports[1][1]["learner/updates"] == 100.0
    assert "time/steps_per_second" in logger.reports[0][1]


def test_state_dict_round_trip_keeps_the_unfinished_episode():
    logger = AbstractLogger(stats_every_n_steps=7)
    rk.run(rk.RandomPolicy(seed=0), cartpole(), rk.StopAfterNSteps(40), logger)
    state = logger.state_dict()
    assert state["total_steps"] == 40 and state["episode_length"] > 0
    other = AbstractLogger(stats_every_n_steps=7)
    other.load_state_dict(state)
    assert other.state_dict() == state
    assert (other.episode_return, other.episode_length) == (
        logger.episode_return,
        logger.episode_length,
    )


def test_tensorboard_logger_writes_the_greedy_evaluations_it_is_given(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    evaluation = rk.EvaluationHook(rk.GymEnv("CartPole-v1"), every_n_steps=100, n_episodes=2,
                                   seed=0)
    log = rk.TensorBoardLogger(tmp_path, evaluations=evaluation)
    rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(300),
           evaluation + log)
    events = EventAccumulator(str(tmp_path))
    events.Reload()
    written = {tag: [(e.step, e.value) for e in events.Scalars(tag)]
               for tag in ("evaluation/mean_return", "evaluation/std_return")}
    assert written["evaluation/mean_return"] == [
        (r.step, pytest.approx(r.mean)) for r in evaluation.results
    ]
    assert [s for s, _ in written["evaluation/std_return"]] == [100, 200, 300]


def test_tensorboard_logger_refuses_evaluations_that_are_not_an_evaluation_hook(tmp_path):
    pytest.importorskip("tensorboard")
    with pytest.raises(TypeError, match="TensorBoardLogger: evaluations must be an "
                                        "rk.EvaluationHook"):
        rk.TensorBoardLogger(tmp_path, evaluations=rk.TotalRewardPerEpisode())
