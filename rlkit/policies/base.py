"""The policy interface."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from ..core.dispatch import PlanStep
from ..core.stages import AbstractStage

__all__ = ["AbstractPolicy"]


class AbstractPolicy(ABC):
    """A policy maps an environment to an action: ``policy(env) -> action``.

    It may also react to stages: ``policy(stage, env[, action])``. The run loop does not call
    that per step; it asks :meth:`plan` once for the resolved calls of every stage. A plain
    policy does nothing at any stage; :class:`~rlkit.Agent` adds recording and learning.
    """

    @abstractmethod
    def act(self, env: Any) -> Any:
        """The action to take in ``env``'s current state (never called on a done env)."""

    def plan(self, env: Any) -> dict[AbstractStage, list[PlanStep]]:
        """Resolved calls per stage for this policy in ``env`` (empty: nothing to do)."""
        return {}

    def __call__(self, env_or_stage: Any, env: Any = None, action: Any = None) -> Any:
        if not isinstance(env_or_stage, AbstractStage):
            return self.act(env_or_stage)
        for step in self.plan(env).get(env_or_stage, ()):
            step.call(action) if step_takes_action(env_or_stage) else step.call()
        return None


def step_takes_action(stage: AbstractStage) -> bool:
    """Whether plan steps of ``stage`` are called with the action (only at PreAct)."""
    return stage.method_name == "pre_act"
