"""Kill-and-resume of Rainbow is bit-exact: a ``Rainbow_CartPole`` run killed with SIGKILL and
resumed from its newest checkpoint ends with the same parameters, noise, noise generator,
prioritized replay (sum tree, beta schedule), sampler, explorer, environment and episode
returns as the uninterrupted run (as tests/hooks/checkpoint/test_resume.py checks for DQN).

The child process runs this file as a script (``python test_rainbow_resume.py child ...``).
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import rlkit as rk
from rlkit.core.state import get_state
from rlkit.hooks.checkpoint import CheckpointHook, latest_checkpoint

HERE = Path(__file__).resolve()
STEPS, EVERY, KILL_AT = 1500, 500, 1234
SHORT = {"total_steps": STEPS, "learning_starts": 300, "train_freq": 8, "gradient_steps": 4,
         "batch_size": 32, "hidden": (32,)}  # fmt: skip


class Block(rk.AbstractHook):
    """At PostAct of step ``at``: write ``ready`` and sleep until killed (``at=None``: never)."""

    def __init__(self, at: int | None = None, ready: str = "") -> None:
        self.at, self.ready, self.t = at, ready, 0

    def post_act(self, policy: Any, env: Any) -> None:
        self.t += 1
        if self.t == self.at:
            Path(self.ready).write_text(str(self.t))
            while True:  # pragma: no cover - killed by the test
                time.sleep(1)

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        pass


def run(folder: str | Path, block: Block, resume: bool = False):
    experiment = rk.make_experiment("Rainbow_CartPole", seed=0, **SHORT)
    hook = rk.TotalRewardPerEpisode() + block + CheckpointHook(folder, every_n_steps=EVERY)
    rk.run(experiment.policy, experiment.env, rk.StopAfterNSteps(STEPS), hook,
           resume_from=folder if resume else None)  # fmt: skip
    return experiment.policy, experiment.env, hook


def assert_same(a: Any, b: Any, path: str = "state") -> None:
    """Exact equality of nested states (tensors and arrays bit for bit)."""
    import torch

    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b), path
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype, path
        assert np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), path
    elif isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), path
        for k in a:
            assert_same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and math.isnan(a):
        assert isinstance(b, float) and math.isnan(b), path
    else:
        assert type(a) is type(b) and a == b, f"{path}: {a!r} != {b!r}"


@pytest.mark.slow
def test_rainbow_resumed_after_sigkill_equals_the_uninterrupted_run(tmp_path):
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        ready = tmp_path / "ready"
        child = subprocess.Popen(
            [sys.executable, str(HERE), "child", str(tmp_path / "run"), str(ready)],
            env=dict(os.environ, PYTHONHASHSEED="0"),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 300
        while not ready.exists():
            if child.poll() is not None:
                output = child.stdout.read().decode()
                pytest.fail(f"child exited with {child.returncode}:\n{output}")
            if time.monotonic() > deadline:
                child.kill()
                pytest.fail("the child did not reach the kill step in time")
            time.sleep(0.05)
        last = KILL_AT // EVERY * EVERY
        assert latest_checkpoint(tmp_path / "run").name == f"checkpoint-{last:012d}.safetensors"
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        assert child.returncode == -signal.SIGKILL

        reference = run(tmp_path / "reference", Block())
        resumed = run(tmp_path / "run", Block(), resume=True)
        (agent_a, env_a, hook_a), (agent_b, env_b, hook_b) = reference, resumed
        assert hook_a[0].rewards == hook_b[0].rewards and len(hook_a[0].rewards) > 10
        assert agent_a.policy.learner.gradient_steps > 500
        assert_same(get_state(agent_a), get_state(agent_b), "agent")
        assert_same(get_state(env_a), get_state(env_b), "env")
    finally:
        torch.set_num_threads(threads)


if __name__ == "__main__" and sys.argv[1:2] == ["child"]:
    import torch

    torch.set_num_threads(1)
    folder, ready = sys.argv[2], sys.argv[3]
    run(folder, Block(KILL_AT, ready))
    print(json.dumps({"finished": True}))  # pragma: no cover - the test kills it first
