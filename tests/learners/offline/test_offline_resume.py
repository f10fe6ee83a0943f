"""Kill-and-resume of an offline run: a process training on an rk.OfflineEnv with an
rk.CheckpointHook is killed with SIGKILL; a new process resumes from the newest checkpoint and
ends with the parameters, optimizer and sampling generator of the uninterrupted run, bit for bit.

The child runs this file as a script (``python test_offline_resume.py child ...``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

import rlkit as rk

HERE = Path(__file__).resolve()
TOTAL, EVERY, BLOCK_AT = 40, 10, 25


def build() -> tuple[rk.BC, rk.OfflineEnv]:
    obs = np.random.default_rng(0).normal(size=(60, 4)).astype(np.float32)
    dataset = rk.Dataset.from_arrays(
        observations=obs,
        actions=(obs[:, 0] > 0).astype(np.int64),
        rewards=np.ones(60, np.float32),
        terminations=np.arange(60) % 20 == 19,
        truncations=np.zeros(60, bool),
        next_observations=np.roll(obs, -1, axis=0),
        observation_space=gym.spaces.Box(-np.inf, np.inf, (4,), np.float32),
        action_space=gym.spaces.Discrete(2),
    )
    env = rk.OfflineEnv(dataset, batch_size=16, seed=7)
    return rk.BC(env, seed=0), env


class Block(rk.AbstractHook):
    """At gradient step ``at``: write ``ready`` and wait to be killed."""

    def __init__(self, at: int, ready: str) -> None:
        self.at, self.ready, self.steps = at, ready, 0

    def post_act(self, policy, env):
        self.steps += 1
        if self.steps == self.at:
            Path(self.ready).write_text("ready")
            while True:  # pragma: no cover - killed by the test
                time.sleep(1)

    def state_dict(self) -> dict:  # nothing to save: the resumed run's Block never blocks
        return {}

    def load_state_dict(self, state: dict) -> None:
        pass


def state(policy: rk.BC, env: rk.OfflineEnv) -> tuple:
    params = torch.cat([p.detach().flatten() for p in policy.model.parameters()])
    return params, policy.optimizer.state_dict(), env.generator.bit_generator.state, env.steps


def test_an_offline_run_killed_and_resumed_equals_the_uninterrupted_run(tmp_path):
    ready, folder = tmp_path / "ready", tmp_path / "run"
    child = subprocess.Popen(
        [sys.executable, str(HERE), "child", str(folder), str(ready)],
        # the rlkit under test (a worktree's, not another installed one)
        env=dict(os.environ, PYTHONHASHSEED="0", PYTHONPATH=str(Path(rk.__file__).parents[1])),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 120
    while not ready.exists():
        assert child.poll() is None, child.stdout.read().decode()
        assert time.monotonic() < deadline, "the child did not reach the block"
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    assert rk.hooks.checkpoint.latest_checkpoint(folder).name.endswith(f"{20:012d}.safetensors")

    reference, env = build()
    rk.run(reference, env, rk.StopAfterNSteps(TOTAL))
    resumed, env2 = build()
    rk.run(
        resumed,
        env2,
        rk.StopAfterNSteps(TOTAL),
        rk.CheckpointHook(folder, every_n_steps=EVERY) + Block(-1, ""),  # built as the child's
        resume_from=folder,
    )
    (p1, o1, g1, s1), (p2, o2, g2, s2) = state(reference, env), state(resumed, env2)
    assert torch.equal(p1, p2) and g1 == g2 and s1 == s2 == TOTAL
    assert str(o1) == str(o2)


if __name__ == "__main__" and sys.argv[1:2] == ["child"]:
    torch.set_num_threads(1)
    policy, env = build()
    hook = rk.CheckpointHook(sys.argv[2], every_n_steps=EVERY) + Block(BLOCK_AT, sys.argv[3])
    rk.run(policy, env, rk.StopAfterNSteps(TOTAL), hook)
