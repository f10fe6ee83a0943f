"""Gymnasium spaces as JSON for inference artifacts, and the check that an env fits a policy's
spaces. The leaf spaces (``Box``, ``Discrete``, ``MultiDiscrete``, ``MultiBinary``) are written
by ``rlkit/core/spaces.py`` (shared with datasets); ``Dict`` and ``Tuple`` observation spaces
(nested as gymnasium allows) are written here, one description per key or position, keys in
the space's own order (``{"type": "Dict", "spaces": [[key, space], ...]}``, ``{"type":
"Tuple", "spaces": [space, ...]}``). A malformed description read here is an
:class:`~rlkit.deploy.errors.ArtifactError`.

Example:
    >>> import gymnasium as gym
    >>> space = gym.spaces.Box(-1.0, 1.0, (2,))
    >>> space_from_json(space_to_json(space)) == space
    True
    >>> nested = gym.spaces.Dict({"b": gym.spaces.Discrete(3),
    ...                           "a": gym.spaces.Tuple((space, gym.spaces.MultiBinary(2)))})
    >>> back = space_from_json(space_to_json(nested))
    >>> back == nested, list(back.spaces) == list(nested.spaces)
    (True, True)
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from ..core import spaces as _core
from .errors import ArtifactError

__all__ = ["space_to_json", "space_from_json", "check_env_spaces"]


def space_to_json(space: Any, owner: str = "rk.save") -> dict[str, Any]:
    """``space`` as a JSON-ready dict: the leaf spaces of ``rlkit/core/spaces.py``, and
    ``Dict`` and ``Tuple`` spaces of them (nested); any other space is refused naming it."""
    if isinstance(space, gym.spaces.Dict):
        keys = list(space.spaces)
        if not all(isinstance(key, str) for key in keys):
            raise TypeError(
                f"{owner}: the Dict space {space} has keys {keys!r}; an artifact stores Dict "
                f"spaces with string keys only"
            )
        return {
            "type": "Dict",
            "spaces": [[key, space_to_json(sub, f"{owner} (key {key!r})")]
                       for key, sub in space.spaces.items()],
        }  # fmt: skip
    if isinstance(space, gym.spaces.Tuple):
        return {
            "type": "Tuple",
            "spaces": [space_to_json(sub, f"{owner} (position {i})")
                       for i, sub in enumerate(space.spaces)],
        }  # fmt: skip
    try:
        return _core.space_to_json(space, owner)
    except TypeError as error:
        raise TypeError(
            f"{owner}: cannot store the space {space} ({type(space).__name__}); rlkit's "
            f"artifacts store Box, Discrete, MultiDiscrete and MultiBinary spaces, and Dict and "
            f"Tuple spaces of them"
        ) from error


def space_from_json(data: Any, where: str = "the artifact") -> Any:
    """The space :func:`space_to_json` described; a malformed description is an
    :class:`~rlkit.deploy.errors.ArtifactError`."""
    kind = data.get("type") if isinstance(data, dict) else None
    try:
        if kind == "Dict":
            pairs = [(str(_key(where, key)), space_from_json(sub, where))
                     for key, sub in data["spaces"]]  # fmt: skip
            if len({key for key, _ in pairs}) != len(pairs):
                raise ArtifactError(f"{where}: a Dict space description repeats a key")
            return gym.spaces.Dict(pairs)  # a list of pairs keeps the saved order
        if kind == "Tuple":
            return gym.spaces.Tuple([space_from_json(sub, where) for sub in data["spaces"]])
    except (KeyError, TypeError, ValueError) as cause:
        if isinstance(cause, ArtifactError):
            raise
        raise ArtifactError(
            f"{where}: malformed space description {data!r:.200}: {cause!r}"
        ) from cause
    return _core.space_from_json(data, where, ArtifactError)


def _key(where: str, key: Any) -> str:
    if not isinstance(key, str):
        raise ArtifactError(f"{where}: a Dict space's key must be a string, got {key!r}")
    return key


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
