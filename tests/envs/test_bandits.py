import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk
from rlkit.envs.toy.bandits import MultiArmBanditsEnv

ENV_ID = "rlkit/MultiArmBandits-v0"


@pytest.mark.parametrize("kwargs", [{}, {"stationary": False}, {"k": 1}, {"reward_std": 0.0}])
def test_passes_gymnasium_env_checker(kwargs, check_both):
    check_both(ENV_ID, **kwargs)


def test_public_name_and_spaces():
    assert rk.MultiArmBanditsEnv is MultiArmBanditsEnv
    env = gym.make(ENV_ID).unwrapped
    assert isinstance(env, MultiArmBanditsEnv)
    assert env.observation_space == gym.spaces.Discrete(1)
    assert env.action_space == gym.spaces.Discrete(10)
    assert env.n_actions == 10 and env.n_states == 1
    assert not hasattr(env, "P")


def test_every_pull_is_a_one_step_episode_with_observation_0():
    env = MultiArmBanditsEnv()
    assert env.reset(seed=0) == (0, {})
    for a in range(10):
        obs, reward, terminated, truncated, info = env.step(a)
        assert (obs, terminated, truncated) == (0, True, False)
        assert isinstance(reward, float)
        assert set(info) == {"optimal_action"}
        assert env.reset() == (0, {})


def test_q_star_is_drawn_on_seeded_resets_and_kept_otherwise():
    env = MultiArmBanditsEnv()
    env.reset(seed=1)
    q1 = env.q_star.copy()
    env.step(0)
    env.reset()
    np.testing.assert_array_equal(env.q_star, q1)
    env.reset(seed=2)
    assert not np.array_equal(env.q_star, q1)
    env.reset(seed=1)
    np.testing.assert_array_equal(env.q_star, q1)
    unseeded = MultiArmBanditsEnv()
    unseeded.reset()  # the first reset draws one too
    assert unseeded.q_star.shape == (10,)


def test_same_seed_gives_bit_identical_runs():
    def one_run(seed):
        env = gym.make(ENV_ID)
        env.reset(seed=seed)
        rewards = []
        for t in range(200):
            rewards.append(env.step(t % 10)[1])
            env.reset()
        return rewards

    assert one_run(3) == one_run(3)
    assert one_run(3) != one_run(4)


def test_true_values_are_standard_normal_across_runs():
    env = MultiArmBanditsEnv(mean=0.5)
    q = np.concatenate([(env.reset(seed=seed), env.q_star.copy())[1] for seed in range(500)])
    assert q.shape == (5000,)
    assert abs(q.mean() - 0.5) < 4 / np.sqrt(5000)
    assert abs(q.std() - 1.0) < 0.05


def test_rewards_are_normal_around_the_true_value():
    env = MultiArmBanditsEnv()
    env.reset(seed=7)
    n = 20000
    rewards = np.array([(env.step(4)[1], env.reset())[0] for _ in range(n)])
    assert abs(rewards.mean() - env.q_star[4]) < 4 / np.sqrt(n)
    assert abs(rewards.std() - 1.0) < 0.03


def test_info_names_the_optimal_action():
    env = MultiArmBanditsEnv()
    for seed in range(20):
        env.reset(seed=seed)
        best = int(np.argmax(env.q_star))
        assert env.step(seed % 10)[4]["optimal_action"] == best


def test_nonstationary_values_start_equal_and_walk():
    k, pulls, walk_std = 1000, 100, 0.01
    env = MultiArmBanditsEnv(k=k, stationary=False, walk_std=walk_std, mean=0.25)
    env.reset(seed=0)
    np.testing.assert_array_equal(env.q_star, np.full(k, 0.25))
    assert env.step(0)[4]["optimal_action"] == 0  # all equal: the first one
    history = [env.q_star.copy()]
    for t in range(pulls - 1):
        before = int(np.argmax(env.q_star))
        assert env.step(t % k)[4]["optimal_action"] == before
        history.append(env.q_star.copy())
    steps = np.diff(np.array(history), axis=0)
    # independent N(0, walk_std) steps of every arm after every pull
    assert abs(steps.std() - walk_std) < 0.02 * walk_std
    assert abs(steps.mean()) < 4 * walk_std / np.sqrt(steps.size)
    spread = env.q_star - 0.25
    assert abs(spread.std() - walk_std * np.sqrt(pulls)) < 0.1 * walk_std * np.sqrt(pulls)
    # a reset without a seed keeps the walk going; a seeded one restarts it
    env.reset()
    assert not np.all(env.q_star == 0.25)
    env.reset(seed=0)
    np.testing.assert_array_equal(env.q_star, np.full(k, 0.25))


def test_stationary_values_never_move():
    env = MultiArmBanditsEnv()
    env.reset(seed=0)
    q = env.q_star.copy()
    for _ in range(50):
        env.step(1)
    np.testing.assert_array_equal(env.q_star, q)


@pytest.mark.parametrize("action", [10, -1, 1.5, None, True])
def test_invalid_actions_raise_with_the_value(action):
    env = MultiArmBanditsEnv()
    env.reset(seed=0)
    with pytest.raises(rk.InvalidActionError, match=rf"action {action!r} is outside"):
        env.step(action)


def test_step_before_reset_raises():
    with pytest.raises(RuntimeError, match="reset"):
        MultiArmBanditsEnv().step(0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 0}, "MultiArmBanditsEnv: k must be a positive integer, got 0"),
        ({"walk_std": -0.1}, "walk_std must be a non-negative finite number, got -0.1"),
        ({"q_std": "x"}, "q_std must be a non-negative finite number, got 'x'"),
        ({"reward_std": float("nan")}, "reward_std must be a non-negative finite number"),
        ({"mean": float("inf")}, "mean must be a finite number, got inf"),
        ({"render_mode": "rgb_array"}, "render_mode must be None or one of"),
    ],
)
def test_bad_construction_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MultiArmBanditsEnv(**kwargs)


def test_ansi_render():
    env = MultiArmBanditsEnv(k=3, render_mode="ansi")
    assert "reset first" in env.render()
    env.reset(seed=0)
    text = env.render()
    assert text.startswith("q*: ") and len(text.split()) == 4
    _, reward, *_ = env.step(2)
    assert f"pulled 2: reward {reward:+.3f}" in env.render()


@pytest.mark.parametrize("stationary", [True, False])
def test_state_dict_round_trip(stationary):
    env = MultiArmBanditsEnv(stationary=stationary)
    env.reset(seed=11)
    for a in range(5):
        env.step(a)
    state = env.state_dict()
    other = MultiArmBanditsEnv(stationary=stationary)
    other.load_state_dict(state)
    np.testing.assert_array_equal(other.q_star, env.q_star)
    for a in range(20):
        assert other.step(a % 10) == env.step(a % 10)
    np.testing.assert_array_equal(other.q_star, env.q_star)
    state["q_star"] = np.zeros(3)
    with pytest.raises(ValueError, match=r"q_star has shape \(3,\), expected \(10,\)"):
        other.load_state_dict(state)
