"""The environment interface the run loop talks to."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

__all__ = ["AbstractEnv", "InvalidActionError"]


class InvalidActionError(ValueError):
    """An action outside the environment's action space."""


class AbstractEnv(ABC):
    """An environment as the run loop sees it.

    Attributes a subclass keeps current: ``state`` (the observation), ``reward`` (of the last
    action), ``is_terminated`` (a terminal state was reached: never bootstrap), ``is_truncated``
    (the episode was cut, e.g. by a time limit: bootstrap), ``action_space`` and ``state_space``
    (gymnasium spaces). ``done`` is ``is_terminated or is_truncated``. After the last action of an
    episode ``state`` is the real final observation, never the one after a reset.

    ``needs_reset`` is True until the first ``reset`` and a subclass sets it to False in
    ``reset``; the run loop starts a new episode when ``env.done or env.needs_reset`` and
    otherwise continues the unfinished episode a previous run stopped in.

    Example:
        >>> import rlkit as rk
        >>> env = rk.GymEnv("CliffWalking-v1", seed=0)
        >>> env.reset(); env.act(0); env.state, env.reward, env.done
        (24, -1, False)
    """

    state: Any = None
    reward: float = 0.0
    is_terminated: bool = False
    is_truncated: bool = False
    needs_reset: bool = True
    action_space: Any = None
    state_space: Any = None

    @property
    def done(self) -> bool:
        """``is_terminated or is_truncated``."""
        return self.is_terminated or self.is_truncated

    @property
    def legal_action_mask(self) -> np.ndarray | None:
        """Boolean mask of the legal actions in the current state, or None when all are legal."""
        return None

    @abstractmethod
    def reset(self, seed: int | None = None) -> None:
        """Start a new episode (seeding the environment's generator when ``seed`` is given)."""

    @abstractmethod
    def act(self, action: Any) -> None:
        """Perform ``action``, updating ``state``, ``reward`` and the done flags."""

    def __call__(self, action: Any) -> None:
        self.act(action)

    def close(self) -> None:  # noqa: B027 - optional to override
        """Release resources (windows, files). The default does nothing."""
