"""``rlkit enjoy RUN_DIR``: plays the policy ``rlkit run`` saved, prints each return and the
mean, records one video per episode (frames = steps + 1) with ``--video``; refusals."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def rlkit(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rlkit.cli", *args], cwd=cwd, capture_output=True, text=True,
        timeout=180,
    )  # fmt: skip


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("enjoy") / "ppo"
    done = rlkit("run", "PPO_CartPole", "--steps", "512", "--logdir", str(folder), "--quiet")
    assert done.returncode == 0, done.stderr
    return folder


def returns_of(stdout: str) -> list[float]:
    return [float(x) for x in re.findall(r"episode \d+: return (-?[\d.]+)", stdout)]


def test_enjoy_prints_each_return_and_the_mean(run_dir):
    done = rlkit("enjoy", str(run_dir), "--episodes", "3")
    assert done.returncode == 0, done.stderr
    returns = returns_of(done.stdout)
    assert len(returns) == 3 and all(r >= 1 for r in returns)
    mean = float(re.search(r"mean return over 3 episode\(s\): ([\d.]+)", done.stdout).group(1))
    assert mean == pytest.approx(sum(returns) / 3, abs=0.01)
    assert "deterministic" in done.stdout
    again = rlkit("enjoy", str(run_dir), "--episodes", "3")
    assert returns_of(again.stdout) == returns  # seeded: the same episodes


def test_stochastic_plays_the_sampling_policy(run_dir):
    done = rlkit("enjoy", str(run_dir), "--episodes", "2", "--stochastic", "--seed", "3")
    assert done.returncode == 0, done.stderr
    assert "stochastic" in done.stdout and len(returns_of(done.stdout)) == 2


def test_video_has_one_file_per_episode_with_a_frame_per_step(run_dir, tmp_path):
    iio = pytest.importorskip("imageio.v3")
    pytest.importorskip("moviepy")
    pytest.importorskip("pygame")  # classic-control rendering
    videos = tmp_path / "videos"
    done = rlkit("enjoy", str(run_dir), "--episodes", "2", "--video", str(videos))
    assert done.returncode == 0, done.stderr
    files = sorted(videos.glob("*.mp4"))
    assert [f.name for f in files] == ["enjoy-episode-0.mp4", "enjoy-episode-1.mp4"]
    for path, steps in zip(files, returns_of(done.stdout), strict=True):  # CartPole: 1 a step
        frames = sum(1 for _ in iio.imiter(path))
        assert frames == int(steps) + 1  # the reset frame and one per step


def test_refusals(run_dir, tmp_path):
    done = rlkit("enjoy", str(tmp_path))
    assert done.returncode == 2 and "is not a run directory of 'rlkit run'" in done.stderr
    done = rlkit("enjoy", str(run_dir), "--episodes", "0")
    assert done.returncode == 2 and "--episodes must be a positive integer, got 0" in done.stderr
    (tmp_path / "config.json").write_text((run_dir / "config.json").read_text())
    done = rlkit("enjoy", str(tmp_path))
    assert done.returncode == 2 and "has no policy.rlkit" in done.stderr
    (tmp_path / "policy.rlkit").write_bytes((run_dir / "policy.rlkit").read_bytes()[:100])
    done = rlkit("enjoy", str(tmp_path))
    assert done.returncode == 2 and "corrupt or truncated" in done.stderr


def test_enjoy_plays_a_tabular_q_policy(tmp_path):
    run_dir = tmp_path / "frozen"
    done = rlkit("run", "TabularQLearning_FrozenLake", "--set", "episodes=200",
                 "--logdir", str(run_dir), "--quiet")  # fmt: skip
    assert done.returncode == 0, done.stderr
    done = rlkit("enjoy", str(run_dir), "--episodes", "4")
    assert done.returncode == 0, done.stderr
    assert "(QLearningLearner, deterministic) on FrozenLake-v1" in done.stdout
    returns = returns_of(done.stdout)
    assert len(returns) == 4 and all(r in (0.0, 1.0) for r in returns)
