"""Issue 21, item 14: a replay's checkpoint holds only its written rows (SAC_Pendulum's 1M-row
replay after 500 steps: 500 rows), resumes bit for bit, and older checkpoints that hold the
whole arrays still load."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import rlkit as rk
from rlkit.trajectories.circular import TRACES, CircularArraySARTTrajectory

BOX = rk.GymEnv("Pendulum-v1").state_space
ACTIONS = rk.GymEnv("Pendulum-v1").action_space


def _recorded(capacity, count, pending=False):
    t = CircularArraySARTTrajectory(capacity, BOX, ACTIONS)
    rng = np.random.default_rng(0)
    for i in range(count):
        s = rng.normal(size=3).astype(np.float32)
        t.append(s, rng.normal(size=1), float(i), i % 7 == 0, False, s + 1)
    if pending:
        t.begin_transition(np.ones(3, np.float32), np.ones(1))
    return t


@pytest.mark.parametrize("pending", [False, True])
def test_only_the_written_rows_are_saved_and_they_resume_identically(pending):
    a = _recorded(1_000_000, 500, pending)
    saved = a.state_dict()
    assert saved["filled"] == 500 + pending
    for name in TRACES:
        assert len(saved[name]) == 500 + pending, name
    b = CircularArraySARTTrajectory(1_000_000, BOX, ACTIONS)
    b.state[700] = 5.0  # whatever the target held beyond the saved rows is cleared
    b.load_state_dict(saved)
    for name in TRACES:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert (a.head, a.n_inserted, a.pending, len(a)) == (b.head, b.n_inserted, b.pending, len(b))
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
    np.testing.assert_array_equal(a.sample_indices(64, rng_a)[0], b.sample_indices(64, rng_b)[0])


def test_a_wrapped_buffer_saves_every_row():
    a = _recorded(100, 130)
    assert a.state_dict()["filled"] == 100


def test_an_older_checkpoint_with_the_whole_arrays_still_loads():
    a = _recorded(2_000, 50)
    old = a.state_dict()
    del old["filled"]  # what rlkit saved before: the whole arrays
    for name in TRACES:
        old[name] = getattr(a, name).copy()
    b = CircularArraySARTTrajectory(2_000, BOX, ACTIONS)
    b.load_state_dict(old)
    for name in TRACES:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


def test_a_checkpoint_missing_written_rows_is_refused_and_changes_nothing():
    saved = _recorded(1_000, 50).state_dict()
    saved["filled"] = 40
    for name in TRACES:
        saved[name] = saved[name][:40]
    target = _recorded(1_000, 7)
    before = {name: getattr(target, name).copy() for name in TRACES}
    with pytest.raises(ValueError, match=r"checkpoint has filled=40 rows, fewer than the 50"):
        target.load_state_dict(saved)
    saved["filled"] = 2_000
    with pytest.raises(ValueError, match=r"filled=2000, expected an integer in \[0, 1000\]"):
        target.load_state_dict(saved)
    for name in TRACES:
        np.testing.assert_array_equal(getattr(target, name), before[name])
    assert target.n_inserted == 7


def test_the_cli_says_the_checkpoint_size_of_sac_pendulum(tmp_path):
    run_dir = tmp_path / "sac"
    out = subprocess.run(
        [sys.executable, "-m", "rlkit.cli", "run", "SAC_Pendulum", "--steps", "500",
         "--checkpoint-every", "500", "--logdir", str(run_dir)],
        capture_output=True, text=True, timeout=600, cwd=Path(__file__).parents[2],
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    (checkpoint,) = (run_dir / "checkpoints").iterdir()
    size = checkpoint.stat().st_size
    assert size < 5_000_000  # the 1M-row replay alone was 37 MB
    assert f"newest checkpoint: {checkpoint.name} ({size / 1e6:.1f} MB)" in out.stdout
