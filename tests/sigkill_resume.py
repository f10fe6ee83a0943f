"""A run killed with SIGKILL in a child process at a chosen step and resumed from its newest
checkpoint, compared with the uninterrupted run. The test file is the child's script
(``python test_x.py child FOLDER READY``); it calls :func:`child_main` under ``__main__``.

``Block(at, ready)`` is the hook that stops the child at PostAct of step ``at`` (it writes
``ready`` and sleeps until killed); :func:`kill_at_block` runs the child and kills it there;
:func:`assert_same_runs` compares the two runs' returns and states bit for bit. The child finds
this module through ``PYTHONPATH`` (the tests folder), which :func:`kill_at_block` sets.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from state_helpers import assert_same

import rlkit as rk
from rlkit.core.state import get_state
from rlkit.hooks.checkpoint import latest_checkpoint

TESTS = Path(__file__).resolve().parent


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


def kill_at_block(script: Path, folder: Path, ready: Path, last_checkpoint: int) -> None:
    """Run ``script child folder ready``, wait until it blocks, check its newest checkpoint is
    at step ``last_checkpoint``, and SIGKILL it."""
    path = os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])
    child = subprocess.Popen(
        [sys.executable, str(script), "child", str(folder), str(ready)],
        env=dict(os.environ, PYTHONHASHSEED="0", PYTHONPATH=path),
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
    name = latest_checkpoint(folder).name
    assert name == f"checkpoint-{last_checkpoint:012d}.safetensors", name
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL


def assert_same_runs(reference: tuple, resumed: tuple, min_episodes: int = 10) -> None:
    """Equal episode returns (more than ``min_episodes``), agent and env states, bit for bit."""
    (agent_a, env_a, hook_a), (agent_b, env_b, hook_b) = reference, resumed
    assert hook_a[0].rewards == hook_b[0].rewards and len(hook_a[0].rewards) > min_episodes
    assert_same(get_state(agent_a), get_state(agent_b), "agent")
    assert_same(get_state(env_a), get_state(env_b), "env")


def child_main(run: Callable[[str, Block], Any], kill_at: int) -> None:
    """The child's part: ``run(folder, Block(kill_at, ready))`` from ``sys.argv``."""
    import torch

    torch.set_num_threads(1)
    folder, ready = sys.argv[2], sys.argv[3]
    run(folder, Block(kill_at, ready))
