"""Continuous-control recipes (experiments/continuous.py): registration, settings (their
dataclasses, overrides, checks, config.json), vector envs, the MuJoCo requirement, and SAC, TD3
and DDPG learning Pendulum within a small budget."""

from __future__ import annotations

import dataclasses
import importlib.util
import json

import pytest
from rlkit.experiments import continuous

import rlkit as rk
from rlkit.cli import main
from rlkit.core.experiment import recipe_parameters
from rlkit.learners.actor_critic.ddpg import DDPG_DEFAULTS
from rlkit.learners.actor_critic.sac import SAC_DEFAULTS
from rlkit.learners.actor_critic.td3 import TD3_DEFAULTS

RECIPES = [
    "SAC_Pendulum",
    "TD3_Pendulum",
    "DDPG_Pendulum",
    "TD3_MountainCarContinuous",
    "SAC_HalfCheetah",
    "TD3_HalfCheetah",
]


def test_recipes_are_registered():
    assert set(RECIPES) <= set(rk.list_experiments())


def test_td3_pendulum_has_the_zoo_settings():
    exp = rk.make_experiment("TD3_Pendulum", seed=0)
    policy = exp.policy.policy
    c = policy.config
    assert (c["gamma"], c["buffer_size"], c["learning_starts"], c["lr"]) == (
        0.98,
        200_000,
        10_000,
        1e-3,
    )
    assert tuple(c["hidden"]) == (400, 300) and exp.stop_condition.n == 20_000
    assert isinstance(policy.noise, rk.GaussianActionNoise) and policy.noise.sigma == 0.1
    assert isinstance(exp.policy.trajectory, rk.CircularArraySARTTrajectory)


@pytest.mark.parametrize("name", ["SAC_Pendulum", "TD3_Pendulum", "DDPG_Pendulum"])
def test_recipes_run_on_vector_envs(name):
    exp = rk.make_experiment(
        name, seed=1, total_steps=40, n_envs=2, learning_starts=20, batch_size=8, hidden=(8,)
    )
    rk.run(exp)
    policy = exp.policy.policy
    assert policy.transitions == 40 and policy.gradient_steps == 10


def test_mujoco_recipes_name_the_package_when_it_is_missing(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "mujoco" else real(name, *a)
    )
    for name in ("SAC_HalfCheetah", "TD3_HalfCheetah"):
        with pytest.raises(ImportError, match="pip install mujoco"):
            rk.make_experiment(name)


@pytest.mark.skipif(importlib.util.find_spec("mujoco") is None, reason="needs mujoco")
def test_half_cheetah_recipe_runs():
    exp = rk.make_experiment(
        "SAC_HalfCheetah", seed=0, total_steps=30, learning_starts=20, batch_size=8, hidden=(8,)
    )
    rk.run(exp)
    assert exp.policy.policy.gradient_steps == 10 and exp.env.action_space.shape == (6,)


@pytest.mark.parametrize(
    "params, defaults",
    [
        (continuous.SACParams, SAC_DEFAULTS),
        (continuous.TD3Params, TD3_DEFAULTS),
        (continuous.DDPGParams, DDPG_DEFAULTS),
    ],
)
def test_the_dataclass_defaults_are_the_algorithms_defaults(params, defaults):
    config = params(total_steps=1).algorithm_config()
    assert set(config) <= set(defaults)
    assert config == {key: defaults[key] for key in config}


def test_recipe_constants_name_only_what_the_zoo_changes():
    def changed(p):
        return {
            f.name: getattr(p, f.name)
            for f in dataclasses.fields(p)
            if getattr(p, f.name) != f.default
        }

    assert changed(continuous.SAC_PENDULUM) == {"total_steps": 20_000, "lr": 1e-3}
    assert changed(continuous.TD3_MOUNTAIN_CAR) == {
        "total_steps": 300_000,
        "noise_type": "ornstein-uhlenbeck",
        "noise_std": 0.5,
    }
    assert changed(continuous.TD3_PENDULUM) == changed(continuous.DDPG_PENDULUM)


def test_every_field_is_a_recipe_parameter_and_is_recorded():
    sac = recipe_parameters("SAC_Pendulum")
    assert {"lr", "hidden", "learning_starts", "batch_size", "n_envs", "device"} <= set(sac)
    assert {"tau", "gamma", "buffer_size", "ent_coef", "target_update_interval"} <= set(sac)
    assert "noise_type" not in sac and "policy_delay" not in sac
    assert "policy_delay" in recipe_parameters("TD3_Pendulum")
    assert "policy_delay" not in recipe_parameters("DDPG_Pendulum")
    exp = rk.make_experiment("TD3_Pendulum", seed=0, tau=0.01)
    assert exp.params == {**dataclasses.asdict(continuous.TD3_PENDULUM), "tau": 0.01}
    assert exp.policy.policy.config["tau"] == 0.01


def test_overrides_reach_the_algorithm():
    exp = rk.make_experiment(
        "TD3_Pendulum",
        seed=0,
        noise_type="ornstein-uhlenbeck",
        noise_std=0.3,
        policy_delay=3,
        target_policy_noise=0.1,
        gradient_steps=2,
    )
    policy = exp.policy.policy
    assert isinstance(policy.noise, rk.OrnsteinUhlenbeckActionNoise) and policy.noise.sigma == 0.3
    c = policy.config
    assert (c["policy_delay"], c["target_policy_noise"], c["gradient_steps"]) == (3, 0.1, 2)
    assert rk.make_experiment("DDPG_Pendulum", noise_type=None).policy.policy.noise is None
    sac = rk.make_experiment("SAC_Pendulum", seed=0, ent_coef=0.2, target_update_interval=2)
    assert "ent_coef" not in sac.policy.policy.optimizers  # a fixed coefficient
    assert sac.policy.policy.config["target_update_interval"] == 2


