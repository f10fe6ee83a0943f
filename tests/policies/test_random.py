"""rlkit/policies/random.py: RandomPolicy draws uniformly among legal actions from its own
generator, leaves the env's spaces untouched, and saves and restores its state."""

from __future__ import annotations

from collections import Counter
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk
from rlkit.core.state import get_state, set_state
from rlkit.hooks.checkpoint import decode_state, encode_state


class SpaceEnv(rk.AbstractEnv):
    """An env that only has an action space and, optionally, a legal-action mask."""

    def __init__(self, space: gym.Space, mask=None) -> None:
        self.action_space, self.mask = space, mask

    @property
    def legal_action_mask(self):
        return self.mask

    def reset(self, seed=None):
        self.state, self.needs_reset = 0, False

    def act(self, action):
        pass


def test_discrete_actions_are_uniform_and_respect_the_start():
    policy, env = rk.RandomPolicy(seed=0), SpaceEnv(gym.spaces.Discrete(4, start=10))
    counts = Counter(int(policy(env)) for _ in range(4000))
    assert set(counts) == {10, 11, 12, 13}
    assert all(900 < c < 1100 for c in counts.values())  # 1000 each expected, sd ~27


def test_only_legal_actions_are_chosen():
    mask = np.array([False, True, False, True, False])
    policy, env = rk.RandomPolicy(seed=1), SpaceEnv(gym.spaces.Discrete(5), mask)
    assert {int(policy(env)) for _ in range(500)} == {1, 3}


def test_a_masked_non_discrete_space_is_sampled_with_the_mask():
    space = gym.spaces.MultiDiscrete([3, 3])
    mask = (np.array([0, 1, 0], dtype=np.int8), np.array([1, 0, 0], dtype=np.int8))
    policy = rk.RandomPolicy(seed=0)
    assert {tuple(policy(SpaceEnv(space, mask)).tolist()) for _ in range(50)} == {(1, 0)}


def test_the_same_seed_gives_the_same_actions():
    env = SpaceEnv(gym.spaces.Discrete(6))

    def actions(seed):
        policy = rk.RandomPolicy(seed=seed)
        return [int(policy(env)) for _ in range(30)]

    assert actions(7) == actions(7)
    assert actions(7) != actions(8)


def test_continuous_spaces_use_a_seeded_copy_and_leave_the_envs_space_alone():
    space = gym.spaces.Box(-1.0, 1.0, (2,), dtype=np.float32)
    space.seed(0)
    untouched = space.np_random.bit_generator.state
    env = SpaceEnv(space)
    first, second = rk.RandomPolicy(seed=3), rk.RandomPolicy(seed=3)
    actions = [first(env) for _ in range(5)]
    assert all(space.contains(a) for a in actions)
    assert all(np.array_equal(a, second(env)) for a in actions)  # from the policy's seed
    assert space.np_random.bit_generator.state == untouched


def test_repr():
    assert repr(rk.RandomPolicy(seed=1)) == "RandomPolicy()"


def _plain(x: Any) -> Any:
    return x.tolist() if isinstance(x, np.ndarray) else x


@pytest.mark.parametrize("env_id", ["CartPole-v1", "MountainCarContinuous-v0"])
def test_random_policy_round_trip(env_id):
    env = rk.GymEnv(env_id, seed=0)
    env.reset()
    policy = rk.RandomPolicy(seed=0)
    policy(env)
    saved = decode_state(*encode_state(get_state(policy)))
    expected = [_plain(policy(env)) for _ in range(5)]
    fresh = rk.RandomPolicy(seed=123)
    set_state(fresh, saved)
    assert [_plain(fresh(env)) for _ in range(5)] == expected


def test_a_restored_policy_rebuilds_its_space_copy_in_the_saved_state():
    space = gym.spaces.Tuple((gym.spaces.Box(0.0, 1.0, (1,)), gym.spaces.Discrete(3)))
    env = SpaceEnv(space)
    policy = rk.RandomPolicy(seed=0)
    policy(env)
    state = get_state(policy)
    assert list(state["spaces"]) == [repr(space)]
    assert len(state["spaces"][repr(space)]) == 3  # the Tuple's generator and its two parts'
    expected = [policy(env) for _ in range(3)]
    fresh = rk.RandomPolicy(seed=1)
    set_state(fresh, state)
    got = [fresh(env) for _ in range(3)]
    for (a_box, a_int), (b_box, b_int) in zip(expected, got, strict=True):
        assert np.array_equal(a_box, b_box) and a_int == b_int


@pytest.mark.parametrize("seed", [np.random.default_rng(5), np.random.SeedSequence(5), 5])
def test_seeds_of_every_kind(seed):
    env = SpaceEnv(gym.spaces.Discrete(10))
    assert 0 <= int(rk.RandomPolicy(seed=seed)(env)) < 10
