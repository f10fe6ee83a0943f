"""The run loop of offline RL (docs/how-to/offline-rl.md): a ``run_loop`` method for
:class:`~rlkit.AbstractOfflineEnv`, registered when ``rlkit`` is imported.

::

    hook(PRE_EXPERIMENT_STAGE, policy, env);  policy(PRE_EXPERIMENT_STAGE, env)
    loop:
        policy(POST_ACT_STAGE, env)        one gradient step: batch = env.sample(); update(policy, batch)
        hook(POST_ACT_STAGE, policy, env)
        if stop_condition.step(...): -> finish     (counts gradient steps)
    finish: policy(POST_EXPERIMENT_STAGE, env);  hook(POST_EXPERIMENT_STAGE, policy, env)
                                           (also when something raises)

Nothing acts, so PreEpisode, PreAct and PostEpisode are never announced (hooks that have them
still work: those methods are left out of the plan), and a stop condition must check after steps
(``rk.StopAfterNSteps(n)``: ``n`` gradient steps); one that counts only episodes is refused.
"""  # noqa: E501

from __future__ import annotations

from .dispatch import run_loop
from .interfaces import AbstractOfflineEnv, AbstractPolicy
from .plan import CallPlan
from .run import in_experiment
from .stages import POST_ACT_STAGE

__all__: list[str] = []


@run_loop.dispatch
def _(policy: AbstractPolicy, env: AbstractOfflineEnv, plan: CallPlan, /):
    if not plan.checks_steps:
        raise TypeError(
            f"run: the stop condition never checks after a step, and the offline env {env!r} "
            f"has no episodes, so the run would never stop; count gradient steps with "
            f"rk.StopAfterNSteps(n)"
        )
    in_experiment(plan, _gradient_steps, policy, env)


def _gradient_steps(policy: AbstractPolicy, env: AbstractOfflineEnv, plan: CallPlan) -> None:
    post_act = plan.calls(POST_ACT_STAGE)
    stop_step = plan.stop_step.call
    while True:
        for call in post_act:
            call()
        if stop_step():
            return
