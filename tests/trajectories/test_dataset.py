"""rk.Dataset: validation naming the field and the index, episodes, sampling, .npz files."""

from __future__ import annotations

import os

import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk


def make_arrays(n=7, discrete=True):
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(n, 3)).astype(np.float32)
    nxt = rng.normal(size=(n, 3)).astype(np.float32)
    terminations = np.zeros(n, bool)
    truncations = np.zeros(n, bool)
    terminations[2] = True  # episode 0: rows 0-2 (terminated)
    truncations[4] = True  # episode 1: rows 3-4 (truncated); episode 2: rows 5-6 (unfinished)
    if discrete:
        actions, action_space = rng.integers(0, 2, n), gym.spaces.Discrete(2)
    else:
        actions = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
        action_space = gym.spaces.Box(-1.0, 1.0, (2,))
    return dict(
        observations=obs,
        actions=actions,
        rewards=np.arange(n, dtype=np.float32),
        terminations=terminations,
        truncations=truncations,
        next_observations=nxt,
        observation_space=gym.spaces.Box(-np.inf, np.inf, (3,)),
        action_space=action_space,
    )


def test_fields_dtypes_and_metadata():
    ds = rk.Dataset.from_arrays(
        **make_arrays(), env_spec={"id": "X-v0"}, policy_description="Rand", seed=3
    )
    assert len(ds) == 7
    assert ds.observations.dtype == np.float32 and ds.actions.dtype == np.int64
    assert ds.rewards.dtype == np.float32 and ds.terminations.dtype == bool
    assert (ds.env_spec, ds.policy_description, ds.seed) == ({"id": "X-v0"}, "Rand", 3)


def test_episodes_end_at_terminations_truncations_and_the_end():
    ds = rk.Dataset.from_arrays(**make_arrays())
    assert [len(e) for e in ds.episodes()] == [3, 2, 2]
    np.testing.assert_array_equal(ds.episode_returns(), [0 + 1 + 2, 3 + 4, 5 + 6])
    first = next(ds.episodes())
    np.testing.assert_array_equal(first.observations, ds.observations[:3])
    assert ds.n_episodes == 3


def test_sample_is_uniform_rows_of_the_generator_with_replay_keys():
    ds = rk.Dataset.from_arrays(**make_arrays(discrete=False))
    batch = ds.sample(5, np.random.default_rng(42))
    rows = np.random.default_rng(42).integers(0, len(ds), 5)
    np.testing.assert_array_equal(batch["indices"], rows)
    np.testing.assert_array_equal(batch["state"], ds.observations[rows])
    np.testing.assert_array_equal(batch["action"], ds.actions[rows])
    np.testing.assert_array_equal(batch["reward"], ds.rewards[rows])
    np.testing.assert_array_equal(batch["terminal"], ds.terminations[rows].astype(np.float32))
    np.testing.assert_array_equal(batch["next_state"], ds.next_observations[rows])
    assert batch["terminal"].dtype == np.float32 and batch["state"].dtype == np.float32


def test_sample_batch_larger_than_the_dataset_is_refused():
    ds = rk.Dataset.from_arrays(**make_arrays())
    with pytest.raises(ValueError, match="batch_size must be between 1 and the dataset's 7"):
        ds.sample(8, np.random.default_rng(0))


def test_sample_feeds_the_value_based_learners_conversion():
    from rlkit.learners.value_based.common import to_tensors

    ds = rk.Dataset.from_arrays(**make_arrays())
    import torch

    batch = to_tensors(ds.sample(4, np.random.default_rng(0)), 0.9, torch.device("cpu"))
    assert isinstance(batch, rk.Batch) and batch["state"].shape == (4, 3)


@pytest.mark.parametrize(
    ("field", "index", "value", "message"),
    [
        ("rewards", 4, np.nan, r"rewards\[4\] = .*nan.* not finite"),
        ("observations", 5, np.nan, r"observations\[5\] = .* not finite"),
        ("next_observations", 1, np.inf, r"next_observations\[1\] = .* not finite"),
        ("actions", 3, 2, r"actions\[3\] = 2 is outside the action space Discrete\(2\)"),
        ("actions", 6, -1, r"actions\[6\] = -1 is outside the action space"),
        ("terminations", 2, 3, r"terminations\[2\] = 3 is not a boolean"),
    ],
)
def test_bad_values_are_refused_naming_field_and_index(field, index, value, message):
    arrays = make_arrays()
    arrays[field] = arrays[field].astype(np.float64 if field != "terminations" else np.int64)
    arrays[field][index] = value
    with pytest.raises(ValueError, match=message):
        rk.Dataset.from_arrays(**arrays)


