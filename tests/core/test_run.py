"""The run-loop contract of ``rk.run`` (docs/architecture.md).

A recording policy and a recording hook log every call the loop makes, in a tiny deterministic
env with episodes of fixed length (``CountdownEnv`` in conftest.py), and the log is compared
with the sequence docs/architecture.md prescribes: the hook before the policy at PreExperiment, the
policy before the hook everywhere else; no PostEpisode for an episode a stop cut short; ``act``
never on a done env; PostExperiment even when something raises.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import rlkit as rk
from rlkit.core.dispatch import PlanStep


def pair(first: str, second: str, stage: str, episode: int, state, *action) -> list[tuple]:
    return [(first, stage, episode, state, *action), (second, stage, episode, state, *action)]


def steps(episode: int, start: int, stop: int) -> list[tuple]:
    """The calls of the steps ``start..stop-1`` of ``episode`` (state = steps taken)."""
    out: list[tuple] = []
    for s in range(start, stop):
        out.append(("act", episode, s))
        out += pair("policy", "hook", "PreAct", episode, s, s % 2)
        out += pair("policy", "hook", "PostAct", episode, s + 1)
    return out


def pre_experiment(episode: int, state) -> list[tuple]:
    return pair("hook", "policy", "PreExperiment", episode, state)  # the hook speaks first


def post_experiment(episode: int, state) -> list[tuple]:
    return pair("policy", "hook", "PostExperiment", episode, state)


def full_episode(episode: int, length: int) -> list[tuple]:
    return (
        pair("policy", "hook", "PreEpisode", episode, 0)
        + steps(episode, 0, length)
        + pair("policy", "hook", "PostEpisode", episode, length)
    )


@pytest.fixture
def recorded(countdown, recording_policy, recording_hook):
    """``(log, policy, hook, env)`` for a CountdownEnv of length 3."""
    log: list = []
    return log, recording_policy(log), recording_hook(log), countdown(3)


# ---- the exact stage sequence ----


def test_stage_sequence_of_two_episodes_written_out(countdown, recording_policy, recording_hook):
    log: list = []
    env = countdown(2)
    rk.run(recording_policy(log), env, rk.StopAfterNEpisodes(2), recording_hook(log))
    assert log == [
        ("hook", "PreExperiment", 0, None),
        ("policy", "PreExperiment", 0, None),
        ("policy", "PreEpisode", 1, 0),
        ("hook", "PreEpisode", 1, 0),
        ("act", 1, 0),
        ("policy", "PreAct", 1, 0, 0),
        ("hook", "PreAct", 1, 0, 0),
        ("policy", "PostAct", 1, 1),
        ("hook", "PostAct", 1, 1),
        ("act", 1, 1),
        ("policy", "PreAct", 1, 1, 1),
        ("hook", "PreAct", 1, 1, 1),
        ("policy", "PostAct", 1, 2),
        ("hook", "PostAct", 1, 2),
        ("policy", "PostEpisode", 1, 2),
        ("hook", "PostEpisode", 1, 2),
        ("policy", "PreEpisode", 2, 0),
        ("hook", "PreEpisode", 2, 0),
        ("act", 2, 0),
        ("policy", "PreAct", 2, 0, 0),
        ("hook", "PreAct", 2, 0, 0),
        ("policy", "PostAct", 2, 1),
        ("hook", "PostAct", 2, 1),
        ("act", 2, 1),
        ("policy", "PreAct", 2, 1, 1),
        ("hook", "PreAct", 2, 1, 1),
        ("policy", "PostAct", 2, 2),
        ("hook", "PostAct", 2, 2),
        ("policy", "PostEpisode", 2, 2),
        ("hook", "PostEpisode", 2, 2),
        ("policy", "PostExperiment", 2, 2),
        ("hook", "PostExperiment", 2, 2),
    ]


@pytest.mark.parametrize("episodes", [1, 4])
def test_stage_sequence_over_several_episodes(recorded, episodes):
    log, policy, hook, env = recorded
    returned = rk.run(policy, env, rk.StopAfterNEpisodes(episodes), hook)
    expected = pre_experiment(0, None)
    for e in range(1, episodes + 1):
        expected += full_episode(e, 3)
    expected += post_experiment(episodes, 3)
    assert log == expected
    assert returned is hook
    assert env.episode == episodes  # no reset after the last episode


def test_run_without_hook_returns_none_and_calls_the_policy(countdown, recording_policy):
    log: list = []
    assert rk.run(recording_policy(log), countdown(2), rk.StopAfterNEpisodes(1)) is None
    assert [e for e in log if e[0] == "hook"] == []
    assert [e[1] for e in log if e[0] == "policy"] == [
        "PreExperiment",
        "PreEpisode",
        "PreAct",
        "PostAct",
        "PreAct",
        "PostAct",
        "PostEpisode",
        "PostExperiment",
    ]


# ---- stops ----


def test_stop_in_the_middle_of_an_episode(recorded):
    log, policy, hook, env = recorded
    totals = rk.TotalRewardPerEpisode()
    seen_at_exit = []
    on_exit = rk.DoOnExit(lambda p, e: seen_at_exit.append((list(totals.rewards), totals.current)))
    rk.run(policy, env, rk.StopAfterNSteps(5), hook + totals + on_exit)
    assert log == (
        pre_experiment(0, None)
        + full_episode(1, 3)
        + pair("policy", "hook", "PreEpisode", 2, 0)
        + steps(2, 0, 2)
        + post_experiment(2, 2)  # no PostEpisode for the unfinished episode 2
    )
    assert totals.rewards == [6.0]  # the unfinished episode is not reported as finished...
    assert totals.current == 3.0  # ...but its running total is there
    assert seen_at_exit == [([6.0], 3.0)]  # and visible at PostExperiment
    assert not env.done


def test_stop_at_the_last_step_of_an_episode_fires_post_episode(recorded):
    """A step-level stop exactly at an episode's last step: the episode is finished, so
    PostEpisode fires for it (then PostExperiment); no new episode is started."""
    log, policy, hook, env = recorded
    totals = rk.TotalRewardPerEpisode()
    rk.run(policy, env, rk.StopAfterNSteps(6), hook + totals)
    assert log == pre_experiment(0, None) + full_episode(1, 3) + full_episode(2, 3) + (
        post_experiment(2, 3)
    )
    assert totals.rewards == [6.0, 6.0] and totals.current == 0.0
    assert env.episode == 2


def test_step_stop_at_episode_end_still_counts_the_episode(countdown, recording_policy):
    stop = rk.StopAfterNSteps(3) | rk.StopAfterNEpisodes(10)
    rk.run(recording_policy([]), countdown(3), stop)
    assert stop.conditions[1].episodes == 1  # the episode-level check ran after PostEpisode


def test_episode_stop_after_the_episode(recorded):
    log, policy, hook, env = recorded
    rk.run(policy, env, rk.StopWhenDone(), hook)
    assert log == pre_experiment(0, None) + full_episode(1, 3) + post_experiment(1, 3)


def test_plain_callable_stop_condition(recorded):
    log, policy, hook, env = recorded
    rk.run(policy, env, lambda policy, env: env.steps == 4, hook)
    assert log[-2:] == post_experiment(2, 1)
    assert env.steps == 4


# ---- a second run continues ----


def test_second_run_continues_an_unfinished_episode(recorded):
    log, policy, hook, env = recorded
    totals = rk.TotalRewardPerEpisode()
    rk.run(policy, env, rk.StopAfterNSteps(5), hook + totals)
    del log[:]
    rk.run(policy, env, rk.StopAfterNSteps(3), hook + totals)
    assert log == (
        pre_experiment(2, 2)
        + steps(2, 2, 3)  # no reset, no PreEpisode: episode 2 goes on
        + pair("policy", "hook", "PostEpisode", 2, 3)
        + pair("policy", "hook", "PreEpisode", 3, 0)
        + steps(3, 0, 2)
        + post_experiment(3, 2)
    )
    assert totals.rewards == [6.0, 6.0]
    assert totals.current == 3.0


def test_second_run_after_a_finished_episode_resets(recorded):
    log, policy, hook, env = recorded
    rk.run(policy, env, rk.StopWhenDone(), hook)
    del log[:]
    rk.run(policy, env, rk.StopWhenDone(), hook)
    assert log == pre_experiment(1, 3) + full_episode(2, 3) + post_experiment(2, 3)


def _cartpole_run(splits: list[int]):
    agent = rk.Agent(rk.RandomPolicy(seed=3), rk.VectorSARTTrajectory(max_episodes=10_000))
    env = rk.GymEnv("CartPole-v1", seed=7)
    hook = rk.TotalRewardPerEpisode() + rk.StepsPerEpisode()
    for n in splits:
        rk.run(agent, env, rk.StopAfterNSteps(n), hook)
    return agent.trajectory, hook


def _assert_same_run(a, b) -> None:
    (ta, ha), (tb, hb) = a, b
    assert len(ta) == len(tb)
    for name in ("action", "reward", "terminal", "truncated"):
        assert getattr(ta, name) == getattr(tb, name), name
    for name in ("state", "next_state"):
        assert np.array_equal(np.array(getattr(ta, name)), np.array(getattr(tb, name))), name
    assert ta.episode_starts == tb.episode_starts
    assert ha[0].rewards == hb[0].rewards and ha[0].current == hb[0].current
    assert ha[1].steps == hb[1].steps and ha[1].current == hb[1].current


def test_split_runs_give_the_same_trajectory_as_one_run():
    whole = _cartpole_run([300])
    lengths = whole[1][1].steps
    assert len(lengths) >= 5 and whole[1][1].current > 0  # several episodes, one unfinished
    _assert_same_run(_cartpole_run([37, 263]), whole)  # split in the middle of an episode
    at_end = lengths[0] + lengths[1]
    _assert_same_run(_cartpole_run([at_end, 300 - at_end]), whole)  # split at an episode end
    _assert_same_run(_cartpole_run([1, 1, 98, 200]), whole)


# ---- termination, truncation, done envs ----


def test_termination_and_truncation_are_visible_at_post_act(countdown, recording_policy):
    policy = recording_policy([])
    rk.run(policy, countdown(2, end="alternate"), rk.StopAfterNEpisodes(4), rk.EmptyHook())
    no, term, trunc = (False, False), (True, False), (False, True)
    assert policy.flags == [no, term, no, trunc, no, term, no, trunc]


class FlagRecordingPolicy(rk.RandomPolicy):
    """RandomPolicy that records ``(is_terminated, is_truncated)`` at PostAct."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed=seed)
        self.flags: list[tuple[bool, bool]] = []

    def act(self, env):
        assert not env.done, "policy.act called on a done env"
        return super().act(env)

    def plan(self, env):
        def post_act() -> None:
            self.flags.append((env.is_terminated, env.is_truncated))

        return {rk.POST_ACT_STAGE: [PlanStep(post_act, "flags", "test")]}


