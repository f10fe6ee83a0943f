"""Helpers of the tests of rlkit.deploy (tests/deploy/conftest.py trains the policies): every
bundled deep recipe and one tabular one, trained briefly (each makes at least one learning
step), saved with rk.save, with 1,000 observations of its observation space and the trained
policy's predict() on them."""

from __future__ import annotations

import numpy as np

import rlkit as rk
from rlkit.core.experiment import _recipe, recipe_parameters, recipe_steps_unit
from rlkit.learners.built import BuiltPolicy

TABULAR = "TabularQLearning_CliffWalking"
SMALL = {"learning_starts": 32, "batch_size": 32, "train_freq": 4, "gradient_steps": 1}


#: recipes of planners, which have no inference artifact (rlkit/deploy/planners.py; their
#: refusal is tested in tests/learners/model_based/test_pets.py)
PLANNERS = {"PETS_Pendulum"}
#: recipes of recurrent policies, whose predict takes and returns a hidden state (their save,
#: load, predict and export are tested in tests/deploy/test_recurrent.py)
RECURRENT = {"RecurrentPPO_CartPoleNoVel", "RecurrentPPO_PendulumNoVel"}
#: recipes of goal-conditioned envs (Dict observations): the shared tests here feed arrays of
#: observations and ONNX graphs take arrays; saving, loading and predicting with Dict
#: observations is tested in tests/deploy/test_structured_spaces.py
DICT_OBSERVATIONS = {"HER_DQN_BitFlipping", "HER_SAC_BitFlipping", "HER_SAC_FetchReach"}


def deep_recipes() -> list[str]:
    """The bundled online recipes with a torch policy (a steps or generations budget). The
    offline recipes (``total_steps`` counted in gradient steps) first make a dataset by
    training an online recipe; their policies' save/load is tested in
    tests/learners/offline. Planners (:data:`PLANNERS`) have no policy to save."""
    return [
        name
        for name in rk.list_experiments()
        if {"total_steps", "generations"} & set(recipe_parameters(name))
        and recipe_steps_unit(name) is None
        and not _multiagent(name)
        and name not in PLANNERS
        and name not in RECURRENT
        and name not in DICT_OBSERVATIONS
    ]


def _multiagent(name: str) -> bool:
    """A recipe of experiments/multiagent.py: its policy is an rk.MultiAgentPolicy or an
    rk.SelfPlay, whose save and load are tested in tests/multiagent/test_save_load.py."""
    return _recipe(name).__module__.rsplit(".", 1)[-1] == "multiagent"


def brief(name: str) -> dict:
    """A budget that makes one learning step: one rollout for on-policy learners, a few
    transitions past a small learning_starts for replay learners, one ES generation."""
    params = recipe_parameters(name)
    if "generations" in params:
        return {"generations": 1}
    if "episodes" in params:
        return {"episodes": 50}
    probe = rk.make_experiment(name, seed=0, total_steps=10**6)
    policy = probe.policy.policy
    on_policy = isinstance(getattr(probe.policy, "trajectory", None), rk.RolloutTrajectory)
    if isinstance(policy, BuiltPolicy) and on_policy:  # one rollout
        return {"total_steps": policy.config["n_steps"] * getattr(probe.env, "n_envs", 1)}
    small = {k: v for k, v in SMALL.items() if k in params}  # replay learners' small warm-up
    return {"total_steps": 160, **small}


def learning_steps(policy) -> int:
    """How many times the policy learned (gradient steps, generations or table updates)."""
    policy = getattr(policy, "policy", policy)  # an Agent's
    learner = getattr(policy, "learner", policy)
    for name in ("gradient_steps", "updates"):
        if getattr(learner, name, 0):
            return int(getattr(learner, name))
    table = getattr(getattr(learner, "approximator", None), "table", None)
    return int(np.count_nonzero(table)) if table is not None else 0


def observations(space, n: int = 1000, seed: int = 0) -> np.ndarray:
    space.seed(seed)
    return np.stack([space.sample() for _ in range(n)])
