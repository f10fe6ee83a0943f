"""The ``rlkit`` command: list, run, errors, and a non-editable install."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from rlkit.cli import main

TABULAR = [
    "TabularQLearning_CliffWalking",
    "SARSA_CliffWalking",
    "ExpectedSARSA_CliffWalking",
    "TD0_RandomWalk1D",
    "MonteCarlo_Blackjack",
    "TabularQLearning_FrozenLake",
]


def test_list_shows_every_bundled_recipe_with_a_description(capsys):
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    names = {line.split()[0]: line for line in lines}
    for name in TABULAR:
        assert name in names
        assert len(names[name].split(None, 1)[1]) > 10  # a one-line description follows


def test_run_writes_per_episode_results_to_the_run_directory_it_names(tmp_path, capsys):
    assert main(["run", "TD0_RandomWalk1D", "--seed", "3", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    run_dir = Path(out.strip().splitlines()[-1].removeprefix("results written to "))
    assert run_dir.parent == tmp_path and run_dir.name.startswith("TD0_RandomWalk1D-seed3-")
    assert "done: episodes     100" in out
    with open(run_dir / "episodes.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 100
    assert {"episode", "return", "length"} <= set(rows[0])
    config = json.loads((run_dir / "config.json").read_text())
    assert config["experiment"] == "TD0_RandomWalk1D" and config["seed"] == 3


def test_same_seed_same_results_different_seed_different(tmp_path, capsys):
    def returns(seed: int, out: Path) -> list[str]:
        main(["run", "SARSA_CliffWalking", "--seed", str(seed), "--out", str(out), "--quiet"])
        run_dir = next(out.iterdir())
        with open(run_dir / "episodes.csv") as f:
            return [row["return"] for row in csv.DictReader(f)]

    first, again, other = (returns(s, tmp_path / d) for s, d in ((1, "a"), (1, "b"), (2, "c")))
    assert first == again
    assert first != other


def test_unknown_experiment_is_an_error_listing_known_names(capsys):
    assert main(["run", "QLearning_CliffWalkin"]) == 2
    err = capsys.readouterr().err
    assert "unknown experiment 'QLearning_CliffWalkin'" in err
    assert "TabularQLearning_CliffWalking" in err and "Known experiments:" in err


def test_the_console_script_runs_as_a_module():
    result = subprocess.run(
        [sys.executable, "-m", "rlkit.cli", "list"], capture_output=True, text=True, check=True
    )
    assert "TD0_RandomWalk1D" in result.stdout


@pytest.mark.slow
def test_the_wheel_ships_the_recipes(tmp_path):
    root = Path(__file__).resolve().parents[1]
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(root)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("rlkit_toolkit-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "rlkit/experiments/tabular.py" in names
    assert "rlkit/cli/__init__.py" in names and "rlkit/cli/__main__.py" in names
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    listing = subprocess.run(
        [
            sys.executable,
            "-c",
            "import rlkit, rlkit.cli; print(rlkit.__file__); rlkit.cli.main(['list'])",
        ],
        cwd=tmp_path,
        env={"PYTHONPATH": str(target), "PATH": ""},
        capture_output=True,
        text=True,
        check=True,
    )
    assert listing.stdout.startswith(str(target))  # the installed copy, not the source tree
    assert "TabularQLearning_CliffWalking" in listing.stdout


def test_run_on_a_terminal_shows_a_progress_bar(tmp_path):
    import fcntl
    import os
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    # a terminal of 30 rows and 120 columns (a fresh pty reports 0 x 0)
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "rlkit.cli", "run", "TD0_RandomWalk1D", "--out", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=follower,
        text=True,
    )
    os.close(follower)
    screen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        screen += chunk
    out, _ = process.communicate(timeout=120)
    os.close(leader)
    assert process.returncode == 0
    bar = screen.decode(errors="replace")
    assert "TD0_RandomWalk1D" in bar and "100/100" in bar and "episode/s" in bar
    assert "results written to" in out


def test_logdir_holds_tensorboard_events_and_the_results(tmp_path, capsys):
    run_dir = tmp_path / "mine"
    assert main(["run", "TD0_RandomWalk1D", "--logdir", str(run_dir), "--quiet"]) == 0
    assert (run_dir / "episodes.csv").exists() and (run_dir / "config.json").exists()
    assert list((run_dir / "tensorboard").glob("events.out.tfevents.*"))


def test_run_reports_the_recipes_greedy_evaluations(tmp_path, capsys, monkeypatch):
    import rlkit as rk
    from rlkit.core import experiment as registry

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))  # forget it afterwards

    @rk.experiment
    def EvaluatedQLearning_FrozenLake(seed: int = 0) -> rk.Experiment:
        """Q-learning on FrozenLake-v1, evaluated greedily every 500 steps."""
        env = rk.GymEnv("FrozenLake-v1", seed=seed)
        q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.5)
        policy = rk.QBasedPolicy(
            rk.TDLearner(q, method="qlearning", gamma=0.99),
            rk.EpsilonGreedyExplorer(0.3, seed=seed),
        )
        evaluation = rk.EvaluationHook(
            rk.GymEnv("FrozenLake-v1"),
            every_n_steps=500,
            n_episodes=20,
            seed=seed,
            restore_best=True,
        )
        return rk.Experiment(
            rk.Agent(policy, rk.VectorSARTTrajectory()),
            env,
            rk.StopAfterNSteps(3000),
            rk.TotalRewardPerEpisode() + evaluation,
        )

    assert main(["run", "EvaluatedQLearning_FrozenLake", "--out", str(tmp_path), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "greedy evaluation (20 episodes, 6 times): last " in out
    assert "(the policy now holds the best parameters)" in out
    run_dir = Path(out.strip().splitlines()[-1].removeprefix("results written to "))
    with open(run_dir / "evaluations.csv") as f:
        rows = list(csv.DictReader(f))
    assert [int(row["step"]) for row in rows] == [500, 1000, 1500, 2000, 2500, 3000]
    assert set(rows[0]) == {"step", "mean_return", "std_return"}
