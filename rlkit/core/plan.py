"""The call plan of a run: every stage's calls resolved once, before the first step."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .dispatch import PlanStep
from .hooks import EmptyHook, hook_plan
from .stages import PRE_EXPERIMENT_STAGE, STAGES, AbstractStage
from .stop_conditions import stop_plan

__all__ = ["CallPlan", "build_plan", "explain"]

# Who speaks first at each stage (DESIGN.md section 2): the hook before the policy only at
# PreExperiment, the policy first everywhere else.
_HOOK_FIRST = {PRE_EXPERIMENT_STAGE}


@dataclass
class CallPlan:
    """What a run calls at each stage, as resolved plan steps, plus the stop checks."""

    stages: dict[AbstractStage, list[PlanStep]] = field(default_factory=dict)
    stop_step: PlanStep | None = None
    stop_episode: PlanStep | None = None

    def calls(self, stage: AbstractStage) -> tuple:
        """The plain functions to call at ``stage``, in order."""
        return tuple(step.call for step in self.stages.get(stage, ()))

    def describe(self) -> str:
        """A readable listing: for each stage, the methods that run and where they live."""
        lines = []
        for stage in STAGES:
            steps = self.stages.get(stage, ())
            lines.append(f"{stage}:" + ("" if steps else " (nothing)"))
            lines.extend(f"  {step}" for step in steps)
        for label, step in (
            ("stop check after each step", self.stop_step),
            ("stop check after each episode", self.stop_episode),
        ):
            if step is not None:
                lines.append(f"{label}: {step}")
        return "\n".join(lines)


def build_plan(policy: Any, env: Any, hook: Any = None, stop_condition: Any = None) -> CallPlan:
    """Resolve the calls of ``run(policy, env, stop_condition, hook)`` once.

    Raises ``DispatchError`` (a ``TypeError``) naming the types when a method is missing or
    ambiguous, and ``TypeError`` for arguments of the wrong kind.
    """
    from ..policies.base import AbstractPolicy

    if not isinstance(policy, AbstractPolicy):
        raise TypeError(
            f"run: policy must be an rk.AbstractPolicy (e.g. rk.Agent, rk.RandomPolicy), got "
            f"{type(policy).__name__}: {policy!r}"
        )
    policy_plan = policy.plan(env)
    hooks = hook_plan(EmptyHook() if hook is None else hook, policy, env)
    plan = CallPlan()
    for stage in STAGES:
        mine, theirs = policy_plan.get(stage, []), hooks.get(stage, [])
        steps = theirs + mine if stage in _HOOK_FIRST else mine + theirs
        if steps:
            plan.stages[stage] = steps
    if stop_condition is not None:
        plan.stop_step, plan.stop_episode = stop_plan(stop_condition, policy, env)
    return plan


def explain(policy: Any, env: Any, hook: Any = None, stop_condition: Any = None) -> None:
    """Print what a run would do at each stage: the resolved methods and their source.

    Example:
        >>> import rlkit as rk
        >>> rk.explain(rk.RandomPolicy(), rk.GymEnv("CartPole-v1"))  # doctest: +ELLIPSIS
        PreExperiment: (nothing)
        ...
    """
    print(build_plan(policy, env, hook, stop_condition).describe())
