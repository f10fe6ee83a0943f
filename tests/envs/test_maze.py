import gymnasium as gym
import pytest

import rlkit as rk
from rlkit.envs.toy.maze import MazeEnv

UP, RIGHT, DOWN, LEFT = range(4)
IDS = ["rlkit/DynaMaze-v0", "rlkit/BlockingMaze-v0", "rlkit/ShortcutMaze-v0"]


@pytest.mark.parametrize("env_id", IDS)
def test_passes_gymnasium_env_checker(env_id, check_both):
    check_both(env_id)


@pytest.mark.parametrize(
    ("env_id", "before", "after"),
    [(IDS[0], 14, 14), (IDS[1], 10, 16), (IDS[2], 16, 10)],
)
def test_shortest_paths_of_the_book(env_id, before, after):
    env = gym.make(env_id).unwrapped
    assert rk.MazeEnv is MazeEnv
    assert env.shortest_path() == before
    if env.change_after is not None:
        env.walls = env.changed_walls
    assert env.shortest_path() == after


def test_dyna_maze_layout_and_rewards():
    env = MazeEnv()
    assert env.reset(seed=0) == (18, {})
    assert env.step(RIGHT)[0] == 19  # (2, 1)
    assert env.step(RIGHT)[0] == 19  # the wall at (2, 2)
    env.s = env.to_state(0, 6)
    assert env.step(RIGHT)[:3] == (6, 0.0, False)  # the wall at (0, 7)
    env.s = env.to_state(1, 8)
    assert env.step(UP)[:4] == (8, 1.0, True, False)
    env.s = env.to_state(0, 0)
    assert env.step(UP)[0] == 0 and env.step(LEFT)[0] == 0  # the edge


def test_the_blocking_maze_changes_after_1000_steps_across_episodes():
    env = MazeEnv("blocking", change_after=5)
    env.reset(seed=0)
    for _ in range(3):
        env.step(LEFT)
    env.reset()  # a new episode: the count goes on
    assert env.walls == env.initial_walls
    env.step(LEFT)
    env.step(LEFT)
    assert env.total_steps == 5 and env.walls == env.changed_walls
    assert env.shortest_path() == 16
    env.reset(seed=1)  # a new experiment
    assert env.total_steps == 0 and env.walls == env.initial_walls


def test_state_dict_round_trip():
    env = MazeEnv("shortcut", change_after=2)
    env.reset(seed=0)
    env.step(UP)
    env.step(RIGHT)
    state = env.state_dict()
    other = MazeEnv("shortcut", change_after=2)
    other.load_state_dict(state)
    assert other.s == env.s and other.walls == other.changed_walls and other.total_steps == 2


def test_render():
    env = MazeEnv(render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert text.splitlines()[2].startswith("x . #") and "G" in text


def test_bad_input():
    with pytest.raises(ValueError, match="layout must be one of"):
        MazeEnv("spiral")
    with pytest.raises(ValueError, match="does not change"):
        MazeEnv("dyna", change_after=10)
    with pytest.raises(ValueError, match="change_after must be a positive integer"):
        MazeEnv("blocking", change_after=0)
    env = MazeEnv()
    env.reset(seed=0)
    with pytest.raises(rk.InvalidActionError, match="MazeEnv: action 4 is outside"):
        env.step(4)
