"""Kill-and-resume is bit-exact for a Dict-observation replay run: DQN on a Dict CartPole
(``tests/observation_envs.py``) killed with SIGKILL and resumed from its newest checkpoint ends
with the same parameters, replay (a dict of arrays by key), sampler, explorer, environment and
episode returns as the uninterrupted run (the pattern of test_rainbow_resume.py).

The child process runs this file as a script (``python test_dict_resume.py child ...``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[2]))  # tests/, for the child process too

from observation_envs import DictCartPole  # noqa: E402
from state_helpers import assert_same  # noqa: E402

import rlkit as rk  # noqa: E402
from rlkit.core.state import get_state  # noqa: E402
from rlkit.hooks.checkpoint import CheckpointHook, latest_checkpoint  # noqa: E402

STEPS, EVERY, KILL_AT = 1500, 500, 1234


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


def agent(env: Any) -> rk.Agent:
    import torch

    from rlkit.approximators.neural import q_network

    net = q_network(env.state_space, env.action_space, (32,), seed=1)
    q = rk.NeuralNetworkApproximator(net, lambda p: torch.optim.Adam(p, lr=1e-3))
    learner = rk.DQNLearner(
        q,
        target=rk.TargetNetwork(q, sync_every=100),
        sampler=rk.BatchSampler(32, seed=2),
        controller=rk.InsertSampleRatioController(300, 4, 1),
        gamma=0.99,
    )
    return rk.Agent(
        rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.1, seed=3)),
        rk.CircularArraySARTTrajectory(2000, env.state_space, env.action_space),
    )


def run(folder: str | Path, block: Block, resume: bool = False):
    env = rk.GymEnv(DictCartPole(), seed=0)
    policy = agent(env)
    hook = rk.TotalRewardPerEpisode() + block + CheckpointHook(folder, every_n_steps=EVERY)
    resume_from = folder if resume else None
    rk.run(policy, env, rk.StopAfterNSteps(STEPS), hook, resume_from=resume_from)
    return policy, env, hook


@pytest.mark.slow
def test_dict_observation_dqn_resumed_after_sigkill_equals_the_uninterrupted_run(tmp_path):
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
        assert agent_a.policy.learner.gradient_steps > 200
        replay = get_state(agent_b)
        assert_same(get_state(agent_a), replay, "agent")
        assert_same(get_state(env_a), get_state(env_b), "env")
        # the replay was saved and restored as a dict of arrays by key
        states = agent_b.trajectory.state.arrays
        assert set(states) == {"cart", "pole"} and states["cart"].dtype == np.float32
        assert np.array_equal(states["pole"], agent_a.trajectory.state.arrays["pole"])
    finally:
        torch.set_num_threads(threads)


if __name__ == "__main__" and sys.argv[1:2] == ["child"]:
    import torch

    torch.set_num_threads(1)
    folder, ready = sys.argv[2], sys.argv[3]
    run(folder, Block(KILL_AT, ready))
    print(json.dumps({"finished": True}))  # pragma: no cover - the test kills it first
