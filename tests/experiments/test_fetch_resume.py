"""Checkpoints of SAC with ``rk.HER`` in ``rk.VecNormalize`` (``HER_SAC_FetchReach``'s set-up,
the zoo's ``normalize: True``): a run resumed from a checkpoint file into freshly built
objects continues bit for bit (raw replay, HER's generator and episode bookkeeping, every Dict
key's statistics, the running return, the parameters) on a goal env whose state rlkit saves
whole (a Box bit-flipping env); on FetchReach-v4 the loaded checkpoint equals the saved run's
state, and a run resumed from a checkpoint in the middle of an episode repeats the
uninterrupted run bit for bit: the sub-envs' checkpoints hold MuJoCo's physics
(rlkit/envs/mujoco_state.py).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: state_helpers

from observation_envs import BoxBitFlipping  # noqa: E402
from state_helpers import assert_same  # noqa: E402

import rlkit as rk  # noqa: E402
from rlkit.core.state import get_state  # noqa: E402
from rlkit.hooks.checkpoint import CheckpointHook  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def bit_flipping_agent():
    env = rk.VecNormalize(rk.VectorGymEnv([BoxBitFlipping] * 2, seed=0), gamma=0.95)
    her = rk.HER("future", 4, compute_reward=BoxBitFlipping().compute_reward)
    agent = rk.SAC.agent(env, seed=0, her=her, learning_starts=64, batch_size=32,
                         buffer_size=300, hidden=(16,), gamma=0.95)  # fmt: skip
    return agent, env


def fetch_agent():
    small = {"learning_starts": 100, "batch_size": 32, "buffer_size": 1000}
    experiment = rk.make_experiment("HER_SAC_FetchReach", 0, total_steps=10**6, **small)
    return experiment.policy, experiment.env


def run(make, folder: Path, steps: int, every: int, resume: bool = False):
    agent, env = make()
    hook = rk.TotalRewardPerEpisode() + CheckpointHook(folder, every_n_steps=every)
    rk.run(agent, env, rk.StopAfterNSteps(steps), hook, resume_from=folder if resume else None)
    return agent, env, hook


def test_her_sac_on_vec_normalize_resumes_bit_for_bit(tmp_path):
    torch.set_num_threads(1)
    reference = run(bit_flipping_agent, tmp_path / "a", 600, 300)
    (tmp_path / "b").mkdir()
    for file in (tmp_path / "a").glob("checkpoint-000000000300*"):
        shutil.copy(file, tmp_path / "b")  # the run as if killed after its step-300 checkpoint
    resumed = run(bit_flipping_agent, tmp_path / "b", 600, 300, resume=True)
    assert reference[2][0].rewards == resumed[2][0].rewards and len(resumed[2][0].rewards) > 50
    assert reference[0].policy.gradient_steps > 250
    assert_same(get_state(reference[0]), get_state(resumed[0]), "agent")
    assert_same(get_state(reference[1]), get_state(resumed[1]), "env")
    env = resumed[1]
    assert env.obs_rms["desired_goal"].count > 300 and env.ret_rms.var > 0
    assert resumed[0].policy.observation_normalizer is env.observation_normalizer


def test_fetch_reach_checkpoint_loads_the_normalised_run_it_saved(tmp_path):
    torch.set_num_threads(1)
    saved = run(fetch_agent, tmp_path, 250, 250)  # learning from step 100
    loaded = run(fetch_agent, tmp_path, 250, 250, resume=True)  # loads step 250, runs none
    env = loaded[1]
    assert isinstance(env, rk.VecNormalize) and env.obs_rms["observation"].count > 250
    assert_same(get_state(saved[0]), get_state(loaded[0]), "agent")
    assert_same(get_state(saved[1]), get_state(loaded[1]), "env")
    assert loaded[0].policy.observation_normalizer is env.observation_normalizer


def test_fetch_reach_resumed_in_the_middle_of_an_episode_repeats_the_run(tmp_path):
    torch.set_num_threads(1)
    reference = run(fetch_agent, tmp_path / "a", 400, 230)  # 50-step episodes: 230 is inside one
    (tmp_path / "b").mkdir()
    for file in (tmp_path / "a").glob("checkpoint-000000000230*"):
        shutil.copy(file, tmp_path / "b")  # the run as if killed after its step-230 checkpoint
    resumed = run(fetch_agent, tmp_path / "b", 400, 230, resume=True)
    assert reference[2][0].rewards == resumed[2][0].rewards and len(resumed[2][0].rewards) == 8
    assert reference[0].policy.gradient_steps == 300
    assert_same(get_state(reference[0]), get_state(resumed[0]), "agent")
    assert_same(get_state(reference[1]), get_state(resumed[1]), "env")
