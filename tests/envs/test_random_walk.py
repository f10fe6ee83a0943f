import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk
from rlkit.envs.toy.random_walk import RandomWalk1DEnv

ENV_ID = "rlkit/RandomWalk1D-v0"


@pytest.mark.parametrize("kwargs", [{}, {"n_states": 19, "rewards": (-1.0, 1.0)}, {"n_states": 1}])
def test_passes_gymnasium_env_checker(kwargs, check_both):
    check_both(ENV_ID, **kwargs)


def test_public_name_and_spaces():
    assert rk.RandomWalk1DEnv is RandomWalk1DEnv
    env = gym.make(ENV_ID).unwrapped
    assert isinstance(env, RandomWalk1DEnv)
    assert env.observation_space == gym.spaces.Discrete(7)
    assert env.action_space == gym.spaces.Discrete(2)
    assert env.n_states == 5 and env.n_actions == 2
    assert env.terminal_states == (0, 6)
    assert "ansi" in env.metadata["render_modes"]


@pytest.mark.parametrize(("n_states", "start"), [(5, 3), (19, 10), (1, 1), (4, 2)])
def test_starts_in_the_centre(n_states, start):
    env = RandomWalk1DEnv(n_states=n_states)
    obs, info = env.reset(seed=0)
    assert obs == start and info == {}
    assert isinstance(obs, int)


def test_walking_to_either_end_gives_its_reward_and_terminates():
    env = RandomWalk1DEnv(n_states=5, rewards=(-2.0, 3.0))
    env.reset(seed=0)
    assert env.step(0) == (2, 0.0, False, False, {})
    assert env.step(0) == (1, 0.0, False, False, {})
    assert env.step(0) == (0, -2.0, True, False, {})
    env.reset()
    for expected in (4, 5):
        assert env.step(1)[:3] == (expected, 0.0, False)
    assert env.step(1)[:3] == (6, 3.0, True)


def test_model_matches_step():
    env = RandomWalk1DEnv(n_states=19, rewards=(-1.0, 1.0))
    assert sorted(env.P) == list(range(21))
    for s in range(21):
        assert sorted(env.P[s]) == [0, 1]
        for a in (0, 1):
            ((prob, nxt, reward, terminated),) = env.P[s][a]
            assert prob == 1.0
            if s in (0, 20):
                assert (nxt, reward, terminated) == (s, 0.0, True)
                continue
            env.s = s
            assert env.step(a)[:3] == (nxt, reward, terminated)
            assert nxt == s + (1 if a else -1)
    assert env.P[1][0] == [(1.0, 0, -1.0, True)]
    assert env.P[19][1] == [(1.0, 20, 1.0, True)]


def test_true_values_of_example_6_2():
    values = RandomWalk1DEnv().true_values()
    np.testing.assert_allclose(values, [0, 1 / 6, 2 / 6, 3 / 6, 4 / 6, 5 / 6, 0], atol=1e-12)


def test_true_values_of_the_19_state_walk():
    values = RandomWalk1DEnv(n_states=19, rewards=(-1.0, 1.0)).true_values()
    np.testing.assert_allclose(values[1:-1], np.arange(-9, 10) / 10, atol=1e-12)
    assert values[0] == values[-1] == 0.0


@pytest.mark.parametrize("gamma", [1.0, 0.9, 0.0])
def test_true_values_agree_with_iterative_policy_evaluation_on_P(gamma):
    env = RandomWalk1DEnv(n_states=7, rewards=(-0.5, 2.0))
    v = np.zeros(9)
    for _ in range(5000):
        new = np.array(
            [
                sum(
                    0.5 * p * (r + gamma * v[nxt] * (not done))
                    for a in (0, 1)
                    for p, nxt, r, done in env.P[s][a]
                )
                for s in range(9)
            ]
        )
        if np.max(np.abs(new - v)) < 1e-13:
            break
        v = new
    np.testing.assert_allclose(env.true_values(gamma), v, atol=1e-10)


def test_true_values_reject_a_bad_gamma():
    with pytest.raises(ValueError, match=r"gamma must be a number in \[0, 1\], got 1.5"):
        RandomWalk1DEnv().true_values(gamma=1.5)


def test_monte_carlo_returns_of_random_policy_match_true_values():
    env = RandomWalk1DEnv()
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    returns = []
    for _ in range(4000):
        env.reset()
        done, total = False, 0.0
        while not done:
            _, reward, done, _, _ = env.step(int(rng.integers(2)))
            total += reward
        returns.append(total)
    # start state C: true value 0.5; 4 standard errors of a Bernoulli(0.5) mean over 4000
    assert abs(np.mean(returns) - 0.5) < 4 * 0.5 / np.sqrt(4000)


@pytest.mark.parametrize("action", [2, -1, 1.5, "1", None, True])
def test_invalid_actions_raise_with_the_value(action):
    env = RandomWalk1DEnv()
    env.reset(seed=0)
    with pytest.raises(rk.InvalidActionError, match=r"action .* is outside the action space"):
        env.step(action)
    assert env.s == 3  # unchanged


def test_numpy_integer_actions_are_accepted():
    env = RandomWalk1DEnv()
    env.reset(seed=0)
    assert env.step(np.int64(1))[0] == 4


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_states": 0}, "RandomWalk1DEnv: n_states must be a positive integer, got 0"),
        ({"n_states": 2.5}, "n_states must be a positive integer, got 2.5"),
        ({"rewards": (1.0,)}, r"rewards must be two numbers .* got \(1.0,\)"),
        ({"rewards": (0.0, float("inf"))}, "rewards must be finite"),
        ({"render_mode": "human"}, "render_mode must be None or one of"),
    ],
)
def test_bad_construction_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        RandomWalk1DEnv(**kwargs)


def test_ansi_render():
    env = gym.make(ENV_ID, render_mode="ansi")
    env.reset(seed=0)
    assert env.render() == "|..x..|\n"
    env.step(0)
    assert env.render() == "|.x...|  (left)\n"


def test_render_without_a_mode_warns():
    env = RandomWalk1DEnv()
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="without a render_mode"):
        assert env.render() is None


def test_state_dict_round_trip():
    env = RandomWalk1DEnv()
    env.reset(seed=5)
    env.step(1)
    state = env.state_dict()
    other = RandomWalk1DEnv()
    other.load_state_dict(state)
    assert other.s == 4 and other.last_action == 1
    assert other.np_random.bit_generator.state == env.np_random.bit_generator.state
    assert other.step(1) == env.step(1)
    with pytest.raises(ValueError, match="state 9 is outside 0..6"):
        other.load_state_dict({**state, "s": 9})
