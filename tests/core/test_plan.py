"""The call plan (``build_plan``) and ``rk.explain``: what runs at each stage, and where.

A learner defined here, in the test module, gets its methods with ``@rk.update.dispatch`` and
runs inside an Agent through a small policy that forwards to it, as a user's would.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import rlkit as rk
from rlkit.core.dispatch import PlanStep, forward
from rlkit.core.plan import build_plan
from rlkit.core.stages import STAGES

# ---- a user's learner, and a policy that forwards learning to it ----


class CountingLearner(rk.AbstractLearner):
    """Counts the stages it sees; learns nothing."""

    def __init__(self) -> None:
        self.post_act = 0
        self.post_episode = 0
        self.last_trajectory_length = -1


class LearnerPolicy(rk.RandomPolicy):
    """Random actions; learning is the learner's (``update`` forwards to it)."""

    def __init__(self, learner: Any, seed: int = 0) -> None:
        super().__init__(seed=seed)
        self.learner = learner


# ---- any stage: forward learning to the learner ----
@rk.update.dispatch
@forward("learner")
def _(
    policy: LearnerPolicy,
    trajectory: rk.AbstractTrajectory,
    env: rk.AbstractEnv,
    stage: rk.AbstractStage,
    /,
):
    rk.update(policy.learner, trajectory, env, stage)


# ---- PostAct: count steps ----
@rk.update.dispatch
def counting_post_act(
    learner: CountingLearner,
    trajectory: rk.VectorSARTTrajectory,
    env: rk.AbstractEnv,
    stage: rk.PostActStage,
    /,
):
    learner.post_act += 1
    learner.last_trajectory_length = len(trajectory)


# ---- PostEpisode: count episodes ----
@rk.update.dispatch
def counting_post_episode(
    learner: CountingLearner,
    trajectory: rk.VectorSARTTrajectory,
    env: rk.AbstractEnv,
    stage: rk.PostEpisodeStage,
    /,
):
    learner.post_episode += 1


class IdleLearner(rk.AbstractLearner):
    """Subclasses AbstractLearner but has no method at any stage."""


class StrayLearner:
    """Does not subclass AbstractLearner and has no methods: nothing to fall back on."""


def _agent(learner: Any) -> rk.Agent:
    return rk.Agent(LearnerPolicy(learner), rk.VectorSARTTrajectory())


def _explain(*args: Any) -> str:
    return build_plan(*args).describe()


def _sections(text: str) -> dict[str, list[str]]:
    """Lines of ``describe()`` grouped under their stage."""
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("  "):
            out[current].append(line.strip())
        else:
            current = line.split(":")[0]
            out[current] = [] if line.endswith(":") else [line.split(":", 1)[1].strip()]
    return out


def _source_line(location: str) -> str:
    """The source line that ``file:line`` of a plan step points to (relative to the repo)."""
    file, line = location.rsplit(":", 1)
    candidates = [Path(__file__).parent / Path(file).name, Path(rk.__file__).parent.parent / file]
    path = next(p for p in candidates if p.name == Path(file).name and p.exists())
    return path.read_text().splitlines()[int(line) - 1]


# ---- explain ----


def test_explain_lists_stages_methods_and_sources(capsys):
    agent = rk.Agent(rk.RandomPolicy(seed=0), rk.VectorSARTTrajectory())
    env = rk.GymEnv("CliffWalking-v1", seed=0)
    rk.explain(agent, env)
    text = capsys.readouterr().out
    assert [line.split("  [")[0] for line in text.splitlines()] == [
        "PreExperiment: (nothing)",
        "PreEpisode:",
        "  update(VectorSARTTrajectory, RandomPolicy, GymEnv, PreEpisodeStage)",
        "PreAct:",
        "  update(VectorSARTTrajectory, RandomPolicy, GymEnv, PreActStage, object)",
        "PostAct:",
        "  update(VectorSARTTrajectory, RandomPolicy, GymEnv, PostActStage)",
        "PostEpisode: (nothing)",
        "PostExperiment: (nothing)",
    ]
    sections = _sections(text)
    # the no-op defaults (learning of a plain policy, recording at the other stages) are dropped
    assert sections["PreExperiment"] == ["(nothing)"]
    assert sections["PostEpisode"] == ["(nothing)"]
    assert sections["PostExperiment"] == ["(nothing)"]
    for stage in ("PreEpisode", "PreAct", "PostAct"):
        (line,) = sections[stage]
        location = re.search(r"\[(.+)\]$", line).group(1)
        assert re.fullmatch(r"rlkit/trajectories/episodic\.py:\d+", location)
        assert _source_line(location).startswith(("@update.dispatch", "def "))


