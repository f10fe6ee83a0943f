"""An MBPO run killed in a subprocess and resumed from its last checkpoint in another ends with
exactly the parameters (SAC's and the model's) of an uninterrupted run (issue 27)."""

import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import hashlib, os, sys
    import torch
    import rlkit as rk
    from rlkit.hooks.checkpoint import CheckpointHook

    torch.set_num_threads(1)
    mode, folder = sys.argv[1], sys.argv[2]
    TOTAL = 300
    env = rk.GymEnv("Pendulum-v1", seed=3)
    agent = rk.MBPO.agent(env, seed=5, learning_starts=100, model_train_freq=50, batch_size=32,
                          hidden=(16, 16), model_hidden=(16,), ensemble_size=3, n_elites=2,
                          rollout_batch_size=20, gradient_steps=2, model_max_epochs=3,
                          rollout_schedule=(0, 2, 1, 3), epoch_length=100)

    LIMIT = 230 if mode == "killed" else 10**9  # not an attribute: hooks' attributes are saved

    class Kill(rk.AbstractHook):
        def post_act(self, policy, env):
            if policy.policy.transitions >= LIMIT:
                os._exit(3)  # no clean-up, no final checkpoint: like SIGKILL

    hook = rk.TotalRewardPerEpisode()
    if mode != "straight":
        hook = hook + CheckpointHook(folder, every_n_steps=120, format="npz") + Kill()
    rk.run(agent, env, rk.StopAfterNSteps(TOTAL), hook,
           resume_from=folder if mode == "resume" else None)
    digest = hashlib.sha256()
    for p in agent.policy.model.state_dict().values():
        digest.update(p.numpy().tobytes())
    for p in agent.policy.dynamics.network.state_dict().values():
        digest.update(p.numpy().tobytes())
    digest.update(agent.policy.model_replay.data["state"].numpy().tobytes())
    print(digest.hexdigest(), agent.policy.model_fits, agent.policy.gradient_steps,
          agent.policy.transitions)
    """
)


def _run(mode, folder):
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, mode, str(folder)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip


@pytest.mark.slow
def test_killed_mbpo_run_resumes_bit_exactly(tmp_path):
    straight = _run("straight", tmp_path / "unused")
    assert straight.returncode == 0, straight.stderr
    killed = _run("killed", tmp_path / "ckpt")
    assert killed.returncode == 3, killed.stderr
    resumed = _run("resume", tmp_path / "ckpt")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.split() == straight.stdout.split()
    # model trained at 100, 150, 200, 250, 300; SAC's updates after 100 transitions
    assert straight.stdout.split()[1:] == ["5", str(2 * 200), "300"]
