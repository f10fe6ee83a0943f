from collections import Counter, deque

import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk
from rlkit.envs.toy.windy_grid_world import WindyGridWorldEnv

ENV_ID = "rlkit/WindyGridWorld-v0"
UP, RIGHT, DOWN, LEFT = range(4)
CONFIGS = [
    {},
    {"king_moves": True},
    {"stochastic_wind": True},
    {"king_moves": True, "stay_action": True, "stochastic_wind": True},
]


@pytest.mark.parametrize("kwargs", CONFIGS)
def test_passes_gymnasium_env_checker(kwargs, check_both):
    check_both(ENV_ID, **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "n_actions"),
    [({}, 4), ({"king_moves": True}, 8), ({"stay_action": True}, 5),
     ({"king_moves": True, "stay_action": True}, 9)],
)  # fmt: skip
def test_spaces(kwargs, n_actions):
    env = WindyGridWorldEnv(**kwargs)
    assert env.observation_space == gym.spaces.Discrete(70)
    assert env.action_space == gym.spaces.Discrete(n_actions)
    assert env.n_states == 70 and env.n_actions == n_actions
    assert len(env.action_names) == n_actions


def test_public_name_and_layout():
    assert rk.WindyGridWorldEnv is WindyGridWorldEnv
    env = gym.make(ENV_ID).unwrapped
    assert env.wind == (0, 0, 0, 1, 1, 1, 2, 2, 1, 0)
    assert env.start_state == 30 == env.to_state(3, 0)
    assert env.goal_state == 37 == env.to_state(3, 7)
    assert env.to_cell(37) == (3, 7)
    assert env.reset(seed=0) == (30, {})


def walk(env, actions):
    return [env.step(a)[0] for a in actions]


def test_the_wind_pushes_up_by_the_strength_of_the_column_moved_from():
    env = WindyGridWorldEnv()
    env.reset(seed=0)
    cells = [env.to_cell(s) for s in walk(env, [RIGHT] * 9)]
    # columns 0..2 calm, 3..5 push 1, 6..7 push 2, 8 pushes 1; clipped at the top row
    assert cells == [(3, 1), (3, 2), (3, 3), (2, 4), (1, 5), (0, 6), (0, 7), (0, 8), (0, 9)]
    cells = [env.to_cell(s) for s in walk(env, [DOWN] * 4 + [LEFT] * 2)]
    assert cells == [(1, 9), (2, 9), (3, 9), (4, 9), (4, 8), (3, 7)]
    assert env.s == env.goal_state


def test_reward_is_minus_one_per_step_until_the_goal():
    env = WindyGridWorldEnv()
    env.reset(seed=0)
    path = [RIGHT] * 9 + [DOWN] * 4 + [LEFT] * 2
    results = [env.step(a)[1:4] for a in path]
    assert results[:-1] == [(-1.0, False, False)] * (len(path) - 1)
    assert results[-1] == (-1.0, True, False)


def test_moves_off_the_grid_are_clipped():
    env = WindyGridWorldEnv()
    env.reset(seed=0)
    assert env.step(LEFT)[0] == 30
    env.s = env.to_state(6, 0)
    assert env.step(DOWN)[0] == env.to_state(6, 0)
    env.s = env.to_state(0, 7)
    assert env.step(UP)[0] == env.to_state(0, 7)


def shortest_path(env):
    """Breadth-first search on the deterministic model P."""
    dist, queue = {env.start_state: 0}, deque([env.start_state])
    while queue:
        s = queue.popleft()
        for transitions in env.P[s].values():
            ((_, nxt, _, _),) = transitions
            if nxt not in dist:
                dist[nxt] = dist[s] + 1
                queue.append(nxt)
    return dist[env.goal_state]


@pytest.mark.parametrize(
    ("kwargs", "steps"),
    [({}, 15), ({"king_moves": True}, 7), ({"king_moves": True, "stay_action": True}, 7)],
)
def test_shortest_episode_lengths_of_the_book(kwargs, steps):
    # Example 6.5: 15 steps with the four moves; Exercise 6.9: 7 with king's moves
    assert shortest_path(WindyGridWorldEnv(**kwargs)) == steps


