"""The call plan of a run: every stage's calls resolved once, before the first step."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from .checks import not_a_class
from .dispatch import PlanStep, learning_methods, where
from .interfaces import CHECK_MOMENTS, AbstractHook, AbstractOfflineEnv, AbstractPolicy, stop_plan
from .multiagent_plan import agent_plans, describe_agents, experiment_steps, is_multiagent
from .offline_plan import offline_plan
from .stages import (
    POST_ACT_STAGE,
    POST_EXPERIMENT_STAGE,
    PRE_EXPERIMENT_STAGE,
    STAGES,
    AbstractStage,
)

__all__ = ["CallPlan", "build_plan", "explain", "hook_plan", "evaluation_only"]

# Who speaks first at each stage (docs/architecture.md, "The run loop and its stages"): the
# hook before the policy only at PreExperiment, the policy first everywhere else.
_HOOK_FIRST = {PRE_EXPERIMENT_STAGE}
# The stages of an offline run (rlkit/core/offline_run.py): nothing acts, there are no episodes.
_OFFLINE_STAGES = (PRE_EXPERIMENT_STAGE, POST_ACT_STAGE, POST_EXPERIMENT_STAGE)


@dataclass
class CallPlan:
    """What a run calls at each stage, as resolved plan steps, plus the stop checks (which
    include the hooks' ``after_step_check`` / ``after_episode_check`` calls)."""

    stages: dict[AbstractStage, list[PlanStep]] = field(default_factory=dict)
    stop_step: PlanStep | None = None
    stop_episode: PlanStep | None = None
    checks_stop: bool = False  # the stop condition checks anything (after steps or episodes)
    checks_steps: bool = False  # the stop condition checks after steps
    agents: dict[Any, Any] | None = None  # a multi-agent run: each agent's AgentCalls

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
        if self.agents is not None:
            lines.extend(describe_agents(self.agents))
        return "\n".join(lines)


def hook_plan(hook: Any, policy: Any, env: Any) -> dict[AbstractStage | str, list[PlanStep]]:
    """The call plan of any hook: an :class:`AbstractHook`'s own, or every stage for a plain
    callable ``hook(stage, policy, env, action=None)``."""
    if isinstance(hook, AbstractHook):
        return hook.plan(policy, env)
    not_a_class("run", "hook", hook)
    if not callable(hook):
        raise TypeError(
            f"run: hook must be callable as hook(stage, policy, env[, action]), "
            f"got {type(hook).__name__}: {hook!r}"
        )
    name = getattr(hook, "__qualname__", type(hook).__name__)
    # At PreAct the run loop passes the action as the one remaining argument.
    return {
        stage: [PlanStep(partial(hook, stage, policy, env), name, where(hook))] for stage in STAGES
    }


def build_plan(
    policy: Any,
    env: Any,
    hook: Any = None,
    stop_condition: Any = None,
    interrupt: Callable[[], bool] | None = None,
) -> CallPlan:
    """Resolve the calls of ``run(policy, env, stop_condition, hook)`` once.

    ``interrupt`` (``rk.run`` gives its Ctrl-C flag): a check added to the stop condition's
    check after every step, before the hooks' ``after_step_check`` calls, so that they see the
    stop. Hooks are attached to the run first (:meth:`AbstractHook.attach`). Raises
    ``DispatchError`` (a ``TypeError``) naming the types when a method is missing or ambiguous,
    and ``TypeError`` for arguments of the wrong kind.
    """
    if not isinstance(policy, AbstractPolicy):
        not_a_class("run", "policy", policy)
        raise TypeError(
            f"run: policy must be an rk.AbstractPolicy (e.g. rk.Agent, rk.RandomPolicy), got "
            f"{type(policy).__name__}: {policy!r}"
        )
    if isinstance(hook, AbstractHook):
        hook.attach(policy, env, stop_condition, hook)
    agents = None
    if isinstance(env, AbstractOfflineEnv):  # learning from a dataset: no Agent needed
        policy_plan = offline_plan(policy, env)
    elif is_multiagent(env):  # each agent's child planned with its view of the env
        agents = agent_plans(policy, env, _warn_if_it_cannot_learn)
        policy_plan = experiment_steps(agents)
    else:
        policy_plan = policy.plan(env)
        _warn_if_it_cannot_learn(policy, env)
    hooks = {} if hook is None else hook_plan(hook, policy, env)
    plan = CallPlan(agents=agents)
    for stage in STAGES:
        mine, theirs = policy_plan.get(stage, []), hooks.get(stage, [])
        steps = theirs + mine if stage in _HOOK_FIRST else mine + theirs
        if steps:
            plan.stages[stage] = steps
    if stop_condition is not None:
        plan.stop_step, plan.stop_episode = stop_plan(stop_condition, policy, env)
        plan.checks_stop = plan.stop_step is not None or plan.stop_episode is not None
        plan.checks_steps = plan.stop_step is not None
    if interrupt is not None:
        plan.stop_step = _or(plan.stop_step, interrupt)
    after_step, after_episode = (hooks.get(moment, []) for moment in CHECK_MOMENTS)
    plan.stop_step = _then(plan.stop_step, after_step, "no step check")
    plan.stop_episode = _then(plan.stop_episode, after_episode, "no episode check")
    if isinstance(env, AbstractOfflineEnv):
        _drop_acting(plan)
    return plan


def _drop_acting(plan: CallPlan) -> None:
    """An offline run announces PreExperiment, PostAct (one per gradient step) and
    PostExperiment only: the other stages and the episode checks are not in its plan (so
    ``rk.explain`` does not show them)."""
    plan.stages = {s: steps for s, steps in plan.stages.items() if s in _OFFLINE_STAGES}
    plan.stop_episode = None


_EVALUATION_ONLY: ContextVar[bool] = ContextVar("rlkit_evaluation_only", default=False)


@contextlib.contextmanager
def evaluation_only() -> Iterator[None]:
    """Runs started inside are meant not to learn (``rk.evaluate``): a policy whose learner
    could learn is run without the warning that it cannot."""
    token = _EVALUATION_ONLY.set(True)
    try:
        yield
    finally:
        _EVALUATION_ONLY.reset(token)


def _warn_if_it_cannot_learn(policy: Any, env: Any) -> None:
    """Warn when the run's policy holds a learner (``policy.learner``) that has learning
    methods (``update(learner, trajectory, env, stage)`` other than the do-nothing default) but
    is run directly, without a policy that records a trajectory (``rk.Agent``): nothing would
    call those methods, so nothing would be learned."""
    if _EVALUATION_ONLY.get() or getattr(policy, "evaluation_only", False):
        return  # meant for evaluation (rk.evaluate, a policy from rk.greedy)
    learner = getattr(policy, "learner", None)
    if learner is None and getattr(policy, "trajectory", None) is None:
        learner = policy  # a policy that is its own learner (rk.build_policy's)
    found = [] if learner is None else learning_methods(learner)
    if not found:
        return
    methods = f"{found[0]}{', ...' if len(found) > 1 else ''}"
    if learner is policy:
        who = f"{type(policy).__name__} has learning methods ({methods})"
        fix = f"use {type(policy).__name__}.agent(env), or rk.Agent(policy, trajectory)"
    else:
        who = f"{type(policy).__name__}'s learner {type(learner).__name__} has learning methods "
        who += f"({methods})"
        fix = "rk.Agent(policy, trajectory) (e.g. rk.VectorSARTTrajectory() for tabular learners)"
    warnings.warn(
        f"run: {who}, but the policy is run without an rk.Agent, which records the trajectory "
        f"they learn from: nothing will be learned. Wrap it: {fix}; to only evaluate a policy "
        f"use rk.evaluate(policy, env).",
        UserWarning,
        stacklevel=4,
    )


def _then(check: PlanStep | None, after: list[PlanStep], nothing: str) -> PlanStep | None:
    """The stop check followed by the hooks' calls at that moment (the check alone without any).

    The wrapped check returns the stop condition's answer and passes it to every call.
    """
    if not after:
        return check
    first: Callable[[], Any] = check.call if check is not None else _never
    calls = tuple(step.call for step in after)

    def check_then_hooks() -> bool:
        stop = bool(first())
        for call in calls:
            call(stop)
        return stop

    names = ", ".join(step.name for step in after)
    return PlanStep(
        check_then_hooks, f"{check.name if check else nothing}, then {names}", after[0].where
    )


def _or(check: PlanStep | None, interrupt: Callable[[], bool]) -> PlanStep:
    """The step check, or ``interrupt()`` (checked only when the check says go on)."""
    if check is None:
        return PlanStep(interrupt, "Ctrl-C", where(interrupt))
    first = check.call

    def check_or_interrupted() -> bool:
        return bool(first()) or interrupt()

    return PlanStep(check_or_interrupted, f"{check.name} or Ctrl-C", check.where)


def _never() -> bool:
    return False


def explain(policy: Any, env: Any = None, hook: Any = None, stop_condition: Any = None) -> None:
    """Print what a run would do at each stage: the resolved methods and their source.

    Called with one object that has a ``describe()`` method and no environment (an optimizer
    module of ``rk.optimizers``, a call plan), it prints that object's description instead:
    ``rk.explain(optimizer)`` shows a module tree with each module's settings and whether it
    wraps or computes the step.

    Example:
        >>> import rlkit as rk
        >>> rk.explain(rk.RandomPolicy(), rk.GymEnv("CartPole-v1"))  # doctest: +ELLIPSIS
        PreExperiment: (nothing)
        ...
    """
    if env is None and hook is None and stop_condition is None:
        describe = getattr(policy, "describe", None)
        if callable(describe) and not isinstance(policy, AbstractPolicy):
            print(describe())
            return
        raise TypeError(
            f"explain: give an environment to explain a run (explain(policy, env, ...)), or one "
            f"object with a describe() method such as an optimizer module; got "
            f"{type(policy).__name__}: {policy!r:.80} and no environment"
        )
    print(build_plan(policy, env, hook, stop_condition).describe())
