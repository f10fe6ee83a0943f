"""The 1000-state random walk of Sutton & Barto, Example 9.1."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from ...core.checks import is_int, positive_int
from ...core.interfaces import InvalidActionError
from ._common import ToyEnv, check_render_mode, rng_state, set_rng_state

__all__ = ["RandomWalk1000Env"]


class RandomWalk1000Env(ToyEnv):
    """States 1..1000 in a row, every episode starting in state 500; each step jumps to one of
    the ``max_jump`` nearest states on the left (action 0) or on the right (action 1), each with
    equal probability. A jump past an end terminates the episode, with reward -1 on the left and
    +1 on the right; every other reward is 0. The book's process is the uniformly random policy
    (``rk.RandomPolicy``): it moves to each of the 200 neighbours with probability 1/200.

    Sutton & Barto (2018), Example 9.1 (Figures 9.1, 9.2, 9.5). The observation is the state,
    ``Discrete(n_states + 2)``: 0 and ``n_states + 1`` are the terminal ends. ``true_values()``
    solves the Bellman equations of the random policy (the book's "true value" curves).

    Args:
        n_states: number of non-terminal states (default 1000).
        max_jump: the largest jump (default 100).
        render_mode: None or ``"ansi"``.

    Example:
        >>> import gymnasium as gym
        >>> env = gym.make("rlkit/RandomWalk1000-v0")
        >>> env.reset(seed=0)
        (500, {})
        >>> s, r, terminated, truncated, info = env.step(1)
        >>> 501 <= s <= 600, r, terminated
        (True, 0.0, False)
        >>> values = env.unwrapped.true_values()
        >>> round(float(values[1]), 2), round(float(values[500]), 2), round(float(values[1000]), 2)
        (-0.92, -0.0, 0.92)
    """

    def __init__(
        self, n_states: int = 1000, max_jump: int = 100, render_mode: str | None = None
    ) -> None:
        self.n_states = positive_int("RandomWalk1000Env", "n_states", n_states)
        self.max_jump = positive_int("RandomWalk1000Env", "max_jump", max_jump)
        self.render_mode = check_render_mode(self, render_mode)
        self.n_actions = 2
        self.observation_space = spaces.Discrete(self.n_states + 2)
        self.action_space = spaces.Discrete(2)
        self.start_state = (self.n_states + 1) // 2
        self.s = self.start_state
        self.last_action: int | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[int, dict[str, Any]]:
        super().reset(seed=seed)
        self.s = self.start_state
        self.last_action = None
        return self.s, {}

    def step(self, action: int) -> tuple[int, float, bool, bool, dict[str, Any]]:
        if not is_int(action) or not 0 <= action < 2:
            raise InvalidActionError(
                f"RandomWalk1000Env: action {action!r} is outside the action space "
                f"{self.action_space}; expected 0 (left) or 1 (right)"
            )
        jump = int(self.np_random.integers(1, self.max_jump + 1))
        s = self.s + (jump if action == 1 else -jump)
        self.last_action = int(action)
        if s < 1:
            self.s = 0
            return 0, -1.0, True, False, {}
        if s > self.n_states:
            self.s = self.n_states + 1
            return self.s, 1.0, True, False, {}
        self.s = s
        return s, 0.0, False, False, {}

    def _render_ansi(self) -> str:
        return f"state {self.s} of 1..{self.n_states}\n"

    def true_values(self, gamma: float = 1.0) -> np.ndarray:
        """The values of the uniformly random policy (terminal ends 0), from the Bellman
        equations ``v = r + gamma P v``."""
        n, k = self.n_states, self.max_jump
        p = np.zeros((n, n))
        r = np.zeros(n)
        for i in range(n):  # state i + 1
            s = i + 1
            for target in list(range(s - k, s)) + list(range(s + 1, s + k + 1)):
                if target < 1:
                    r[i] -= 1.0 / (2 * k)
                elif target > n:
                    r[i] += 1.0 / (2 * k)
                else:
                    p[i, target - 1] += 1.0 / (2 * k)
        values = np.zeros(n + 2)
        values[1:-1] = np.linalg.solve(np.eye(n) - gamma * p, r)
        return values

    def state_dict(self) -> dict[str, Any]:
        """The state, the last action and the generator state."""
        return {"s": self.s, "last_action": self.last_action, "rng": rng_state(self)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        s = int(state["s"])
        if not 0 <= s <= self.n_states + 1:
            raise ValueError(
                f"RandomWalk1000Env.load_state_dict: state {s} is outside 0..{self.n_states + 1}"
            )
        self.s = s
        self.last_action = state["last_action"]
        set_rng_state(self, state["rng"])
