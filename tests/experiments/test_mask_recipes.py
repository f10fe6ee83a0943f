"""The masked-action recipes (experiments/masks.py): ``masked=false`` really hides the masks,
masked PPO and DQN learn the invalid-action maze within their budgets (seed 0), and a masked
DQN run killed with SIGKILL resumes bit for bit (its replay's masks included).

The child process runs this file as a script (``python test_mask_recipes.py child ...``).
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
SHORT = {"total_steps": STEPS, "learning_starts": 300, "buffer_size": 2000, "n_step": 3}


def _threshold() -> float:
    from rlkit.experiments.masks import INVALID_ACTION_GRID_THRESHOLD

    return INVALID_ACTION_GRID_THRESHOLD


def _steps_to(hook: Any) -> int | None:
    from rlkit.experiments.masks import steps_to_threshold

    return steps_to_threshold(hook.rewards, hook.ends, _threshold())


@pytest.mark.parametrize("name", ["PPO_InvalidActionGrid", "DQN_InvalidActionGrid"])
def test_masked_false_hides_the_masks_from_the_learner(name):
    masked = rk.make_experiment(name, seed=0, total_steps=200)
    plain = rk.make_experiment(name, seed=0, total_steps=200, masked=False)
    masked.env.reset()
    plain.env.reset()
    assert masked.env.legal_action_mask is not None and plain.env.legal_action_mask is None
    if name.startswith("DQN"):
        assert masked.policy.trajectory.next_legal_action_mask is not None
        assert plain.policy.trajectory.next_legal_action_mask is None


@pytest.mark.slow
def test_masked_ppo_reaches_the_threshold_within_its_budget_seed_0():
    """Measured (benchmarks/results_structure_masks.txt): masked 5,456 steps, unmasked 10,152."""
    experiment = rk.make_experiment("PPO_InvalidActionGrid", seed=0, total_steps=10_000)
    hook = rk.run(experiment)
    steps = _steps_to(hook)
    assert steps is not None and steps <= 10_000, (steps, hook.rewards[-20:])
    assert np.mean(hook.rewards[-20:]) >= _threshold()


@pytest.mark.slow
def test_masked_dqn_reaches_the_threshold_within_its_budget_seed_0():
    """Measured on seed 0 with 30k steps: masked 7,516 steps to the threshold, unmasked 9,967."""
    experiment = rk.make_experiment("DQN_InvalidActionGrid", seed=0, total_steps=15_000)
    hook = rk.run(experiment)
    steps = _steps_to(hook)
    assert steps is not None and steps <= 15_000, (steps, hook.rewards[-20:])


# ---- kill and resume: masks in replay, bit for bit ----
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
    experiment = rk.make_experiment("DQN_InvalidActionGrid", seed=0, **SHORT)
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
def test_masked_dqn_resumed_after_sigkill_equals_the_uninterrupted_run(tmp_path):
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
        replay = agent_a.trajectory
        assert replay.next_legal_action_mask is not None
        assert not replay.next_legal_action_mask[: len(replay)].all()  # masks were recorded
        assert agent_a.policy.learner.gradient_steps > 200
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
