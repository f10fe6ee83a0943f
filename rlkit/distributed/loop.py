"""The run loop of an actor-learner split (``rk.run(agent, actor_learner, ...)``): the vector
loop (:mod:`rlkit.core.vector_run`) with the actors' actions instead of the policy's, and the
actors' priorities for a prioritized replay. Registered when :mod:`rlkit.distributed` is
imported (Ray workers import it with the :class:`~rlkit.distributed.actor.Actor` class).

::

    hook(PRE_EXPERIMENT_STAGE, agent, al);  agent(PRE_EXPERIMENT_STAGE, al)
    al.reset()  (the first time: the actors act their first chunks)
    loop:
        actions = al.next_actions(agent)      the actors' actions (next round when due)
        agent(PRE_ACT_STAGE, al, actions);  hook(PRE_ACT_STAGE, agent, al, actions)
        al.act(actions)                        the actors' outcomes of those actions
        agent(POST_ACT_STAGE, al);  hook(POST_ACT_STAGE, agent, al)   (records, learns)
        stop checks as in the vector loop
"""

from __future__ import annotations

import numpy as np
from numpy import count_nonzero

from ..core.dispatch import run_loop, update
from ..core.interfaces import AbstractPolicy
from ..core.plan import CallPlan
from ..core.run import _never, in_experiment
from ..core.stages import POST_ACT_STAGE, PRE_ACT_STAGE, PostActStage
from ..core.vector_run import check_vector_plan
from ..trajectories.prioritized import PrioritizedCircularArraySARTTrajectory
from .actor_learner import ActorLearner

__all__: list[str] = []


@run_loop.dispatch
def _(policy: AbstractPolicy, env: ActorLearner, plan: CallPlan, /):
    if policy is not env.policy:
        raise TypeError(
            f"run: {env!r} feeds the learner it was made with ({type(env.policy).__name__} "
            f"at {id(env.policy):#x}); run that one: rk.run(al.policy, al, ...) or al.run(...)"
        )
    check_vector_plan(plan, env)
    in_experiment(plan, _steps, policy, env)


def _steps(policy: AbstractPolicy, env: ActorLearner, plan: CallPlan) -> None:
    pre_act = plan.calls(PRE_ACT_STAGE)
    post_act = plan.calls(POST_ACT_STAGE)
    stop_step = plan.stop_step.call if plan.stop_step is not None else _never
    stop_episode = plan.stop_episode.call if plan.stop_episode is not None else None
    if env.needs_reset:
        env.reset()
    while True:
        actions = env.next_actions(policy)
        for call in pre_act:
            call(actions)
        env.act(actions)
        for call in post_act:
            call()
        stop = bool(stop_step())
        if stop_episode is not None:
            for _ in range(count_nonzero(env.done)):
                stop = bool(stop_episode()) or stop
        if stop:
            return


# ---- PostAct: Ape-X's actor-side priorities for a prioritized replay ----
@update.dispatch
def _(
    trajectory: PrioritizedCircularArraySARTTrajectory,
    policy: AbstractPolicy,
    env: ActorLearner,
    stage: PostActStage,
    /,
):
    rows = (trajectory.head + np.arange(trajectory.n_pending)) % trajectory.capacity
    trajectory.end_transitions(env.reward, env.is_terminated, env.is_truncated, env.final_state)
    if env.priority is not None:
        trajectory.update_priorities(rows, env.priority)
