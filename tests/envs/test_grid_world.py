import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk
from rlkit.envs.toy.grid_world import FIGURE_3_2, FIGURE_3_5, GridWorldEnv

ENV_ID = "rlkit/GridWorld-v0"
NORTH, SOUTH, EAST, WEST = range(4)
GAMMA = 0.9


@pytest.mark.parametrize("kwargs", [{}, {"max_episode_steps": 100}, {"start": 12}])
def test_passes_gymnasium_env_checker(kwargs, check_both):
    check_both(ENV_ID, **kwargs)


def test_public_names_and_spaces():
    assert rk.GridWorldEnv is GridWorldEnv
    env = gym.make(ENV_ID).unwrapped
    assert isinstance(env, GridWorldEnv)
    assert env.observation_space == gym.spaces.Discrete(25)
    assert env.action_space == gym.spaces.Discrete(4)
    assert env.n_states == 25 and env.n_actions == 4
    assert FIGURE_3_2.shape == FIGURE_3_5.shape == (5, 5)
    with pytest.raises(ValueError, match="read-only"):
        FIGURE_3_2[0, 0] = 0.0


def test_special_states_a_and_b():
    env = GridWorldEnv()
    a, a_prime = env.to_state(0, 1), env.to_state(4, 1)
    b, b_prime = env.to_state(0, 3), env.to_state(2, 3)
    for action in range(4):
        assert env.P[a][action] == [(1.0, a_prime, 10.0, False)]
        assert env.P[b][action] == [(1.0, b_prime, 5.0, False)]
    env.reset(seed=0, options={"state": a})
    assert env.step(NORTH) == (a_prime, 10.0, False, False, {})
    env.reset(options={"state": b})
    assert env.step(WEST) == (b_prime, 5.0, False, False, {})


def test_moves_and_bumps():
    env = GridWorldEnv()
    env.reset(seed=0, options={"state": env.to_state(2, 2)})
    assert env.step(NORTH)[:2] == (env.to_state(1, 2), 0.0)
    assert env.step(EAST)[:2] == (env.to_state(1, 3), 0.0)
    assert env.step(SOUTH)[:2] == (env.to_state(2, 3), 0.0)
    assert env.step(WEST)[:2] == (env.to_state(2, 2), 0.0)
    env.reset(options={"state": 0})
    assert env.step(NORTH)[:2] == (0, -1.0)
    assert env.step(WEST)[:2] == (0, -1.0)
    env.reset(options={"state": 24})
    assert env.step(SOUTH)[:2] == (24, -1.0)
    assert env.step(EAST)[:2] == (24, -1.0)


def test_model_matches_step_and_never_terminates():
    env = GridWorldEnv()
    env.reset(seed=0)
    assert sorted(env.P) == list(range(25))
    for s in range(25):
        assert sorted(env.P[s]) == [0, 1, 2, 3]
        for a in range(4):
            ((prob, nxt, reward, terminated),) = env.P[s][a]
            assert prob == 1.0 and terminated is False
            env.reset(options={"state": s})
            assert env.step(a) == (nxt, reward, False, False, {})


def model_arrays(env):
    p = np.zeros((25, 4, 25))
    r = np.zeros((25, 4))
    for s in range(25):
        for a in range(4):
            for prob, nxt, reward, _ in env.P[s][a]:
                p[s, a, nxt] += prob
                r[s, a] += prob * reward
    return p, r


def test_random_policy_values_of_figure_3_2():
    p, r = model_arrays(GridWorldEnv())
    v = np.linalg.solve(np.eye(25) - GAMMA * p.mean(axis=1), r.mean(axis=1)).reshape(5, 5)
    np.testing.assert_array_equal(np.round(v, 1), FIGURE_3_2)
    assert v[0, 1] == pytest.approx(8.8, abs=0.05)  # A: less than its immediate reward of 10
    assert v[0, 3] == pytest.approx(5.3, abs=0.05)  # B: more than its immediate reward of 5


def test_optimal_values_of_figure_3_5():
    p, r = model_arrays(GridWorldEnv())
    v = np.zeros(25)
    for _ in range(1000):
        new = (r + GAMMA * p @ v).max(axis=1)
        if np.max(np.abs(new - v)) < 1e-10:
            break
        v = new
    np.testing.assert_array_equal(np.round(v.reshape(5, 5), 1), FIGURE_3_5)


def test_continuing_task_is_cut_by_a_time_limit():
    env = gym.make(ENV_ID, max_episode_steps=5)
    env.reset(seed=0)
    flags = [env.step(a % 4)[2:4] for a in range(5)]
    assert flags == [(False, False)] * 4 + [(False, True)]


def test_start_state_options():
    env = GridWorldEnv(start=7)
    assert env.reset(seed=0)[0] == 7
    assert env.reset(options={"state": 3})[0] == 3
    assert env.reset()[0] == 7
    starts = {GridWorldEnv().reset(seed=seed)[0] for seed in range(300)}
    assert starts == set(range(25))  # uniformly random by default
    assert GridWorldEnv().reset(seed=4) == GridWorldEnv().reset(seed=4)


@pytest.mark.parametrize("bad", [25, -1, 2.0, None])
def test_bad_start_states(bad):
    if bad is not None:
        with pytest.raises(ValueError, match=rf"start must be a state in \[0, 25\), got {bad!r}"):
            GridWorldEnv(start=bad)
    with pytest.raises(ValueError, match=r'options\["state"\] must be a state in \[0, 25\)'):
        GridWorldEnv().reset(options={"state": bad})


@pytest.mark.parametrize("action", [4, -1, 1.5, None, True])
def test_invalid_actions_raise_with_the_value(action):
    env = GridWorldEnv(start=12)
    env.reset(seed=0)
    with pytest.raises(rk.InvalidActionError, match=rf"action {action!r} is outside"):
        env.step(action)
    assert env.s == 12


def test_ansi_render():
    env = gym.make(ENV_ID, render_mode="ansi", start=1)
    env.reset(seed=0)
    assert env.render() == ". x . B .\n. . . . .\n. . . b .\n. . . . .\n. a . . .\n"
    env.step(SOUTH)
    assert env.render().splitlines()[4] == ". x . . ."
    assert env.render().splitlines()[5] == "(south, reward +10)"
    with pytest.raises(ValueError, match="render_mode must be None or one of"):
        GridWorldEnv(render_mode="human")


def test_state_dict_round_trip():
    env = GridWorldEnv()
    env.reset(seed=6)
    env.step(EAST)
    other = GridWorldEnv()
    other.load_state_dict(env.state_dict())
    assert other.s == env.s
    assert [other.step(a % 4) for a in range(10)] == [env.step(a % 4) for a in range(10)]
    assert other.reset() == env.reset()  # same generator: same random start
    with pytest.raises(ValueError, match=r"must be a state in \[0, 25\), got 30"):
        other.load_state_dict({**env.state_dict(), "s": 30})