@pytest.mark.parametrize("kwargs", CONFIGS)
def test_model_is_a_proper_distribution_and_matches_step(kwargs):
    env = WindyGridWorldEnv(**kwargs)
    env.reset(seed=0)
    assert sorted(env.P) == list(range(70))
    for s in range(70):
        assert sorted(env.P[s]) == list(range(env.n_actions))
        for a, transitions in env.P[s].items():
            assert sum(p for p, *_ in transitions) == pytest.approx(1.0, abs=1e-12)
            outcomes = {nxt: (r, done) for _, nxt, r, done in transitions}
            assert len(outcomes) == len(transitions)  # coinciding outcomes are merged
            env.s = s
            nxt, reward, terminated, truncated, info = env.step(a)
            assert outcomes[nxt] == (reward, terminated) and truncated is False
            if s == env.goal_state:
                assert transitions == [(1.0, s, 0.0, True)]
            else:
                assert reward == -1.0 and terminated == (nxt == env.goal_state)


def test_deterministic_wind_has_single_outcomes():
    env = WindyGridWorldEnv(king_moves=True)
    assert all(len(t) == 1 for row in env.P.values() for t in row.values())


def test_stochastic_wind_of_exercise_6_10():
    env = WindyGridWorldEnv(stochastic_wind=True)
    right_of_goal = env.to_state(3, 8)
    # the book's example: one right of the goal, moving left: goal, one or two cells above it
    expected = {env.to_state(3, 7), env.to_state(2, 7), env.to_state(1, 7)}
    assert {nxt for _, nxt, _, _ in env.P[right_of_goal][LEFT]} == expected
    env.reset(seed=3)
    counts = Counter()
    n = 3000
    for _ in range(n):
        env.s = right_of_goal
        counts[env.step(LEFT)[0]] += 1
    assert set(counts) == expected
    for state in expected:  # each 1/3, within 4 standard errors
        assert abs(counts[state] / n - 1 / 3) < 4 * np.sqrt(2 / 9 / n)
    # calm columns stay deterministic
    assert env.P[env.to_state(3, 0)][RIGHT] == [(1.0, env.to_state(3, 1), -1.0, False)]
    # merged outcomes at the top edge: wind 2 +- 1 from row 1 gives row 0 twice
    top = dict((nxt, p) for p, nxt, _, _ in env.P[env.to_state(1, 6)][UP])
    assert top == pytest.approx({env.to_state(0, 6): 1.0})


def test_same_seed_gives_identical_stochastic_episodes():
    def episode(seed):
        env = gym.make(ENV_ID, stochastic_wind=True, king_moves=True)
        env.reset(seed=seed)
        env.action_space.seed(seed)
        return [env.step(env.action_space.sample())[0] for _ in range(200)]

    assert episode(1) == episode(1)
    assert episode(1) != episode(2)


@pytest.mark.parametrize("action", [4, -1, 1.5, None, False])
def test_invalid_actions_raise_with_the_value(action):
    env = WindyGridWorldEnv()
    env.reset(seed=0)
    with pytest.raises(rk.InvalidActionError, match=rf"action {action!r} is outside"):
        env.step(action)
    assert env.s == 30


def test_bad_render_mode():
    with pytest.raises(ValueError, match="render_mode must be None or one of"):
        WindyGridWorldEnv(render_mode="human")


def test_ansi_render():
    env = gym.make(ENV_ID, render_mode="ansi")
    env.reset(seed=0)
    lines = env.render().splitlines()
    assert lines[3] == "x . . . . . . G . ."
    assert lines[-1] == "0 0 0 1 1 1 2 2 1 0"
    env.step(RIGHT)
    lines = env.render().splitlines()
    assert lines[3] == "S x . . . . . G . ." and lines[-1] == "(right)"


def test_state_dict_round_trip():
    env = WindyGridWorldEnv(stochastic_wind=True)
    env.reset(seed=8)
    walk(env, [RIGHT] * 5)
    other = WindyGridWorldEnv(stochastic_wind=True)
    other.load_state_dict(env.state_dict())
    assert walk(other, [UP, RIGHT, RIGHT, DOWN] * 5) == walk(env, [UP, RIGHT, RIGHT, DOWN] * 5)
    with pytest.raises(ValueError, match="state 70 is outside 0..69"):
        other.load_state_dict({**env.state_dict(), "s": 70})
