"""Kill-and-resume is bit-exact for Rainbow (``rk.Rainbow.agent``: prioritized replay, noisy
layers, n-step returns) on a Dict CartPole: killed with SIGKILL and resumed from its newest
checkpoint, it ends with the same parameters, replay (a dict of arrays by key), priorities,
noise, environment and episode returns as the uninterrupted run (the scaffold of
tests/sigkill_resume.py, as test_dict_resume.py for DQN).

The child process runs this file as a script (``python test_dict_rainbow_resume.py child ...``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[2]))  # tests/, for the child process too

from observation_envs import DictCartPole  # noqa: E402
from sigkill_resume import Block, assert_same_runs, child_main, kill_at_block  # noqa: E402

import rlkit as rk  # noqa: E402
from rlkit.hooks.checkpoint import CheckpointHook  # noqa: E402

STEPS, EVERY, KILL_AT = 1500, 500, 1234


def run(folder: str | Path, block: Block, resume: bool = False):
    env = rk.GymEnv(DictCartPole(), seed=0)
    policy = rk.Rainbow.agent(env, seed=0, learning_starts=300, batch_size=32, hidden=(32,),
                              buffer_size=2000, target_update_interval=100,
                              total_steps=STEPS)  # fmt: skip
    hook = rk.TotalRewardPerEpisode() + block + CheckpointHook(folder, every_n_steps=EVERY)
    resume_from = folder if resume else None
    rk.run(policy, env, rk.StopAfterNSteps(STEPS), hook, resume_from=resume_from)
    return policy, env, hook


@pytest.mark.slow
def test_dict_observation_rainbow_resumed_after_sigkill_equals_the_uninterrupted_run(tmp_path):
    def check():
        kill_at_block(HERE, tmp_path / "run", tmp_path / "ready", KILL_AT // EVERY * EVERY)
        reference = run(tmp_path / "reference", Block())
        resumed = run(tmp_path / "run", Block(), resume=True)
        assert reference[0].policy.learner.gradient_steps > 200
        assert_same_runs(reference, resumed)
        states = resumed[0].trajectory.state.arrays
        assert set(states) == {"cart", "pole"}
        assert np.array_equal(states["pole"], reference[0].trajectory.state.arrays["pole"])

    check()


if __name__ == "__main__" and sys.argv[1:2] == ["child"]:
    child_main(run, KILL_AT)
