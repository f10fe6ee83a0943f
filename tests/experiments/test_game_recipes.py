"""The CFR recipes: what they build, their budget in iterations, bad parameters, the CLI."""

import os
import subprocess
import sys

import pytest

import rlkit as rk


@pytest.mark.parametrize(("name", "plus"), [("CFR_KuhnPoker", False), ("CFR_LeducPoker", True)])
def test_recipe_solves_its_game(name, plus):
    exp = rk.make_experiment(name, seed=0, total_steps=30, log_every=10)
    assert exp.policy.plus is plus
    hook = rk.run(exp)
    assert exp.policy.iteration == 30
    iterations, values = zip(*hook.curve, strict=True)
    assert iterations == (10, 20, 30)
    assert values[-1] < values[0]


def test_kuhn_recipe_reaches_its_documented_exploitability():
    hook = rk.run(rk.make_experiment("CFR_KuhnPoker", seed=0))
    assert hook.curve[-1] == (1000, pytest.approx(hook.curve[-1][1]))
    assert hook.curve[-1][1] < 0.001


def test_bad_parameters_are_refused_by_name():
    with pytest.raises(ValueError, match="CFR_KuhnPoker: total_steps"):
        rk.make_experiment("CFR_KuhnPoker", seed=0, total_steps=0)
    with pytest.raises(TypeError, match="CFR_LeducPoker: plus must be bool"):
        rk.make_experiment("CFR_LeducPoker", seed=0, plus=1)


def test_rlkit_run_writes_checkpoints(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    run_dir = tmp_path / "run"
    command = [sys.executable, "-m", "rlkit", "run", "CFR_KuhnPoker", "--steps", "40",
               "--checkpoint-every", "20", "--logdir", str(run_dir), "--quiet"]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir())[-1].startswith(
        "checkpoint-000000000040"
    )
