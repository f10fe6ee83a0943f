"""Kill-and-resume is bit-exact for a Dict-observation replay run: DQN on a Dict CartPole
(``tests/observation_envs.py``) killed with SIGKILL and resumed from its newest checkpoint ends
with the same parameters, replay (a dict of arrays by key), sampler, explorer, environment and
episode returns as the uninterrupted run (the pattern of test_rainbow_resume.py).

The child process runs this file as a script (``python test_dict_resume.py child ...``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[2]))  # tests/, for the child process too

from observation_envs import DictCartPole  # noqa: E402
from sigkill_resume import Block, assert_same_runs, child_main, kill_at_block  # noqa: E402

import rlkit as rk  # noqa: E402
from rlkit.hooks.checkpoint import CheckpointHook  # noqa: E402

STEPS, EVERY, KILL_AT = 1500, 500, 1234


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
    def check():
        kill_at_block(HERE, tmp_path / "run", tmp_path / "ready", KILL_AT // EVERY * EVERY)
        reference = run(tmp_path / "reference", Block())
        resumed = run(tmp_path / "run", Block(), resume=True)
        assert reference[0].policy.learner.gradient_steps > 200
        assert_same_runs(reference, resumed)
        # the replay was saved and restored as a dict of arrays by key
        states = resumed[0].trajectory.state.arrays
        assert set(states) == {"cart", "pole"} and states["cart"].dtype == np.float32
        assert np.array_equal(states["pole"], reference[0].trajectory.state.arrays["pole"])

    check()


if __name__ == "__main__" and sys.argv[1:2] == ["child"]:
    child_main(run, KILL_AT)
