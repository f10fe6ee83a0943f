import numpy as np
import pytest

from rlkit.trajectories.rollout import RolloutTrajectory


def _step(t, k, value=0.0):
    t.write_action(np.full((2, 3), k), np.array([k, k]), {"value": np.array([value, value])})
    t.write_outcome(np.array([1.0, 2.0]), np.array([False, True]), np.array([False, False]),
                    np.full((2, 3), k + 1))


def test_rollout_fills_reads_and_clears():
    t = RolloutTrajectory(3, 2)
    for k in range(3):
        assert not t.full
        _step(t, k, value=k)
    assert t.full and len(t) == 6
    batch = t.batch()
    assert batch["state"].shape == (3, 2, 3) and batch["value"][:, 0].tolist() == [0, 1, 2]
    assert batch["terminated"].dtype == bool and batch["final_state"][2, 0, 0] == 3
    with pytest.raises(RuntimeError, match="full"):
        _step(t, 9)
    t.clear()
    assert len(t) == 0 and not t.full


def test_rollout_state_dict_round_trip_and_errors():
    t = RolloutTrajectory(4, 2)
    _step(t, 1)
    saved = t.state_dict()
    _step(t, 2)
    t.load_state_dict(saved)
    assert t.t == 1 and t.batch()["action"].tolist() == [[1, 1]]
    with pytest.raises(RuntimeError, match="without write_action"):
        t.write_outcome(1, 1, 1, 1)
    with pytest.raises(ValueError, match="n_envs=2"):
        RolloutTrajectory(4, 2).write_action(np.zeros((3, 1)), np.zeros(3))
    with pytest.raises(ValueError, match="n_steps must be a positive integer"):
        RolloutTrajectory(0)
