"""MuJoCo physics in environment checkpoints (rlkit/envs/mujoco_state.py): a ``GymEnv`` or a
``VectorGymEnv`` over a MuJoCo task, saved in the middle of an episode and loaded into an
environment built the same way, repeats the saved run's next steps bit for bit; a state of
another model is refused before anything changes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import rlkit as rk

pytest.importorskip("mujoco")
warnings.filterwarnings("ignore", message=".*settotalmass.*")


def actions(env, n: int, n_envs: tuple[int, ...] = ()) -> np.ndarray:
    shape = (n, *n_envs, *env.action_space.shape)
    return np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)


def steps(env, acts) -> list:
    out = []
    for a in acts:
        env.act(a)
        out.append((np.copy(env.state), np.copy(env.reward)))
    return out


@pytest.mark.parametrize("env_id", ["Ant-v5", "HalfCheetah-v5"])
def test_a_mujoco_gym_env_resumed_mid_episode_repeats_its_steps(env_id):
    env = rk.GymEnv(env_id, seed=0)
    env.reset()
    acts = actions(env, 60)
    steps(env, acts[:25])
    saved = env.state_dict()
    reference = steps(env, acts[25:])
    other = rk.GymEnv(env_id, seed=7)  # another episode, further on
    other.reset()
    steps(other, acts[:9])
    other.load_state_dict(saved)
    again = steps(other, acts[25:])
    pairs = zip(reference, again, strict=True)
    assert all(np.array_equal(a[0], b[0]) and a[1] == b[1] for a, b in pairs)
    assert "physics" in saved["layers"][-1]


@pytest.mark.parametrize("backend", ["sync", "subprocess"])
def test_a_mujoco_vector_env_resumed_mid_episode_repeats_its_steps(backend):
    env = rk.VectorGymEnv("Ant-v5", 2, seed=0, backend=backend)
    env.reset()
    acts = actions(env, 40, (2,))
    steps(env, acts[:15])
    saved = env.state_dict()
    reference = steps(env, acts[15:])
    other = rk.VectorGymEnv("Ant-v5", 2, seed=3, backend=backend)
    other.reset()
    other.load_state_dict(saved)
    again = steps(other, acts[15:])
    env.close(), other.close()
    assert all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
               for a, b in zip(reference, again, strict=True))  # fmt: skip


def test_the_physics_of_another_model_is_refused_and_nothing_changes():
    cheetah, hopper = rk.GymEnv("HalfCheetah-v5", seed=0), rk.GymEnv("Hopper-v5", seed=0)
    cheetah.reset(), hopper.reset()
    saved = cheetah.state_dict()
    saved["layers"] = [  # Hopper's wrapper chain, HalfCheetah's physics
        {**mine, "physics": theirs.get("physics")} if "physics" in theirs else mine
        for mine, theirs in zip(hopper.state_dict()["layers"], saved["layers"], strict=True)
    ]
    before = hopper.state_dict()
    with pytest.raises(ValueError, match=r"Hopper.*MuJoCo state does not fit this model "
                       r"\(an integration state of shape \(\d+,\), expected \(\d+,\)"):  # fmt: skip
        hopper.load_state_dict(saved)
    after = hopper.state_dict()
    physics = before["layers"][-1]["physics"]
    assert np.array_equal(physics["integration"], after["layers"][-1]["physics"]["integration"])
