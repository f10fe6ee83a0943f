"""The run loop of vector environments (docs/how-to/vector-envs.md): a ``run_loop`` method for
:class:`~rlkit.AbstractVectorEnv`, registered when ``rlkit`` is imported.

::

    hook(PRE_EXPERIMENT_STAGE, policy, env);  policy(PRE_EXPERIMENT_STAGE, env)
    env.reset()   (only when env.needs_reset: a later run continues the sub-envs' episodes)
    loop:
        actions = policy(env)                         one action per sub-env
        policy(PRE_ACT_STAGE, env, actions);  hook(PRE_ACT_STAGE, policy, env, actions)
        env.act(actions)
        policy(POST_ACT_STAGE, env);  hook(POST_ACT_STAGE, policy, env)
        stop = stop_condition.step(...)               once per batch step
        for each sub-env whose episode ended at this step (in sub-env order):
            stop = stop_condition.episode(...) or stop
        if stop: -> finish
    finish: policy(POST_EXPERIMENT_STAGE, env);  hook(POST_EXPERIMENT_STAGE, policy, env)
                                                  (also when something raises)

There are no episode stages for the batch: a policy or hook with PreEpisode/PostEpisode calls is
refused before the run starts (hooks that record episodes have vector forms of their methods,
see :meth:`AbstractHook.plan`). Stop conditions count transitions, ``n_envs`` per step
(``StopAfterNSteps``), and finished sub-env episodes (``StopAfterNEpisodes``).
"""

from __future__ import annotations

from numpy import count_nonzero

from .dispatch import run_loop
from .interfaces import AbstractPolicy, AbstractVectorEnv
from .plan import CallPlan
from .run import _never, in_experiment
from .stages import (
    POST_ACT_STAGE,
    POST_EPISODE_STAGE,
    PRE_ACT_STAGE,
    PRE_EPISODE_STAGE,
)

__all__ = ["check_vector_plan"]


def check_vector_plan(plan: CallPlan, env: AbstractVectorEnv) -> None:
    """Refuse a plan with episode-stage calls: the vector loop never announces them."""
    names = [
        f"{step.name} [{step.where}]"
        for stage in (PRE_EPISODE_STAGE, POST_EPISODE_STAGE)
        for step in plan.stages.get(stage, ())
    ]
    if names:
        raise TypeError(
            f"run: {type(env).__name__} is a vector env, whose run loop has no episode stages, "
            f"but these calls need PreEpisode/PostEpisode: {', '.join(names)}. Use hooks and "
            f"learners that support vector envs (they handle each sub-env's episode ends at "
            f"PostAct), or a single env."
        )


@run_loop.dispatch
def _(policy: AbstractPolicy, env: AbstractVectorEnv, plan: CallPlan, /):
    check_vector_plan(plan, env)
    in_experiment(plan, _steps, policy, env)


def _steps(policy: AbstractPolicy, env: AbstractVectorEnv, plan: CallPlan) -> None:
    pre_act = plan.calls(PRE_ACT_STAGE)
    post_act = plan.calls(POST_ACT_STAGE)
    stop_step = plan.stop_step.call if plan.stop_step is not None else _never
    stop_episode = plan.stop_episode.call if plan.stop_episode is not None else None
    act, env_act = policy.act, env.act
    if env.needs_reset:
        env.reset()
    while True:
        actions = act(env)
        for call in pre_act:
            call(actions)
        env_act(actions)
        for call in post_act:
            call()
        stop = bool(stop_step())
        if stop_episode is not None:
            for _ in range(count_nonzero(env.done)):
                stop = bool(stop_episode()) or stop
        if stop:
            return