@pytest.mark.parametrize(
    "kwargs, flag", [({}, (True, False)), ({"max_episode_steps": 5}, (False, True))]
)
def test_gym_termination_and_truncation(kwargs, flag):
    """CartPole with random actions falls (termination) long before 500 steps; a 5-step time
    limit truncates instead. The trajectory records the same flags."""
    policy = FlagRecordingPolicy(seed=0)
    agent = rk.Agent(policy, rk.VectorSARTTrajectory(max_episodes=100))
    hook = rk.StepsPerEpisode()
    rk.run(agent, rk.GymEnv("CartPole-v1", seed=0, **kwargs), rk.StopAfterNEpisodes(6), hook)
    ends = [f for f in policy.flags if f != (False, False)]
    assert ends == [flag] * 6
    t = agent.trajectory
    assert [(a, b) for a, b in zip(t.terminal, t.truncated, strict=True) if a or b] == [flag] * 6
    if "max_episode_steps" in kwargs:
        assert hook.steps == [5] * 6


def test_act_is_never_called_on_a_done_env(countdown, recording_policy):
    """RecordingPolicy.act asserts; many short episodes, stops of both kinds, repeated runs."""
    policy, env = recording_policy([]), countdown(1)
    for stop in (rk.StopAfterNSteps(3), rk.StopAfterNEpisodes(2), rk.StopWhenDone()):
        rk.run(policy, env, stop, rk.EmptyHook())
    assert env.steps == 6


