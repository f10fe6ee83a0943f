"""Kill-and-resume of Rainbow is bit-exact: a ``Rainbow_CartPole`` run killed with SIGKILL and
resumed from its newest checkpoint ends with the same parameters, noise, noise generator,
prioritized replay (sum tree, beta schedule), sampler, explorer, environment and episode
returns as the uninterrupted run (as tests/hooks/checkpoint/test_resume.py checks for DQN).

The child process runs this file as a script (``python test_rainbow_resume.py child ...``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[2]))  # tests/, for the child process too

from sigkill_resume import Block, assert_same_runs, child_main, kill_at_block  # noqa: E402

import rlkit as rk  # noqa: E402
from rlkit.hooks.checkpoint import CheckpointHook  # noqa: E402

STEPS, EVERY, KILL_AT = 1500, 500, 1234
SHORT = {"total_steps": STEPS, "learning_starts": 300, "train_freq": 8, "gradient_steps": 4,
         "batch_size": 32, "hidden": (32,)}  # fmt: skip


def run(folder: str | Path, block: Block, resume: bool = False):
    experiment = rk.make_experiment("Rainbow_CartPole", seed=0, **SHORT)
    hook = rk.TotalRewardPerEpisode() + block + CheckpointHook(folder, every_n_steps=EVERY)
    rk.run(experiment.policy, experiment.env, rk.StopAfterNSteps(STEPS), hook,
           resume_from=folder if resume else None)  # fmt: skip
    return experiment.policy, experiment.env, hook


@pytest.mark.slow
def test_rainbow_resumed_after_sigkill_equals_the_uninterrupted_run(tmp_path):
    def check():
        kill_at_block(HERE, tmp_path / "run", tmp_path / "ready", KILL_AT // EVERY * EVERY)
        reference = run(tmp_path / "reference", Block())
        resumed = run(tmp_path / "run", Block(), resume=True)
        assert reference[0].policy.learner.gradient_steps > 500
        assert_same_runs(reference, resumed)

    check()


if __name__ == "__main__" and sys.argv[1:2] == ["child"]:
    child_main(run, KILL_AT)
