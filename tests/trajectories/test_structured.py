"""Dict and Tuple observations in storage: dicts of arrays by key (never object arrays) in the
rollout and the replay buffer, their checkpoints, and the refusal of observations whose keys
are not the space's."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk
from rlkit.trajectories.structured import StructuredArray, structured

Box, Discrete = gym.spaces.Box, gym.spaces.Discrete
SPACE = gym.spaces.Dict({"pos": Box(-1, 1, (2,)), "cell": Discrete(5)})


def _obs(i: float):
    return {"pos": np.array([i, -i], np.float32), "cell": int(i) % 5}


def test_structured_checks_the_keys_and_names_them():
    out = structured("env", SPACE, _obs(1))
    assert list(out) == ["cell", "pos"] and out["cell"].dtype.kind == "i"
    with pytest.raises(ValueError, match=r"keys \['cell', 'position'\] differ from the Dict "
                       r"space's keys \['cell', 'pos'\] \(missing: \['pos'\], not in the space: "
                       r"\['position'\]\)"):  # fmt: skip
        structured("PPO", SPACE, {"cell": 1, "position": np.zeros(2)})
    with pytest.raises(TypeError, match=r"must be a dict with keys \['cell', 'pos'\]"):
        structured("PPO", SPACE, np.zeros(3))
    with pytest.raises(ValueError, match=r"Tuple space .* must be a tuple of 2 entries"):
        structured("PPO", gym.spaces.Tuple([Discrete(2), Discrete(2)]), (1,))


def test_structured_array_rows_by_key():
    store = StructuredArray.zeros(SPACE, (4,))
    assert store.shape == (4,) and len(store) == 4
    assert store.arrays["pos"].dtype == np.float32 and store.arrays["cell"].dtype == np.int64
    store[1] = _obs(3)
    store[2:4] = {"pos": np.ones((2, 2)), "cell": np.array([1, 2])}
    rows = store[np.array([1, 3])]
    assert rows["pos"].tolist() == [[3.0, -3.0], [1.0, 1.0]] and rows["cell"].tolist() == [3, 2]
    with pytest.raises(ValueError, match=r"keys \['pos'\] differ .*missing: \['cell'\]"):
        store[0] = {"pos": np.zeros(2)}
    image = Box(0, 255, (1, 3, 3), np.uint8)
    images = StructuredArray.zeros(gym.spaces.Dict({"im": image}), (2,))
    assert images.arrays["im"].dtype == np.uint8


def test_replay_holds_dict_observations_as_dicts_of_arrays_and_checkpoints_them():
    t = rk.CircularArraySARTTrajectory(4, SPACE, Discrete(2))
    for i in range(6):  # wraps around
        t.append(_obs(i), i % 2, float(i), False, False, _obs(i + 1))
    assert isinstance(t.state.arrays["pos"], np.ndarray) and t.state.arrays["pos"].shape == (4, 2)
    order = t.ordered_indices()
    assert t.state[order]["cell"].tolist() == [2, 3, 4, 0]
    assert t.next_state[order]["pos"][:, 0].tolist() == [3.0, 4.0, 5.0, 6.0]
    state = t.state_dict()
    assert set(state["state"]) == {"cell", "pos"} and state["state"]["pos"].dtype == np.float32
    state["state"]["pos"][0] = 99  # a copy, not a view
    assert t.state.arrays["pos"][0, 0] != 99
    copy = rk.CircularArraySARTTrajectory(4, SPACE, Discrete(2))
    copy.load_state_dict(t.state_dict())
    for name in ("state", "next_state"):
        for key in ("pos", "cell"):
            assert np.array_equal(getattr(copy, name).arrays[key], getattr(t, name).arrays[key])
    assert copy.head == t.head and np.array_equal(copy.reward, t.reward)
    bad = t.state_dict()
    bad["next_state"] = {"pos": bad["next_state"]["pos"]}
    with pytest.raises(ValueError, match=r"checkpoint observations have keys \['pos'\], this "
                       r"buffer \['cell', 'pos'\]"):  # fmt: skip
        copy.load_state_dict(bad)


def test_replay_samples_dict_batches():
    t = rk.CircularArraySARTTrajectory(10, SPACE, Discrete(2))
    for i in range(10):
        t.append(_obs(i), 0, 1.0, i == 9, False, _obs(i + 1))
    sample = rk.BatchSampler(4, seed=0).sample(t)
    assert sample["state"]["pos"].shape == (4, 2) and sample["next_state"]["cell"].shape == (4,)
    nstep = rk.NStepBatchSampler(4, 3, 0.9, seed=0).sample(t)
    assert nstep["next_state"]["pos"].shape == (4, 2)


def test_rollout_holds_dict_observations_and_checkpoints_them():
    t = rk.RolloutTrajectory(3, 2)
    for i in range(3):
        states = {"pos": np.full((2, 2), i, np.float32), "cell": np.array([i, i + 1])}
        t.write_action(states, np.zeros(2, int), {"value": np.ones(2)})
        t.write_outcome(np.ones(2), np.zeros(2, bool), np.zeros(2, bool), states)
    batch = t.batch()
    assert batch["state"]["pos"].shape == (3, 2, 2) and batch["state"]["cell"].tolist()[2] == [2, 3]
    copy = rk.RolloutTrajectory(3, 2)
    copy.load_state_dict(t.state_dict())
    assert np.array_equal(copy.batch()["final_state"]["cell"], batch["final_state"]["cell"])
    wrong = rk.RolloutTrajectory(4, 2)
    with pytest.raises(ValueError, match=r"trace 'state/pos' holds n_steps x n_envs = 3 x 2"):
        wrong.load_state_dict(t.state_dict())
