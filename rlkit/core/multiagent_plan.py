"""The call plan of a multi-agent run (docs/how-to/multi-agent.md): each agent's child policy
planned once with that agent's view of the env.

``rk.run`` resolves, for every agent of the env, the child policy of the multi-agent policy
(``policy.policy_of(agent)``) and its calls at every stage, with ``env.view(agent)`` as the
env they see. PreExperiment and PostExperiment calls of all children join the run's plan (so
``rk.explain`` lists them with the hooks'); the other stages are called per agent by the
multi-agent loops (:mod:`rlkit.core.multiagent_run`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .dispatch import PlanStep
from .multiagent import AbstractMultiAgentEnv, AbstractMultiAgentPolicy, AbstractParallelEnv
from .stages import (
    POST_ACT_STAGE,
    POST_EPISODE_STAGE,
    POST_EXPERIMENT_STAGE,
    PRE_ACT_STAGE,
    PRE_EPISODE_STAGE,
    PRE_EXPERIMENT_STAGE,
    STAGES,
    AbstractStage,
)

__all__ = ["AgentCalls", "agent_plans", "is_multiagent", "experiment_steps", "describe_agents"]


def is_multiagent(env: Any) -> bool:
    """Whether ``env`` is a turn-based or parallel multi-agent env."""
    return isinstance(env, (AbstractMultiAgentEnv, AbstractParallelEnv))


@dataclass
class AgentCalls:
    """What the run calls for one agent: its child's ``act`` on its view, and its stage calls."""

    agent: Any
    policy: Any
    view: Any
    steps: dict[AbstractStage, list[PlanStep]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.act: Callable[[Any], Any] = self.policy.act
        calls = {stage: tuple(s.call for s in self.steps.get(stage, ())) for stage in STAGES}
        self.pre_episode = calls[PRE_EPISODE_STAGE]
        self.pre_act = calls[PRE_ACT_STAGE]
        self.post_act = calls[POST_ACT_STAGE]
        self.post_episode = calls[POST_EPISODE_STAGE]


def agent_plans(policy: Any, env: Any, warn: Callable[[Any, Any], None]) -> dict[Any, AgentCalls]:
    """Plan every agent's child policy with its view, in the env's agent order. ``warn(child,
    view)`` warns about a child that could learn but is run without an ``rk.Agent``.

    Raises ``TypeError`` when ``policy`` is not a multi-agent policy, and the policy's own
    error (naming the agent) when it has no child for one of the env's agents."""
    if not isinstance(policy, AbstractMultiAgentPolicy):
        raise TypeError(
            f"run: {type(env).__name__} is a multi-agent env; its policy must be an "
            f"rk.MultiAgentPolicy({{agent: policy}}) (one child per agent of {list(env.agents)}), "
            f"got {type(policy).__name__}: {policy!r:.80}"
        )
    plans: dict[Any, AgentCalls] = {}
    for agent in env.agents:
        child = policy.policy_of(agent)
        view = env.view(agent)
        warn(child, view)
        plans[agent] = AgentCalls(agent, child, view, child.plan(view))
    return plans


def experiment_steps(plans: dict[Any, AgentCalls]) -> dict[AbstractStage, list[PlanStep]]:
    """The children's PreExperiment and PostExperiment steps, in agent order: the run's own."""
    steps: dict[AbstractStage, list[PlanStep]] = {}
    for stage in (PRE_EXPERIMENT_STAGE, POST_EXPERIMENT_STAGE):
        found = [s for calls in plans.values() for s in calls.steps.get(stage, ())]
        if found:
            steps[stage] = found
    return steps


def describe_agents(plans: dict[Any, AgentCalls]) -> list[str]:
    """Lines of ``rk.explain`` for each agent's per-episode and per-step calls."""
    lines = []
    for agent, calls in plans.items():
        lines.append(f"agent {agent!r} ({type(calls.policy).__name__}):")
        for stage in (PRE_EPISODE_STAGE, PRE_ACT_STAGE, POST_ACT_STAGE, POST_EPISODE_STAGE):
            steps = calls.steps.get(stage, ())
            lines.append(f"  {stage}:" + ("" if steps else " (nothing)"))
            lines.extend(f"    {step}" for step in steps)
    return lines
