"""The README's example of a user-defined learner runs and learns."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_user_defined_learner_example_runs_and_learns(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    (example,) = [b for b in blocks if "@rk.update.dispatch" in b]
    namespace: dict = {}
    exec(compile(example, str(README), "exec"), namespace)
    out = capsys.readouterr().out
    assert "update(MyQLearner, VectorSARTTrajectory, GymEnv, PostActStage)" in out  # rk.explain
    late_mean = float(out.strip().splitlines()[-1])
    assert -60 < late_mean < -40  # Q-learning's online return on the cliff (S&B: about -50)


def test_the_hooks_example_writes_logs_and_a_checkpoint(tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    (example,) = [b for b in blocks if "rk.CheckpointHook" in b]
    short = example.replace("seed=0)", "seed=0, total_steps=1_500)")  # the recipe, shortened
    assert short != example
    monkeypatch.chdir(tmp_path)
    exec(compile(short, str(README), "exec"), {})
    run_dir = tmp_path / "runs" / "dqn"
    assert len((run_dir / "episodes.csv").read_text().splitlines()) > 10  # header + episodes
    assert list((run_dir / "tb").glob("events.out.tfevents.*"))
    assert [p.name for p in (run_dir / "checkpoints").iterdir()] == [
        "checkpoint-000000001500.safetensors"
    ]


def test_the_vector_env_example_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    (example,) = [b for b in blocks if "rk.VectorGymEnv" in b]
    namespace: dict = {}
    exec(compile(example, str(README), "exec"), namespace)
    episodes, *_ = capsys.readouterr().out.split()
    assert int(episodes) > 100  # random CartPole episodes last about 22 steps
    assert namespace["dqn"].env.n_envs == 4
    namespace["dqn"].env.close()


def test_the_hooks_example_shows_progress_through_a_pipe(tmp_path):
    """Issue 21 item 18: run as a script whose output goes to a pipe (not a terminal), the
    hooks example prints plain progress lines, not nothing."""
    import os
    import subprocess
    import sys

    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    (example,) = [b for b in blocks if "rk.CheckpointHook" in b]
    short = example.replace("seed=0)", "seed=0, total_steps=1_500)")  # the recipe, shortened
    root = str(README.parent)
    env = {**os.environ, "PYTHONPATH": root, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", short],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # as `python example.py 2>&1 | cat` shows it
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout
    lines = [line for line in done.stdout.splitlines() if "steps (" in line]
    assert len(lines) >= 2, done.stdout
    assert lines[-1].startswith("1,500/1,500 steps (100%), return="), done.stdout
    assert "\r" not in done.stdout


NOTEBOOKS_README = README.parent / "notebooks" / "README.md"


def test_the_test_section_says_how_long_and_offers_a_fast_subset_that_selects():
    """Issue 21: how long the tests take, and a fast subset that works."""
    import subprocess
    import sys

    text = README.read_text()
    assert re.search(r"about \d+ minutes on 2 cores", text)
    assert 'python -m pytest -m "not slow"' in text
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", "-m", "not slow",
         "tests/experiments", "tests/notebooks"],
        capture_output=True, text=True, timeout=300, cwd=README.parent,
    )
    counts = re.search(r"(\d+)/(\d+) tests collected \((\d+) deselected\)", collected.stdout)
    assert counts, collected.stdout[-2000:]
    assert int(counts[3]) > 0 and int(counts[1]) > 0  # the marker deselects the learning tests


def test_no_install_command_mixes_editable_and_regular_installs():
    """Issue 21: `pip install ".[notebooks]"` after `pip install -e ".[test]"` silently replaced
    the editable install. Every command that installs the source tree (``.`` or its extras
    ``".[...]"``) is editable, from the first one on."""
    for readme in (README, NOTEBOOKS_README):
        commands = re.findall(r"pip install [^`\n]*?(?:\.\[[^`\n]*|\.(?= |$|`))",
                              readme.read_text(), flags=re.M)
        assert commands, readme.name
        for command in commands:
            assert command.startswith("pip install -e "), f"{readme.name}: {command}"


def test_the_notebook_commands_show_the_fast_scale_and_progress():
    text = README.read_text()
    assert "RLKIT_NOTEBOOK_SCALE=ci python notebooks/src/05_td_control.py" in text
    assert "RLKIT_NOTEBOOK_SCALE=ci jupyter nbconvert --to notebook --execute" in text
