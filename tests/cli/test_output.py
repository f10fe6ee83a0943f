"""What ``rlkit`` prints and writes: the banner with the values after overrides, the final
line (transitions done and the budget), ``--quiet``, ``rlkit list``, the plot's moving mean and
the greedy evaluations in TensorBoard (issue 21, items 17 and 22)."""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
import sys

import pytest

import rlkit as rk
from rlkit.cli import main


def rlkit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rlkit.cli", *args], capture_output=True, text=True, timeout=300
    )


def test_quiet_prints_one_line_the_final_one(tmp_path):
    """Decided: --quiet prints one line on standard output, at the end (the issue saw 4)."""
    run_dir = tmp_path / "r"
    done = rlkit("run", "TRPO_CartPole", "--steps", "300", "--set", "n_steps=100", "--set",
                 "batch_size=100", "--quiet",
                 "--logdir", str(run_dir))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    assert len(lines) == 1, lines
    assert re.fullmatch(
        rf"done: 300 of 300 steps, \d+ episodes, mean return \(last \d+\) [\d.]+, [\d,]+ "
        rf"steps/s; results in {re.escape(str(run_dir))}",
        lines[0],
    )


def test_quiet_does_not_print_the_evaluations_but_writes_them(tmp_path, capsys):
    run_dir = tmp_path / "r"
    assert main(["run", "DQN_CartPole", "--steps", "100", "--quiet", "--logdir", str(run_dir)]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1
    with open(run_dir / "evaluations.csv") as f:
        assert len(list(csv.DictReader(f))) == 10


def test_the_final_line_reports_transitions_done_of_the_budget(tmp_path, capsys):
    """The issue: 'steps 4,929' for --steps 5000 (the steps of finished episodes only)."""
    args = ["run", "TRPO_CartPole", "--steps", "700", "--set", "n_steps=350"]
    args += ["--set", "batch_size=350"]
    assert main([*args, "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    final = [line for line in out.splitlines() if line.startswith("done: ")]
    assert len(final) == 1 and final[0].startswith("done: 700 of 700 steps, ")
    run_dir = next(tmp_path.iterdir())
    with open(run_dir / "episodes.csv") as f:
        finished = sum(int(row["length"]) for row in csv.DictReader(f))
    assert finished < 700  # the last episode is unfinished, and still counted above


def test_the_banner_shows_the_values_after_overrides(tmp_path, capsys):
    """The issue: the banner said 'lr 1e-3' after --set lr=3e-4 (the recipe's description)."""
    args = ["run", "SAC_Pendulum", "--set", "lr=3e-4", "--set", "hidden=64", "--steps", "20"]
    assert main([*args, "--set", "learning_starts=100", "--out", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("SAC_Pendulum (seed 0): SAC on Pendulum-v1")
    assert lines[1] == (
        "  run with lr 0.0003 (recipe: 0.001); hidden 64 (recipe: 256-256); learning_starts 100 "
        "(recipe: 100); total_steps 20 (recipe: 20,000)"
    )


def test_no_overrides_no_second_banner_line(tmp_path, capsys):
    assert main(["run", "TD0_RandomWalk1D", "--out", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("results go to ")


def test_list_shows_whole_descriptions_never_cut_inside_brackets():
    """The issue: 'rlkit list' cut ES_CartPole's description at '(30'."""
    listed = rlkit("list")
    assert listed.returncode == 0
    lines = {line.split()[0]: line.split(None, 1)[1] for line in listed.stdout.splitlines()}
    assert lines["ES_CartPole"] == (
        "Evolution strategies on CartPole-v1: the policy trained by Evolutionary alone (30 "
        "generations of 16 antithetic pairs)."
    )
    for name, description in lines.items():
        assert description.count("(") == description.count(")"), name
        assert description == rk.list_experiments()[name]


def test_list_wraps_at_whole_words_on_a_narrow_terminal(monkeypatch, capsys):
    import os

    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    monkeypatch.setattr(
        "shutil.get_terminal_size", lambda fallback=(80, 24): os.terminal_size((70, 24))
    )
    assert main(["list"]) == 0
    out = capsys.readouterr().out.splitlines()
    width = max(map(len, rk.list_experiments()))
    assert all(len(line) <= max(70, width + 42) for line in out)
    start = next(i for i, line in enumerate(out) if line.startswith("ES_CartPole "))
    text = " ".join(line[width + 2 :].strip() for line in out[start : start + 3])
    assert text.startswith(rk.list_experiments()["ES_CartPole"])


def test_the_plots_moving_mean_ends_at_the_terminals_mean(tmp_path, capsys, monkeypatch):
    """The issue: the plot said 'mean of the last 77', the terminal '(last 100)'."""
    pytest.importorskip("matplotlib")
    import matplotlib.figure
    run_dir = tmp_path / "r"
    assert main(["run", "TD0_RandomWalk1D", "--set", "episodes=400", "--logdir", str(run_dir)]) == 0
    terminal = re.search(r"mean return \(last (\d+)\) (-?[\d.]+)", capsys.readouterr().out)
    figures = []
    monkeypatch.setattr(
        matplotlib.figure.Figure, "savefig", lambda self, *a, **k: figures.append(self)
    )
    assert main(["plot", str(run_dir)]) == 0
    (axes,) = figures[0].axes
    curve = next(line for line in axes.get_lines() if line.get_label().startswith("mean of"))
    assert curve.get_label() == f"mean of the last {terminal[1]} (as the terminal's)"
    assert terminal[1] == "100" and f"{curve.get_ydata()[-1]:.3f}" == terminal[2]


def test_greedy_evaluations_are_written_to_tensorboard(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run_dir = tmp_path / "r"
    assert main(["run", "DQN_CartPole", "--steps", "500", "--quiet", "--logdir", str(run_dir)]) == 0
    events = EventAccumulator(str(run_dir / "tensorboard"))
    events.Reload()
    assert {"evaluation/mean_return", "evaluation/std_return"} <= set(events.Tags()["scalars"])
    with open(run_dir / "evaluations.csv") as f:
        rows = list(csv.DictReader(f))
    written = events.Scalars("evaluation/mean_return")
    assert [e.step for e in written] == [int(r["step"]) for r in rows] == list(range(50, 501, 50))
    assert [e.value for e in written] == pytest.approx([float(r["mean_return"]) for r in rows])


def test_a_resumed_run_writes_each_evaluation_to_tensorboard_once(tmp_path, capsys):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run_dir = tmp_path / "r"
    args = ["run", "DQN_CartPole", "--steps", "500", "--quiet", "--checkpoint-every", "200"]
    assert main([*args, "--logdir", str(run_dir)]) == 0
    for path in (run_dir / "checkpoints").iterdir():  # as if killed after step 400
        if "500" in path.name:
            path.unlink() if path.is_file() else shutil.rmtree(path)
    assert main(["resume", str(run_dir), "--quiet"]) == 0
    events = EventAccumulator(str(run_dir / "tensorboard"))
    events.Reload()
    steps = [e.step for e in events.Scalars("evaluation/mean_return")]
    assert steps == list(range(50, 501, 50)), steps

