"""Hooks: behaviour, minimal call plans, composition, bad input, state_dict round trips."""

from __future__ import annotations

import copy
import json
import math
import re

import numpy as np
import pytest

import rlkit as rk
from rlkit.core.stages import STAGES
from rlkit.hooks import basic as hooks_module
from rlkit.hooks.basic import ComposedHook


def run(hook, env, stop, policy=None):
    policy = policy if policy is not None else rk.RandomPolicy(seed=0)
    return rk.run(policy, env, stop, hook)


def plain(value) -> bool:
    """Checkpoint-friendly: nested dicts/lists of numbers, str, bool, None."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(plain(v) for v in value)
    return value is None or type(value) in (int, float, str, bool)


def _nothing(t, policy, env):
    return None


# ---- per-episode statistics ----


def test_total_reward_per_episode(countdown):
    hook = run(rk.TotalRewardPerEpisode(), countdown(3), rk.StopAfterNEpisodes(3))
    assert hook.rewards == [6.0, 6.0, 6.0] and hook.current == 0.0
    assert all(type(r) is float for r in hook.rewards)


def test_total_reward_keeps_the_unfinished_episode_apart(countdown):
    env, hook = countdown(3), rk.TotalRewardPerEpisode()
    run(hook, env, rk.StopAfterNSteps(4))
    assert (hook.rewards, hook.current) == ([6.0], 1.0)
    run(hook, env, rk.StopAfterNSteps(2))  # the next run finishes it
    assert (hook.rewards, hook.current) == ([6.0, 6.0], 0.0)


def test_total_reward_matches_cartpole_episode_lengths():
    hook = rk.TotalRewardPerEpisode() + rk.StepsPerEpisode()
    run(hook, rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(500))
    totals, steps = hook
    assert totals.rewards == [float(n) for n in steps.steps]  # +1 per step in CartPole
    assert totals.current == float(steps.current)
    assert sum(steps.steps) + steps.current == 500


def test_rewards_per_episode(countdown):
    hook = run(rk.RewardsPerEpisode(), countdown(3), rk.StopAfterNSteps(5))
    assert hook.rewards == [[1.0, 2.0, 3.0]]
    assert hook.current == [1.0, 2.0]


def test_rewards_per_episode_on_cliff_walking():
    hook = rk.RewardsPerEpisode() + rk.TotalRewardPerEpisode()
    run(hook, rk.GymEnv("CliffWalking-v1", seed=0), rk.StopAfterNSteps(300))
    per_step, totals = hook
    assert [sum(r) for r in per_step.rewards] == totals.rewards
    assert set(np.concatenate([*per_step.rewards, per_step.current])) <= {-1.0, -100.0}


def test_steps_per_episode(countdown):
    hook = run(rk.StepsPerEpisode(), countdown(2), rk.StopAfterNSteps(5))
    assert (hook.steps, hook.current) == ([2, 2], 1)


# ---- timing (a fake clock: tests never assert wall-clock times) ----


class FakeClock:
    def __init__(self, tick: float) -> None:
        self.now, self.tick = 0.0, tick

    def __call__(self) -> float:
        self.now += self.tick
        return self.now


def test_time_per_step_with_a_fake_clock(countdown, monkeypatch):
    monkeypatch.setattr(hooks_module.time, "perf_counter", FakeClock(0.25))
    hook = run(rk.TimePerStep(window=4), countdown(3), rk.StopAfterNSteps(10))
    assert list(hook.times) == [0.25] * 4  # only the last `window` steps
    assert hook.steps_per_second == 4.0


def test_time_per_step_on_a_real_clock(countdown):
    hook = rk.TimePerStep()
    assert hook.steps_per_second == 0.0  # nothing timed yet
    run(hook, countdown(3), rk.StopAfterNSteps(20))
    assert len(hook.times) == 20 and min(hook.times) >= 0
    assert hook.steps_per_second > 0


def test_time_between_runs_is_not_a_step(countdown, monkeypatch):
    clock = FakeClock(1.0)
    monkeypatch.setattr(hooks_module.time, "perf_counter", clock)
    env, hook = countdown(3), rk.TimePerStep()
    run(hook, env, rk.StopAfterNSteps(2))
    clock.now += 1000.0
    run(hook, env, rk.StopAfterNSteps(2))
    assert list(hook.times) == [1.0] * 4


@pytest.mark.parametrize("window", [0, -3, 2.5, True, "10"])
def test_time_per_step_rejects_bad_window(window):
    message = f"TimePerStep: window must be a positive integer, got {window!r}"
    with pytest.raises(ValueError, match=re.escape(message)):
        rk.TimePerStep(window=window)


# ---- minimal call plans ----


@pytest.mark.parametrize(
    "hook, stages",
    [
        (rk.EmptyHook(), []),
        (rk.TotalRewardPerEpisode(), [rk.POST_ACT_STAGE, rk.POST_EPISODE_STAGE]),
        (rk.RewardsPerEpisode(), [rk.POST_ACT_STAGE, rk.POST_EPISODE_STAGE]),
        (rk.StepsPerEpisode(), [rk.POST_ACT_STAGE, rk.POST_EPISODE_STAGE]),
        (rk.TimePerStep(), [rk.PRE_EXPERIMENT_STAGE, rk.POST_ACT_STAGE]),
        (rk.DoEveryNSteps(_nothing), [rk.POST_ACT_STAGE]),
        (rk.DoEveryNEpisodes(_nothing), [rk.POST_EPISODE_STAGE]),
        (rk.DoOnExit(print), [rk.POST_EXPERIMENT_STAGE]),
    ],
)
def test_each_hook_plans_only_the_stages_it_needs(hook, stages, countdown):
    plan = hook.plan(rk.RandomPolicy(), countdown())
    assert list(plan) == stages
    assert all(len(steps) == 1 for steps in plan.values())


# ---- composition ----


class Named(rk.AbstractHook):
    def __init__(self, name: str, log: list) -> None:
        self.name, self.log = name, log

    def __repr__(self) -> str:
        return self.name

    def pre_experiment(self, policy, env):
        self.log.append((self.name, "PreExperiment"))

    def pre_episode(self, policy, env):
        self.log.append((self.name, "PreEpisode"))

    def pre_act(self, policy, env, action):
        self.log.append((self.name, "PreAct", action))

    def post_act(self, policy, env):
        self.log.append((self.name, "PostAct"))

    def post_episode(self, policy, env):
        self.log.append((self.name, "PostEpisode"))

    def post_experiment(self, policy, env):
        self.log.append((self.name, "PostExperiment"))


def test_composed_hooks_run_in_order_at_every_stage(countdown):
    log: list = []
    a, b, c = (Named(n, log) for n in "abc")
    hook = a + b + c
    assert isinstance(hook, ComposedHook) and hook.hooks == (a, b, c)  # flattened
    assert repr(hook) == "a + b + c" and hook[1] is b
    assert run(hook, countdown(1), rk.StopWhenDone(), rk.RandomPolicy(seed=0)) is hook
    action = next(entry[2] for entry in log if entry[1] == "PreAct")
    expected = []
    for stage in ("PreExperiment", "PreEpisode", "PreAct", "PostAct", "PostEpisode"):
        expected += [(n, stage, action) if stage == "PreAct" else (n, stage) for n in "abc"]
    expected += [(n, "PostExperiment") for n in "abc"]
    assert log == expected


def test_calling_a_composed_hook_calls_each_in_order(countdown):
    log: list = []
    hook = Named("a", log) + (Named("b", log) + Named("c", log))
    env, policy = countdown(), rk.RandomPolicy()
    hook(rk.PRE_ACT_STAGE, policy, env, 1)
    hook(rk.POST_EPISODE_STAGE, policy, env)
    assert log == [(n, "PreAct", 1) for n in "abc"] + [(n, "PostEpisode") for n in "abc"]


def test_composing_with_a_plain_callable(countdown):
    calls, log = [], []

    def f(stage, policy, env, action=None):
        calls.append(repr(stage))

    hook = f + Named("a", log)  # __radd__
    assert hook.hooks[0] is f
    run(hook, countdown(1), rk.StopWhenDone())
    assert calls == [repr(s) for s in STAGES] and len(log) == 6


def test_composing_with_a_non_hook_fails():
    with pytest.raises(TypeError, match="ComposedHook: expected hooks.*got int: 3"):
        rk.TotalRewardPerEpisode() + 3


# ---- state_dict round trips ----


def _hooks():
    return [
        rk.EmptyHook(),
        rk.TotalRewardPerEpisode(),
        rk.RewardsPerEpisode(),
        rk.StepsPerEpisode(),
        rk.TimePerStep(window=3),
        rk.DoEveryNSteps(_nothing, n=3),
        rk.DoEveryNEpisodes(_nothing, n=2),
        rk.DoEveryNEpisodes(_nothing, n=2, stage=rk.PRE_EPISODE_STAGE),
        rk.DoOnExit(print),
        rk.StepsPerEpisode() + rk.TotalRewardPerEpisode() + (lambda *args: None),
    ]


@pytest.mark.parametrize("index", range(len(_hooks())))
def test_state_dict_round_trip_resumes_exactly(index, countdown, monkeypatch):
    monkeypatch.setattr(hooks_module.time, "perf_counter", FakeClock(0.5))
    original, fresh = _hooks()[index], _hooks()[index]
    env = countdown(3)
    run(original, env, rk.StopAfterNSteps(7))
    state = original.state_dict()
    assert plain(state)
    assert json.loads(json.dumps(state)) == state
    fresh.load_state_dict(copy.deepcopy(state))
    assert fresh.state_dict() == state
    resumed_env = copy.deepcopy(env)
    run(original, env, rk.StopAfterNSteps(5))
    run(fresh, resumed_env, rk.StopAfterNSteps(5))
    assert fresh.state_dict() == original.state_dict()


def test_state_dict_contents(countdown):
    hook = rk.TotalRewardPerEpisode() + rk.DoEveryNSteps(_nothing) + (lambda *args: None)
    run(hook, countdown(3), rk.StopAfterNSteps(4))
    assert hook.state_dict() == {"hooks": [{"rewards": [6.0], "current": 1.0}, {"t": 4}, None]}


def test_loading_restores_values_not_references(countdown):
    source = run(rk.RewardsPerEpisode(), countdown(2), rk.StopAfterNSteps(3))
    target = rk.RewardsPerEpisode()
    state = source.state_dict()
    target.load_state_dict(state)
    state["rewards"][0].append(99.0)
    assert target.rewards == [[1.0, 2.0]]


@pytest.mark.parametrize(
    "hook, state, error, match",
    [
        (rk.TotalRewardPerEpisode(), [1.0], TypeError, "expected a dict, got list"),
        (rk.TotalRewardPerEpisode(), {"rewards": []}, ValueError, r"lacks \['current'\]"),
        (rk.StepsPerEpisode(), {"steps": [], "current": -1}, ValueError, "non-negative"),
        (rk.DoEveryNSteps(_nothing), {"t": 2.5}, ValueError, "t must be a non-negative integer"),
        (rk.DoEveryNEpisodes(_nothing), {}, ValueError, "DoEveryNEpisodes.load_state_dict"),
        (rk.EmptyHook(), None, TypeError, "EmptyHook.load_state_dict"),
        (rk.StepsPerEpisode() + rk.EmptyHook(), {"hooks": [None]}, ValueError, "list of 2"),
    ],
)
def test_load_state_dict_rejects_corrupt_states(hook, state, error, match):
    with pytest.raises(error, match=match):
        hook.load_state_dict(state)


def test_reprs():
    assert repr(rk.TimePerStep(window=5)) == "TimePerStep(window=5)"
    assert repr(rk.DoEveryNSteps(_nothing, n=3)) == "DoEveryNSteps(_nothing, n=3)"
    assert repr(rk.DoEveryNEpisodes(_nothing)) == (
        "DoEveryNEpisodes(_nothing, n=1, stage=PostEpisode)"
    )
    assert not math.isnan(rk.TimePerStep().steps_per_second)


def test_a_hook_with_slots_is_planned(countdown):
    class Slotted(rk.AbstractHook):
        __slots__ = ("steps",)

        def __init__(self) -> None:
            self.steps = 0

        def post_act(self, policy, env):
            self.steps += 1

    hook = run(Slotted(), countdown(3), rk.StopAfterNSteps(4))
    assert hook.steps == 4
