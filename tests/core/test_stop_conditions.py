"""Stop conditions: when runs end, composition with | and &, bad input, state_dict round trips."""

from __future__ import annotations

import copy
import json
import math
import signal
import threading

import pytest

import rlkit as rk
from rlkit.core import stop_conditions as stop_module
from rlkit.core.stop_conditions import StopAll, StopAny


def run(env, stop, hook=None):
    hook = hook if hook is not None else rk.StepsPerEpisode()
    return rk.run(rk.RandomPolicy(seed=0), env, stop, hook)


class FakeClock:
    """Advances ``tick`` seconds at every reading; tests never assert wall-clock times."""

    def __init__(self, tick: float) -> None:
        self.now, self.tick = 0.0, tick

    def __call__(self) -> float:
        self.now += self.tick
        return self.now


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock(0.25)
    monkeypatch.setattr(stop_module.time, "perf_counter", fake)
    return fake


def levels(stop) -> tuple[bool, bool]:
    """Which checks the call plan holds: (after each step, after each episode)."""
    step, episode = stop_module.stop_plan(stop, rk.RandomPolicy(), None)
    return step is not None, episode is not None


# ---- counting conditions ----


def test_stop_after_n_steps_and_episodes(countdown):
    env = countdown(3)
    steps = rk.StopAfterNSteps(5)
    assert run(env, steps).steps == [3] and env.steps == 5
    assert steps.progress() == (5, 5, "steps")
    episodes = rk.StopAfterNEpisodes(2)
    assert episodes.progress() == (0, 2, "episodes")
    run(env, episodes)  # finishes the unfinished episode, then one more
    assert env.steps == 9 and episodes.progress() == (2, 2, "episodes")


def test_counters_keep_counting_across_runs(countdown):
    env, stop = countdown(3), rk.StopAfterNSteps(2)
    run(env, stop)
    run(env, stop)  # already satisfied: stops after the first step
    assert env.steps == 3


@pytest.mark.parametrize("cls", [rk.StopAfterNSteps, rk.StopAfterNEpisodes])
@pytest.mark.parametrize("n", [0, -5, 2.0, True, "3", None])
def test_counting_conditions_reject_bad_n(cls, n):
    with pytest.raises(ValueError, match=f"{cls.__name__}: n must be a positive integer, got"):
        cls(n)


# ---- StopWhenDone ----


def test_stop_when_done_stops_after_the_first_finished_episode(countdown):
    env, stop = countdown(4), rk.StopWhenDone()
    assert stop.progress() == (0, 1, "episodes")
    hook = run(env, stop)
    assert hook.steps == [4] and hook.current == 0  # PostEpisode fired for it
    assert stop.progress() == (1, 1, "episodes")
    assert levels(stop) == (False, True)


def test_stop_when_done_on_cartpole():
    hook = run(rk.GymEnv("CartPole-v1", seed=0), rk.StopWhenDone(), rk.TotalRewardPerEpisode())
    assert len(hook.rewards) == 1 and hook.rewards[0] > 0


# ---- StopAfterNoImprovement ----


def _feed(values):
    it = iter(values)
    return lambda: next(it)


def test_no_improvement_counts_episodes_without_a_new_best():
    stop = rk.StopAfterNoImprovement(_feed([1, 2, 2, 1.5, 3, 3, 3, 3]), patience=3)
    results = [stop.episode(None, None) for _ in range(8)]
    assert results == [False] * 7 + [True]
    assert (stop.best, stop.bad_episodes) == (3.0, 3)
    assert levels(stop) == (False, True)
    assert stop.progress() is None


def test_no_improvement_min_delta():
    stop = rk.StopAfterNoImprovement(_feed([1.0, 1.05, 1.25, 1.3, 1.34]), 2, min_delta=0.1)
    assert [stop.episode(None, None) for _ in range(5)] == [False, False, False, False, True]
    assert stop.best == 1.25


