"""``HER_SAC_FetchReach`` (experiments/her.py) on gymnasium-robotics' FetchReach-v4 (the
``robotics`` extra, in the ``test`` extra): the recipe builds with rl-baselines3-zoo's settings
(``normalize: True`` included: ``rk.VecNormalize`` with the zoo's arguments), runs a few hundred
steps with updates, stores raw transitions and learns from batches relabelled with the env's
own ``compute_reward`` and then normalised, predicts and saves with the training statistics,
repeats bit for bit from one seed, names bad parameters and, without the package, names the pip
command. Its learning is measured against Stable-Baselines3 in benchmarks/structure_fetch.py
(benchmarks/results_structure_fetch.txt): a 20k-step run takes well over a minute."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest
import torch
from rlkit.experiments.her import HERSAC_FETCHREACH

import rlkit as rk
from rlkit.envs import robotics

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SHORT = {"total_steps": 300, "learning_starts": 100, "batch_size": 32, "buffer_size": 1000}


def short_run(seed: int = 0) -> rk.Experiment:
    experiment = rk.make_experiment("HER_SAC_FetchReach", seed, **SHORT)
    experiment.run()
    return experiment


def test_recipe_has_the_zoo_settings():
    p = HERSAC_FETCHREACH
    assert (p.env, p.total_steps, p.lr, p.batch_size, p.buffer_size) == (
        "FetchReach-v4", 20_000, 1e-3, 256, 1_000_000
    )
    assert (p.gamma, p.tau, p.learning_starts, p.hidden, p.ent_coef) == (
        0.95, 0.005, 1000, (64, 64), "auto"
    )
    assert (p.her, p.strategy, p.n_sampled_goal, p.normalize) == (True, "future", 4, True)


def test_recipe_env_is_normalised_as_the_zoo_says():
    # rl-baselines3-zoo's normalize: True is VecNormalize(env, gamma=<the algorithm's gamma>)
    # with SB3's defaults otherwise: observations (every Dict key) and rewards
    env = rk.make_experiment("HER_SAC_FetchReach", 0, **SHORT).env
    assert isinstance(env, rk.VecNormalize) and isinstance(env.env, rk.VectorGymEnv)
    assert (env.n_envs, env.env.id, env.gamma, env.training) == (1, "FetchReach-v4", 0.95, True)
    assert (env.norm_obs, env.norm_reward, env.clip_obs, env.clip_reward, env.epsilon) == (
        True, True, 10.0, 10.0, 1e-8
    )
    assert env.norm_obs_keys == ["achieved_goal", "desired_goal", "observation"]
    plain = rk.make_experiment("HER_SAC_FetchReach", 0, normalize=False, **SHORT).env
    assert isinstance(plain, rk.GymEnv)  # --set normalize=false: the recipe without it
    with pytest.raises(TypeError, match="HER_SAC_FetchReach: normalize must be bool, got .yes."):
        rk.make_experiment("HER_SAC_FetchReach", 0, normalize="yes")


def test_recipe_runs_and_relabels_with_the_envs_compute_reward(tmp_path):
    experiment = short_run()
    policy = experiment.policy.policy
    assert policy.gradient_steps >= SHORT["total_steps"] - SHORT["learning_starts"] - 1
    her, env, trajectory = policy.her, experiment.env, experiment.policy.trajectory
    goal_env = her.compute_reward.__self__  # a FetchReach-v4 of the recipe's id, unwrapped
    assert type(goal_env).__name__ == "MujocoFetchReachEnv"
    # the replay holds what the env gave, raw (SB3's get_original_obs / get_original_reward)
    stored = trajectory.state.arrays["desired_goal"][: SHORT["total_steps"]]
    assert 0.4 < stored.min() and stored.max() < 1.6  # metres, not normalised values
    assert set(trajectory.reward[: SHORT["total_steps"]].tolist()) <= {-1.0, 0.0}
    generator = her.state_dict()
    raw = her.sample(trajectory)
    expected = goal_env.compute_reward(
        raw["next_state"]["achieved_goal"], raw["state"]["desired_goal"], {}
    )
    assert np.array_equal(raw["reward"], expected)
    # relabelled goals are goals the gripper achieved (FetchReach's goals are drawn, never
    # achieved exactly): each is a stored next achieved goal
    achieved = trajectory.next_state.arrays["achieved_goal"]
    for goal in raw["state"]["desired_goal"][: her.n_virtual]:
        assert (achieved == goal).all(axis=1).any()
    assert not (achieved == raw["state"]["desired_goal"][-1]).all(axis=1).any()
    # the batch the learner sees: the same draw, relabelled on raw goals, then every key
    # normalised with its own statistics and the reward scaled (SB3's HerReplayBuffer)
    her.load_state_dict(generator)
    batch = her.sample(trajectory, normalizer=env)
    for part in ("state", "next_state"):
        for key, rms in env.obs_rms.items():
            by_hand = np.clip((raw[part][key] - rms.mean) / np.sqrt(rms.var + 1e-8), -10, 10)
            np.testing.assert_array_equal(batch[part][key], by_hand.astype(np.float32))
    scale = np.sqrt(env.ret_rms.var + 1e-8)
    np.testing.assert_array_equal(batch["reward"], (raw["reward"] / scale).astype(np.float32))
    # predict takes raw observations, normalised with the training statistics
    assert policy.observation_normalizer is env.observation_normalizer
    raw_obs = {k: v[0] for k, v in env.original_state.items()}
    action = experiment.policy.predict(raw_obs)
    policy.observation_normalizer = None
    try:
        assert np.array_equal(action, experiment.policy.predict(env.normalize_obs(raw_obs)))
        assert not np.array_equal(action, experiment.policy.predict(raw_obs))
    finally:
        policy.observation_normalizer = env.observation_normalizer
    # the trained policy saves and loads with its Dict observations and its statistics
    # (rk.save / rk.load): the loaded policy, on a plain env, takes raw observations
    path = tmp_path / "fetch.rlkit"
    rk.save(experiment.policy, path)
    loaded = rk.load(path, env=rk.GymEnv("FetchReach-v4"))
    assert loaded.observation_normalizer is not env.observation_normalizer  # a frozen copy
    observations = [env.original_state_space.sample() for _ in range(20)]
    actions = [experiment.policy.predict(o) for o in observations]
    for action, observation in zip(actions, observations, strict=True):
        assert np.array_equal(action, loaded.predict(observation))
    assert len({a.tobytes() for a in actions}) == len(actions)  # the observations matter
    # an ONNX graph here takes one observation array: rk.export says so
    with pytest.raises(TypeError, match="rk.export: the policy's observations are a Dict"):
        rk.export(experiment.policy, tmp_path / "fetch.onnx")


def test_one_seed_repeats_bit_for_bit():
    def parameters(experiment):
        return [p.detach().clone() for p in experiment.policy.policy.model.parameters()]

    a, b = parameters(short_run(1)), parameters(short_run(1))
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match="HER_SAC_FetchReach: env must be a gymnasium-robotics"):
        rk.make_experiment("HER_SAC_FetchReach", 0, env="")
    with pytest.raises(ValueError, match="HER: needs a goal-conditioned env.*keys none"):
        rk.make_experiment("HER_SAC_FetchReach", 0, env="Pendulum-v1")
    with pytest.raises(ValueError, match="HER: strategy must be one of"):
        rk.make_experiment("HER_SAC_FetchReach", 0, strategy="later")


def test_missing_extra_names_the_exact_pip_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "gymnasium_robotics", None)
    with pytest.raises(
        ModuleNotFoundError,
        match=r"HER_SAC_FetchReach needs gymnasium-robotics .*pip install "
        r"'gymnasium-robotics>=1\.4'",
    ):
        rk.make_experiment("HER_SAC_FetchReach")


class _Enum:
    """A MuJoCo 4 enum member: equal to an int, not to a numpy int from its own side."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __int__(self) -> int:
        return self.value

    def __eq__(self, other: object) -> bool:
        return type(other) is int and other == self.value

    __hash__ = None  # type: ignore[assignment]


