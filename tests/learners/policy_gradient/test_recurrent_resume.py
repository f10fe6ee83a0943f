"""A RecurrentPPO run killed in a subprocess (between checkpoints, in the middle of a rollout
and of episodes) and resumed from its last checkpoint in another ends with exactly the
parameters, hidden states and returns of an uninterrupted run: the hidden state is part of
the policy's act state, saved with it. The same for a run on Dict observations (a Dict
CartPoleNoVel, tests/observation_envs.py): the rollout holds them by key; and for a run in
``rk.VecNormalize``, whose statistics and running returns the env's checkpoint holds."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent(
    """
    import hashlib, os, sys
    import numpy as np, torch
    import rlkit as rk
    from rlkit.hooks.checkpoint import CheckpointHook

    torch.set_num_threads(1)
    mode, folder, observations = sys.argv[1], sys.argv[2], sys.argv[3]
    TOTAL = 768
    if observations == "dict":
        sys.path.insert(0, sys.argv[4])
        from observation_envs import DictCartPoleNoVel
        env = rk.VectorGymEnv([DictCartPoleNoVel] * 4, seed=3)
    else:
        env = rk.VectorGymEnv("rlkit/CartPoleNoVel-v1", 4, seed=3)
    if observations == "normalized":  # rk.VecNormalize's statistics are part of the run's state
        env = rk.VecNormalize(env, gamma=0.98)
    agent = rk.RecurrentPPO.agent(env, seed=5, n_steps=16, batch_size=32, n_epochs=2,
                                  lstm_hidden_size=16, hidden=(16,),
                                  lr=rk.LinearSchedule(1e-3, 0.0, TOTAL))

    LIMIT = 500 if mode == "killed" else 10**9  # not an attribute: hooks' attributes are saved

    class Kill(rk.AbstractHook):
        def post_act(self, policy, env):
            if policy.policy.transitions >= LIMIT:
                os._exit(3)  # no clean-up, no final checkpoint: like SIGKILL

    hook = rk.TotalRewardPerEpisode()
    if mode != "straight":
        # every 40 transitions: 10 steps, inside a rollout of 16 steps
        hook = hook + CheckpointHook(folder, every_n_steps=40, format="npz") + Kill()
    rk.run(agent, env, rk.StopAfterNSteps(TOTAL), hook,
           resume_from=folder if mode == "resume" else None)
    digest = hashlib.sha256()
    for p in agent.policy.model.state_dict().values():
        digest.update(p.numpy().tobytes())
    digest.update(agent.policy.act_state.hidden.numpy().tobytes())
    rewards = hook[rk.TotalRewardPerEpisode].rewards if mode != "straight" else hook.rewards
    digest.update(np.asarray(rewards, dtype=np.float64).tobytes())
    if observations == "normalized":
        for array in (env.obs_rms.mean, env.obs_rms.var, env.ret_rms.var, env.returns):
            digest.update(np.asarray(array).tobytes())
    print(digest.hexdigest(), agent.policy.updates, agent.policy.transitions)
    """
)


TESTS = Path(__file__).resolve().parents[2]  # tests/, where observation_envs.py is


def _run(mode, folder, observations="box"):
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, mode, str(folder), observations, str(TESTS)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("observations", ["box", "dict", "normalized"])
def test_killed_recurrent_ppo_run_resumes_bit_exactly(tmp_path, observations):
    straight = _run("straight", tmp_path / "unused", observations)
    assert straight.returncode == 0, straight.stderr
    killed = _run("killed", tmp_path / "ckpt", observations)
    assert killed.returncode == 3, killed.stderr
    resumed = _run("resume", tmp_path / "ckpt", observations)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.split() == straight.stdout.split()
    assert straight.stdout.split()[1:] == ["12", "768"]
