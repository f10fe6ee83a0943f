import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk
from rlkit.envs.space_seeds import space_seeds

CLIFF_PATH = [0] + [1] * 11 + [2]  # up, right x 11, down: start 36 -> goal 47


class Recorder(rk.AbstractHook):
    """Record every episode's start state, actions, post-step states and final flags."""

    def __init__(self):
        self.episodes = []

    def pre_episode(self, policy, env):
        self.episodes.append({"start": env.state, "actions": [], "states": [], "flags": []})

    def pre_act(self, policy, env, action):
        self.episodes[-1]["actions"].append(action)
        mask = env.legal_action_mask
        self.episodes[-1].setdefault("masks", []).append(None if mask is None else mask.copy())

    def post_act(self, policy, env):
        self.episodes[-1]["states"].append(env.state)
        self.episodes[-1]["flags"].append((env.is_terminated, env.is_truncated, env.done))

    def post_episode(self, policy, env):
        self.episodes[-1]["final"] = env.state


# ---- construction ----


def test_wraps_an_id_or_an_instance():
    env = rk.GymEnv("CliffWalking-v1")
    assert env.name == "CliffWalking-v1" and repr(env) == "GymEnv(CliffWalking-v1)"
    assert env.action_space == gym.spaces.Discrete(4)
    assert env.state_space == gym.spaces.Discrete(48)
    assert env.needs_reset
    raw = gym.make("FrozenLake-v1")
    assert rk.GymEnv(raw).env is raw


def test_keyword_arguments_need_an_id():
    with pytest.raises(TypeError, match=r"keyword arguments \['is_slippery'\] are only accepted"):
        rk.GymEnv(gym.make("FrozenLake-v1"), is_slippery=False)


def test_rejects_other_things():
    with pytest.raises(TypeError, match="expected a gymnasium id .* got int: 3"):
        rk.GymEnv(3)


# ---- terminated vs truncated ----


def test_truncation_by_a_time_limit_is_not_termination():
    env = rk.GymEnv("CartPole-v1", seed=0, max_episode_steps=3)
    env.reset()
    for _ in range(2):
        env.act(0)
        assert (env.is_terminated, env.is_truncated, env.done) == (False, False, False)
    env.act(0)
    assert (env.is_terminated, env.is_truncated, env.done) == (False, True, True)
    env.reset()
    assert (env.is_terminated, env.is_truncated, env.done) == (False, False, False)


def test_reaching_the_cliff_walking_goal_is_termination():
    env = rk.GymEnv("CliffWalking-v1", seed=0)
    env.reset()
    assert env.state == 36
    for action in CLIFF_PATH[:-1]:
        env.act(action)
        assert not env.done
    env.act(CLIFF_PATH[-1])
    assert (env.state, env.reward) == (47, -1)
    assert (env.is_terminated, env.is_truncated, env.done) == (True, False, True)


def test_falling_into_a_frozen_lake_hole_is_termination():
    env = rk.GymEnv("FrozenLake-v1", seed=0, is_slippery=False)
    env.reset()
    env.act(2)  # right: 0 -> 1
    env.act(1)  # down: 1 -> 5, a hole
    assert (env.state, env.reward) == (5, 0.0)
    assert (env.is_terminated, env.is_truncated, env.done) == (True, False, True)


def test_terminated_and_truncated_stay_apart_in_a_run():
    hook = rk.run(
        rk.RandomPolicy(seed=0),
        rk.GymEnv("FrozenLake-v1", seed=0, max_episode_steps=8),
        rk.StopAfterNEpisodes(60),
        Recorder(),
    )
    kinds = set()
    for episode in hook.episodes:
        *middle, last = episode["flags"]
        assert all(flags == (False, False, False) for flags in middle)
        terminated, truncated, done = last
        assert done and (terminated or truncated)
        kinds.add((terminated, truncated))
        if terminated:
            assert episode["final"] in (5, 7, 11, 12, 15)  # a hole or the goal
        if truncated:  # (both when the last allowed step ends in a hole)
            assert len(episode["states"]) == 8
        else:
            assert len(episode["states"]) < 8
    assert {(True, False), (False, True)} <= kinds


# ---- the final observation is the real one ----


