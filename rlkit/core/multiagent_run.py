"""The run loops of multi-agent environments (docs/how-to/multi-agent.md): ``run_loop``
methods for :class:`~rlkit.AbstractMultiAgentEnv` (turn-based) and
:class:`~rlkit.AbstractParallelEnv` (simultaneous), registered when ``rlkit`` is imported.

Each agent's child policy sees its own single-agent episode through ``env.view(agent)``. The
turn-based loop::

    hook(PRE_EXPERIMENT_STAGE, policy, env);  every child(PRE_EXPERIMENT_STAGE, its view)
    loop:
        env.reset()            (not when continuing an episode a previous run stopped in)
        every child(PRE_EPISODE_STAGE, its view);  hook(PRE_EPISODE_STAGE, policy, env)
        while not env.done:
            agent = env.current_agent;  child, view = agent's
            if agent's previous step is open:  child(POST_ACT_STAGE, view)   its step ends
            action = child(view)
            child(PRE_ACT_STAGE, view, action);  hook(PRE_ACT_STAGE, policy, env, action)
            env.act(action)                     agent's step is open
            hook(POST_ACT_STAGE, policy, env)
            if stop_condition(policy, env): -> finish
        every agent with an open step: child(POST_ACT_STAGE, view)   its final reward
        every child(POST_EPISODE_STAGE, its view);  hook(POST_EPISODE_STAGE, policy, env)
    finish: every child(POST_EXPERIMENT_STAGE, its view);  hook(POST_EXPERIMENT_STAGE, ...)

An agent's step thus runs from its action to its next turn (or the episode's end): its PostAct
sees the reward it received meanwhile, also from the other agents' actions (the loser of a
board game gets its -1 after the winner's move), and the observation it acts on next. The
parallel loop asks every live agent's child for an action and announces its PreAct at once
(so a policy shared by several agents records each agent's own choice, e.g. PPO's
log-probability), performs all actions together, then PostAct to each agent that acted (an
agent that leaves sees its last PostAct with its termination); PostEpisode goes to every
child. The hooks see the whole env: ``env.reward`` is a dict by agent. A stop in the middle
of an episode announces neither the open steps' PostAct nor PostEpisode; a later run
continues the episode.
"""

from __future__ import annotations

from typing import Any

from .dispatch import run_loop
from .interfaces import AbstractPolicy
from .multiagent import AbstractMultiAgentEnv, AbstractParallelEnv
from .plan import CallPlan
from .run import _never, in_experiment
from .stages import POST_ACT_STAGE, POST_EPISODE_STAGE, PRE_ACT_STAGE, PRE_EPISODE_STAGE

__all__: list[str] = []


@run_loop.dispatch
def _(policy: AbstractPolicy, env: AbstractMultiAgentEnv, plan: CallPlan, /):
    in_experiment(plan, _turns, policy, env)


@run_loop.dispatch
def _(policy: AbstractPolicy, env: AbstractParallelEnv, plan: CallPlan, /):
    in_experiment(plan, _simultaneous, policy, env)


def _calls_of(plan: CallPlan, env: Any, agent: Any) -> Any:
    calls = plan.agents.get(agent) if plan.agents is not None else None
    if calls is None:
        raise ValueError(
            f"run: {type(env).__name__} says agent {agent!r} acts, but it is not one of its "
            f"agents {list(env.agents)} the run was planned for"
        )
    return calls


def _start_episode(plan: CallPlan, env: Any, hook_calls: tuple) -> None:
    env.reset()
    for calls in plan.agents.values():
        for call in calls.pre_episode:
            call()
    for call in hook_calls:
        call()


def _end_episode(plan: CallPlan, hook_calls: tuple) -> None:
    for calls in plan.agents.values():
        for call in calls.post_episode:
            call()
    for call in hook_calls:
        call()


def _turns(policy: AbstractPolicy, env: AbstractMultiAgentEnv, plan: CallPlan) -> None:
    pre_episode = plan.calls(PRE_EPISODE_STAGE)
    pre_act = plan.calls(PRE_ACT_STAGE)
    post_act = plan.calls(POST_ACT_STAGE)
    post_episode = plan.calls(POST_EPISODE_STAGE)
    stop_step = plan.stop_step.call if plan.stop_step is not None else _never
    stop_episode = plan.stop_episode.call if plan.stop_episode is not None else _never
    open_steps = env.open_steps
    while True:
        if env.done or env.needs_reset:
            open_steps.clear()
            _start_episode(plan, env, pre_episode)
        stopped = False
        while not env.done:
            agent = env.current_agent
            calls = _calls_of(plan, env, agent)
            if agent in open_steps:  # its previous step ends at its turn
                open_steps.remove(agent)
                for call in calls.post_act:
                    call()
            action = calls.act(calls.view)
            for call in calls.pre_act:
                call(action)
            for call in pre_act:
                call(action)
            env.act(action)
            open_steps.append(agent)
            for call in post_act:
                call()
            if stop_step():
                stopped = True
                break
        if not env.done:  # stopped in the middle of an episode: no PostEpisode for it
            return
        while open_steps:  # every agent's last step ends with the episode
            for call in _calls_of(plan, env, open_steps.pop(0)).post_act:
                call()
        _end_episode(plan, post_episode)
        if stop_episode() or stopped:
            return


def _simultaneous(policy: AbstractPolicy, env: AbstractParallelEnv, plan: CallPlan) -> None:
    pre_episode = plan.calls(PRE_EPISODE_STAGE)
    pre_act = plan.calls(PRE_ACT_STAGE)
    post_act = plan.calls(POST_ACT_STAGE)
    post_episode = plan.calls(POST_EPISODE_STAGE)
    stop_step = plan.stop_step.call if plan.stop_step is not None else _never
    stop_episode = plan.stop_episode.call if plan.stop_episode is not None else _never
    while True:
        if env.done or env.needs_reset:
            _start_episode(plan, env, pre_episode)
        stopped = False
        while not env.done:
            acting = [_calls_of(plan, env, agent) for agent in env.live_agents]
            actions = {}
            for calls in acting:  # each agent's PreAct right after its own choice: a policy
                action = actions[calls.agent] = calls.act(calls.view)  # shared by several
                for call in calls.pre_act:  # agents records each agent's own action and extras
                    call(action)
            for call in pre_act:
                call(actions)
            env.act(actions)
            for calls in acting:
                for call in calls.post_act:
                    call()
            for call in post_act:
                call()
            if stop_step():
                stopped = True
                break
        if not env.done:
            return
        _end_episode(plan, post_episode)
        if stop_episode() or stopped:
            return
