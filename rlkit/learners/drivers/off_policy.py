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
* ``batches(trajectory, n)``: an iterator of ``n`` batches (:class:`~rlkit.learners.batch.Batch`);
  on an ``rk.VecNormalize`` env, ``batches(trajectory, n, normalizer)``.

On an ``rk.VecNormalize`` env the replay holds the raw transitions (the env's recording methods,
``rlkit/envs/vec_normalize_replay.py``) and the driver hands the env to ``batches`` as the
``normalizer``: each batch's observations and rewards are normalised when it is sampled, with
the statistics as they are then (Stable-Baselines3's ``replay_buffer.sample(batch_size,
env=self._vec_normalize_env)``; docs/how-to/normalization.md). A learner says it can with
``normalizes_replay``; the ``Agent`` refuses the others at plan time.
"""

from __future__ import annotations

from typing import Any

from ...core.dispatch import update
from ...core.interfaces import AbstractEnv, AbstractVectorEnv
from ...core.stages import PostActStage
from ...envs.vec_normalize import VecNormalize
from ...trajectories.circular import CircularArraySARTTrajectory
from ..actor_critic.common import OffPolicyActorCritic
from ..value_based.common import ValueBasedLearner

__all__ = ["train", "after_step", "replay_normalizer"]


def train(
    policy: Any, trajectory: CircularArraySARTTrajectory, n: int, normalizer: Any = None
) -> None:
    """``n`` gradient steps: ``update(policy, batch)`` for each of ``policy.batches`` (sampled
    normalised by ``normalizer``, an ``rk.VecNormalize``, when given); the means of their
    diagnostics become the learner's ``stats`` (when they return any)."""
    sums: dict[str, float] = {}
    if normalizer is None:
        batches = policy.batches(trajectory, n)
    else:
        batches = policy.batches(trajectory, n, normalizer)
    for batch in batches:
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
    """The driver's PostAct body: ``n = policy.due(env)``, then ``n`` gradient steps (on
    batches normalised by ``env`` when it is an ``rk.VecNormalize``)."""
    n = policy.due(env)
    if n:
        train(policy, trajectory, n, replay_normalizer(env))


def replay_normalizer(env: Any) -> VecNormalize | None:
    """The env whose statistics normalise replay batches at sample time: ``env`` if it is an
    ``rk.VecNormalize`` (its replay holds raw transitions), else None.

    Example:
        >>> import rlkit as rk
        >>> env = rk.VectorGymEnv("CartPole-v1", 2, seed=0)
        >>> replay_normalizer(env) is None, replay_normalizer(rk.VecNormalize(env)) is not None
        (True, True)
    """
    return env if isinstance(env, VecNormalize) else None


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
