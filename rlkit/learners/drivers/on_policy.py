"""The on-policy driver: every deep learner that learns from its own rollouts (VPG, A2C, PPO,
TRPO, and a user's algorithm built with ``rk.build_policy``) learns through this one PostAct
method: count the transitions (the clock of the hyperparameters' schedules); when the
:class:`~rlkit.RolloutTrajectory` is full, ``update(policy, rollout.batch())`` (the algorithm's
learning rule, in its own file), then clear the rollout."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.dispatch import update
from ...core.stages import PostActStage
from ...policies.stochastic import AnyEnv
from ...trajectories.rollout import RolloutTrajectory
from ..batch import Batch
from ..built import BuiltPolicy

__all__ = ["rollout_batch", "learn_when_full"]


def rollout_batch(trajectory: RolloutTrajectory) -> Batch:
    """The rollout's ``(n_steps, n_envs, ...)`` arrays as a :class:`Batch` (copies: the rollout
    is cleared and refilled while a learner may keep the batch)."""
    batch = Batch({k: _copy(v) for k, v in trajectory.batch().items()})
    batch.owner = "the rollout batch"
    return batch


def _copy(value: Any) -> Any:
    if isinstance(value, dict):  # a Dict observation
        return {k: _copy(v) for k, v in value.items()}
    return np.array(value)


# ---- PostAct: count the transitions; learn when the rollout is full ----
@update.dispatch
def _(policy: BuiltPolicy, trajectory: RolloutTrajectory, env: AnyEnv, stage: PostActStage, /):
    learn_when_full(policy, trajectory)


def learn_when_full(policy: Any, trajectory: RolloutTrajectory) -> None:
    """The driver's rule: count the transitions; when the rollout is full,
    ``update(policy, rollout_batch(trajectory))``, then clear it (also the PostAct method of
    ``ManySeedsPPO``, rlkit/learners/many_seeds/ppo.py, registered there)."""
    policy.transitions += trajectory.n_envs
    if trajectory.full:
        update(policy, rollout_batch(trajectory))
        trajectory.clear()