@pytest.mark.parametrize(
    "name, overrides, message",
    [
        ("SAC_Pendulum", {"n_envs": 0}, "SAC_Pendulum: n_envs must be a positive integer, got 0"),
        ("TD3_Pendulum", {"tau": 0.0}, "TD3_Pendulum: tau must be"),
        ("DDPG_Pendulum", {"gamma": 1.5}, "DDPG_Pendulum: gamma must be"),
        ("SAC_Pendulum", {"hidden": ()}, "SAC_Pendulum: hidden lists the widths of the hidden"),
        ("TD3_Pendulum", {"noise_type": "gaussian"}, "TD3_Pendulum: noise_type must be None"),
        ("TD3_MountainCarContinuous", {"noise_std": -0.1}, "TD3_MountainCarContinuous: noise_std"),
        ("TD3_Pendulum", {"policy_delay": 0}, "TD3_Pendulum: policy_delay must be a positive"),
        ("SAC_Pendulum", {"ent_coef": "auto_0"}, "SAC_Pendulum: ent_coef must be 'auto'"),
        ("SAC_Pendulum", {"ent_coef": -1.0}, "SAC_Pendulum: ent_coef must be 'auto'"),
        ("SAC_Pendulum", {"target_entropy": "low"}, "SAC_Pendulum: target_entropy must be"),
        ("SAC_Pendulum", {"learning_starts": -1}, "SAC_Pendulum: learning_starts must be a non-"),
    ],
)
def test_bad_values_are_refused_naming_the_recipe_and_the_parameter(name, overrides, message):
    with pytest.raises(ValueError) as error:
        rk.make_experiment(name, **overrides)
    assert str(error.value).startswith(message)


def test_wrong_types_and_parameters_of_another_algorithm_are_refused():
    with pytest.raises(TypeError, match="SAC_Pendulum: lr must be float, got 'fast'"):
        rk.make_experiment("SAC_Pendulum", lr="fast")
    with pytest.raises(TypeError, match="DDPG_Pendulum: unknown parameter 'policy_delay'"):
        rk.make_experiment("DDPG_Pendulum", policy_delay=2)
    with pytest.raises(TypeError, match="SAC_Pendulum: unknown parameter 'noise_type'"):
        rk.make_experiment("SAC_Pendulum", noise_type="normal")


def test_continuous_experiment_checks_its_parameters():
    bad = dataclasses.replace(continuous.SAC_PENDULUM, n_envs=0)
    with pytest.raises(ValueError, match="MySAC_Pendulum: n_envs must be a positive integer"):
        continuous.continuous_experiment(rk.SAC, "Pendulum-v1", bad, seed=0, owner="MySAC_Pendulum")
    with pytest.raises(ValueError, match="^SAC_Pendulum: n_envs must be a positive integer"):
        continuous.SAC_Pendulum(0, bad)  # called directly, without make_experiment's check


def test_rlkit_run_sets_the_parameters_and_config_json_records_them(tmp_path, capsys):
    run_dir = tmp_path / "sac"
    sets = ["lr=0.001", "total_steps=300", "learning_starts=100", "hidden=16,", "ent_coef=auto_0.5"]
    args = ["run", "SAC_Pendulum", "--logdir", str(run_dir), "--quiet"]
    assert main([*args, *(word for s in sets for word in ("--set", s))]) == 0
    config = json.loads((run_dir / "config.json").read_text())
    params = config["params"]
    assert (params["lr"], params["total_steps"], params["learning_starts"]) == (0.001, 300, 100)
    assert params["hidden"] == [16] and params["ent_coef"] == "auto_0.5"
    assert params["tau"] == 0.005 and config["budget"] == "StopAfterNSteps(300)"


@pytest.mark.slow
def test_sac_learns_pendulum_within_5000_steps():
    """SAC_Pendulum's settings with 64-64 networks: 5000 steps (about 50 s of CPU alone).
    3500 steps were too few to be robust: after Adam became fused (other rounding) seed 0 ended
    at -457 there (seeds 1 and 2 at -218); at 5000 steps seeds 0, 1, 2 reach -201, -197, -195."""
    exp = rk.make_experiment("SAC_Pendulum", seed=0, total_steps=5000, hidden=(64, 64))
    rk.run(exp)
    result = rk.evaluate(exp.policy, rk.GymEnv("Pendulum-v1"), 10, seed=123)
    assert result.mean >= -400, result.returns


@pytest.mark.slow
@pytest.mark.parametrize("name", ["TD3_Pendulum", "DDPG_Pendulum"])
def test_td3_and_ddpg_learn_pendulum_with_an_earlier_start(name):
    """The recipes' settings with 64-64 networks and learning_starts 1000: 6000 steps (about
    20 s of CPU alone each; measured -315.8 for TD3 and -146.2 for DDPG)."""
    exp = rk.make_experiment(name, seed=0, total_steps=6000, learning_starts=1000, hidden=(64, 64))
    rk.run(exp)
    result = rk.evaluate(exp.policy, rk.GymEnv("Pendulum-v1", seed=10_000), 10, seed=0)
    assert result.mean >= -400, result.returns