def test_continuous_action_outside_the_box_is_refused():
    arrays = make_arrays(discrete=False)
    arrays["actions"][2, 1] = 1.5
    with pytest.raises(ValueError, match=r"actions\[2\] = .*1\.5.* outside the action space Box"):
        rk.Dataset.from_arrays(**arrays)


def test_fields_of_different_lengths_are_refused_naming_them():
    arrays = make_arrays()
    arrays["truncations"] = arrays["truncations"][:-1]
    with pytest.raises(ValueError, match="truncations has 6 rows but observations has 7"):
        rk.Dataset.from_arrays(**arrays)


def test_empty_dataset_is_refused():
    arrays = {k: (v[:0] if isinstance(v, np.ndarray) else v) for k, v in make_arrays().items()}
    with pytest.raises(ValueError, match="the dataset is empty"):
        rk.Dataset.from_arrays(**arrays)


def test_observations_of_the_wrong_shape_are_refused():
    arrays = make_arrays()
    arrays["observations"] = arrays["observations"][:, :2]
    with pytest.raises(ValueError, match=r"observations has rows of shape \(2,\).*shape \(3,\)"):
        rk.Dataset.from_arrays(**arrays)


def test_non_integer_discrete_action_is_refused():
    arrays = make_arrays()
    arrays["actions"] = arrays["actions"].astype(np.float64)
    arrays["actions"][1] = 0.5
    with pytest.raises(ValueError, match=r"actions\[1\] = .*0\.5 is not a whole number"):
        rk.Dataset.from_arrays(**arrays)


@pytest.mark.parametrize("discrete", [True, False])
def test_npz_round_trip_is_identical(tmp_path, discrete):
    ds = rk.Dataset.from_arrays(
        **make_arrays(discrete=discrete), env_spec={"id": "E-v1", "max_episode_steps": 5},
        policy_description="RandomPolicy", seed=11,
    )  # fmt: skip
    ds.save(tmp_path / "d.npz")
    back = rk.Dataset.load(tmp_path / "d.npz")
    for field in ("observations", "actions", "rewards", "terminations", "truncations"):
        np.testing.assert_array_equal(getattr(back, field), getattr(ds, field))
        assert getattr(back, field).dtype == getattr(ds, field).dtype
    np.testing.assert_array_equal(back.next_observations, ds.next_observations)
    assert back.observation_space == ds.observation_space
    assert back.action_space == ds.action_space
    assert back.metadata() == ds.metadata()
    assert os.listdir(tmp_path) == ["d.npz"]  # no temporary file left behind


def test_npz_file_holds_no_pickles(tmp_path):
    rk.Dataset.from_arrays(**make_arrays()).save(tmp_path / "d.npz")
    with np.load(tmp_path / "d.npz", allow_pickle=False) as data:
        assert all(data[name].dtype != object for name in data.files)


def test_truncated_file_is_refused_and_nothing_changes(tmp_path):
    path = tmp_path / "d.npz"
    rk.Dataset.from_arrays(**make_arrays()).save(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(rk.DatasetError, match="d.npz.*truncated or corrupt"):
        rk.Dataset.load(path)
    assert path.read_bytes() == data[: len(data) // 2]


def test_corrupt_file_is_refused(tmp_path):
    path = tmp_path / "d.npz"
    path.write_bytes(b"not a zip at all" * 10)
    with pytest.raises(rk.DatasetError, match="truncated or corrupt"):
        rk.Dataset.load(path)


def test_stored_nan_reward_is_refused_at_load_naming_field_and_index(tmp_path):
    """A file edited (or written by another tool) with a nan reward is refused at load."""
    path = tmp_path / "d.npz"
    rk.Dataset.from_arrays(**make_arrays()).save(path)
    with np.load(path) as data:
        arrays = dict(data)
    arrays["rewards"][3] = np.nan
    np.savez(path, **arrays)
    with pytest.raises(rk.DatasetError, match=r"d.npz.*rewards\[3\] = .*nan"):
        rk.Dataset.load(path)


def test_file_missing_a_field_is_refused(tmp_path):
    path = tmp_path / "d.npz"
    np.savez(path, observations=np.zeros((2, 3)))
    with pytest.raises(rk.DatasetError, match="not an rlkit dataset file"):
        rk.Dataset.load(path)


def test_failed_save_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "d.npz"
    ds = rk.Dataset.from_arrays(**make_arrays())
    ds.save(path)
    before = path.read_bytes()

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", broken)
    with pytest.raises(OSError, match="disk full"):
        ds.save(path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["d.npz"]


def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="no dataset"):
        rk.Dataset.load(tmp_path / "nothing.npz")
