"""The ``rlkit`` command: list, run, errors, and a non-editable install."""

from __future__ import annotations

import csv
import json
import os
import platform
import re
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
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
    assert "done: 100 of 100 episodes, " in out
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

    assert main(["run", "EvaluatedQLearning_FrozenLake", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "greedy evaluation (20 episodes, 6 times): last " in out
    assert "(the policy now holds the best parameters)" in out
    run_dir = Path(out.strip().splitlines()[-1].removeprefix("results written to "))
    with open(run_dir / "evaluations.csv") as f:
        rows = list(csv.DictReader(f))
    assert [int(row["step"]) for row in rows] == [500, 1000, 1500, 2000, 2500, 3000]
    assert set(rows[0]) == {"step", "mean_return", "std_return"}


# ---- python -m rlkit, --version ----


def test_python_m_rlkit_is_the_command_and_prints_its_version():
    from rlkit.core.version import __version__

    listing = subprocess.run(
        [sys.executable, "-m", "rlkit", "list"], capture_output=True, text=True, timeout=120
    )
    assert listing.returncode == 0 and "TD0_RandomWalk1D" in listing.stdout
    version = subprocess.run(
        [sys.executable, "-m", "rlkit", "--version"], capture_output=True, text=True, timeout=120
    )
    assert version.returncode == 0 and version.stdout.strip() == f"rlkit {__version__}"


# ---- the recipe's parameters on the command line ----


def test_run_help_lists_the_recipes_parameters(capsys):
    with pytest.raises(SystemExit) as info:
        main(["run", "DQN_CartPole", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "parameters of DQN_CartPole" in out
    assert re.search(r"lr: float +=  ?0\.0023", out)
    assert re.search(r"hidden: tuple\[int, \.\.\.\] += \(256, 256\)", out)
    for option in ("--steps", "--threads", "--device", "--set NAME=VALUE"):
        assert option in out


def test_overrides_reach_the_recipe_and_config_json_records_the_run(tmp_path, capsys):
    run_dir = tmp_path / "r"
    args = ["run", "SARSA_CliffWalking", "--seed", "4", "--logdir", str(run_dir), "--quiet"]
    assert main([*args, "--set", "episodes=7", "--set", "step_size=0.25"]) == 0
    with open(run_dir / "episodes.csv") as f:
        assert len(list(csv.DictReader(f))) == 7
    config = json.loads((run_dir / "config.json").read_text())
    assert (config["experiment"], config["seed"]) == ("SARSA_CliffWalking", 4)
    assert config["params"] == {"episodes": 7, "step_size": 0.25, "epsilon": 0.1}
    assert config["overrides"] == {"episodes": 7, "step_size": 0.25}
    assert config["env"] == {"id": "CliffWalking-v1", "kwargs": {}}
    assert config["budget"] == "StopAfterNEpisodes(7)"
    versions = config["versions"]
    assert set(versions) >= {"rlkit", "python", "numpy", "gymnasium", "torch"}
    assert versions["numpy"] == np.__version__ and versions["python"] == platform.python_version()


def test_steps_threads_and_set_for_a_deep_recipe(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    run_dir = tmp_path / "d"
    args = ["run", "DQN_CartPole", "--steps", "300", "--set", "hidden=16,", "--quiet"]
    try:
        assert main([*args, "--threads", "2", "--logdir", str(run_dir)]) == 0
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)
    config = json.loads((run_dir / "config.json").read_text())
    assert config["params"]["total_steps"] == 300 and config["params"]["hidden"] == [16]
    assert config["threads"] == 2 and config["budget"] == "StopAfterNSteps(300)"
    assert config["env"]["id"] == "CartPole-v1" and config["env"]["kwargs"] == {}
    assert main([*args, "--logdir", str(tmp_path / "default")]) == 0
    assert json.loads((tmp_path / "default" / "config.json").read_text())["threads"] == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["--seed", "-1"], "--seed must be a non-negative integer, got -1"),
        (["--set", "episode=3"], "unknown parameter 'episode'; it accepts seed, episodes,"),
        (["--set", "episodes"], "--set expects NAME=VALUE, got 'episodes'"),
        (["--set", "episodes=0"], "TD0_RandomWalk1D: episodes must be a positive integer, got 0"),
        (["--set", "episodes=many"], "episodes must be int, got 'many'"),
        (["--steps", "50"], "has no parameter total_steps (it counts episodes: --set episodes=N)"),
        (["--device", "cuda"], "TD0_RandomWalk1D has no parameter device"),
        (["--threads", "0"], "--threads must be a positive integer, got 0"),
    ],
)
def test_bad_arguments_end_in_one_line_errors(args, message, tmp_path, capsys):
    assert main(["run", "TD0_RandomWalk1D", "--out", str(tmp_path), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rlkit: ") and message in err and err.count("\n") == 1
    assert not list(tmp_path.iterdir())  # nothing written


def test_a_logdir_that_is_a_file_is_a_one_line_error(tmp_path, capsys):
    file = tmp_path / "results.txt"
    file.write_text("mine")
    assert main(["run", "TD0_RandomWalk1D", "--logdir", str(file)]) == 2
    err = capsys.readouterr().err
    assert err == f"rlkit: --logdir {file} is a file, not a folder; give a folder for the run\n"
    assert file.read_text() == "mine"


def test_errors_through_the_console_script_have_no_traceback(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "rlkit", "run", "TD0_RandomWalk1D", "--seed", "-1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr == "rlkit: --seed must be a non-negative integer, got -1\n"


# ---- run directories: another run is refused, a run without checkpoints can restart ----


def test_logdir_refuses_a_folder_holding_another_run(tmp_path, capsys):
    run_dir = tmp_path / "r"
    base = ["run", "TD0_RandomWalk1D", "--logdir", str(run_dir), "--quiet"]
    assert main([*base, "--seed", "1", "--checkpoint-every", "50"]) == 0
    before = sorted(p.name for p in (run_dir / "checkpoints").iterdir())
    capsys.readouterr()
    assert main([*base, "--seed", "2", "--restart"]) == 2
    assert "holds another run (TD0_RandomWalk1D seed 1)" in capsys.readouterr().err
    assert main([*base, "--seed", "1", "--set", "step_size=0.2"]) == 2
    err = capsys.readouterr().err
    assert "with other parameters: step_size=0.1 there, 0.2 here" in err
    assert main([*base, "--seed", "1", "--restart"]) == 2  # it has checkpoints: resume it
    assert f"continue it with 'rlkit resume {run_dir}'" in capsys.readouterr().err
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir()) == before
    # results of a run whose config.json is gone
    (run_dir / "config.json").unlink()
    assert main([*base, "--seed", "1"]) == 2
    assert "holds results of another run (episodes.csv" in capsys.readouterr().err


def test_a_run_killed_before_its_first_checkpoint_can_be_restarted(tmp_path, capsys, monkeypatch):
    import shlex

    from rlkit import cli

    class Killed(Exception):
        pass

    def killed(self, policy, env):
        if len(self.returns.rewards) == 20:
            raise Killed

    run_dir = tmp_path / "r"
    args = ["run", "TD0_RandomWalk1D", "--seed", "3", "--logdir", str(run_dir), "--quiet"]
    monkeypatch.setattr(cli.LearningSummary, "post_episode", killed)
    with pytest.raises(Killed):
        main([*args, "--checkpoint-every", "100000", "--set", "episodes=90"])
    monkeypatch.undo()
    capsys.readouterr()
    assert main(["resume", str(run_dir)]) == 2
    err = capsys.readouterr().err
    assert "no checkpoint was written" in err and "--restart" in err
    command = err.strip().split("start it again there with: ")[1]
    assert main([*args, "--checkpoint-every", "100000", "--set", "episodes=90"]) == 2
    assert "already holds this run, which wrote no checkpoint" in capsys.readouterr().err
    words = shlex.split(command)
    assert words[:2] == ["rlkit", "run"] and "--restart" in words
    assert main(words[1:]) == 0  # the suggested command runs
    with open(run_dir / "episodes.csv") as f:
        assert len(list(csv.DictReader(f))) == 90  # the old results were replaced



def test_a_killed_first_checkpoint_write_is_no_checkpoint(tmp_path, capsys, monkeypatch):
    """A temporary file left by a writer killed inside the first checkpoint is not a checkpoint:
    resume and run --restart agree to start again, and the stray file is cleaned up."""
    import shlex

    from rlkit import cli

    class Killed(Exception):
        pass

    def killed(self, policy, env):
        if len(self.returns.rewards) == 20:
            raise Killed

    run_dir = tmp_path / "r"
    args = ["run", "TD0_RandomWalk1D", "--seed", "3", "--logdir", str(run_dir), "--quiet"]
    args += ["--checkpoint-every", "100000", "--set", "episodes=30"]
    monkeypatch.setattr(cli.LearningSummary, "post_episode", killed)
    with pytest.raises(Killed):
        main(args)
    monkeypatch.undo()
    stray = run_dir / "checkpoints" / ".checkpoint-123.456.tmp"
    stray.parent.mkdir(exist_ok=True)
    stray.write_bytes(b"half a checkpoint")
    capsys.readouterr()
    assert main(["resume", str(run_dir)]) == 2
    err = capsys.readouterr().err
    assert "no checkpoint was written" in err
    command = shlex.split(err.strip().split("start it again there with: ")[1])
    assert command[:2] == ["rlkit", "run"] and "--restart" in command
    assert main(command[1:]) == 0  # not sent back to `rlkit resume`
    assert not stray.exists()
    assert not [p for p in (run_dir / "checkpoints").iterdir() if p.name.endswith(".tmp")]


# ---- Ctrl-C ----


def _start(tmp_path: Path, *args: str) -> subprocess.Popen:
    # the rlkit of this checkout, not an installed one, although the command runs elsewhere
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen(
        [sys.executable, "-m", "rlkit", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=env,
    )


def _interrupt_when(process: subprocess.Popen, ready: Any) -> tuple[str, str]:
    deadline = time.monotonic() + 240
    while not ready() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
    assert process.poll() is None, process.communicate()
    process.send_signal(signal.SIGINT)
    return process.communicate(timeout=240)


def test_ctrl_c_stops_at_a_step_boundary_with_a_checkpoint_and_a_resume_hint(tmp_path):
    from rlkit.hooks.checkpoint import latest_checkpoint, read_checkpoint

    run_dir = tmp_path / "r"
    checkpoints = run_dir / "checkpoints"
    args = ["SARSA_CliffWalking", "--set", "episodes=1000000", "--logdir", str(run_dir)]
    process = _start(tmp_path, "run", *args, "--checkpoint-every", "3000")
    out, err = _interrupt_when(process, lambda: latest_checkpoint(checkpoints) is not None)
    assert process.returncode == 130, err
    assert "Traceback" not in err and "done:" not in out
    assert f"interrupted: the results so far are in {run_dir}" in out
    assert f"rlkit resume {run_dir}" in out
    newest = latest_checkpoint(checkpoints)
    meta = read_checkpoint(newest)["meta"]
    assert not meta["finished"]  # the run was interrupted, not over
    assert f"checkpoint written at step {meta['step']:,}; continue with:" in out  # at the stop
    # the final line counts the same transitions (not only those of finished episodes)
    assert re.search(rf"stopped: [\d,]+ of 1,000,000 episodes, {meta['step']:,} steps, ", out)
    with open(run_dir / "episodes.csv") as f:
        assert len(list(csv.DictReader(f))) == meta["episode"]
    # resuming continues the run (it is not "already finished"); Ctrl-C stops it again
    process = _start(tmp_path, "resume", str(run_dir))
    out, err = _interrupt_when(process, lambda: latest_checkpoint(checkpoints) != newest)
    assert process.returncode == 130, err
    assert f"resuming at step {meta['step']:,}" in out
    assert read_checkpoint(latest_checkpoint(checkpoints))["meta"]["step"] > meta["step"]


def test_ctrl_c_without_checkpoints_says_how_to_start_again(tmp_path):
    run_dir = tmp_path / "r"
    args = ["SARSA_CliffWalking", "--set", "episodes=1000000", "--logdir", str(run_dir)]
    process = _start(tmp_path, "run", *args)
    out, err = _interrupt_when(process, lambda: (run_dir / "episodes.csv").exists())
    assert process.returncode == 130, err
    assert "Traceback" not in err and "stopped: " in out
    assert "no checkpoints (--checkpoint-every N) to resume from" in out
    assert f"--logdir {run_dir}" in out and "--restart" in out


# ---- plots and TensorBoard ----


def test_plot_draws_returns_and_evaluations_next_to_the_data(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    run_dir = tmp_path / "r"
    assert main(["run", "TD0_RandomWalk1D", "--logdir", str(run_dir), "--quiet"]) == 0
    (run_dir / "evaluations.csv").write_text("step,mean_return,std_return\n100,0.5,0.1\n")
    assert main(["plot", str(run_dir)]) == 0
    png = run_dir / "learning_curve.png"
    assert capsys.readouterr().out.endswith(f"learning curve written to {png}\n")
    assert png.read_bytes().startswith(b"\x89PNG")
    assert main(["plot", str(tmp_path)]) == 2  # no results there
    assert "holds no episodes.csv" in capsys.readouterr().err


def test_plot_without_matplotlib_says_what_to_install(tmp_path, capsys, monkeypatch):
    run_dir = tmp_path / "r"
    assert main(["run", "TD0_RandomWalk1D", "--logdir", str(run_dir), "--quiet"]) == 0
    capsys.readouterr()
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["plot", str(run_dir)]) == 1
    assert capsys.readouterr().err == "rlkit: plotting needs matplotlib: pip install matplotlib\n"


def test_run_says_where_tensorboard_events_are_or_how_to_get_them(tmp_path, capsys, monkeypatch):
    from rlkit import cli

    assert main(["run", "TD0_RandomWalk1D", "--logdir", str(tmp_path / "a")]) == 0
    events = tmp_path / "a" / "tensorboard"
    assert f"TensorBoard: tensorboard --logdir {events}" in capsys.readouterr().out
    monkeypatch.setattr(cli, "_tensorboard_available", lambda: False)
    assert main(["run", "TD0_RandomWalk1D", "--logdir", str(tmp_path / "b")]) == 0
    assert "no TensorBoard events (pip install tensorboard" in capsys.readouterr().out
    assert not (tmp_path / "b" / "tensorboard").exists()


@pytest.mark.parametrize(
    ("recipe", "options"),
    [
        ("PPO_CartPole", ["--steps", "512"]),  # 8 sub-envs: two rollouts of 32 steps
        ("DQN_CartPole", ["--steps", "300", "--set", "n_envs=2"]),
    ],
)
def test_vector_env_recipes_run_through_the_cli(tmp_path, capsys, recipe, options):
    """Recipes on vector envs run with the CLI's own hooks (its summary has a vector form)."""
    assert main(["run", recipe, "--seed", "0", "--out", str(tmp_path), *options]) == 0
    out = capsys.readouterr().out
    budget = int(options[1])
    assert f"done: {budget:,} of {budget:,} steps, " in out  # transitions, not finished episodes
    run_dir = next(tmp_path.iterdir())
    with open(run_dir / "episodes.csv") as f:
        assert len(f.readlines()) > 1  # a header and the finished sub-env episodes


def test_resume_of_a_run_killed_after_its_final_checkpoint_ends_it(tmp_path):
    """Issue 21 item 1 through the command: the final checkpoint is written before the run's
    end (PostExperiment, the evaluations report); a process killed between the two, resumed,
    ends as the uninterrupted run did: best policy restored, evaluations.csv written."""
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root), "OMP_NUM_THREADS": "1"}

    def rlkit(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "rlkit", *args],
            capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600,
        )

    run_dir = tmp_path / "r"
    done = rlkit("run", "DQN_CartPole", "--seed", "2", "--steps", "2000",
                 "--checkpoint-every", "500", "--logdir", str(run_dir))
    assert done.returncode == 0, done.stderr
    evaluations = (run_dir / "evaluations.csv").read_text()
    report = [line for line in done.stdout.splitlines() if line.startswith("greedy evaluation")]
    assert "(the policy now holds the best parameters)" in report[0]
    (run_dir / "evaluations.csv").unlink()  # what a process killed at PostExperiment leaves
    resumed = rlkit("resume", str(run_dir))
    assert resumed.returncode == 0, resumed.stderr
    assert "already finished at step 2000" in resumed.stdout
    assert (run_dir / "evaluations.csv").read_text() == evaluations
    assert [line for line in resumed.stdout.splitlines()
            if line.startswith("greedy evaluation")] == report
