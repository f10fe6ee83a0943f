"""Replay that keeps the next states' legal-action masks (``legal_action_masks=True``): recorded
from single and vector envs (the real final states' masks where episodes ended), sampled with
the transitions (one-step and n-step), saved and restored by checkpoints."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk

GRID = "rlkit/InvalidActionGrid-v0"


def _replay(env, capacity=1000, kind=rk.CircularArraySARTTrajectory, **kwargs):
    return kind(capacity, env.state_space, env.action_space, legal_action_masks=True, **kwargs)


def test_single_env_next_masks_are_the_masks_after_each_step():
    env = rk.GymEnv(GRID, seed=0)
    replay = _replay(env)
    masks_after = []

    class Record(rk.AbstractHook):
        def post_act(self, policy, env):
            masks_after.append(env.legal_action_mask.copy())

    rk.run(rk.Agent(rk.RandomPolicy(seed=0), replay), env, rk.StopAfterNSteps(300), Record())
    assert len(replay) == 300
    np.testing.assert_array_equal(replay.next_legal_action_mask[:300], np.array(masks_after))
    # RandomPolicy acts only with legal actions: every recorded action was legal in its state
    first = np.r_[[True, False, True, False]][None]
    state_masks = np.concatenate([first, replay.next_legal_action_mask[:299]])
    starts = np.r_[True, replay.terminal[:299] | replay.truncated[:299]]
    state_masks[starts] = first
    assert state_masks[np.arange(300), replay.action[:300]].all()


def test_vector_env_next_masks_are_the_final_states_masks_where_episodes_ended():
    env = rk.VectorGymEnv(GRID, 3, seed=0, max_episode_steps=7)  # truncated every 7 steps
    replay = _replay(env)
    rk.run(rk.Agent(rk.RandomPolicy(seed=0), replay), env, rk.StopAfterNSteps(3 * 21))
    n = len(replay)
    assert n == 63 and replay.truncated[:n].sum() >= 3
    grid = gym.make(GRID).unwrapped
    for i in range(n):  # each next state's mask is the mask of the cell it shows
        cell = divmod(int(replay.next_state[i].argmax()), 7)
        np.testing.assert_array_equal(replay.next_legal_action_mask[i], grid._masks[cell])
    env.close()


def test_samplers_carry_the_masks_of_the_windows_last_transition():
    replay = rk.CircularArraySARTTrajectory(
        10, state_shape=(), action_space=gym.spaces.Discrete(3), legal_action_masks=True
    )
    masks = [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0]]
    for s in range(4):  # episode 0, 1 (terminated), then 2, 3
        replay.append(s, 0, 1.0, s == 1, False, s + 1, next_mask=np.array(masks[s], bool))
    one = rk.BatchSampler(4, seed=0).sample(replay, n_batches=4)
    np.testing.assert_array_equal(
        one["next_legal_action_mask"], np.array(masks, bool)[one["indices"]]
    )
    nstep = rk.NStepBatchSampler(4, n=3, gamma=0.5, seed=0).sample(replay, n_batches=4)
    last = {0: 1, 1: 1, 2: 3, 3: 3}  # the window's last slot
    expected = np.array([masks[last[int(i)]] for i in nstep["indices"]], bool)
    np.testing.assert_array_equal(nstep["next_legal_action_mask"], expected)


def test_a_replay_without_masks_samples_no_masks_and_an_env_without_masks_stores_all_true():
    env = rk.GymEnv("CartPole-v1", seed=0)
    plain = rk.CircularArraySARTTrajectory(100, env.state_space, env.action_space)
    masked = _replay(env, 100)
    rk.run(rk.Agent(rk.RandomPolicy(seed=0), plain), env, rk.StopAfterNSteps(20))
    rk.run(rk.Agent(rk.RandomPolicy(seed=0), masked), env, rk.StopAfterNSteps(20))
    assert "next_legal_action_mask" not in rk.BatchSampler(4, seed=0).sample(plain)
    assert plain.next_legal_action_mask is None and masked.next_legal_action_mask.all()


def test_masks_need_a_discrete_action_space():
    with pytest.raises(ValueError, match=r"CircularArraySARTTrajectory: legal_action_masks=True "
                       r"needs the Discrete action space"):  # fmt: skip
        rk.CircularArraySARTTrajectory(
            10, gym.spaces.Box(-1, 1, (2,)), gym.spaces.Box(-1, 1, (1,)), legal_action_masks=True
        )


def test_a_mask_of_the_wrong_shape_is_refused():
    replay = rk.CircularArraySARTTrajectory(
        10, state_shape=(), action_space=gym.spaces.Discrete(3), legal_action_masks=True
    )
    with pytest.raises(ValueError, match=r"mask\(s\) to record have shape \(2,\), expected "
                       r"\(3,\)"):  # fmt: skip
        replay.append(0, 0, 1.0, False, False, 1, next_mask=np.array([True, False]))


@pytest.mark.parametrize("kind", [rk.CircularArraySARTTrajectory,
                                  rk.PrioritizedCircularArraySARTTrajectory])  # fmt: skip
def test_masks_round_trip_through_a_checkpoint_state(kind):
    env = rk.VectorGymEnv(GRID, 2, seed=0)
    a = _replay(env, 50, kind)
    rk.run(rk.Agent(rk.RandomPolicy(seed=0), a), env, rk.StopAfterNSteps(40))
    b = _replay(env, 50, kind)
    b.load_state_dict(a.state_dict())
    np.testing.assert_array_equal(a.next_legal_action_mask, b.next_legal_action_mask)
    rk.run(rk.Agent(rk.RandomPolicy(seed=1), a), env, rk.StopAfterNSteps(30))
    env.close()


def test_a_checkpoint_with_and_without_masks_do_not_mix():
    space, actions = gym.spaces.Box(0, 1, (2,)), gym.spaces.Discrete(3)
    masked = rk.CircularArraySARTTrajectory(10, space, actions, legal_action_masks=True)
    plain = rk.CircularArraySARTTrajectory(10, space, actions)
    with pytest.raises(ValueError, match="the checkpoint keeps legal-action masks, this "
                       "trajectory does not"):  # fmt: skip
        plain.load_state_dict(masked.state_dict())
    with pytest.raises(ValueError, match="the checkpoint keeps no legal-action masks, this "
                       "trajectory does"):  # fmt: skip
        masked.load_state_dict(plain.state_dict())
