"""Helpers shared by the bundled toy environments (generator state, argument checks)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from ...core.state import generator_state, set_generator_state


def rng_state(env: gym.Env) -> dict[str, Any] | None:
    """The state of ``env``'s generator (None before the first reset)."""
    rng = env._np_random
    return None if rng is None else generator_state(rng)


def set_rng_state(env: gym.Env, state: dict[str, Any] | None) -> None:
    """Restore a generator state saved by :func:`rng_state`."""
    if state is None:
        env._np_random = None
        return
    if env._np_random is None:
        env.np_random = np.random.Generator(np.random.PCG64())  # gymnasium's kind
    set_generator_state(env._np_random, state)


def check_render_mode(env: gym.Env, render_mode: str | None) -> str | None:
    modes = env.metadata["render_modes"]
    if render_mode is not None and render_mode not in modes:
        raise ValueError(
            f"{type(env).__name__}: render_mode must be None or one of {modes}, got {render_mode!r}"
        )
    return render_mode


def warn_no_render_mode(env: gym.Env) -> None:
    gym.logger.warn(
        f"{type(env).__name__}.render() called without a render_mode; "
        'create the environment with render_mode="ansi"'
    )


def positive_int(owner: str, name: str, value: Any, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{owner}: {name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def is_int(action: Any) -> bool:
    return isinstance(action, (int, np.integer)) and not isinstance(action, bool)
