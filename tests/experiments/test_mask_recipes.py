"""The masked-action recipes (experiments/masks.py): ``masked=false`` really hides the masks,
masked PPO and DQN learn the invalid-action maze within their budgets (seed 0), and a masked
DQN run killed with SIGKILL resumes bit for bit (its replay's masks included).

The child process runs this file as a script (``python test_mask_recipes.py child ...``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1]))  # tests/, for the child process too

from sigkill_resume import Block, assert_same_runs, child_main, kill_at_block  # noqa: E402

import rlkit as rk  # noqa: E402
from rlkit.hooks.checkpoint import CheckpointHook  # noqa: E402

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
def run(folder: str | Path, block: Block, resume: bool = False):
    experiment = rk.make_experiment("DQN_InvalidActionGrid", seed=0, **SHORT)
    hook = rk.TotalRewardPerEpisode() + block + CheckpointHook(folder, every_n_steps=EVERY)
    rk.run(experiment.policy, experiment.env, rk.StopAfterNSteps(STEPS), hook,
           resume_from=folder if resume else None)  # fmt: skip
    return experiment.policy, experiment.env, hook


@pytest.mark.slow
def test_masked_dqn_resumed_after_sigkill_equals_the_uninterrupted_run(tmp_path):
    def check():
        kill_at_block(HERE, tmp_path / "run", tmp_path / "ready", KILL_AT // EVERY * EVERY)
        reference = run(tmp_path / "reference", Block())
        resumed = run(tmp_path / "run", Block(), resume=True)
        replay = reference[0].trajectory
        assert replay.next_legal_action_mask is not None
        assert not replay.next_legal_action_mask[: len(replay)].all()  # masks were recorded
        assert reference[0].policy.learner.gradient_steps > 200
        assert_same_runs(reference, resumed)

    check()


if __name__ == "__main__" and sys.argv[1:2] == ["child"]:
    child_main(run, KILL_AT)