def test_explain_lists_a_learner_defined_in_the_test_module():
    env = rk.GymEnv("CartPole-v1", seed=0)
    hook = rk.TotalRewardPerEpisode()
    stop = rk.StopAfterNEpisodes(3)
    sections = _sections(_explain(_agent(CountingLearner()), env, hook, stop))
    post_act = sections["PostAct"]
    assert [line.split("  [")[0] for line in post_act] == [
        "update(VectorSARTTrajectory, LearnerPolicy, GymEnv, PostActStage)",  # record first
        "update(CountingLearner, VectorSARTTrajectory, GymEnv, PostActStage)",  # then learn
        "TotalRewardPerEpisode.post_act",  # the hook after the policy
    ]
    learner_line = post_act[1]
    location = re.search(r"\[(.+)\]$", learner_line).group(1)
    assert re.fullmatch(r".*test_plan\.py:\d+", location)
    assert "counting_post_act" in _source_line(location) or "@rk.update.dispatch" in (
        _source_line(location)
    )
    assert [line.split("  [")[0] for line in sections["PostEpisode"]] == [
        "update(CountingLearner, VectorSARTTrajectory, GymEnv, PostEpisodeStage)",
        "TotalRewardPerEpisode.post_episode",
    ]
    # the forwarding method itself is not listed: the plan calls the learner's method directly
    assert "LearnerPolicy, VectorSARTTrajectory" not in _explain(_agent(CountingLearner()), env)
    assert sections["stop check after each episode"][0].startswith("StopAfterNEpisodes.episode")
    assert "stop check after each step" not in sections


def test_learner_defined_in_the_test_module_runs_inside_an_agent():
    learner = CountingLearner()
    agent = _agent(learner)
    hook = rk.StepsPerEpisode()
    rk.run(agent, rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNEpisodes(3), hook)
    assert learner.post_episode == 3
    assert learner.post_act == sum(hook.steps)
    assert learner.last_trajectory_length == hook.steps[-1]  # recorded before it learned


def test_explain_prints_the_hook_first_only_at_pre_experiment(capsys):
    class Both(rk.AbstractHook):
        def pre_experiment(self, policy, env):
            pass

        def post_experiment(self, policy, env):
            pass

    policy = LearnerPolicy(CountingLearner())

    def record(stage):
        return {stage: [PlanStep(lambda: None, f"policy@{stage!r}", "here:1")]}

    policy.plan = lambda env: record(rk.PRE_EXPERIMENT_STAGE) | record(rk.POST_EXPERIMENT_STAGE)
    with pytest.warns(UserWarning, match="run without an rk.Agent"):  # a learner, no Agent
        plan = build_plan(policy, rk.GymEnv("CartPole-v1"), Both())
    assert [s.name for s in plan.stages[rk.PRE_EXPERIMENT_STAGE]] == [
        "Both.pre_experiment",
        "policy@PreExperiment",
    ]
    assert [s.name for s in plan.stages[rk.POST_EXPERIMENT_STAGE]] == [
        "policy@PostExperiment",
        "Both.post_experiment",
    ]
    assert rk.PRE_ACT_STAGE not in plan.stages  # empty stages are left out
    assert plan.calls(rk.PRE_ACT_STAGE) == ()


def test_explain_of_a_plain_random_policy_runs_nothing(capsys):
    rk.explain(rk.RandomPolicy(), rk.GymEnv("CartPole-v1"))
    out = capsys.readouterr().out
    assert out.splitlines() == [f"{s}: (nothing)" for s in STAGES]


def test_composed_hooks_are_listed_in_order():
    hook = rk.StepsPerEpisode() + rk.TotalRewardPerEpisode() + rk.DoOnExit(print)
    sections = _sections(_explain(rk.RandomPolicy(), rk.GymEnv("CartPole-v1"), hook))
    assert [line.split("  [")[0] for line in sections["PostAct"]] == [
        "StepsPerEpisode.post_act",
        "TotalRewardPerEpisode.post_act",
    ]
    (exit_line,) = sections["PostExperiment"]
    assert exit_line.startswith("DoOnExit.post_experiment  [rlkit/hooks/every_n.py:")


