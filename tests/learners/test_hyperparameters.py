"""Checks of the built policies' shared hyperparameters (rlkit/learners/hyperparameters.py)."""

from __future__ import annotations

import math
import warnings

import pytest

import rlkit as rk
from rlkit.learners.hyperparameters import check_hyperparameters, check_minibatches, hidden_sizes


def cartpole():
    return rk.GymEnv("CartPole-v1", seed=0)


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("lr", -1.0, "lr must be a positive finite number, got -1.0"),
        ("lr", 0.0, "lr must be a positive finite number, got 0.0"),
        ("lr", math.nan, "lr must be a positive finite number, got nan"),
        ("gamma", 1.5, r"gamma must be a number in \[0, 1\], got 1.5"),
        ("gae_lambda", -0.1, r"gae_lambda must be a number in \[0, 1\], got -0.1"),
        ("clip_range", 0.0, "clip_range must be a positive finite number, got 0.0"),
        ("clip_range_vf", -1.0, "clip_range_vf must be a positive finite number, got -1.0"),
        ("ent_coef", math.inf, "ent_coef must be a finite number, got inf"),
        ("vf_coef", -0.5, "vf_coef must be a non-negative finite number, got -0.5"),
        ("max_grad_norm", 0.0, "max_grad_norm must be a positive finite number, got 0.0"),
        ("target_kl", -0.01, "target_kl must be a positive finite number, got -0.01"),
        ("log_std_init", math.nan, "log_std_init must be a finite number, got nan"),
        ("hidden", (64, 0), r"hidden must be a sequence of positive integers .*got \(64, 0\)"),
    ],
)
def test_bad_values_are_refused_at_construction_naming_the_policy(name, value, expected):
    with pytest.raises(ValueError, match=f"^PPO: {expected}"):
        rk.PPO(cartpole(), **{name: value})


@pytest.mark.parametrize(
    ("name", "value"),
    [("lr", "3e-4"), ("gamma", None), ("normalize_advantage", 1), ("hidden", "64")],
)
def test_values_of_the_wrong_type_are_refused(name, value):
    with pytest.raises(TypeError, match=f"^A2C: {name} must be .*got {value!r}"):
        rk.A2C(cartpole(), **{name: value})


def test_every_built_policy_checks():
    for cls in (rk.PPO, rk.A2C, rk.VPG, rk.TRPO, rk.ES):
        with pytest.raises(ValueError, match=f"^{cls.name}: lr must be"):
            cls(cartpole(), lr=-0.5)


def test_none_where_allowed_and_a_network_without_hidden_layers():
    policy = rk.PPO(cartpole(), clip_range_vf=None, target_kl=None, max_grad_norm=None, hidden=())
    assert policy.config["hidden"] == ()


def test_schedules_are_checked_at_their_ends():
    with pytest.raises(ValueError, match=r"PPO: lr \(a LinearSchedule\) must be a non-negative"):
        rk.PPO(cartpole(), lr=rk.LinearSchedule(1e-3, -1e-3, 100))
    with pytest.raises(ValueError, match=r"clip_range \(a PiecewiseSchedule\) .* got -0.1"):
        rk.PPO(cartpole(), clip_range=rk.PiecewiseSchedule([(0, 0.2), (50, -0.1), (100, 0.1)]))
    rk.PPO(cartpole(), lr=rk.LinearSchedule(1e-3, 0.0, 100))  # decaying to 0 is fine


@pytest.mark.parametrize("name", ["max_grad_norm", "target_kl", "log_std_init", "hidden"])
def test_a_schedule_where_none_is_read_is_refused(name):
    # max_grad_norm and target_kl failed at the first update (Schedule * float), log_std_init
    # at construction on a Box, hidden blamed the schedule's first value
    with pytest.raises(TypeError, match=f"^PPO: {name} cannot be a Schedule .*LinearSchedule"):
        rk.PPO(cartpole(), **{name: rk.LinearSchedule(0.5, 0.1, 100)})


def test_unknown_names_are_not_checked():
    check_hyperparameters("Mine", {"temperature": -3, "lr": 1e-3})


def test_hidden_sizes():
    assert hidden_sizes("X", [8, 4]) == (8, 4)
    with pytest.raises(TypeError, match=r"X: hidden must be .*got \(8.5,\)"):
        hidden_sizes("X", (8.5,))


def test_batch_size_must_exceed_one_when_advantages_are_normalised():  # as SB3's PPO
    with pytest.raises(ValueError, match="PPO: batch_size must be > 1 when normalize_advantage"):
        rk.PPO(cartpole(), n_steps=8, batch_size=1)
    rk.PPO(cartpole(), n_steps=8, batch_size=1, normalize_advantage=False)


def test_a_batch_size_not_dividing_the_rollout_warns_as_sb3():
    env = rk.VectorGymEnv("CartPole-v1", 2, seed=0)
    with pytest.warns(UserWarning, match=r"batch_size=30 is larger than .* = 8 \* 2 = 16 .*one "
                      r"minibatch of 16"):
        rk.PPO.agent(env, n_steps=8, batch_size=30)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rk.PPO.agent(env, n_steps=8, batch_size=16)
        rk.PPO(state_space=env.state_space, action_space=env.action_space, batch_size=30)
    env.close()
    with pytest.warns(UserWarning, match=r"does not divide .*32 \* 1 = 32 transitions: each epoch "
                      r"is 5 minibatch\(es\) of 6 and one of 2"):
        check_minibatches("PPO", {"n_steps": 32, "batch_size": 6}, 1)
