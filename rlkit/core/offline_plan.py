"""The call plan of an offline run (docs/how-to/offline-rl.md): what a policy does at each
stage when its env is an :class:`~rlkit.AbstractOfflineEnv`.

The learning step is ``update(policy, env, stage)``, resolved once per stage like every plan
step: the offline driver (``rlkit/learners/drivers/offline.py``) registers it at PostAct for
the learners that learn from a dataset; ``update(QBasedPolicy, offline env, stage)`` forwards
to the learner. The policy's own plan (its checks of the spaces, the descriptions of what
``update(X, Batch)`` calls) follows it. An ``rk.Agent`` given to an offline run learns through
its policy (its trajectory records nothing: there is no acting).
"""

from __future__ import annotations

from typing import Any

from .dispatch import DispatchError, PlanStep, noop, resolve, update
from .interfaces import AbstractOfflineEnv
from .stages import STAGES, AbstractStage

__all__ = ["offline_plan", "learning_policy"]


# ---- any stage: nothing, unless a driver registers a method ----
@update.dispatch
@noop
def _(policy: object, env: AbstractOfflineEnv, stage: AbstractStage, /):
    return None


def learning_policy(policy: Any) -> Any:
    """The policy that learns in an offline run: an ``rk.Agent``'s policy, else ``policy``."""
    if getattr(policy, "trajectory", None) is not None and hasattr(policy, "policy"):
        return policy.policy
    return policy


def offline_plan(policy: Any, env: AbstractOfflineEnv) -> dict[AbstractStage, list[PlanStep]]:
    """Per stage: the learning step ``update(policy, env, stage)``, what the policy's learner
    says that update calls (its ``plan(env)``), then the policy's own plan steps. Raises
    :class:`DispatchError` naming the types when the policy has no offline learning method."""
    inner = learning_policy(policy)
    own = inner.plan(env)
    learner = getattr(inner, "learner", None)
    learner_plan = getattr(learner, "plan", None)
    described = learner_plan(env) if callable(learner_plan) else {}
    plan: dict[AbstractStage, list[PlanStep]] = {}
    learns = False
    for stage in STAGES:
        learn = resolve(update, inner, env, stage)
        steps = [] if learn is None else [learn, *described.get(stage, ())]
        learns = learns or learn is not None
        steps.extend(own.get(stage, ()))
        if steps:
            plan[stage] = steps
    if not learns:
        what = type(inner).__name__
        if learner is not None:
            what += f" (learner {type(learner).__name__})"
        raise DispatchError(
            f"run: {what} cannot learn from the offline env {env!r}: no method "
            f"update({type(inner).__name__}, {type(env).__name__}, stage). Offline algorithms "
            f"(rk.BC, rk.DiscreteCQL, ...) learn through the offline driver "
            f"(rlkit/learners/drivers/offline.py); evaluate a policy in a real env instead."
        )
    return plan