def test_nan_never_improves():
    stop = rk.StopAfterNoImprovement(_feed([float("nan")] * 2), patience=2)
    assert [stop.episode(None, None) for _ in range(2)] == [False, True]


def test_no_improvement_in_a_run(countdown):
    """Returns of CountdownEnv never change: the first is the best, `patience` more follow."""
    totals = rk.TotalRewardPerEpisode()
    stop = rk.StopAfterNoImprovement(lambda: totals.rewards[-1], patience=4)
    run(countdown(3), stop | rk.StopAfterNEpisodes(100), totals)
    assert totals.rewards == [6.0] * 5


def test_no_improvement_with_a_learning_curve(countdown):
    curve = iter([1, 2, 3, 4, 4, 5, 5, 5, 4, 9])
    stop = rk.StopAfterNoImprovement(lambda: next(curve), patience=3)
    hook = run(countdown(2), stop)
    assert len(hook.steps) == 9  # best 5 at episode 6, then three without improvement


def test_no_improvement_rejects_bad_input():
    with pytest.raises(TypeError, match="StopAfterNoImprovement: f must be callable"):
        rk.StopAfterNoImprovement(3.0, patience=2)
    for patience in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="patience must be a positive integer"):
            rk.StopAfterNoImprovement(lambda: 0.0, patience)
    for delta in (-0.1, math.nan, math.inf, "0.1", True):
        with pytest.raises(ValueError, match="min_delta must be a non-negative finite number"):
            rk.StopAfterNoImprovement(lambda: 0.0, 2, min_delta=delta)
    stop = rk.StopAfterNoImprovement(lambda: "high", 2)
    with pytest.raises(TypeError, match="f\\(\\) must return a number, got str: 'high'"):
        stop.episode(None, None)


# ---- StopAfterNSeconds (a fake clock) ----


def test_stop_after_n_seconds(countdown, clock):
    stop = rk.StopAfterNSeconds(1.0)
    assert levels(stop) == (True, True)
    env = countdown(3)
    run(env, stop)
    assert env.steps == 4  # 0.25 s per reading of the clock
    assert stop.elapsed == 1.0 and stop.progress() == (1.0, 1.0, "seconds")


def test_seconds_budget_continues_across_runs_and_pauses_between(countdown, clock):
    stop = rk.StopAfterNSeconds(2.0)
    env = countdown(3)
    run(env, stop | rk.StopAfterNSteps(3))
    assert (env.steps, stop.elapsed) == (3, 0.75)
    clock.now += 1000.0  # time between runs does not count
    rk.explain(rk.RandomPolicy(), env, None, stop)  # nor does explaining a run
    clock.now += 1000.0
    run(env, stop)
    assert (env.steps, stop.elapsed) == (8, 2.0)


def test_seconds_as_part_of_a_composite_starts_with_the_run(countdown, clock):
    stop = rk.StopAfterNSeconds(1.0) & rk.StopWhenDone()
    clock.now += 1000.0  # the clock starts with the run, not at construction
    env = countdown(3)
    run(env, stop)
    assert env.steps == 6  # 1 s after 4 steps, then the end of that episode


@pytest.mark.parametrize("seconds", [0, -1.0, math.inf, math.nan, "5", True, None])
def test_stop_after_n_seconds_rejects_bad_seconds(seconds):
    message = "StopAfterNSeconds: seconds must be a positive finite number"
    with pytest.raises(ValueError, match=message):
        rk.StopAfterNSeconds(seconds)


# ---- StopSignal ----


def test_stop_signal_set_by_a_hook_stops_after_that_step(countdown):
    stop = rk.StopSignal()
    assert repr(stop) == "StopSignal(set=False)"
    env = countdown(3)
    hook = rk.DoEveryNSteps(lambda t, policy, env: stop.set(), n=5) + rk.StepsPerEpisode()
    run(env, stop | rk.StopAfterNSteps(100), hook)
    assert env.steps == 5 and hook[1].steps == [3] and hook[1].current == 2
    assert stop.is_set() and levels(stop) == (True, True)
    run(env, stop)  # still set: the next run stops after one step
    assert env.steps == 6
    stop.clear()
    run(env, stop | rk.StopAfterNSteps(4))
    assert env.steps == 10


