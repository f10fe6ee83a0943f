"""Planners have no inference artifact: ``rk.PETS`` chooses each action by planning through its
learned model (and a reward function that may be any Python function), so there is no policy
network to save. ``rk.save`` refuses it with a message that says how to keep one: its
checkpoints (``rlkit run``'s run directory, ``rk.CheckpointHook``) hold the model and the
planner's state, and ``rlkit resume`` continues it.

Example:
    >>> import rlkit as rk
    >>> rk.save(rk.PETS(rk.GymEnv("Pendulum-v1")), "pets.rlkit")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: rk.save: PETS has no inference artifact: it plans through its learned model at every step...
"""  # noqa: E501

from __future__ import annotations

from ..learners.model_based.pets import PETS
from .registry import Artifact, policy_artifact

__all__: list[str] = []


@policy_artifact.register
def _(policy: PETS) -> Artifact:
    raise TypeError(
        "rk.save: PETS has no inference artifact: it plans through its learned model at every "
        "step (no policy network, and its reward_fn may be any Python function); keep a "
        "trained PETS with a checkpoint (rk.CheckpointHook, or rlkit run's run directory, "
        "continued by rlkit resume) and act with it as it is"
    )
