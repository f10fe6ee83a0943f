"""Whether an environment's spaces fit a policy's network: checked when a run or an evaluation
is planned, so that a policy made for CartPole and run on Acrobot is an error naming both spaces
instead of torch's ``mat1 and mat2 shapes cannot be multiplied`` at the first step.

The check compares what the network depends on: the observation shape, the kind of action space
and its shape (and the number of actions of ``Discrete`` and ``MultiDiscrete`` spaces), and for
``Dict``/``Tuple`` observations their keys (in order) and each key's space; bounds are not
compared (wrappers may change them).

Example:
    >>> import gymnasium as gym
    >>> box = gym.spaces.Box(-1, 1, (4,))
    >>> spaces_fit(box, gym.spaces.Discrete(2), box, gym.spaces.Discrete(2))
    True
    >>> spaces_fit(box, gym.spaces.Discrete(2), box, gym.spaces.Discrete(3))
    False
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

__all__ = ["spaces_fit", "check_env_fits", "short_space"]


def _fits(made_for: Any, given: Any) -> bool:
    if type(made_for) is not type(given):
        return False
    if isinstance(made_for, gym.spaces.Dict):  # the same keys in the same order, each fitting
        return list(made_for.spaces) == list(given.spaces) and all(
            _fits(made_for[k], given[k]) for k in made_for.spaces
        )
    if isinstance(made_for, gym.spaces.Tuple):
        return len(made_for.spaces) == len(given.spaces) and all(
            _fits(a, b) for a, b in zip(made_for.spaces, given.spaces, strict=True)
        )
    if getattr(made_for, "shape", None) != getattr(given, "shape", None):
        return False
    if isinstance(made_for, gym.spaces.Discrete):
        return int(made_for.n) == int(given.n)
    if isinstance(made_for, gym.spaces.MultiDiscrete):
        return bool(np.array_equal(made_for.nvec, given.nvec))
    return True


def spaces_fit(state_space: Any, action_space: Any, env_state: Any, env_action: Any) -> bool:
    """Whether an env with ``env_state`` and ``env_action`` fits a network made for
    ``state_space`` and ``action_space``."""
    return _fits(state_space, env_state) and _fits(action_space, env_action)


def check_env_fits(owner: str, state_space: Any, action_space: Any, env: Any) -> None:
    """Raise a ``ValueError`` naming both pairs of spaces when ``env`` does not fit (an env
    without spaces is not checked)."""
    env_state = getattr(env, "state_space", None)
    env_action = getattr(env, "action_space", None)
    if env_state is None or env_action is None:
        return
    if not spaces_fit(state_space, action_space, env_state, env_action):
        raise ValueError(
            f"{owner}: made for observations {short_space(state_space)} and actions "
            f"{short_space(action_space)}, but the env {env!r} has observations "
            f"{short_space(env_state)} and actions {short_space(env_action)}; make a policy for "
            f"this env"
        )


def short_space(space: Any) -> str:
    """A space as the check sees it: a ``Box`` by its shape (its bounds are long)."""
    if isinstance(space, gym.spaces.Box):
        return f"Box(shape={space.shape})"
    return str(space)