# ---- errors ----


class Boom(Exception):
    pass


def _raise_at(step: int):
    def f(t, policy, env):
        if t == step:
            raise Boom(f"step {t}")

    return f


def test_exception_in_a_hook_still_runs_post_experiment(recorded):
    log, policy, hook, env = recorded
    exits = []
    composed = hook + rk.DoEveryNSteps(_raise_at(4)) + rk.DoOnExit(lambda p, e: exits.append(1))
    with pytest.raises(Boom, match="step 4"):
        rk.run(policy, env, rk.StopAfterNSteps(100), composed)
    assert log == (
        pre_experiment(0, None)
        + full_episode(1, 3)
        + pair("policy", "hook", "PreEpisode", 2, 0)
        + [("act", 2, 0)]
        + pair("policy", "hook", "PreAct", 2, 0, 0)
        + pair("policy", "hook", "PostAct", 2, 1)
        + post_experiment(2, 1)
    )
    assert exits == [1]


def test_exception_in_act_still_runs_post_experiment(recorded):
    log, policy, hook, env = recorded

    def act(env):
        raise Boom("act")

    policy.act = act
    with pytest.raises(Boom):
        rk.run(policy, env, rk.StopAfterNSteps(10), hook)
    assert log[-2:] == post_experiment(1, 0)


