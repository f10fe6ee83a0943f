"""Adapter from any gymnasium environment to rlkit's :class:`AbstractEnv`."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from .base import AbstractEnv, InvalidActionError

__all__ = ["GymEnv"]


class GymEnv(AbstractEnv):
    """Wrap a gymnasium environment (an id or an instance) for the run loop.

    Terminated and truncated stay apart (``is_terminated`` / ``is_truncated``); after the last step
    of an episode ``state`` is the real final observation. ``seed`` seeds the first ``reset`` only,
    later episodes continue the environment's own generator, as gymnasium recommends. Legal-action
    masks are taken from ``info["action_mask"]`` when the environment provides one.

    Args:
        id_or_env: a registered id such as ``"CliffWalking-v1"`` or a ``gymnasium.Env``.
        seed: seed for the first reset (None: unseeded).
        check_actions: reject actions outside the action space with :class:`InvalidActionError`.
        **kwargs: passed to ``gymnasium.make`` when ``id_or_env`` is an id.

    Example:
        >>> import rlkit as rk
        >>> env = rk.GymEnv("CartPole-v1", seed=1)
        >>> env.reset()
        >>> env.act(env.action_space.sample())
        >>> env.done
        False
    """

    done = False  # a plain attribute here (kept current in reset/act): cheaper than the property

    def __init__(
        self,
        id_or_env: str | gym.Env,
        *,
        seed: int | None = None,
        check_actions: bool = True,
        **kwargs: Any,
    ) -> None:
        if isinstance(id_or_env, str):
            self.env = gym.make(id_or_env, **kwargs)
        elif isinstance(id_or_env, gym.Env):
            if kwargs:
                raise TypeError(
                    f"GymEnv: keyword arguments {sorted(kwargs)} are only accepted with an "
                    "environment id; got a gymnasium.Env instance"
                )
            self.env = id_or_env
        else:
            raise TypeError(
                f"GymEnv: expected a gymnasium id (str) or a gymnasium.Env, "
                f"got {type(id_or_env).__name__}: {id_or_env!r}"
            )
        self.action_space = self.env.action_space
        self.state_space = self.env.observation_space
        self.info: dict[str, Any] = {}
        self._pending_seed = seed
        self._step = self.env.step
        self._check = _action_check(self.action_space) if check_actions else None

    @property
    def name(self) -> str:
        spec = getattr(self.env, "spec", None)
        return spec.id if spec is not None else type(self.env.unwrapped).__name__

    def __repr__(self) -> str:
        return f"GymEnv({self.name})"

    def reset(self, seed: int | None = None) -> None:
        if seed is None:
            seed, self._pending_seed = self._pending_seed, None
        self.state, self.info = self.env.reset(seed=seed)
        self.reward = 0.0
        self.is_terminated = self.is_truncated = self.done = False
        self.needs_reset = False

    def act(self, action: Any) -> None:
        if self._check is not None and not self._check(action):
            raise InvalidActionError(
                f"{self!r}: action {action!r} is outside the action space {self.action_space}"
                + _expected(self.action_space)
            )
        state, reward, terminated, truncated, self.info = self._step(action)
        self.state = state
        self.reward = reward
        self.is_terminated = terminated
        self.is_truncated = truncated
        self.done = terminated or truncated

    @property
    def legal_action_mask(self) -> np.ndarray | None:
        mask = self.info.get("action_mask")
        return None if mask is None else np.asarray(mask, dtype=bool)

    def close(self) -> None:
        self.env.close()


def _action_check(space: gym.Space):
    if isinstance(space, gym.spaces.Discrete):
        low, high = int(space.start), int(space.start + space.n)
        integer = (int, np.integer)

        def check(action: Any) -> bool:
            return isinstance(action, integer) and low <= action < high

        return check
    return space.contains


def _expected(space: gym.Space) -> str:
    if isinstance(space, gym.spaces.Discrete):
        return f"; expected an integer in [{space.start}, {space.start + space.n})"
    return ""
