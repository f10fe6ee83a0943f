"""Tests of rlkit/core/progress.py: ProgressBar."""

from __future__ import annotations

import io
import sys
import time

import pytest

import rlkit as rk
from rlkit.hooks.progress import ProgressBar


def cartpole(seed: int = 0) -> rk.GymEnv:
    return rk.GymEnv("CartPole-v1", seed=seed)


def final_line(text: str) -> str:
    return text.replace("\r", "\n").strip().splitlines()[-1]


def test_steps_bar_writes_to_the_given_file_with_the_right_total():
    out, stop = io.StringIO(), rk.StopAfterNSteps(400)
    bar = ProgressBar(stop, desc="cartpole", file=out)
    rk.run(rk.RandomPolicy(seed=0), cartpole(), stop, bar)
    last = final_line(out.getvalue())
    assert last.startswith("cartpole: 100%")
    assert "400/400" in last and "step" in last
    assert "return=" in last and "steps/s=" in last
    assert bar.bar is None  # closed


def test_episodes_bar_counts_finished_episodes_and_shows_the_mean_return():
    out, stop = io.StringIO(), rk.StopAfterNEpisodes(7)
    bar = ProgressBar(stop, file=out, mean_window=3)
    returns = []

    class Returns(rk.AbstractHook):
        def pre_episode(self, policy, env):
            self.ret = 0.0

        def post_act(self, policy, env):
            self.ret += env.reward

        def post_episode(self, policy, env):
            returns.append(self.ret)

    rk.run(rk.RandomPolicy(seed=0), cartpole(), stop, bar + Returns())
    last = final_line(out.getvalue())
    assert "7/7" in last and "episode" in last
    assert bar.mean_return == pytest.approx(sum(returns[-3:]) / 3)
    assert f"return={bar.mean_return:.4g}" in last
    assert bar.total_steps == sum(returns)  # CartPole: reward 1 per step


def test_bar_without_stop_condition_counts_steps_without_total():
    out = io.StringIO()
    rk.run(rk.RandomPolicy(seed=0), cartpole(), rk.StopAfterNSteps(123), ProgressBar(file=out))
    last = final_line(out.getvalue())
    assert last.startswith("123step") or "123" in last.split("[")[0]
    assert "%" not in last  # no total, no percentage


def test_bar_is_closed_at_post_experiment_when_the_run_raises():
    out, stop = io.StringIO(), rk.StopAfterNSteps(100)
    bar = ProgressBar(stop, file=out)

    class Boom(rk.AbstractHook):
        steps = 0

        def post_act(self, policy, env):
            self.steps += 1
            if self.steps == 37:
                raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        rk.run(rk.RandomPolicy(seed=0), cartpole(), stop, bar + Boom())
    assert bar.bar is None
    # the bar shows the stop condition's count: step 37 raised before the stop check saw it
    assert "36/100" in final_line(out.getvalue())


def test_second_run_continues_from_the_stop_conditions_count():
    out, stop = io.StringIO(), rk.StopAfterNEpisodes(6)
    bar = ProgressBar(stop, file=out)
    policy, env = rk.RandomPolicy(seed=0), cartpole()
    rk.run(policy, env, rk.StopAfterNEpisodes(2), bar)  # the bar's condition is not advanced
    assert "0/6" in final_line(out.getvalue())
    rk.run(policy, env, stop, bar)
    assert "6/6" in final_line(out.getvalue())
    assert bar.episodes == 8


def test_disable_true_writes_nothing():
    out, stop = io.StringIO(), rk.StopAfterNSteps(50)
    rk.run(rk.RandomPolicy(seed=0), cartpole(), stop, ProgressBar(stop, file=out, disable=True))
    assert out.getvalue() == ""


def test_plain_lines_when_stderr_is_not_a_terminal(monkeypatch):
    """Issue 21 item 18: off a terminal (a log file, a pipe) the bar is plain lines, a tenth of
    the run each, not nothing."""
    fake = io.StringIO()  # not a TTY, not a notebook
    monkeypatch.setattr(sys, "stderr", fake)
    stop = rk.StopAfterNSteps(5_000)
    bar = ProgressBar(stop, desc="random")
    pause = rk.DoEveryNSteps(lambda t, policy, env: time.sleep(0.0003), n=1)  # >= 1.5 s
    rk.run(rk.RandomPolicy(seed=0), cartpole(), stop, bar + pause)
    lines = fake.getvalue().splitlines()
    assert "\r" not in fake.getvalue() and "\x1b" not in fake.getvalue()  # no redrawing
    assert 2 <= len(lines) <= 11
    assert all(line.startswith("random: ") for line in lines)
    assert lines[-1].startswith("random: 5,000/5,000 steps (100%), return=")
    assert "steps/s=" in lines[-1]
    counts = [int(line.split()[1].split("/")[0].replace(",", "")) for line in lines]
    assert counts == sorted(counts)
    quiet = io.StringIO()
    monkeypatch.setattr(sys, "stderr", quiet)
    stop = rk.StopAfterNSteps(50)
    rk.run(rk.RandomPolicy(seed=0), cartpole(), stop, ProgressBar(stop, disable=True))
    assert quiet.getvalue() == ""  # disable=True still hides it

    class TTY(io.StringIO):
        def isatty(self):
            return True

    tty = TTY()
    monkeypatch.setattr(sys, "stderr", tty)
    stop = rk.StopAfterNSteps(50)
    rk.run(rk.RandomPolicy(seed=0), cartpole(), stop, ProgressBar(stop))
    assert "50/50" in final_line(tty.getvalue())


def test_bar_is_not_updated_every_step():
    from tqdm import tqdm

    calls = []

    class CountingTqdm(tqdm):
        def update(self, n=1):
            calls.append(n)
            return super().update(n)

    out, stop = io.StringIO(), rk.StopAfterNSteps(5000)
    bar = ProgressBar(stop, file=out)
    bar._tqdm_std = CountingTqdm
    rk.run(rk.RandomPolicy(seed=0), cartpole(), stop, bar)
    assert sum(calls) == 5000
    # updates adapt to about ten a second: far fewer than steps unless a step takes > 1 ms
    assert len(calls) < 500


def test_state_dict_round_trip():
    stop = rk.StopAfterNSteps(90)
    bar = ProgressBar(stop, disable=True, mean_window=4)
    rk.run(rk.RandomPolicy(seed=0), cartpole(), stop, bar)
    state = bar.state_dict()
    assert state["total_steps"] == 90 and 0 < len(state["returns"]) <= 4
    other = ProgressBar(stop, disable=True, mean_window=4)
    other.load_state_dict(state)
    assert other.state_dict() == state
    assert other.mean_return == bar.mean_return


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"mean_window": 0}, ValueError, "ProgressBar: mean_window must be a positive integer"),
        ({"disable": "yes"}, TypeError, "ProgressBar: disable must be True, False or None"),
        ({"stop_condition": 5}, TypeError, "ProgressBar: stop_condition must have a progress"),
    ],
)
def test_bad_arguments_are_rejected(kwargs, error, match):
    with pytest.raises(error, match=match):
        ProgressBar(**kwargs)
