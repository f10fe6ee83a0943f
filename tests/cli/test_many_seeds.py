"""``rlkit run NAME --seeds 0-4``: several seeds in one process, reported per seed; the run
directory records the seeds and resumes them."""

from __future__ import annotations

import json

import pytest

from rlkit.cli import main, parse_seeds


def test_parse_seeds():
    assert parse_seeds("0-4") == [0, 1, 2, 3, 4]
    assert parse_seeds("3,7,9") == [3, 7, 9]
    assert parse_seeds("2") == [2]
    with pytest.raises(ValueError, match="--seeds must be a range"):
        parse_seeds("a-b")


def test_run_with_seeds_reports_each_seed_and_resumes(tmp_path, capsys):
    run_dir = tmp_path / "r"
    args = ["run", "PPO_CartPole", "--seeds", "0-1", "--steps", "256", "--logdir", str(run_dir)]
    assert main([*args, "--checkpoint-every", "512"]) == 0
    out = capsys.readouterr().out
    assert "PPO_CartPole (seeds 0-1)" in out
    assert "seed 0: " in out and "seed 1: " in out
    config = json.loads((run_dir / "config.json").read_text())
    assert config["seeds"] == [0, 1]
    assert (run_dir / "policy-seed0.rlkit").is_file() and (run_dir / "policy-seed1.rlkit").is_file()
    assert main(["resume", str(run_dir)]) == 0  # finished: ends as the uninterrupted run did
    assert "already finished" in capsys.readouterr().out


def test_bad_seeds_are_refused(capsys):
    assert main(["run", "PPO_CartPole", "--seeds", "1,1"]) == 2
    assert "PPO_CartPole: seeds must be distinct" in capsys.readouterr().err
    assert main(["run", "DQN_Acrobot", "--seeds", "0-1"]) == 2
    assert "is not supported by this recipe" in capsys.readouterr().err
