"""``VBasedPolicy(learner, mapper)``: a policy around a state-value learner."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.dispatch import forward, update
from ..core.interfaces import AbstractEnv, AbstractLearner, AbstractPolicy, AbstractTrajectory
from ..core.stages import AbstractStage
from ..core.state import get_state
from .q_based import check_spaces

__all__ = ["VBasedPolicy"]


class VBasedPolicy(AbstractPolicy):
    """Act with ``mapper``; learning goes to the (state-value) learner.

    ``mapper`` is either a policy, called as ``mapper.act(env)`` (e.g. ``rk.RandomPolicy(seed=0)``
    to predict the values of the random policy), or a callable ``mapper(env, learner) -> action``
    (e.g. a one-step greedy look-ahead on the learner's values). ``update(policy, trajectory,
    env, stage)`` is forwarded to ``update(learner, trajectory, env, stage)``, resolved once by
    the call plan.

    Example:
        >>> import rlkit as rk
        >>> class Values(rk.AbstractLearner):
        ...     def __call__(self, env):
        ...         return 0.0
        >>> env = rk.GymEnv("CliffWalking-v1", seed=0); env.reset()
        >>> rk.VBasedPolicy(Values(), rk.RandomPolicy(seed=0))(env) in range(4)
        True
        >>> rk.VBasedPolicy(Values(), lambda env, learner: 2)(env)
        2
    """

    def __init__(
        self, learner: AbstractLearner, mapper: AbstractPolicy | Callable[[Any, Any], Any]
    ) -> None:
        if not isinstance(learner, AbstractLearner):
            raise TypeError(
                f"VBasedPolicy: learner must be an rk.AbstractLearner, got "
                f"{type(learner).__name__}: {learner!r}"
            )
        if not isinstance(mapper, AbstractPolicy) and not callable(mapper):
            raise TypeError(
                f"VBasedPolicy: mapper must be an rk.AbstractPolicy or a callable "
                f"mapper(env, learner) -> action, got {type(mapper).__name__}: {mapper!r}"
            )
        self.learner = learner
        self.mapper = mapper
        self._mapper_is_policy = isinstance(mapper, AbstractPolicy)

    def __repr__(self) -> str:
        return f"VBasedPolicy({self.learner!r}, {self.mapper!r})"

    def plan(self, env: Any) -> dict:
        """Checks at plan time that the learner's approximator fits the env's state space."""
        check_spaces(self.learner, env, with_actions=False)
        return super().plan(env)

    def act(self, env: Any) -> Any:
        if self._mapper_is_policy:
            return self.mapper.act(env)
        return self.mapper(env, self.learner)

    def state_dict(self) -> dict[str, Any]:
        """The learner's state and the mapper's (None for a mapper without ``state_dict``,
        taken to be stateless)."""
        mapper_state = getattr(self.mapper, "state_dict", None)
        return {
            "learner": get_state(self.learner),
            "mapper": None if mapper_state is None else mapper_state(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a state saved by :meth:`state_dict`."""
        self.learner.load_state_dict(state["learner"])
        if state.get("mapper") is not None:
            self.mapper.load_state_dict(state["mapper"])


# ---- every stage: learning is the learner's ----
@update.dispatch
@forward("learner")
def _(
    policy: VBasedPolicy,
    trajectory: AbstractTrajectory,
    env: AbstractEnv,
    stage: AbstractStage,
    /,
):
    return update(policy.learner, trajectory, env, stage)
