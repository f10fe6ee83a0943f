"""The learner interface and its do-nothing default."""

from __future__ import annotations

from typing import Any

from ..core.dispatch import noop, update
from ..core.stages import AbstractStage
from ..envs.base import AbstractEnv
from ..trajectories.base import AbstractTrajectory

__all__ = ["AbstractLearner"]


class AbstractLearner:
    """A learner estimates values (``learner(env)``: the estimate for the current state) and
    learns in ``update(learner, trajectory, env, stage)`` methods added with
    ``@rk.update.dispatch``. Stages a learner has no method for do nothing.
    """

    def __call__(self, env: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not estimate values of a state")


# ---- any stage: a learner does nothing unless it has a method for the stage ----
@update.dispatch
@noop
def _(
    learner: AbstractLearner,
    trajectory: AbstractTrajectory,
    env: AbstractEnv,
    stage: AbstractStage,
    /,
):
    return None