def test_final_observation_is_the_last_one_not_a_reset_one():
    hook = rk.run(
        rk.RandomPolicy(seed=1),
        rk.GymEnv("CartPole-v1", seed=1, max_episode_steps=30),
        rk.StopAfterNEpisodes(20),
        Recorder(),
    )
    raw = gym.make("CartPole-v1", max_episode_steps=30)
    for i, episode in enumerate(hook.episodes):
        obs, _ = raw.reset(seed=1) if i == 0 else raw.reset()
        np.testing.assert_array_equal(episode["start"], obs)
        for action, state in zip(episode["actions"], episode["states"], strict=True):
            obs, *_ = raw.step(action)
            np.testing.assert_array_equal(state, obs)
        np.testing.assert_array_equal(episode["final"], obs)
        assert not np.array_equal(episode["final"], episode["start"])


def test_final_cliff_walking_state_is_the_goal():
    env = rk.GymEnv("CliffWalking-v1", seed=0)
    env.reset()
    for action in CLIFF_PATH:
        env.act(action)
    assert env.state == 47  # not 36, the start a reset would give


# ---- seeding ----


def test_seed_makes_the_first_reset_reproducible():
    a, b = rk.GymEnv("CartPole-v1", seed=7), rk.GymEnv("CartPole-v1", seed=7)
    a.reset()
    b.reset()
    np.testing.assert_array_equal(a.state, b.state)
    first = a.state.copy()
    a.reset()
    b.reset()  # later episodes continue the generator: different from the first, equal twins
    np.testing.assert_array_equal(a.state, b.state)
    assert not np.array_equal(a.state, first)
    c = rk.GymEnv("CartPole-v1", seed=8)
    c.reset()
    assert not np.array_equal(c.state, first)


def test_seeded_runs_are_identical():
    def run(seed):
        hook = rk.run(
            rk.RandomPolicy(seed=seed),
            rk.GymEnv("FrozenLake-v1", seed=seed),
            rk.StopAfterNEpisodes(30),
            Recorder(),
        )
        return [(e["actions"], e["states"]) for e in hook.episodes]

    assert run(3) == run(3)
    assert run(3) != run(4)


def test_reset_with_an_explicit_seed():
    a = rk.GymEnv("CartPole-v1")
    a.reset(seed=5)
    b = rk.GymEnv("CartPole-v1", seed=5)
    b.reset()
    np.testing.assert_array_equal(a.state, b.state)


def test_an_explicit_seed_replaces_the_constructor_seed():
    env = rk.GymEnv("CartPole-v1", seed=0)
    env.reset(seed=5)
    env.reset()  # must continue seed 5's generator, not restart from seed 0
    twin = rk.GymEnv("CartPole-v1")
    twin.reset(seed=5)
    twin.reset()
    np.testing.assert_array_equal(env.state, twin.state)


# ---- invalid actions ----


@pytest.mark.parametrize("action", [4, -1, 1.5, "0", None])
def test_invalid_actions_raise_with_the_value(action):
    env = rk.GymEnv("CliffWalking-v1", seed=0)
    env.reset()
    with pytest.raises(rk.InvalidActionError) as error:
        env.act(action)
    message = str(error.value)
    assert repr(action) in message
    assert "Discrete(4)" in message and "expected an integer in [0, 4)" in message
    assert isinstance(error.value, ValueError)
    assert env.state == 36 and not env.done  # nothing happened


def test_numpy_integers_are_valid_actions():
    env = rk.GymEnv("CliffWalking-v1", seed=0)
    env.reset()
    env.act(np.int64(0))
    assert env.state == 24
    env(np.int32(2))  # env(action) is env.act(action)
    assert env.state == 36


def test_check_actions_false_leaves_checking_to_gymnasium():
    env = rk.GymEnv("CliffWalking-v1", seed=0, check_actions=False)
    env.reset()
    with pytest.raises(Exception) as error:  # noqa: B017 - whatever gymnasium raises
        env.act(4)
    assert not isinstance(error.value, rk.InvalidActionError)


# ---- legal action masks ----


def test_legal_action_mask_comes_from_taxi_info():
    # Taxi-v3 (as named in the brief) is deprecated in gymnasium 1.4: Taxi-v4 is the same task
    env = rk.GymEnv("Taxi-v4", seed=0)
    env.reset()
    mask = env.legal_action_mask
    assert mask.dtype == bool and mask.shape == (6,)
    np.testing.assert_array_equal(mask, env.info["action_mask"].astype(bool))
    for _ in range(20):
        env.act(int(np.flatnonzero(env.legal_action_mask)[0]))
        np.testing.assert_array_equal(env.legal_action_mask, env.info["action_mask"] == 1)


