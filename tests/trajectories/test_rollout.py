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


def test_a_state_of_another_size_is_refused():
    # a PPO checkpoint resumed with another n_steps loaded, then failed mid-run with an IndexError
    t = RolloutTrajectory(4, 2)
    _step(t, 1)
    saved = t.state_dict()
    for other in (RolloutTrajectory(8, 2), RolloutTrajectory(4, 3)):
        with pytest.raises(ValueError, match=r"trace 'state' holds n_steps x n_envs = 4 x 2, this "
                           rf"rollout {other.n_steps} x {other.n_envs}"):
            other.load_state_dict(saved)
    with pytest.raises(ValueError, match="t=5 exceeds n_steps=4"):
        RolloutTrajectory(4, 2).load_state_dict({**saved, "t": 5})
