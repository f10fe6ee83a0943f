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