def test_stop_signal_set_from_another_thread(countdown):
    stop, started = rk.StopSignal(), threading.Event()
    thread = threading.Thread(target=lambda: (started.wait(), stop.set()))
    thread.start()
    env, budget = countdown(3), rk.StopAfterNSteps(10**6)
    run(env, stop | budget, rk.DoEveryNSteps(lambda t, p, e: started.set()))
    thread.join()
    assert stop.is_set() and 1 <= env.steps < 10**6  # the signal, not the budget, stopped it


def test_stop_signal_on_sigint(countdown):
    previous = signal.getsignal(signal.SIGINT)
    try:
        stop = rk.StopSignal.on_sigint()
        assert stop.previous_handler is previous
        env = countdown(3)
        hook = rk.DoEveryNSteps(lambda t, p, e: signal.raise_signal(signal.SIGINT), n=4)
        run(env, stop | rk.StopAfterNSteps(1000), hook)
        assert stop.is_set() and 4 <= env.steps < 8  # stopped cleanly soon after Ctrl-C
        with pytest.raises(KeyboardInterrupt):  # a second Ctrl-C interrupts as usual
            signal.raise_signal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, previous)


def test_stop_signal_state_is_not_resumed():
    stop = rk.StopSignal()
    stop.set()
    assert stop.state_dict() == {}
    fresh = rk.StopSignal()
    fresh.load_state_dict(stop.state_dict())
    assert not fresh.is_set()


# ---- composition ----


def test_any_with_step_and_episode_conditions(countdown):
    env = countdown(3)
    stop = rk.StopAfterNSteps(100) | rk.StopAfterNEpisodes(2)
    assert isinstance(stop, StopAny) and levels(stop) == (True, True)
    assert run(env, stop).steps == [3, 3] and env.steps == 6
    env = countdown(3)
    stop = rk.StopAfterNSteps(4) | rk.StopAfterNEpisodes(10)
    hook = run(env, stop)
    assert (hook.steps, hook.current) == ([3], 1)  # stopped in the middle of episode 2
    assert stop.conditions[1].episodes == 1  # every part was updated


def test_all_with_step_and_episode_conditions(countdown):
    env = countdown(3)
    stop = rk.StopAfterNSteps(4) & rk.StopWhenDone()
    assert isinstance(stop, StopAll)
    assert run(env, stop).steps == [3, 3]  # the first episode end after 4 steps
    env = countdown(3)
    stop = rk.StopAfterNSteps(4) & rk.StopAfterNSteps(8)
    assert levels(stop) == (True, True)
    run(env, stop)
    assert env.steps == 8 and stop.conditions[0].steps == 8


def test_all_of_episode_conditions_checks_only_episodes(countdown):
    stop = rk.StopAfterNEpisodes(2) & rk.StopWhenDone()
    assert levels(stop) == (False, True)
    assert run(countdown(2), stop).steps == [2, 2]


def test_any_with_a_plain_callable(countdown):
    env = countdown(3)
    stop = StopAny(rk.StopAfterNEpisodes(10), lambda policy, env: env.steps == 5)
    assert levels(stop) == (True, True)
    run(env, stop)
    assert env.steps == 5


def test_composites_flatten_and_read_well():
    a, b, c = rk.StopAfterNSteps(1), rk.StopAfterNEpisodes(2), rk.StopWhenDone()
    assert (a | b | c).conditions == (a, b, c)
    assert (a & b & c).conditions == (a, b, c)
    assert repr(a | b | c) == "StopAfterNSteps(1) | StopAfterNEpisodes(2) | StopWhenDone()"
    assert repr((a | b) & c) == "(StopAfterNSteps(1) | StopAfterNEpisodes(2)) & StopWhenDone()"
    assert ((a | b) & c).conditions[0].conditions == (a, b)


