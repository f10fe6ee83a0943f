"""Shared by the bundled toy environments: base classes, generator state, argument checks."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from ...core.checks import is_int
from ...core.interfaces import InvalidActionError
from ...core.state import generator_state, set_generator_state

#: gymnasium's toy-text model: ``P[s][a] = [(prob, next_state, reward, terminated), ...]``.
Model = dict[int, dict[int, list[tuple[float, int, float, bool]]]]


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


class ToyEnv(gym.Env):
    """Base of the toy environments: ansi-only rendering.

    A subclass sets ``self.render_mode = check_render_mode(self, render_mode)`` and writes
    ``_render_ansi``; ``render()`` warns and returns None without a render mode.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def render(self) -> str | None:
        if self.render_mode is None:
            gym.logger.warn(
                f"{type(self).__name__}.render() called without a render_mode; "
                'create the environment with render_mode="ansi"'
            )
            return None
        return self._render_ansi()

    def _render_ansi(self) -> str:
        raise NotImplementedError


class ModelEnv(ToyEnv):
    """Base of the toy environments that step by their toy-text model ``P`` (see :data:`Model`).

    The state is ``self.s``; a step looks up ``P[s][action]`` (``_transitions``) and, when it has
    several outcomes, draws one with a single ``self.np_random.random()``. A subclass sets ``P``,
    ``s``, ``last_action`` (and ``last_reward`` if ``_tracks_reward``) in ``__init__`` and writes
    ``_bad_action`` or its own ``_transitions`` / ``_outcome``; ``_start_state`` (default
    ``self.start_state``), ``_info`` and ``_loaded_state`` are the other hooks.
    """

    P: Model
    s: int
    last_action: int | None
    #: Whether the last reward is kept (``last_reward``, 0.0 after a reset) and checkpointed.
    _tracks_reward = False
    #: What ``s`` is called in ``load_state_dict``'s error message.
    _state_name = "state"

    # ---- gymnasium API ----

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[int, dict[str, Any]]:
        super().reset(seed=seed)
        self.s = self._start_state(options)
        self.last_action = None
        if self._tracks_reward:
            self.last_reward = 0.0
        return self.s, self._info(self.s)

    def step(self, action: int) -> tuple[int, float, bool, bool, dict[str, Any]]:
        s, reward, terminated = self._outcome(action)
        self.s = s
        self.last_action = int(action)
        if self._tracks_reward:
            self.last_reward = reward
        return s, reward, terminated, False, self._info(s)

    # ---- hooks ----

    def _start_state(self, options: dict[str, Any] | None) -> int:
        return self.start_state

    def _info(self, s: int) -> dict[str, Any]:
        return {}

    def _outcome(self, action: Any) -> tuple[int, float, bool]:
        """``(next_state, reward, terminated)``: one outcome of ``P[s][action]``."""
        transitions = self._transitions(action)
        if len(transitions) == 1:
            _, s, reward, terminated = transitions[0]
        else:
            u = self.np_random.random()
            for prob, s, reward, terminated in transitions:  # noqa: B007 - the last one remains
                u -= prob
                if u < 0.0:
                    break
        return s, reward, terminated

    def _transitions(self, action: Any) -> list[tuple[float, int, float, bool]]:
        if not is_int(action):
            raise InvalidActionError(self._bad_action(action))
        try:
            return self.P[self.s][action]
        except KeyError:
            raise InvalidActionError(self._bad_action(action)) from None

    def _bad_action(self, action: Any) -> str:
        raise NotImplementedError

    def _loaded_state(self, s: int) -> int:
        last = self.observation_space.n - 1
        if not 0 <= s <= last:
            raise ValueError(
                f"{type(self).__name__}.load_state_dict: {self._state_name} {s} "
                f"is outside 0..{last}"
            )
        return s

    # ---- checkpoint protocol ----

    def state_dict(self) -> dict[str, Any]:
        """The state ``s``, the last step and the generator state (a resumed run continues)."""
        state: dict[str, Any] = {"s": self.s, "last_action": self.last_action}
        if self._tracks_reward:
            state["last_reward"] = self.last_reward
        state["rng"] = rng_state(self)
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.s = self._loaded_state(int(state["s"]))
        self.last_action = state["last_action"]
        if self._tracks_reward:
            self.last_reward = float(state["last_reward"])
        set_rng_state(self, state["rng"])
