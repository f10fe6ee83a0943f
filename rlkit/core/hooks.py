"""Hooks: callables ``hook(stage, policy, env[, action])`` that observe a run.

A hook class overrides the stage methods it needs (``pre_experiment``, ``pre_episode``,
``pre_act`` (with the action), ``post_act``, ``post_episode``, ``post_experiment``); the run loop
resolves them once per run and never calls the ones left at the default. Hooks compose with ``+``
and run in order. Any callable with the signature ``f(stage, policy, env, action=None)`` is
accepted as a hook too (it is then called at every stage).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from .dispatch import PlanStep, where
from .stages import STAGES, AbstractStage

__all__ = ["AbstractHook", "EmptyHook", "ComposedHook", "hook_plan"]


class AbstractHook:
    """Base class of hooks: override the stage methods you need.

    Example:
        >>> import rlkit as rk
        >>> class CountSteps(rk.AbstractHook):
        ...     def __init__(self):
        ...         self.steps = 0
        ...     def post_act(self, policy, env):
        ...         self.steps += 1
        >>> hook = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
        ...               rk.StopAfterNSteps(50), CountSteps())
        >>> hook.steps
        50
    """

    def pre_experiment(self, policy: Any, env: Any) -> None:
        """Called once before the first episode."""

    def pre_episode(self, policy: Any, env: Any) -> None:
        """Called after each reset."""

    def pre_act(self, policy: Any, env: Any, action: Any) -> None:
        """Called after the policy chose ``action``, before the env performs it."""

    def post_act(self, policy: Any, env: Any) -> None:
        """Called after the env performed the action."""

    def post_episode(self, policy: Any, env: Any) -> None:
        """Called after the last step of each finished episode."""

    def post_experiment(self, policy: Any, env: Any) -> None:
        """Called once at the end of the run, also when it ends with an exception."""

    def __call__(self, stage: AbstractStage, policy: Any, env: Any, action: Any = None) -> None:
        method = getattr(self, stage.method_name)
        if stage.method_name == "pre_act":
            method(policy, env, action)
        else:
            method(policy, env)

    def __add__(self, other: Any) -> ComposedHook:
        return ComposedHook(self, other)

    def __radd__(self, other: Any) -> ComposedHook:
        return ComposedHook(other, self)

    def plan(self, policy: Any, env: Any) -> dict[AbstractStage, list[PlanStep]]:
        """Resolved calls per stage: the overridden stage methods, bound to policy and env."""
        plan: dict[AbstractStage, list[PlanStep]] = {}
        cls = type(self)
        for stage in STAGES:
            name = stage.method_name
            if getattr(cls, name) is getattr(AbstractHook, name) and name not in vars(self):
                continue
            method = getattr(self, name)
            plan[stage] = [
                PlanStep(partial(method, policy, env), f"{cls.__name__}.{name}", where(method))
            ]
        return plan


class EmptyHook(AbstractHook):
    """A hook that does nothing (costs nothing: the call plan drops it)."""

    def __repr__(self) -> str:
        return "EmptyHook()"


class ComposedHook(AbstractHook):
    """Hooks called in order at every stage; build it with ``a + b + c``.

    Example:
        >>> import rlkit as rk
        >>> hook = rk.TotalRewardPerEpisode() + rk.StepsPerEpisode()
        >>> [type(h).__name__ for h in hook.hooks]
        ['TotalRewardPerEpisode', 'StepsPerEpisode']
    """

    def __init__(self, *hooks: Any) -> None:
        flat: list[Any] = []
        for h in hooks:
            if not callable(h):
                raise TypeError(
                    f"ComposedHook: expected hooks (callables hook(stage, policy, env[, action])),"
                    f" got {type(h).__name__}: {h!r}"
                )
            flat.extend(h.hooks if isinstance(h, ComposedHook) else (h,))
        self.hooks = tuple(flat)

    def __repr__(self) -> str:
        return " + ".join(repr(h) for h in self.hooks)

    def __getitem__(self, index: int) -> Any:
        return self.hooks[index]

    def __call__(self, stage: AbstractStage, policy: Any, env: Any, action: Any = None) -> None:
        for h in self.hooks:
            h(stage, policy, env, action) if stage.method_name == "pre_act" else h(
                stage, policy, env
            )

    def plan(self, policy: Any, env: Any) -> dict[AbstractStage, list[PlanStep]]:
        plan: dict[AbstractStage, list[PlanStep]] = {}
        for h in self.hooks:
            for stage, steps in hook_plan(h, policy, env).items():
                plan.setdefault(stage, []).extend(steps)
        return plan


def hook_plan(hook: Any, policy: Any, env: Any) -> dict[AbstractStage, list[PlanStep]]:
    """The call plan of any hook: an :class:`AbstractHook`'s own, or every stage for a plain
    callable ``hook(stage, policy, env, action=None)``."""
    if isinstance(hook, AbstractHook):
        return hook.plan(policy, env)
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