def test_composites_reject_bad_parts():
    with pytest.raises(TypeError, match="StopAny: expected stop conditions.*got int: 3"):
        rk.StopAfterNSteps(1) | 3
    with pytest.raises(TypeError, match="StopAll: expected stop conditions.*got str"):
        StopAll(rk.StopWhenDone(), "never")
    with pytest.raises(ValueError, match="StopAny: needs at least one condition"):
        StopAny()


def test_composite_progress():
    steps, episodes = rk.StopAfterNSteps(10), rk.StopAfterNEpisodes(4)
    steps.steps, episodes.episodes = 5, 1
    assert (steps | episodes).progress() == (5, 10, "steps")  # the nearer end
    assert (steps & episodes).progress() == (1, 4, "episodes")  # the farther end
    assert (rk.StopSignal() | rk.StopWhenDone()).progress() == (0, 1, "episodes")
    assert StopAny(rk.StopSignal()).progress() is None


# ---- state_dict round trips ----


def _conditions():
    return [
        rk.StopAfterNSteps(20),
        rk.StopAfterNEpisodes(6),
        rk.StopWhenDone() & rk.StopAfterNSteps(20),
        rk.StopAfterNoImprovement(lambda: 1.0, patience=4) | rk.StopAfterNSteps(20),
        rk.StopAfterNSeconds(10.0) | rk.StopAfterNSteps(20),
        rk.StopSignal() | rk.StopAfterNSteps(20) | (lambda policy, env: False),
    ]


@pytest.mark.parametrize("index", range(len(_conditions())))
def test_state_dict_round_trip_resumes_exactly(index, countdown, clock):
    original, fresh = _conditions()[index], _conditions()[index]
    env = countdown(3)
    run(env, original | rk.StopAfterNSteps(7))
    state = original.state_dict()
    assert json.loads(json.dumps(state)) == state
    fresh.load_state_dict(copy.deepcopy(state))
    assert fresh.state_dict() == state
    resumed_env = copy.deepcopy(env)
    run(env, original)
    run(resumed_env, fresh)
    assert resumed_env.steps == env.steps
    assert fresh.state_dict() == original.state_dict()


def test_state_dict_contents(countdown, clock):
    stop = rk.StopAfterNSteps(5) | rk.StopWhenDone() | rk.StopAfterNSeconds(60)
    run(countdown(3), stop)
    assert stop.state_dict() == {"conditions": [{"steps": 3}, {"episodes": 1}, {"elapsed": 0.75}]}
    no_improvement = rk.StopAfterNoImprovement(lambda: 2.0, patience=3)
    assert no_improvement.state_dict() == {"best": -math.inf, "bad_episodes": 0}


@pytest.mark.parametrize(
    "stop, state, error, match",
    [
        (rk.StopAfterNSteps(3), "steps", TypeError, "expected a dict, got str"),
        (rk.StopAfterNSteps(3), {"episodes": 1}, ValueError, r"lacks \['steps'\]"),
        (rk.StopAfterNEpisodes(3), {"episodes": -1}, ValueError, "non-negative integer"),
        (rk.StopAfterNSeconds(3), {"elapsed": -1.0}, ValueError, "elapsed must be >= 0"),
        (rk.StopWhenDone() | rk.StopSignal(), {"conditions": [{}]}, ValueError, "list of 2"),
        (rk.StopWhenDone(), {"episodes": True}, ValueError, "non-negative integer"),
    ],
)
def test_load_state_dict_rejects_corrupt_states(stop, state, error, match):
    with pytest.raises(error, match=match):
        stop.load_state_dict(state)


def test_a_plain_callable_on_the_left_composes(countdown):
    env = countdown(3)
    stop = (lambda policy, env: env.steps == 2) | rk.StopAfterNEpisodes(5)
    assert isinstance(stop, StopAny)
    run(env, stop)
    assert env.steps == 2
    assert isinstance((lambda policy, env: True) & rk.StopWhenDone(), StopAll)
