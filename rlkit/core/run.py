"""``rk.run``: the loop that announces the stages."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from .dispatch import restore, run_arguments, run_loop
from .interfaces import (
    AbstractEnv,
    AbstractHook,
    AbstractOfflineEnv,
    AbstractPolicy,
    AbstractVectorEnv,
)
from .interrupt import CtrlC
from .multiagent import AbstractMultiAgentEnv, AbstractParallelEnv
from .plan import CallPlan, build_plan
from .stages import (
    POST_ACT_STAGE,
    POST_EPISODE_STAGE,
    POST_EXPERIMENT_STAGE,
    PRE_ACT_STAGE,
    PRE_EPISODE_STAGE,
    PRE_EXPERIMENT_STAGE,
)

__all__ = ["run"]

_ENV_TYPES = (
    AbstractEnv,
    AbstractVectorEnv,
    AbstractOfflineEnv,
    AbstractMultiAgentEnv,
    AbstractParallelEnv,
)


def run(
    policy: Any,
    env: Any = None,
    stop_condition: Any = None,
    hook: Any = None,
    *,
    resume_from: str | os.PathLike | None = None,
) -> Any:
    """Run ``policy`` in ``env`` until ``stop_condition`` says stop; return the hook.

    ``rk.run(experiment)`` runs a bundled :class:`~rlkit.Experiment` (and returns its hook).
    The calls of every stage are resolved once before the first step (see ``rk.explain``). An
    episode a previous run stopped in the middle of is continued, not reset. When anything
    raises, PostExperiment is still announced, then the exception propagates.

    **Ctrl-C** (in the main thread) stops the run cleanly: the first one at the end of the
    current step, where the stop checks say stop (a ``CheckpointHook`` writes its final
    checkpoint, which resuming continues), then PostExperiment is announced and ``run`` returns
    the hook after saying on standard error how to continue; a second Ctrl-C raises
    ``KeyboardInterrupt`` at once. When the stop condition holds an ``rk.StopSignal``, Ctrl-C
    sets it and ``run`` says nothing: its owner reports the stop (as the ``rlkit`` command
    does). See :mod:`rlkit.core.interrupt`.

    ``resume_from`` (a checkpoint file, or a folder: its newest checkpoint) restores the policy,
    env, stop condition and hooks saved by an ``rk.CheckpointHook`` before the run starts, so
    the run continues exactly where the saved one was (the objects must be built the same way).
    The final checkpoint of a run is written when its stop condition says stop, before
    PostExperiment; from it (a run killed after its final checkpoint), when the restored stop
    condition is still satisfied, ``run`` takes no step and announces PostExperiment only, so
    the resumed run ends as the uninterrupted one did (e.g. ``rk.EvaluationHook(...,
    restore_best=True)`` restores the best policy), each hook's PostExperiment called once.

    Example:
        >>> import rlkit as rk
        >>> hook = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
        ...               rk.StopAfterNEpisodes(5), rk.TotalRewardPerEpisode())
        >>> len(hook.rewards)
        5
    """
    bundled = run_arguments(policy)  # an Experiment: its policy, env, stop condition and hook
    if bundled is not None:
        if env is not None or stop_condition is not None or hook is not None:
            raise TypeError("run(experiment) takes no other arguments: the experiment has them")
        return run(*bundled, resume_from=resume_from)
    if not isinstance(env, _ENV_TYPES):
        raise TypeError(
            f"run: env must be an rk.AbstractEnv (wrap gymnasium envs with rk.GymEnv), an "
            f"rk.AbstractVectorEnv (rk.VectorGymEnv), an rk.AbstractOfflineEnv "
            f"(rk.OfflineEnv) or a multi-agent env (rk.PettingZooEnv, rk.PettingZooParallelEnv), "
            f"got "
            f"{type(env).__name__}: {env!r}"
        )
    if stop_condition is None:
        raise TypeError("run: a stop_condition is required, e.g. rk.StopAfterNSteps(10_000)")
    with CtrlC(stop_condition) as ctrl_c:  # restore and plan here: their warnings name the caller
        finished = resume_from is not None and restore(
            resume_from, policy, env, stop_condition, hook
        )
        interrupt = ctrl_c.pressed if ctrl_c.installed else None
        plan = build_plan(policy, env, hook, stop_condition, interrupt=interrupt)
        if finished is True:  # the saved run had reached its stop: only its end is left to run
            _call_all(plan.calls(POST_EXPERIMENT_STAGE))
        elif not plan.checks_stop:
            raise TypeError(f"run: stop condition {stop_condition!r} never checks anything")
        else:
            run_loop(policy, env, plan)
    if ctrl_c.pressed() and not ctrl_c.signals:  # a StopSignal's owner reports it
        print(interrupted_message(hook), file=sys.stderr, flush=True)
    return hook


def interrupted_message(hook: Any) -> str:
    """What ``rk.run`` says when Ctrl-C stopped it: what happened and how to continue (the
    hooks' :meth:`~rlkit.AbstractHook.resume_hint`, e.g. a ``CheckpointHook``'s)."""
    hint = hook.resume_hint() if isinstance(hook, AbstractHook) else None
    head = (
        "rk.run: stopped by Ctrl-C at the end of a step (PostExperiment was announced; the "
        "hook returned holds the results so far)"
    )
    if hint is None:
        return (
            f"{head}. Nothing to continue from: add an rk.CheckpointHook to the run to be able "
            f"to resume it. (A second Ctrl-C stops at once, without PostExperiment.)"
        )
    return f"{head}; {hint}"


@run_loop.dispatch
def _(policy: AbstractPolicy, env: AbstractEnv, plan: CallPlan, /):
    in_experiment(plan, _episodes, policy, env)


def in_experiment(plan: CallPlan, loop: Callable[..., None], policy: Any, env: Any) -> None:
    """PreExperiment, then ``loop(policy, env, plan)``, then PostExperiment, which is announced
    also when something raised (the original exception then propagates): the frame every run
    loop (single, vector) shares."""
    post_experiment = plan.calls(POST_EXPERIMENT_STAGE)
    try:
        for call in plan.calls(PRE_EXPERIMENT_STAGE):
            call()
        loop(policy, env, plan)
    except BaseException as error:
        _call_all(post_experiment, failing=error)
        raise
    _call_all(post_experiment)


def _episodes(policy: AbstractPolicy, env: AbstractEnv, plan: CallPlan) -> None:
    pre_episode = plan.calls(PRE_EPISODE_STAGE)
    pre_act = plan.calls(PRE_ACT_STAGE)
    post_act = plan.calls(POST_ACT_STAGE)
    post_episode = plan.calls(POST_EPISODE_STAGE)
    stop_step = plan.stop_step.call if plan.stop_step is not None else _never
    stop_episode = plan.stop_episode.call if plan.stop_episode is not None else _never
    act, env_act, reset = policy.act, env.act, env.reset
    while True:
        if env.done or env.needs_reset:
            reset()
            for call in pre_episode:
                call()
        stopped = False
        while not env.done:
            action = act(env)
            for call in pre_act:
                call(action)
            env_act(action)
            for call in post_act:
                call()
            if stop_step():
                stopped = True
                break
        if not env.done:  # stopped in the middle of an episode: no PostEpisode for it
            return
        for call in post_episode:
            call()
        if stop_episode() or stopped:
            return


def _never() -> bool:
    return False


def _call_all(calls: tuple, failing: BaseException | None = None) -> None:
    """Call every function even if one raises.

    Without ``failing``, the first error is re-raised after all calls. While the run is already
    failing with ``failing``, errors of these calls are attached to it as notes instead, so the
    original exception is the one that propagates.
    """
    error: BaseException | None = None
    for call in calls:
        try:
            call()
        except BaseException as e:  # noqa: BLE001 - re-raised or attached below
            if failing is not None and hasattr(failing, "add_note"):
                failing.add_note(f"PostExperiment call {call!r} also raised {e!r}")
            error = error or e
    if error is not None and failing is None:
        raise error
