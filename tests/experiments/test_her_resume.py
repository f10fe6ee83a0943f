"""Kill-and-resume is bit-exact for a HER run: DQN with ``rk.HER("future", 4)`` on 6-bit
flipping, killed with SIGKILL and resumed from its newest checkpoint, ends with the same
parameters, replay, HER sampler (generator and episode bookkeeping), explorer, environment and
episode returns as the uninterrupted run (the pattern of test_dict_resume.py).

The child process runs this file as a script (``python test_her_resume.py child ...``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1]))  # tests/, for the child process too

from sigkill_resume import Block, assert_same_runs, child_main, kill_at_block  # noqa: E402

import rlkit as rk  # noqa: E402
from rlkit.hooks.checkpoint import CheckpointHook  # noqa: E402

STEPS, EVERY, KILL_AT = 1500, 500, 1234


def run(folder: str | Path, block: Block, resume: bool = False):
    env = rk.GymEnv("rlkit/BitFlipping-v0", seed=0, n_bits=6)
    policy = rk.DQN.agent(
        env, seed=0, her=rk.HER("future", 4), total_steps=STEPS, learning_starts=200,
        batch_size=32, buffer_size=700, hidden=(32,), lr=1e-3, target_update_interval=100,
    )  # fmt: skip  (a replay of 700 < 1500 steps: episodes overwritten mid-run)
    hook = rk.TotalRewardPerEpisode() + block + CheckpointHook(folder, every_n_steps=EVERY)
    resume_from = folder if resume else None
    rk.run(policy, env, rk.StopAfterNSteps(STEPS), hook, resume_from=resume_from)
    return policy, env, hook


@pytest.mark.slow
def test_her_dqn_resumed_after_sigkill_equals_the_uninterrupted_run(tmp_path):
    def check():
        kill_at_block(HERE, tmp_path / "run", tmp_path / "ready", KILL_AT // EVERY * EVERY)
        reference = run(tmp_path / "reference", Block())
        resumed = run(tmp_path / "run", Block(), resume=True)
        assert reference[0].policy.learner.gradient_steps > 200
        assert_same_runs(reference, resumed)
        a, b = reference[0].policy.learner.sampler, resumed[0].policy.learner.sampler
        assert isinstance(b, rk.HER) and a.synced == b.synced > 700
        np.testing.assert_array_equal(a.ep_start, b.ep_start)
        np.testing.assert_array_equal(a.ep_end, b.ep_end)

    check()


if __name__ == "__main__" and sys.argv[1:2] == ["child"]:
    child_main(run, KILL_AT)
