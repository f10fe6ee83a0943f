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


# ---- the Minari format ----
def continuous_episodes(n=9):
    """Arrays of a recorded run: inside an episode, next_observations[t] == observations[t+1]."""
    rng = np.random.default_rng(1)
    flat = rng.normal(size=(n + 1, 3)).astype(np.float32)
    arrays = make_arrays(n, discrete=False)
    arrays["observations"], arrays["next_observations"] = flat[:-1].copy(), flat[1:].copy()
    arrays["next_observations"][2] = 7.0  # the final observation of episode 0
    arrays["next_observations"][4] = -7.0  # the final observation of episode 1
    return arrays


def test_minari_and_npz_round_trips_give_identical_arrays(tmp_path):
    pytest.importorskip("minari")
    ds = rk.Dataset.from_arrays(
        **continuous_episodes(), env_spec={"id": "Pendulum-v1"}, policy_description="SAC(...)",
        seed=5,
    )  # fmt: skip
    ds.save(tmp_path / "d.npz")
    ds.save(tmp_path / "d_minari", format="minari")
    from_npz = rk.Dataset.load(tmp_path / "d.npz")
    from_minari = rk.Dataset.load(tmp_path / "d_minari")
    for field in ("observations", "actions", "rewards", "terminations", "truncations",
                  "next_observations"):  # fmt: skip
        a, b = getattr(from_npz, field), getattr(from_minari, field)
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, getattr(ds, field))
        assert a.dtype == b.dtype
    assert from_minari.metadata() == from_npz.metadata() == ds.metadata()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.npz", "d_minari"]


def test_minari_directory_is_read_by_minari_itself(tmp_path):
    minari = pytest.importorskip("minari")
    ds = rk.Dataset.from_arrays(**continuous_episodes())
    ds.save(tmp_path / "m", format="minari")
    read = minari.MinariDataset(tmp_path / "m" / "data")
    assert read.total_episodes == 3 and read.total_steps == len(ds)
    episodes = list(read.iterate_episodes())
    np.testing.assert_array_equal(episodes[0].observations[:3], ds.observations[:3])
    np.testing.assert_array_equal(episodes[0].observations[3], ds.next_observations[2])
    assert episodes[0].terminations.tolist() == [False, False, True]
    assert episodes[1].truncations.tolist() == [False, True]


def test_a_minari_dataset_made_by_minari_loads(tmp_path, monkeypatch):
    """A dataset made with Minari's own writer (create_dataset_from_buffers, the DataCollector's
    storage) and no rlkit metadata."""
    minari = pytest.importorskip("minari")
    from minari.data_collector import EpisodeBuffer

    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path))
    env = gym.make("CartPole-v1")
    obs = [env.reset(seed=0)[0]]
    actions, rewards, terms, truncs = [], [], [], []
    for t in range(30):
        o, r, term, trunc, _ = env.step(t % 2)
        obs.append(o), actions.append(t % 2), rewards.append(r), terms.append(term)
        truncs.append(trunc or t == 29)
        if term:
            break
    buffer = EpisodeBuffer(observations=np.array(obs), actions=np.array(actions),
                           rewards=np.array(rewards), terminations=np.array(terms),
                           truncations=np.array(truncs), infos={})  # fmt: skip
    with pytest.warns(UserWarning):
        minari.create_dataset_from_buffers(
            "cartpole/test-v0", [buffer], env="CartPole-v1", algorithm_name="alternate"
        )
    ds = rk.Dataset.load(tmp_path / "cartpole" / "test-v0")
    assert len(ds) == len(actions) and ds.action_space == gym.spaces.Discrete(2)
    np.testing.assert_array_equal(ds.observations, np.array(obs[:-1]))
    np.testing.assert_array_equal(ds.next_observations, np.array(obs[1:]))
    assert ds.policy_description == "alternate" and ds.env_spec["id"] == "CartPole-v1"


def test_corrupt_minari_file_is_refused(tmp_path):
    pytest.importorskip("minari")
    rk.Dataset.from_arrays(**continuous_episodes()).save(tmp_path / "m", format="minari")
    hdf5 = tmp_path / "m" / "data" / "main_data.hdf5"
    hdf5.write_bytes(hdf5.read_bytes()[:200])
    with pytest.raises(rk.DatasetError, match="truncated or corrupt"):
        rk.Dataset.load(tmp_path / "m")


def test_directory_that_is_not_a_minari_dataset_is_refused(tmp_path):
    with pytest.raises(rk.DatasetError, match="not a Minari dataset"):
        rk.Dataset.load(tmp_path)


def test_minari_needs_one_observation_sequence_per_episode(tmp_path):
    pytest.importorskip("minari")
    arrays = continuous_episodes()
    arrays["next_observations"][0] += 1.0
    with pytest.raises(ValueError, match=r"next_observations\[0\] differs from observations\[1\]"):
        rk.Dataset.from_arrays(**arrays).save(tmp_path / "m", format="minari")
    assert list(tmp_path.iterdir()) == []


def test_minari_save_replaces_an_existing_dataset_whole(tmp_path):
    pytest.importorskip("minari")
    arrays = continuous_episodes()
    rk.Dataset.from_arrays(**arrays).save(tmp_path / "m", format="minari")
    arrays["rewards"] = arrays["rewards"] + 100
    rk.Dataset.from_arrays(**arrays).save(tmp_path / "m", format="minari")
    np.testing.assert_array_equal(rk.Dataset.load(tmp_path / "m").rewards, arrays["rewards"])
    assert [p.name for p in tmp_path.iterdir()] == ["m"]


def test_unknown_format_is_refused(tmp_path):
    with pytest.raises(ValueError, match="format must be 'npz' or 'minari', got 'hdf'"):
        rk.Dataset.from_arrays(**make_arrays()).save(tmp_path / "x", format="hdf")
