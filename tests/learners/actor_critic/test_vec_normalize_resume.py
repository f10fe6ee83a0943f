"""Kill-and-resume is bit-exact for SAC on ``rk.VecNormalize`` Pendulum: a run killed with
SIGKILL between checkpoints and resumed from its newest one ends with the same parameters,
replay (raw transitions), generators, observation and return statistics, running returns and
episode returns as the uninterrupted run (the pattern of tests/sigkill_resume.py).

The child process runs this file as a script (``python test_vec_normalize_resume.py child ...``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[2]))  # tests/, for the child process too

from sigkill_resume import Block, child_main, kill_at_block  # noqa: E402
from state_helpers import assert_same  # noqa: E402

import rlkit as rk  # noqa: E402
from rlkit.core.state import get_state  # noqa: E402
from rlkit.hooks.checkpoint import CheckpointHook  # noqa: E402

# 2 sub-envs: 800 transitions in 400 steps, 2 episodes of 200 steps per sub-env; checkpoints
# every 200 transitions, killed at step 270 (transition 540), resumed from transition 400
STEPS, EVERY, KILL_AT = 800, 200, 270


def run(folder: str | Path, block: Block, resume: bool = False):
    env = rk.VecNormalize(rk.VectorGymEnv("Pendulum-v1", 2, seed=3), gamma=0.98)
    agent = rk.SAC.agent(env, seed=1, learning_starts=200, batch_size=16, buffer_size=1000,
                         hidden=(16, 16))  # fmt: skip
    hook = rk.TotalRewardPerEpisode() + block + CheckpointHook(folder, every_n_steps=EVERY)
    rk.run(agent, env, rk.StopAfterNSteps(STEPS), hook, resume_from=folder if resume else None)
    return agent, env, hook


@pytest.mark.slow
def test_sac_on_vec_normalize_resumed_after_sigkill_equals_the_uninterrupted_run(tmp_path):
    kill_at_block(HERE, tmp_path / "run", tmp_path / "ready", KILL_AT * 2 // EVERY * EVERY)
    reference = run(tmp_path / "reference", Block())
    resumed = run(tmp_path / "run", Block(), resume=True)
    agent, env, hook = resumed
    assert agent.policy.gradient_steps == (STEPS - 200) // 2  # one per step of 2 sub-envs
    assert agent.trajectory.reward[:STEPS].min() < -1.0  # raw Pendulum costs in the replay
    assert hook[0].rewards == reference[2][0].rewards and len(hook[0].rewards) == 4
    assert_same(get_state(reference[0]), get_state(agent), "agent")
    assert_same(without_space_generators(get_state(reference[1])),
                without_space_generators(get_state(env)), "env")  # fmt: skip
    np.testing.assert_array_equal(env.obs_rms.mean, reference[1].obs_rms.mean)
    assert agent.policy.observation_normalizer.rms is env.obs_rms  # restored in place


def without_space_generators(state):
    """The env's state without its sub-envs' spaces' generators: gymnasium seeds them from the
    OS's entropy, not from the env's seed, and nothing samples them here, so a run and its
    resumed copy made in another process differ there only (rlkit/envs/vector_group.py)."""
    state = dict(state, env=dict(state["env"]))
    state["env"]["sub_envs"] = [
        {k: v for k, v in sub.items() if k != "spaces"} for sub in state["env"]["sub_envs"]
    ]
    return state


if __name__ == "__main__" and sys.argv[1:2] == ["child"]:
    child_main(run, KILL_AT)
