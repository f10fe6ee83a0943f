"""Legal-action masks from environments: sb3-contrib's ``action_masks()`` (preferred) or
``info["action_mask"]``, in ``GymEnv`` and ``VectorGymEnv`` on every backend; masks that are
refused (wrong length, no legal action) name the env and the step; the bundled
``rlkit/InvalidActionGrid-v0``."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import rlkit as rk
from rlkit.envs.toy.invalid_action_grid import InvalidActionGridEnv


class Counter(gym.Env):
    """Observation = step count; ``masks[t]`` is the mask after ``t`` steps from
    ``action_masks()``, ``info_masks[t]`` the one in ``info`` (None: no ``info`` mask)."""

    observation_space = gym.spaces.Box(0, 100, (1,), np.float32)
    action_space = gym.spaces.Discrete(3)

    def __init__(self, masks: list, info_masks: list | None = None, length: int = 4,
                 truncate: bool = False) -> None:  # fmt: skip
        self.masks, self.info_masks = masks, info_masks
        self.length, self.truncate = length, truncate
        self.t = 0

    def _info(self) -> dict[str, Any]:
        if self.info_masks is None:
            return {}
        return {"action_mask": np.array(self.info_masks[self.t], np.int8)}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, np.float32), self._info()

    def step(self, action):
        self.t += 1
        end = self.t >= self.length
        obs = np.full(1, self.t, np.float32)
        return obs, 1.0, end and not self.truncate, end and self.truncate, self._info()

    def action_masks(self) -> np.ndarray:
        return np.array(self.masks[self.t], bool)


class InfoOnly(Counter):
    """A ``Counter`` without ``action_masks()``: its masks are in ``info`` only."""

    action_masks = None


ALL = [1, 1, 1]


def test_action_masks_is_read_and_preferred_to_info():
    masks = [[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 1], [1, 0, 0]]
    env = rk.GymEnv(Counter(masks, info_masks=[ALL] * 5))
    env.reset()
    assert env.legal_action_mask.tolist() == [True, False, True]
    env.act(2)
    assert env.legal_action_mask.tolist() == [False, True, False]
    with pytest.raises(rk.InvalidActionError, match=r"illegal .* legal actions are \[1\] "
                       r"\(action_masks\(\)\)"):  # fmt: skip
        env.act(0)


def test_info_action_mask_is_the_fallback():
    env = rk.GymEnv(InfoOnly([ALL] * 5, info_masks=[[0, 1, 1]] * 5))
    env.reset()
    assert env.legal_action_mask.tolist() == [False, True, True]


def test_an_action_masks_method_under_wrappers_is_found():
    env = rk.GymEnv("rlkit/InvalidActionGrid-v0")  # TimeLimit, OrderEnforcing, ... wrappers
    env.reset(seed=0)
    assert env.legal_action_mask.tolist() == [False, False, True, False]
    assert env.legal_action_mask.tolist() == env.env.unwrapped.action_masks().tolist()


def test_use_masking_false_hides_the_masks():
    env = rk.GymEnv(Counter([[1, 0, 0]] * 5, info_masks=[[1, 0, 0]] * 5), use_masking=False)
    env.reset()
    assert env.legal_action_mask is None
    env.act(2)  # not refused: no mask
    assert env.legal_action_mask is None


def test_a_mask_of_the_wrong_length_is_refused_naming_the_env_and_the_step():
    env = rk.GymEnv(Counter([ALL, ALL, [1, 0], ALL, ALL]))
    env.reset()
    env.act(0)
    with pytest.raises(ValueError, match=r"GymEnv\(Counter\) after step 2 of the episode "
                       r"\(action_masks\(\)\): the legal-action mask has 2 entries, expected 3"):
        env.act(0)


def test_a_mask_of_the_wrong_length_at_reset_is_refused():
    env = rk.GymEnv(Counter([[1, 1, 1, 1]] * 5))
    with pytest.raises(ValueError, match=r"at reset of the episode .* 4 entries, expected 3"):
        env.reset()


def test_a_mask_with_no_legal_action_is_refused_naming_the_step():
    env = rk.GymEnv(Counter([ALL, [0, 0, 0], ALL, ALL, ALL]))
    env.reset()
    with pytest.raises(ValueError, match=r"after step 1 of the episode .* marks no action "
                       r"legal in a state that is not terminal"):
        env.act(1)


def test_a_terminal_state_may_have_no_legal_action():
    env = rk.GymEnv(Counter([ALL, ALL, ALL, ALL, [0, 0, 0]]))
    env.reset()
    for _ in range(4):
        env.act(0)
    assert env.is_terminated and not env.legal_action_mask.any()


def test_a_truncated_state_must_have_a_legal_action():
    env = rk.GymEnv(Counter([ALL, ALL, ALL, ALL, [0, 0, 0]], truncate=True))
    env.reset()
    for _ in range(3):
        env.act(0)
    with pytest.raises(ValueError, match="after step 4 of the episode"):
        env.act(0)


def test_masks_survive_a_checkpoint_of_the_env():
    a = rk.GymEnv("rlkit/InvalidActionGrid-v0", seed=0)
    a.reset()
    a.act(2)
    saved = a.state_dict()
    b = rk.GymEnv("rlkit/InvalidActionGrid-v0", seed=5)
    b.load_state_dict(saved)
    assert b.legal_action_mask.tolist() == a.legal_action_mask.tolist()
    assert b.episode_steps == a.episode_steps == 1


# ---- vector envs ----
BACKENDS = ["sync", "subprocess", "ray"]


@pytest.fixture(scope="module")
def ray_session():
    ray = pytest.importorskip("ray")  # installed in CI (the test extra): never skipped there
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()


def _masks_env(**kwargs: Any) -> gym.Env:
    return Counter([[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 1], [1, 0, 0]], **kwargs)


@pytest.mark.parametrize("backend", BACKENDS)
def test_vector_envs_prefer_action_masks_to_info_on_every_backend(backend, request):
    if backend == "ray":
        request.getfixturevalue("ray_session")
    both = [lambda: _masks_env(info_masks=[ALL] * 5), lambda: InfoOnly([ALL] * 5, [[0, 1, 1]] * 5)]
    env = rk.VectorGymEnv(both, backend=backend, seed=0)
    try:
        env.reset()
        assert env.legal_action_mask.tolist() == [[True, False, True], [False, True, True]]
        env.act([0, 1])
        assert env.legal_action_mask.tolist() == [[False, True, False], [False, True, True]]
    finally:
        env.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_vector_masks_and_final_masks_on_every_backend(backend, request):
    if backend == "ray":
        request.getfixturevalue("ray_session")
    env = rk.VectorGymEnv(
        [_masks_env, lambda: _masks_env(truncate=True, length=2)], backend=backend, seed=0
    )
    try:
        env.reset()
        assert env.legal_action_mask.tolist() == [[True, False, True]] * 2
        env.act([0, 0])
        assert env.legal_action_mask.tolist() == [[False, True, False]] * 2
        env.act([1, 1])  # sub-env 1 is truncated after 2 steps: reset, its final mask kept
        assert env.is_truncated.tolist() == [False, True]
        assert env.legal_action_mask.tolist() == [[True, True, False], [True, False, True]]
        assert env.final_legal_action_mask.tolist() == [[True, True, False]] * 2
    finally:
        env.close()


def test_vector_use_masking_false_hides_the_masks():
    env = rk.VectorGymEnv("rlkit/InvalidActionGrid-v0", 2, seed=0, use_masking=False)
    env.reset()
    env.act([0, 0])  # illegal moves: wasted steps, not refused
    assert env.legal_action_mask is None and env.final_legal_action_mask is None
    assert env.reward.tolist() == [-0.11, -0.11]
    env.close()


def test_a_vector_sub_env_mask_with_no_legal_action_is_refused_naming_it_and_the_step():
    env = rk.VectorGymEnv(
        [_masks_env, lambda: Counter([ALL, ALL, [0, 0, 0], ALL, ALL])], seed=0
    )
    env.reset()
    env.act([0, 0])
    with pytest.raises(ValueError, match=r"sub-env 1 after step 2: the legal-action mask "
                       r"marks no action legal"):
        env.act([1, 1])
    env.close()


def test_a_vector_mask_of_the_wrong_length_is_refused_naming_the_step():
    env = rk.VectorGymEnv([lambda: Counter([[1, 1]] * 5)] * 2, seed=0)
    with pytest.raises(ValueError, match=r"sub-env 0 at reset: the legal-action mask has 2 "
                       r"entries, expected 3"):
        env.reset()
    env.close()


def test_vector_masks_survive_a_checkpoint():
    a = rk.VectorGymEnv("rlkit/InvalidActionGrid-v0", 2, seed=0)
    a.reset()
    a.act([2, 2])
    b = rk.VectorGymEnv("rlkit/InvalidActionGrid-v0", 2, seed=3)
    b.load_state_dict(a.state_dict())
    assert np.array_equal(a.legal_action_mask, b.legal_action_mask)
    assert np.array_equal(a.final_legal_action_mask, b.final_legal_action_mask)
    assert a.steps == b.steps == 1
    a.close()
    b.close()


# ---- the bundled masked environment ----
def test_invalid_action_grid_passes_gymnasiums_checker_and_rlkits():
    check_env(gym.make("rlkit/InvalidActionGrid-v0").unwrapped, skip_render_check=True)
    report = rk.check_env("rlkit/InvalidActionGrid-v0")
    assert report.env == "rlkit/InvalidActionGrid-v0"


def test_invalid_action_grid_dynamics():
    env = InvalidActionGridEnv()
    obs, info = env.reset(seed=0)
    assert obs.shape == (49,) and obs[0] == 1.0 and info["action_mask"].tolist() == [0, 0, 1, 0]
    masks = env._masks
    assert np.mean([m.sum() for cell, m in masks.items() if not env.walls[cell]]) == 2.0
    _, reward, terminated, truncated, _ = env.step(1)  # south: a wall
    assert (reward, terminated, truncated) == (-0.11, False, False) and env.cell == (0, 0)
    _, reward, *_ = env.step(2)  # east: a valid move
    assert reward == -0.01 and env.cell == (0, 1)
    with pytest.raises(rk.InvalidActionError, match="outside the action space"):
        env.step(4)


def test_invalid_action_grid_shortest_path_gives_the_best_return():
    path = [2, 1, 1, 3, 1, 1, 2, 2, 1, 1, 2, 2, 2, 2]  # 14 moves (breadth-first search)
    env = rk.GymEnv("rlkit/InvalidActionGrid-v0", seed=0)
    env.reset()
    total = 0.0
    for action in path:
        env.act(action)  # refused if illegal
        total += env.reward
    assert env.is_terminated and total == pytest.approx(0.86)
