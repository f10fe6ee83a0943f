import pytest

from rlkit.schedules import (
    ConstantSchedule,
    ExponentialSchedule,
    LinearSchedule,
    PiecewiseSchedule,
    as_schedule,
)


def test_linear_schedule_values_and_state():
    s = LinearSchedule(0.2, 0.0, 10)
    assert [s(t) for t in (0, 5, 10, 20)] == pytest.approx([0.2, 0.1, 0.0, 0.0])
    s.advance(4)
    saved = s.state_dict()
    s.advance(4)
    s.load_state_dict(saved)
    assert s.t == 4 and s.value == pytest.approx(0.12)


def test_piecewise_and_exponential():
    s = PiecewiseSchedule([(10, 1.0), (20, 3.0)])
    assert (s(0), s(15), s(25)) == (1.0, 2.0, 3.0)
    e = ExponentialSchedule(8.0, 0.5, end=1.5)
    assert (e(0), e(1), e(2), e(10)) == (8.0, 4.0, 2.0, 1.5)
    assert ConstantSchedule(3.0)(99) == 3.0


def test_bad_schedules():
    with pytest.raises(ValueError, match="steps must increase"):
        PiecewiseSchedule([(0, 1.0), (0, 2.0)])
    with pytest.raises(ValueError, match="n_steps must be a positive integer, got 0"):
        LinearSchedule(1.0, 0.0, 0)
    with pytest.raises(ValueError, match="PPO: lr must be"):
        as_schedule("PPO", "lr", float("nan"))
    with pytest.raises(ValueError, match="lacks"):
        LinearSchedule(1.0, 0.0, 5).load_state_dict({})
