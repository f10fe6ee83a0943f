"""Gymnasium spaces as JSON for inference artifacts (the helpers live in
``rlkit/core/spaces.py``, shared with datasets; a malformed description read here is an
:class:`~rlkit.deploy.errors.ArtifactError`), and the check that an env fits a policy's spaces.

Example:
    >>> import gymnasium as gym
    >>> space = gym.spaces.Box(-1.0, 1.0, (2,))
    >>> space_from_json(space_to_json(space)) == space
    True
"""

from __future__ import annotations

from typing import Any

from ..core import spaces as _core
from ..core.spaces import space_to_json
from .errors import ArtifactError

__all__ = ["space_to_json", "space_from_json", "check_env_spaces"]


def space_from_json(data: Any, where: str = "the artifact") -> Any:
    """The space :func:`space_to_json` described; a malformed description is an
    :class:`~rlkit.deploy.errors.ArtifactError`."""
    return _core.space_from_json(data, where, ArtifactError)


def check_env_spaces(owner: str, state_space: Any, action_space: Any, env: Any) -> None:
    """Refuse an env (an rlkit env or a gymnasium one) whose spaces do not fit the policy's,
    naming both pairs (``rlkit.policies.spaces``: shapes, kinds and sizes; bounds are not
    compared)."""
    from ..policies.spaces import short_space, spaces_fit

    env_state = getattr(env, "state_space", None) or getattr(env, "observation_space", None)
    env_action = getattr(env, "action_space", None)
    if env_state is None or env_action is None:
        raise TypeError(f"{owner}: env {env!r} has no observation and action spaces")
    if not spaces_fit(state_space, action_space, env_state, env_action):
        raise ValueError(
            f"{owner}: the policy was saved for observations {short_space(state_space)} and "
            f"actions {short_space(action_space)}, but the env {env!r} has observations "
            f"{short_space(env_state)} and actions {short_space(env_action)}; load it for an "
            f"env with the policy's spaces"
        )
