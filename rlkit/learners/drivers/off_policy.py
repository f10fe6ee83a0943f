"""The off-policy driver: every deep learner that learns from replay (the DQN family inside
``QBasedPolicy``, and DDPG, TD3, SAC) learns through this one PostAct method.

After each environment step, the learner counts the step and says how many gradient steps
are due (:meth:`due`: its warm-up, ``train_freq`` and ``gradient_steps``, or its replay
controller; target networks that count environment steps are updated there too). For each
due step the driver takes a batch from the learner's sampler over the replay
(:meth:`batches`, drawn ahead where the gradient steps cannot change what is sampled) and
calls ``update(policy, batch)``, the algorithm's learning rule in its own file. A batch that
comes back with ``priorities`` (prioritized replay) gives them to the replay. After the round,
the learner's diagnostics are the means of what its updates returned.

The two methods each learner base provides:

* ``due(env) -> int``: count the step (one transition per sub-environment), return the number
  of gradient steps due now;
* ``batches(trajectory, n)``: an iterator of ``n`` batches (:class:`~rlkit.learners.batch.Batch`).
"""

from __future__ import annotations

from typing import Any

from ...core.dispatch import update
from ...core.interfaces import AbstractEnv, AbstractVectorEnv
from ...core.stages import PostActStage
from ...trajectories.circular import CircularArraySARTTrajectory
from ..actor_critic.common import OffPolicyActorCritic
from ..value_based.common import ValueBasedLearner

__all__ = ["train"]


def train(policy: Any, trajectory: CircularArraySARTTrajectory, n: int) -> None:
    """``n`` gradient steps: ``update(policy, batch)`` for each of ``policy.batches``; the
    means of their diagnostics become the learner's ``stats`` (when they return any)."""
    sums: dict[str, float] = {}
    for batch in policy.batches(trajectory, n):
        info = update(policy, batch)
        priorities = batch.get("priorities")
        if priorities is not None:
            trajectory.update_priorities(batch["indices"], priorities)
        if info:
            for key, value in info.items():
                sums[key] = sums.get(key, 0.0) + float(value)
    policy.end_round(n, {k: v / n for k, v in sums.items()})


# ---- PostAct: count the step; learn as often as the learner's schedule says ----
def after_step(policy: Any, trajectory: CircularArraySARTTrajectory, env: Any) -> None:
    """The driver's PostAct body: ``n = policy.due(env)``, then ``n`` gradient steps."""
    n = policy.due(env)
    if n:
        train(policy, trajectory, n)


# one method per learner base (a union of the two is not more specific than the do-nothing
# default for AbstractPolicy, nor than AbstractLearner's, so it would be ambiguous)
@update.dispatch
def _(
    policy: ValueBasedLearner,
    trajectory: CircularArraySARTTrajectory,
    env: AbstractEnv | AbstractVectorEnv,
    stage: PostActStage,
    /,
):
    after_step(policy, trajectory, env)


@update.dispatch
def _(
    policy: OffPolicyActorCritic,
    trajectory: CircularArraySARTTrajectory,
    env: AbstractEnv | AbstractVectorEnv,
    stage: PostActStage,
    /,
):
    after_step(policy, trajectory, env)
