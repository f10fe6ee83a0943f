"""rk.Dataset of Dict and Tuple observations: dicts of arrays by key, checked against the space,
round-tripped through .npz and Minari files, sampled by key."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk
from rlkit.trajectories.dataset import DatasetError
from rlkit.trajectories.dataset_structured import leaf_items

SPACE = gym.spaces.Dict({
    "pole": gym.spaces.Box(-5, 5, (2,), np.float32),
    "cart": gym.spaces.Box(-5, 5, (2,), np.float32),
    "frame": gym.spaces.Box(0, 255, (1, 3, 3), np.uint8),
    "extra": gym.spaces.Tuple([
        gym.spaces.Discrete(3),
        gym.spaces.Dict({"bits": gym.spaces.MultiBinary(2)}),
    ]),
})  # fmt: skip
N = 9


def _observations(rng: np.random.Generator, n: int) -> dict:
    return {
        "pole": rng.normal(size=(n, 2)).astype(np.float32),
        "cart": rng.normal(size=(n, 2)).astype(np.float32),
        "frame": rng.integers(0, 256, (n, 1, 3, 3), dtype=np.uint8),
        "extra": (rng.integers(0, 3, n), {"bits": rng.integers(0, 2, (n, 2))}),
    }


def _slice(obs: dict, rows: slice) -> dict:
    return {
        "pole": obs["pole"][rows],
        "cart": obs["cart"][rows],
        "frame": obs["frame"][rows],
        "extra": (obs["extra"][0][rows], {"bits": obs["extra"][1]["bits"][rows]}),
    }


def _dataset(**changes) -> rk.Dataset:
    full = _observations(np.random.default_rng(0), N + 1)
    fields = {
        "observations": _slice(full, slice(0, N)),
        "next_observations": _slice(full, slice(1, N + 1)),
        "actions": np.arange(N) % 2,
        "rewards": np.linspace(0.0, 1.0, N),
        "terminations": np.arange(N) == 4,
        "truncations": np.arange(N) == N - 1,
        "observation_space": SPACE,
        "action_space": gym.spaces.Discrete(2),
        "seed": 3,
    }
    return rk.Dataset.from_arrays(**{**fields, **changes})


def _assert_same_leaves(a, b) -> None:
    la, lb = leaf_items(a), leaf_items(b)
    assert [p for p, _ in la] == [p for p, _ in lb]
    for (path, x), (_, y) in zip(la, lb, strict=True):
        assert x.dtype == y.dtype and np.array_equal(x, y), path


def test_dict_observations_are_dicts_of_arrays_by_key_laid_out_as_replay_does():
    ds = _dataset()
    obs = ds.observations
    assert list(obs) == ["cart", "extra", "frame", "pole"]  # the space's (sorted) order
    assert obs["pole"].dtype == np.float32 and obs["frame"].dtype == np.uint8
    assert list(obs["extra"]) == [0, 1]  # a Tuple's entries by position
    assert obs["extra"][0].dtype == np.int64 and obs["extra"][1]["bits"].dtype == np.int8
    assert len(ds) == N and ds.n_episodes == 2
    first = next(ds.episodes())
    assert len(first) == 5 and first.observations["pole"].shape == (5, 2)
    assert np.shares_memory(first.observations["pole"], obs["pole"])  # views


def test_sample_draws_the_same_rows_of_every_key():
    ds = _dataset()
    batch = ds.sample(6, np.random.default_rng(1))
    rows = batch["indices"]
    for path, array in leaf_items(batch["state"]):
        source = ds.observations
        for key in path:
            source = source[key]
        assert np.array_equal(array, source[rows])
    assert np.array_equal(batch["next_state"]["cart"], ds.next_observations["cart"][rows])


@pytest.mark.parametrize("fmt", ["npz", "minari"])
def test_dict_datasets_round_trip_through_files(tmp_path, fmt):
    if fmt == "minari":
        pytest.importorskip("minari")
    ds = _dataset()
    path = tmp_path / ("d.npz" if fmt == "npz" else "d")
    ds.save(path, format=fmt)
    back = rk.Dataset.load(path)
    assert back.observation_space == SPACE and back.action_space == ds.action_space
    _assert_same_leaves(back.observations, ds.observations)
    _assert_same_leaves(back.next_observations, ds.next_observations)
    for name in ("actions", "rewards", "terminations", "truncations"):
        assert np.array_equal(getattr(back, name), getattr(ds, name))
    assert back.seed == 3


def test_a_recorded_dict_run_round_trips_through_minari(tmp_path):
    pytest.importorskip("minari")
    from observation_envs import DictCartPole

    recorder = rk.DatasetRecorder(tmp_path / "rec", format="minari", seed=0)
    rk.run(rk.RandomPolicy(seed=0), rk.GymEnv(DictCartPole(), seed=0),
           rk.StopAfterNEpisodes(2), recorder)  # fmt: skip
    ds = rk.Dataset.load(tmp_path / "rec")
    assert set(ds.observations) == {"cart", "pole"} and ds.n_episodes == 2
    flat = rk.DatasetRecorder(tmp_path / "flat.npz", seed=0)
    rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
           rk.StopAfterNEpisodes(2), flat)  # fmt: skip
    joined = np.concatenate([ds.observations["cart"], ds.observations["pole"]], axis=1)
    assert np.array_equal(joined, rk.Dataset.load(tmp_path / "flat.npz").observations)


def test_observation_keys_that_differ_from_the_space_are_refused_naming_them():
    obs = _dataset().observations
    wrong = {k: v for k, v in obs.items() if k != "pole"} | {"pole_angle": obs["pole"]}
    with pytest.raises(ValueError, match=r"Dataset: observations: the observation's keys "
                       r"\['cart', 'extra', 'frame', 'pole_angle'\] differ from the Dict space's "
                       r"keys \['cart', 'extra', 'frame', 'pole'\] \(missing: \['pole'\], not in "
                       r"the space: \['pole_angle'\]\)"):  # fmt: skip
        _dataset(observations=wrong)
    with pytest.raises(ValueError, match=r"next_observations: the observation's keys"):
        _dataset(next_observations={k: v for k, v in obs.items() if k != "cart"})


def test_bad_rows_of_one_key_are_refused_naming_the_key():
    obs = _dataset().observations
    with pytest.raises(ValueError, match=r"Dataset: observations\['pole'\] has rows of shape "
                       r"\(3,\), but its space .* has shape \(2,\)"):  # fmt: skip
        _dataset(observations={**obs, "pole": np.zeros((N, 3))})
    with pytest.raises(ValueError, match=r"keys of observations have different numbers of rows"):
        _dataset(observations={**obs, "pole": np.zeros((N - 1, 2))})
    with pytest.raises(ValueError, match=r"observations has 9 rows but actions has|actions has "
                       r"8 rows but observations has 9"):  # fmt: skip
        _dataset(actions=np.zeros(N - 1, np.int64))
    bad = obs["cart"].copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"Dataset: observations\['cart'\]\[2\] = \[.*nan\] is "
                       r"not finite"):  # fmt: skip
        _dataset(observations={**obs, "cart": bad})


def test_a_file_missing_one_key_is_refused(tmp_path):
    path = tmp_path / "d.npz"
    _dataset().save(path)
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files if k != "observations/2"}
    np.savez(tmp_path / "broken.npz", **arrays)
    with pytest.raises(DatasetError, match=r"not an rlkit dataset file: no \['observations/2'\]"):
        rk.Dataset.load(tmp_path / "broken.npz")


@pytest.mark.parametrize("wrapper", ["DictCartPole", "TupleCartPole"])
def test_a_recording_of_structured_observations_resumes_from_a_checkpoint(tmp_path, wrapper):
    import observation_envs

    def make():
        env = rk.VectorGymEnv([getattr(observation_envs, wrapper)] * 2, seed=0)
        return env, rk.RandomPolicy(seed=0)

    def hooks():
        return rk.DatasetRecorder(tmp_path / "d.npz") + rk.CheckpointHook(
            tmp_path / "ck", every_n_steps=50
        )

    env, policy = make()
    rk.run(policy, env, rk.StopAfterNSteps(100), rk.DatasetRecorder(tmp_path / "whole.npz"))
    env, policy = make()  # stopped at 50 steps (a killed run's last checkpoint) ...
    rk.run(policy, env, rk.StopAfterNSteps(50), hooks())
    env, policy = make()  # ... and resumed in fresh objects
    rk.run(policy, env, rk.StopAfterNSteps(100), hooks(), resume_from=tmp_path / "ck")
    whole, resumed = rk.Dataset.load(tmp_path / "whole.npz"), rk.Dataset.load(tmp_path / "d.npz")
    assert len(resumed) == len(whole) == 100
    _assert_same_leaves(resumed.observations, whole.observations)
    _assert_same_leaves(resumed.next_observations, whole.next_observations)
    assert np.array_equal(resumed.actions, whole.actions)


def test_a_dict_dataset_is_format_version_2_and_a_box_one_stays_version_1():
    assert _dataset().metadata()["version"] == 2  # an older rlkit says to upgrade
    box = rk.Dataset.from_arrays(
        observations=np.zeros((2, 1)), actions=[0, 1], rewards=[0.0, 1.0],
        terminations=[False, True], truncations=[False, False],
        next_observations=np.ones((2, 1)), observation_space=gym.spaces.Box(-1, 1, (1,)),
        action_space=gym.spaces.Discrete(2),
    )  # fmt: skip
    assert box.metadata()["version"] == 1
