"""``HER_SAC_FetchReach`` (experiments/her.py) on gymnasium-robotics' FetchReach-v4 (the
``robotics`` extra, in the ``test`` extra): the recipe builds with rl-baselines3-zoo's settings,
runs a few hundred steps with updates, relabels with the env's own ``compute_reward``, repeats
bit for bit from one seed, names bad parameters and, without the package, names the pip
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
    assert (p.her, p.strategy, p.n_sampled_goal) == (True, "future", 4)


def test_recipe_runs_and_relabels_with_the_envs_compute_reward(tmp_path):
    experiment = short_run()
    policy = experiment.policy.policy
    assert policy.gradient_steps >= SHORT["total_steps"] - SHORT["learning_starts"] - 1
    her = policy.her
    goal_env = experiment.env.env.unwrapped
    assert type(goal_env).__name__ == "MujocoFetchReachEnv"
    assert her.compute_reward.__self__ is goal_env  # the unwrapped env's own method
    batch = her.sample(experiment.policy.trajectory)
    expected = goal_env.compute_reward(
        batch["next_state"]["achieved_goal"], batch["state"]["desired_goal"], {}
    )
    assert np.array_equal(batch["reward"], expected)
    # relabelled goals are goals the gripper achieved (FetchReach's goals are drawn, never
    # achieved exactly): each is a stored next achieved goal
    achieved = experiment.policy.trajectory.next_state.arrays["achieved_goal"]
    for goal in batch["state"]["desired_goal"][: her.n_virtual]:
        assert (achieved == goal).all(axis=1).any()
    assert not (achieved == batch["state"]["desired_goal"][-1]).all(axis=1).any()
    # the trained policy saves and loads with its Dict observations (rk.save / rk.load)
    path = tmp_path / "fetch.rlkit"
    rk.save(experiment.policy, path)
    loaded = rk.load(path, env=experiment.env)
    observations = [experiment.env.state_space.sample() for _ in range(20)]
    actions = [experiment.policy.predict(o) for o in observations]
    for action, observation in zip(actions, observations, strict=True):
        assert np.array_equal(action, loaded.predict(observation))
    assert len({a.tobytes() for a in actions}) == len(actions)  # the observations matter


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
    her = scope["agent"].policy.her
    assert her.compute_reward.__self__ is scope["env"].env.unwrapped
    assert (her.strategy, her.n_sampled_goal) == ("future", 4)
