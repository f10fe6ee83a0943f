import pytest

import rlkit as rk
from rlkit.trajectories.controller import InsertSampleRatioController


def test_exported_name_and_defaults():
    c = rk.InsertSampleRatioController()
    assert isinstance(c, InsertSampleRatioController)
    assert (c.warmup_steps, c.update_every, c.n_updates, c.n_steps) == (1000, 1, 1, 0)


def test_one_update_per_step_after_warm_up():
    c = InsertSampleRatioController(warmup_steps=3)
    assert [c.step() for _ in range(6)] == [0, 0, 0, 1, 1, 1]
    assert c.n_steps == 6 and c.n_gradient_steps == 3


def test_no_warm_up():
    c = InsertSampleRatioController(warmup_steps=0, update_every=2, n_updates=5)
    assert [c.step() for _ in range(4)] == [0, 5, 0, 5]


def test_zoo_cartpole_dqn_schedule():
    # rl-baselines3-zoo CartPole-v1 DQN: learning_starts 1000, train_freq 256, gradient_steps 128
    c = InsertSampleRatioController(warmup_steps=1000, update_every=256, n_updates=128)
    granted = {step: c.step() for step in range(1, 2001)}
    trained = {step: n for step, n in granted.items() if n}
    assert trained == {1024: 128, 1280: 128, 1536: 128, 1792: 128}
    assert c.n_gradient_steps == 4 * 128


def test_long_run_ratio():
    c = InsertSampleRatioController(warmup_steps=100, update_every=4, n_updates=1)
    total = sum(c.step() for _ in range(10_100))
    assert total == 10_000 // 4 == c.n_gradient_steps


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"warmup_steps": -1}, "warmup_steps must be an integer >= 0, got -1"),
        ({"warmup_steps": 10.0}, "warmup_steps must be an integer >= 0, got 10.0"),
        ({"update_every": 0}, "update_every must be an integer >= 1, got 0"),
        ({"update_every": True}, "update_every must be an integer >= 1, got True"),
        ({"n_updates": 0}, "n_updates must be an integer >= 1, got 0"),
        ({"n_updates": "2"}, "n_updates must be an integer >= 1, got '2'"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match="InsertSampleRatioController: " + message):
        InsertSampleRatioController(**kwargs)


def test_state_dict_round_trip():
    a = InsertSampleRatioController(warmup_steps=5, update_every=3, n_updates=2)
    for _ in range(7):
        a.step()
    b = InsertSampleRatioController(warmup_steps=5, update_every=3, n_updates=2)
    b.load_state_dict(a.state_dict())
    assert (b.n_steps, b.n_gradient_steps) == (7, a.n_gradient_steps)
    assert [a.step() for _ in range(10)] == [b.step() for _ in range(10)]


def test_load_state_dict_rejects_other_settings():
    saved = InsertSampleRatioController(warmup_steps=5).state_dict()
    with pytest.raises(
        ValueError,
        match="InsertSampleRatioController: checkpoint has warmup_steps=5, this controller has 6",
    ):
        InsertSampleRatioController(warmup_steps=6).load_state_dict(saved)