def test_keyboard_interrupt_still_runs_post_experiment(recorded):
    log, policy, hook, env = recorded

    def interrupt(t, policy, env):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        rk.run(policy, env, rk.StopAfterNSteps(10), hook + rk.DoEveryNSteps(interrupt, n=2))
    assert log[-2:] == post_experiment(1, 2)


def test_every_post_experiment_call_runs_and_the_first_error_propagates(recorded):
    log, policy, hook, env = recorded
    calls = []

    def failing(p, e):
        calls.append("failing")
        raise Boom("exit")

    composed = rk.DoOnExit(failing) + hook + rk.DoOnExit(lambda p, e: calls.append("last"))
    with pytest.raises(Boom, match="exit"):
        rk.run(policy, env, rk.StopAfterNSteps(2), composed)
    assert calls == ["failing", "last"]
    assert log[-2:] == post_experiment(1, 2)


def test_run_rejects_bad_arguments(countdown, recording_policy):
    policy = recording_policy([])
    with pytest.raises(TypeError, match="env must be an rk.AbstractEnv"):
        rk.run(policy, "CartPole-v1", rk.StopAfterNSteps(1))
    with pytest.raises(TypeError, match="stop_condition is required"):
        rk.run(policy, countdown())
    with pytest.raises(TypeError, match="never checks anything"):
        rk.run(policy, countdown(), rk.AbstractStopCondition())
    with pytest.raises(TypeError, match="policy must be an rk.AbstractPolicy"):
        rk.run(object(), countdown(), rk.StopAfterNSteps(1))


def test_bad_plan_fails_before_anything_runs(countdown, recording_policy):
    log: list = []
    env = countdown()
    with pytest.raises(TypeError, match="hook must be callable"):
        rk.run(recording_policy(log), env, rk.StopAfterNSteps(1), hook=42)
    assert log == [] and env.needs_reset


def test_plain_callable_hook_is_called_at_every_stage(countdown, recording_policy):
    calls = []

    def hook(stage, policy, env, action=None):
        calls.append((repr(stage), action))

    rk.run(recording_policy([]), countdown(1), rk.StopWhenDone(), hook)
    assert calls == [
        ("PreExperiment", None),
        ("PreEpisode", None),
        ("PreAct", 0),
        ("PostAct", None),
        ("PostEpisode", None),
        ("PostExperiment", None),
    ]


def test_run_experiment(countdown, recording_policy):
    hook = rk.StepsPerEpisode()
    exp = rk.Experiment(recording_policy([]), countdown(2), rk.StopAfterNEpisodes(3), hook)
    assert rk.run(exp) is hook
    assert hook.steps == [2, 2, 2]
    with pytest.raises(TypeError, match="takes no other arguments"):
        rk.run(exp, countdown())


class _Raises(rk.AbstractHook):
    """Raises at one stage; records PostExperiment."""

    def __init__(self, stage_name: str) -> None:
        self.stage_name, self.finished = stage_name, False

    def pre_experiment(self, policy, env):
        if self.stage_name == "pre_experiment":
            raise RuntimeError("boom at PreExperiment")

    def post_experiment(self, policy, env):
        self.finished = True
        if self.stage_name == "post_experiment":
            raise ValueError("second failure at PostExperiment")


def test_an_error_at_pre_experiment_still_announces_post_experiment():
    hook = _Raises("pre_experiment")
    with pytest.raises(RuntimeError, match="boom at PreExperiment"):
        rk.run(
            rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(5), hook
        )
    assert hook.finished


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception notes need Python 3.11")
def test_the_original_error_propagates_when_post_experiment_also_raises():
    def fail(t, policy, env):
        raise RuntimeError("original")

    closing = _Raises("post_experiment")
    with pytest.raises(RuntimeError, match="original") as info:
        rk.run(
            rk.RandomPolicy(seed=0),
            rk.GymEnv("CartPole-v1", seed=0),
            rk.StopAfterNSteps(5),
            rk.DoEveryNSteps(fail, n=2) + closing,
        )
    assert closing.finished
    assert any("second failure at PostExperiment" in note for note in info.value.__notes__)
