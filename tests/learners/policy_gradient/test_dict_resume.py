"""A PPO run on Dict observations (a vector env of Dict CartPoles, ``tests/observation_envs.py``)
killed in a subprocess and resumed from its last checkpoint in another ends with exactly the
parameters of an uninterrupted run: the rollout's dict of arrays by key is checkpointed (the
last checkpoint before the kill, at 500 transitions, falls in the middle of a rollout of 64)."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import hashlib, os, sys
    sys.path.insert(0, sys.argv[3])
    import numpy as np, torch
    import rlkit as rk
    from rlkit.hooks.checkpoint import CheckpointHook
    from observation_envs import DictCartPole

    torch.set_num_threads(1)
    mode, folder = sys.argv[1], sys.argv[2]
    TOTAL = 1024
    env = rk.VectorGymEnv([DictCartPole] * 4, seed=3)
    agent = rk.PPO.agent(env, seed=5, n_steps=16, batch_size=32, n_epochs=2)

    LIMIT = 600 if mode == "killed" else 10**9

    class Kill(rk.AbstractHook):
        def post_act(self, policy, env):
            if policy.policy.transitions >= LIMIT:
                os._exit(3)  # no clean-up, no final checkpoint: like SIGKILL

    hook = rk.TotalRewardPerEpisode()
    if mode != "straight":
        hook = hook + CheckpointHook(folder, every_n_steps=100) + Kill()
    rk.run(agent, env, rk.StopAfterNSteps(TOTAL), hook,
           resume_from=folder if mode == "resume" else None)
    digest = hashlib.sha256()
    for p in agent.policy.model.state_dict().values():
        digest.update(p.numpy().tobytes())
    print(digest.hexdigest(), agent.policy.updates, agent.policy.transitions)
    """
)


def _run(mode, folder):
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, mode, str(folder), str(TESTS)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip


@pytest.mark.slow
def test_killed_dict_observation_ppo_run_resumes_bit_exactly(tmp_path):
    straight = _run("straight", tmp_path / "unused")
    assert straight.returncode == 0, straight.stderr
    killed = _run("killed", tmp_path / "ckpt")
    assert killed.returncode == 3, killed.stderr
    resumed = _run("resume", tmp_path / "ckpt")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.split() == straight.stdout.split()
    assert straight.stdout.split()[1:] == ["16", "1024"]