def fake_mujoco_utils(member: object) -> types.ModuleType:
    mujoco = types.ModuleType("mujoco")
    mujoco.mjtJoint = types.SimpleNamespace(  # type: ignore[attr-defined]
        mjJNT_SLIDE=member, __members__={"mjJNT_SLIDE": member}
    )
    mujoco.mj_name2id = lambda *args: 7  # type: ignore[attr-defined]
    utils = types.ModuleType("mujoco_utils")
    utils.mujoco = mujoco  # type: ignore[attr-defined]
    return utils


def test_mujoco_4_joint_types_are_given_as_ints_only_where_needed():
    utils = fake_mujoco_utils(_Enum(2))
    assert np.int32(2) not in (utils.mujoco.mjtJoint.mjJNT_SLIDE,)  # gymnasium-robotics' test
    robotics._joint_types_as_ints(utils)
    assert np.int32(2) in (utils.mujoco.mjtJoint.mjJNT_SLIDE,)
    assert utils.mujoco.mj_name2id() == 7  # the rest is MuJoCo's own
    patched = utils.mujoco
    robotics._joint_types_as_ints(utils)
    assert utils.mujoco is patched  # once
    plain = fake_mujoco_utils(2)  # MuJoCo 3: membership works, nothing changed
    module = plain.mujoco
    robotics._joint_types_as_ints(plain)
    assert plain.mujoco is module


def test_the_docs_example_builds_a_her_agent_on_fetch_reach():
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "observations.md"
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)
    (example,) = [b for b in blocks if "FetchReach-v4" in b]
    scope: dict = {}
    exec(compile(example, str(page), "exec"), scope)
    her, env = scope["agent"].policy.her, scope["env"]
    assert type(her.compute_reward.__self__).__name__ == "MujocoFetchReachEnv"
    assert (her.strategy, her.n_sampled_goal) == ("future", 4)
    assert isinstance(env, rk.VecNormalize) and env.gamma == 0.95  # the zoo's normalize: True
    assert scope["agent"].policy.observation_normalizer is env.observation_normalizer
