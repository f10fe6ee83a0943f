"""gymnasium-robotics' goal-conditioned environments (``FetchReach-v4`` and the other Fetch,
Hand and maze tasks): :func:`require_robotics` imports the package, registers its ids with
gymnasium and makes it run with the installed MuJoCo; ``rk.GymEnv("FetchReach-v4")`` then
takes the env as any other (a ``Dict`` observation with ``observation``, ``achieved_goal`` and
``desired_goal``; ``rk.HER`` finds the unwrapped env's ``compute_reward``:
docs/how-to/observations.md).

MuJoCo 4 compatibility: gymnasium-robotics 1.4.2 (the newest release) checks a joint's type
with ``joint_type in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)``, where
``joint_type`` is a ``numpy.int32`` from ``model.jnt_type``. MuJoCo 4's enums no longer compare
equal to numpy integers from their own side (``mjtJoint.mjJNT_SLIDE == numpy.int32(2)`` is
False, ``numpy.int32(2) == mjtJoint.mjJNT_SLIDE`` True), so that membership test fails and
every Fetch env's constructor raises ``AssertionError``. Where (and only where) that is so,
:func:`require_robotics` gives gymnasium-robotics' ``mujoco_utils`` module a view of ``mujoco``
whose ``mjtJoint`` members are plain ints (the same values); everything else is MuJoCo's own.
The simulation is untouched.

A missing package is a ``ModuleNotFoundError`` naming the exact pip command.
"""

from __future__ import annotations

import types
from typing import Any

import gymnasium as gym
import numpy as np

__all__ = ["ROBOTICS_HINT", "require_robotics"]

ROBOTICS_HINT = "pip install 'gymnasium-robotics>=1.4'"


def require_robotics(what: str) -> Any:
    """Import ``gymnasium_robotics``, register its environments (``FetchReach-v4``, ...) and
    make its MuJoCo helpers work with MuJoCo 4 (module docstring), or raise
    ``ModuleNotFoundError`` naming ``what`` and the exact pip command.

    Example:
        >>> require_robotics("HER_SAC_FetchReach").__name__
        'gymnasium_robotics'
        >>> import gymnasium as gym
        >>> "FetchReach-v4" in gym.registry
        True
    """
    try:
        import gymnasium_robotics
        from gymnasium_robotics.utils import mujoco_utils
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            f"{what} needs gymnasium-robotics (and MuJoCo), which is not installed "
            f"({error.name} is missing): {ROBOTICS_HINT}",
            name=error.name,
        ) from error
    gym.register_envs(gymnasium_robotics)
    _joint_types_as_ints(mujoco_utils)
    return gymnasium_robotics


class _MujocoWithIntJointTypes(types.ModuleType):
    """``mujoco`` as gymnasium-robotics' helpers see it: a copy of the module's namespace (the
    same functions and objects, looked up as fast as in the module itself: the helpers run at
    every step) with ``mjtJoint``'s members as ints."""

    def __init__(self, mujoco: Any) -> None:
        super().__init__(mujoco.__name__)
        self.__dict__.update(vars(mujoco))
        members = mujoco.mjtJoint.__members__.items()
        self.mjtJoint = types.SimpleNamespace(**{k: int(v) for k, v in members})


def _joint_types_as_ints(mujoco_utils: Any) -> None:
    """Give ``mujoco_utils`` the int-typed ``mjtJoint`` where MuJoCo's enums do not compare
    equal to numpy ints (MuJoCo 4); nothing otherwise, or when already done."""
    mujoco = getattr(mujoco_utils, "mujoco", None)
    if mujoco is None or isinstance(mujoco, _MujocoWithIntJointTypes):
        return
    slide = mujoco.mjtJoint.mjJNT_SLIDE
    if np.int32(int(slide)) in (slide,):  # membership works: MuJoCo 3, nothing to do
        return
    mujoco_utils.mujoco = _MujocoWithIntJointTypes(mujoco)