def test_no_mask_means_none():
    env = rk.GymEnv("CliffWalking-v1", seed=0)
    env.reset()
    assert env.legal_action_mask is None


def test_random_policy_respects_the_taxi_mask():
    hook = rk.run(
        rk.RandomPolicy(seed=0), rk.GymEnv("Taxi-v4", seed=0), rk.StopAfterNSteps(500), Recorder()
    )
    pairs = [(a, m) for e in hook.episodes for a, m in zip(e["actions"], e["masks"], strict=True)]
    assert len(pairs) == 500
    assert all(mask[action] for action, mask in pairs)


# ---- the bundled toy environments through GymEnv ----

TOY = [
    ("rlkit/RandomWalk1D-v0", {}, 50),
    ("rlkit/RandomWalk1D-v0", {"n_states": 19, "rewards": (-1.0, 1.0)}, 20),
    ("rlkit/MultiArmBandits-v0", {}, 100),
    ("rlkit/MultiArmBandits-v0", {"stationary": False}, 100),
    ("rlkit/WindyGridWorld-v0", {}, 3),
    ("rlkit/WindyGridWorld-v0", {"king_moves": True, "stochastic_wind": True}, 3),
    ("rlkit/MaximizationBias-v0", {}, 200),
    ("rlkit/GridWorld-v0", {"max_episode_steps": 20}, 10),
    ("rlkit/GamblersProblem-v0", {}, 100),
]


@pytest.mark.parametrize(("env_id", "kwargs", "episodes"), TOY)
def test_random_policy_runs_on_the_toy_environments(env_id, kwargs, episodes):
    env = rk.GymEnv(env_id, seed=0, **kwargs)
    hook = rk.run(rk.RandomPolicy(seed=0), env, rk.StopAfterNEpisodes(episodes), Recorder())
    assert len(hook.episodes) == episodes
    for episode in hook.episodes:
        assert episode["flags"][-1][2]  # done
        assert all(env.state_space.contains(s) for s in episode["states"])
        for action, mask in zip(episode["actions"], episode["masks"], strict=True):
            assert env.action_space.contains(action)
            assert mask is None or mask[action]
    if env_id == "rlkit/GridWorld-v0":  # continuing: only ever cut by the time limit
        assert all(e["flags"][-1] == (False, True, True) for e in hook.episodes)
    else:
        assert all(e["flags"][-1] == (True, False, True) for e in hook.episodes)


def test_random_policy_only_takes_legal_actions_in_maximization_bias():
    hook = rk.run(
        rk.RandomPolicy(seed=0),
        rk.GymEnv("rlkit/MaximizationBias-v0", seed=0),
        rk.StopAfterNEpisodes(300),
        Recorder(),
    )
    first_actions = {e["actions"][0] for e in hook.episodes}
    assert first_actions == {0, 1}  # from A only left or right, though there are 10 actions
    b_actions = {e["actions"][1] for e in hook.episodes if len(e["actions"]) == 2}
    assert b_actions == set(range(10))


def test_random_policy_only_stakes_legal_amounts_in_the_gamblers_problem():
    hook = rk.run(
        rk.RandomPolicy(seed=0),
        rk.GymEnv("rlkit/GamblersProblem-v0", seed=0),
        rk.StopAfterNEpisodes(100),
        Recorder(),
    )
    for episode in hook.episodes:
        capitals = [episode["start"], *episode["states"][:-1]]
        for capital, stake in zip(capitals, episode["actions"], strict=True):
            assert 1 <= stake <= min(capital, 100 - capital)