# ---- dispatch errors at plan time ----


def test_learner_without_abstract_learner_base_raises_naming_the_types():
    agent = _agent(StrayLearner())
    env = rk.GymEnv("CartPole-v1")
    with pytest.raises(rk.DispatchError) as info:
        build_plan(agent, env)
    message = str(info.value)
    for name in ("StrayLearner", "VectorSARTTrajectory", "GymEnv", "Stage"):
        assert name in message
    assert "rk.AbstractLearner" in message  # and says how to fix it
    assert isinstance(info.value, TypeError)


def test_missing_method_fails_before_the_run_starts():
    hook = rk.StepsPerEpisode() + rk.DoOnExit(lambda p, e: pytest.fail("PostExperiment ran"))
    env = rk.GymEnv("CartPole-v1", seed=0)
    with pytest.raises(rk.DispatchError, match="StrayLearner"):
        rk.run(_agent(StrayLearner()), env, rk.StopAfterNSteps(10), hook)
    assert env.needs_reset and hook[0].current == 0


def test_agent_whose_learner_never_learns_raises_at_plan_time():
    with pytest.raises(rk.DispatchError, match="IdleLearner.*VectorSARTTrajectory.*GymEnv"):
        build_plan(_agent(IdleLearner()), rk.GymEnv("CartPole-v1"))


# ---- an unusual trajectory for an unusual policy: two equally specific recorders ----


class OddTrajectory(rk.VectorSARTTrajectory):
    pass


class OddPolicy(rk.RandomPolicy):
    pass


# ---- PostEpisode: two methods, neither more specific for (OddTrajectory, OddPolicy) ----
@rk.update.dispatch
def _(
    trajectory: OddTrajectory,
    policy: rk.AbstractPolicy,
    env: rk.AbstractEnv,
    stage: rk.PostEpisodeStage,
    /,
):
    return None


@rk.update.dispatch
def _(
    trajectory: rk.AbstractTrajectory,
    policy: OddPolicy,
    env: rk.AbstractEnv,
    stage: rk.PostEpisodeStage,
    /,
):
    return None


def test_ambiguous_recording_methods_raise_naming_the_types():
    agent = rk.Agent(OddPolicy(), OddTrajectory())
    with pytest.raises(rk.DispatchError) as info:
        build_plan(agent, rk.GymEnv("CartPole-v1"))
    message = str(info.value)
    assert "more than one" in message
    for name in ("OddTrajectory", "OddPolicy", "GymEnv", "PostEpisodeStage"):
        assert name in message
    # each alone is fine
    build_plan(rk.Agent(rk.RandomPolicy(), OddTrajectory()), rk.GymEnv("CartPole-v1"))
    build_plan(rk.Agent(OddPolicy(), rk.VectorSARTTrajectory()), rk.GymEnv("CartPole-v1"))


def test_build_plan_rejects_bad_parts():
    env = rk.GymEnv("CartPole-v1")
    with pytest.raises(TypeError, match="policy must be an rk.AbstractPolicy.*str"):
        build_plan("random", env)
    with pytest.raises(TypeError, match="hook must be callable.*int"):
        build_plan(rk.RandomPolicy(), env, 3)
    with pytest.raises(TypeError, match="stop_condition must be.*int"):
        build_plan(rk.RandomPolicy(), env, None, 10)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((rk.StopAfterNSteps,), "stop_condition must be an object, got the class StopAfterNSteps"),
        ((rk.StopAfterNSteps(3), rk.TotalRewardPerEpisode), "hook must be an object, got the"),
    ],
)
def test_a_class_instead_of_an_object_is_named(args, expected):
    # a class is callable: it was called as a plain stop condition or hook, with a puzzling error
    with pytest.raises(TypeError, match=f"^run: {expected}"):
        rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), *args)


def test_a_learner_class_as_the_policy_names_its_agent_method():
    env = rk.GymEnv("CartPole-v1", seed=0)
    with pytest.raises(TypeError, match=r"the class PPO itself; create one, e.g. PPO.agent\(env\)"):
        rk.run(rk.PPO, env, rk.StopAfterNSteps(3))
