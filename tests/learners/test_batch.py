"""rk.Batch: one batch type for every deep learner (Dict observations, masks, sequences)."""

import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.learners.batch import flatten


def dict_batch(n=6):
    return rk.Batch(
        state={"pos": np.arange(n, dtype=np.float32), "goal": np.ones((n, 2), np.float32)},
        action=np.arange(n),
        legal_action_mask=np.ones((n, 3), bool),
        discount=0.99,
        weights=None,
    )


def test_rows_split_and_minibatches_go_through_dict_observations():
    batch = dict_batch()
    assert len(batch) == 6
    part = batch.rows(np.array([5, 0]))
    assert part["state"]["pos"].tolist() == [5.0, 0.0] and part["state"]["goal"].shape == (2, 2)
    assert part["discount"] == 0.99 and part["weights"] is None  # per batch, not per row
    assert [len(b) for b in batch.split(4)] == [4, 2]
    epoch = batch.minibatches(4, np.random.default_rng(0))
    assert sorted(np.concatenate([b["action"] for b in epoch]).tolist()) == list(range(6))
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    assert batch.minibatches(6, rng) == [batch] and rng.bit_generator.state == state


def test_torch_rows_move_the_index_to_the_tensors():
    batch = rk.Batch(state=torch.arange(4.0), action=torch.tensor([0, 1, 0, 1]))
    assert batch.rows(np.array([3, 2]))["state"].tolist() == [3.0, 2.0]


def test_flatten_keeps_a_dict_observation_a_dict_of_float_tensors():
    rollout = rk.Batch(state={"pos": np.zeros((3, 2), np.int64)}, action=np.zeros((3, 2)))
    flat = flatten(rollout, torch.device("cpu"))
    assert flat["state"]["pos"].dtype == torch.float32 and flat["state"]["pos"].shape == (6,)


def test_sequences_cut_at_episode_starts_and_pad():
    starts = np.array([[True, True], [False, False], [False, True], [True, False]])
    batch = rk.Batch(x=np.arange(8.0).reshape(4, 2), episode_start=starts)
    seq = batch.sequences(3)
    assert seq["mask"].sum() == 8  # every step once
    assert seq["x"].shape == (3, seq["mask"].shape[1])
    with pytest.raises(ValueError, match="sequences need 'episode_start' of shape"):
        rk.Batch(x=np.zeros(3), episode_start=np.zeros(3, bool)).sequences(2)


def test_a_missing_key_names_it_and_the_keys_there_are():
    batch = dict_batch()
    batch.owner = "PPO: the batch after postprocess_fn"
    with pytest.raises(KeyError, match=r"PPO: the batch after postprocess_fn has no key 'returns'"):
        batch["returns"]