def test_toy_masks_reach_the_adapter():
    env = rk.GymEnv("rlkit/MaximizationBias-v0", seed=0)
    env.reset()
    assert env.legal_action_mask.tolist() == [True, True] + [False] * 8
    env.act(0)
    assert env.legal_action_mask.all()
    with pytest.raises(rk.InvalidActionError, match="action 10 is outside the action space"):
        env.act(10)


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("rlkit/MultiArmBandits-v0", {"stationary": False}),
        ("rlkit/WindyGridWorld-v0", {"stochastic_wind": True}),
        ("rlkit/GamblersProblem-v0", {}),
        ("rlkit/GridWorld-v0", {"max_episode_steps": 7}),
        ("rlkit/MaximizationBias-v0", {}),
    ],
)
def test_checkpoint_of_a_toy_environment_resumes_identically(env_id, kwargs):
    def steps(env, policy, n=40):
        out = []
        for _ in range(n):
            if env.done:
                env.reset()
            env.act(policy.act(env))
            out.append((env.state, env.reward, env.is_terminated, env.is_truncated))
        return out

    env, policy = rk.GymEnv(env_id, seed=1, **kwargs), rk.RandomPolicy(seed=2)
    env.reset()
    steps(env, policy, 5)  # stop somewhere in the middle
    env_state, policy_state = env.state_dict(), policy.state_dict()
    expected = steps(env, policy)
    resumed, other_policy = rk.GymEnv(env_id, **kwargs), rk.RandomPolicy(seed=99)
    resumed.load_state_dict(env_state)
    other_policy.load_state_dict(policy_state)
    assert steps(resumed, other_policy) == expected


def test_integer_like_actions_are_accepted_and_bools_refused():
    env = rk.GymEnv("CliffWalking-v1", seed=0)
    env.reset()
    env.act(np.array(1))  # a 0-d integer array, e.g. from torch's argmax
    env.act(np.int32(0))
    with pytest.raises(rk.InvalidActionError, match="action True is outside"):
        env.act(True)


def test_actions_outside_the_legal_mask_are_refused_with_the_legal_set():
    env = rk.GymEnv("rlkit/MaximizationBias-v0", seed=0)
    env.reset()  # in A only 0 (left) and 1 (right) are legal
    np.testing.assert_array_equal(np.flatnonzero(env.legal_action_mask), [0, 1])
    with pytest.raises(
        rk.InvalidActionError, match=r"action 5 is illegal .* legal actions are \[0, 1\]"
    ):
        env.act(5)
    env.act(0)  # to B: all ten actions are legal
    assert env.legal_action_mask.all()
    unchecked = rk.GymEnv("rlkit/MaximizationBias-v0", seed=0, check_actions=False)
    unchecked.reset()
    unchecked.act(5)  # the raw environment's own (lenient) rule applies
    assert unchecked.done


@pytest.mark.parametrize(
    ("seed", "error"), [(-1, ValueError), ("a", TypeError), (1.5, TypeError), (True, TypeError)]
)
def test_a_bad_seed_is_refused_at_construction_and_reset(seed, error):
    # gymnasium refused these only at the first reset, in its own words (and took True as 1)
    with pytest.raises(error, match=f"GymEnv: seed must be a non-negative integer, got {seed!r}"):
        rk.GymEnv("CartPole-v1", seed=seed)
    env = rk.GymEnv("CartPole-v1")
    with pytest.raises(error, match="GymEnv: seed must be a non-negative integer"):
        env.reset(seed=seed)


def test_a_numpy_integer_seed_is_the_same_as_the_int():
    a, b = rk.GymEnv("CartPole-v1", seed=np.int64(3)), rk.GymEnv("CartPole-v1", seed=3)
    a.reset(), b.reset()
    assert np.array_equal(a.state, b.state)


def test_a_seeded_gym_env_seeds_its_spaces_from_its_seed():
    def samples(env: rk.GymEnv) -> list:
        return [env.action_space.sample() for _ in range(12)] + [
            env.state_space.sample().tolist() for _ in range(3)
        ]

    assert samples(rk.GymEnv("CartPole-v1", seed=3)) == samples(rk.GymEnv("CartPole-v1", seed=3))
    assert samples(rk.GymEnv("CartPole-v1", seed=3)) != samples(rk.GymEnv("CartPole-v1", seed=4))
    action_seed, _ = space_seeds(3)
    space = gym.spaces.Discrete(2, seed=action_seed)
    assert samples(rk.GymEnv("CartPole-v1", seed=3))[:12] == [space.sample() for _ in range(12)]



def test_a_space_seeded_before_keeps_its_generator():
    env = gym.make("CartPole-v1")
    env.action_space.seed(123)
    wrapped = rk.GymEnv(env, seed=3)
    reference = gym.spaces.Discrete(2, seed=123)
    assert [wrapped.action_space.sample() for _ in range(12)] == [
        reference.sample() for _ in range(12)
    ]
