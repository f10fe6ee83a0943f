"""Issue 21 item 18: Ctrl-C stops ``rk.run`` cleanly from Python, as it stops the rlkit command:
at a step boundary, PostExperiment announced, a final checkpoint that resuming continues, a
hint on how to continue; a second Ctrl-C aborts (rlkit/core/interrupt.py, rlkit/core/run.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import rlkit as rk
from rlkit.core.interrupt import CtrlC, ctrl_c_pressed, stop_signals
from rlkit.hooks.checkpoint import CheckpointHook, latest_checkpoint, read_checkpoint

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child is POSIX")

ROOT = Path(__file__).resolve().parents[2]

# A user's script: a long run with checkpoints; it prints what rk.run returned.
SCRIPT = textwrap.dedent(
    """
    import sys, time
    import rlkit as rk
    from rlkit.hooks.checkpoint import CheckpointHook

    folder, checkpoints, slow_exit = sys.argv[1], sys.argv[2] == "1", sys.argv[3] == "1"

    def pause(t, policy, env):
        time.sleep(0.0005)

    def ending(policy, env):
        print("PostExperiment", flush=True)
        if slow_exit:
            time.sleep(60)

    def build():
        return rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0)

    def hooks():
        hook = rk.TotalRewardPerEpisode() + rk.DoEveryNSteps(pause, n=1) + rk.DoOnExit(ending)
        return hook + CheckpointHook(folder, every_n_steps=200) if checkpoints else hook

    policy, env = build()
    print("started", flush=True)
    hook = rk.run(policy, env, rk.StopAfterNSteps(10**7), hooks())
    print("returned", len(hook[0].rewards), flush=True)
    """
)


def start(folder: Path, checkpoints: bool = True, slow_exit: bool = False) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(folder), str(int(checkpoints)), str(int(slow_exit))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"},
    )


def wait_for(process: subprocess.Popen, ready: Any) -> None:
    deadline = time.monotonic() + 240
    while not ready() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.1)
    assert process.poll() is None, process.communicate()


def test_ctrl_c_stops_rk_run_cleanly_with_a_final_checkpoint_and_a_hint(tmp_path):
    process = start(tmp_path)
    wait_for(process, lambda: latest_checkpoint(tmp_path) is not None)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=240)
    assert process.returncode == 0, err  # rk.run returned: the script went on
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert out.splitlines()[0] == "started" and "PostExperiment" in out
    assert out.splitlines()[-1].startswith("returned ")
    final = latest_checkpoint(tmp_path)
    meta = read_checkpoint(final)["meta"]
    assert not meta["finished"]  # stopped, not over: resuming continues
    assert "rk.run: stopped by Ctrl-C at the end of a step" in err
    assert f"checkpoint of step {meta['step']:,} written to {final}" in err
    assert f"resume_from={str(tmp_path)!r}" in err

    # the hint works: the same objects, resumed, continue from the final checkpoint
    policy, env = rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0)
    hook = (
        rk.TotalRewardPerEpisode()
        + rk.DoEveryNSteps(lambda t, p, e: None, n=1)
        + rk.DoOnExit(lambda p, e: None)
        + CheckpointHook(tmp_path, every_n_steps=200)
    )
    stop = rk.StopAfterNSteps(meta["step"] + 50)
    rk.run(policy, env, stop, hook, resume_from=tmp_path)
    assert hook[3].steps == meta["step"] + 50


def test_ctrl_c_without_a_checkpoint_hook_says_there_is_nothing_to_resume(tmp_path):
    process = start(tmp_path, checkpoints=False)
    assert process.stdout.readline().strip() == "started"
    time.sleep(1.0)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=240)
    assert process.returncode == 0, err
    assert out.splitlines()[-1].startswith("returned ")
    assert "Nothing to continue from: add an rk.CheckpointHook" in err


def test_a_second_ctrl_c_aborts_at_once(tmp_path):
    process = start(tmp_path, slow_exit=True)
    wait_for(process, lambda: latest_checkpoint(tmp_path) is not None)
    process.send_signal(signal.SIGINT)
    assert process.stdout.readline().strip() == "started"
    assert process.stdout.readline().strip() == "PostExperiment"  # the clean stop began
    began = time.monotonic()
    process.send_signal(signal.SIGINT)  # during the (slow) PostExperiment
    out, err = process.communicate(timeout=240)
    assert time.monotonic() - began < 30  # not the 60 s of the hook
    assert process.returncode != 0 and "KeyboardInterrupt" in err
    assert "returned" not in out


# ---- the pieces, in this process ----

in_main_thread = pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(),
    reason="signal handlers are the main thread's",
)


def test_stop_signals_are_found_in_composed_conditions():
    a, b = rk.StopSignal(), rk.StopSignal()
    condition = (rk.StopAfterNSteps(5) | a) & (b | rk.StopAfterNEpisodes(2))
    assert stop_signals(condition) == [a, b]
    assert stop_signals(rk.StopAfterNSteps(5)) == []


@in_main_thread
def test_ctrl_c_handler_is_installed_only_over_pythons_own_and_put_back():
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        stop = rk.StopSignal()
        with CtrlC(rk.StopAfterNSteps(5) | stop) as ctrl_c:
            assert ctrl_c.installed and not ctrl_c_pressed()
            handler = signal.getsignal(signal.SIGINT)
            handler(signal.SIGINT, None)  # the first Ctrl-C
            assert ctrl_c.pressed() and stop.is_set() and ctrl_c_pressed()
            with pytest.raises(KeyboardInterrupt):
                handler(signal.SIGINT, None)  # the second
            with CtrlC() as inner:  # an inner run (rk.evaluate) leaves it to the outer one
                assert not inner.installed
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        assert not ctrl_c_pressed()
    finally:
        signal.signal(signal.SIGINT, previous)


@in_main_thread
def test_a_pressed_ctrl_c_stops_the_run_at_the_end_of_the_step(tmp_path):
    """In the main thread: Ctrl-C (here a SIGINT the hook sends itself) at step 7 of an
    episode-counting run stops it after step 7, with an unfinished final checkpoint."""
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        hook = rk.DoEveryNSteps(
            lambda t, p, e: os.kill(os.getpid(), signal.SIGINT) if t == 7 else None, n=1
        ) + CheckpointHook(tmp_path, every_n_steps=1000)
        stop = rk.StopAfterNEpisodes(100)
        rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), stop, hook)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert hook[0].t == 7
    meta = read_checkpoint(latest_checkpoint(tmp_path))["meta"]
    assert (meta["step"], meta["finished"]) == (7, False)
