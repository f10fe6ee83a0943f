"""The 1-D random walk of Sutton & Barto, Example 6.2 (5 states) and Example 7.1 (19 states)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from gymnasium import spaces

from ...core.checks import check_gamma, positive_int
from ._common import Model, ModelEnv, check_render_mode

__all__ = ["RandomWalk1DEnv"]

LEFT, RIGHT = 0, 1


class RandomWalk1DEnv(ModelEnv):
    """A walk on a line of ``n_states`` non-terminal states between two terminal ends.

    Sutton & Barto (2018), Example 6.2 (``n_states=5``, rewards 0 and +1) and Example 7.1
    (``n_states=19``, rewards -1 and +1). Positions are ``0 .. n_states + 1``; positions 0 and
    ``n_states + 1`` are terminal. Every episode starts in the centre, ``(n_states + 1) // 2``
    (state C of the 5-state walk). Action 0 moves left, 1 moves right; the book's behaviour is
    the uniformly random policy (e.g. ``rk.RandomPolicy``). Reaching the left end gives
    ``rewards[0]``, the right end ``rewards[1]``, every other step 0.

    The model is in ``P[s][a] = [(prob, next_state, reward, terminated)]`` (gymnasium's toy-text
    convention; terminal states loop on themselves with reward 0), and ``true_values()`` gives the
    exact state values of the random policy.

    Args:
        n_states: number of non-terminal states (>= 1). The observation space has
            ``n_states + 2`` states; ``len(env.P) == n_states + 2``.
        rewards: (left-end reward, right-end reward).
        render_mode: None or ``"ansi"``.

    Example:
        >>> import gymnasium as gym
        >>> env = gym.make("rlkit/RandomWalk1D-v0")
        >>> env.reset(seed=0)
        (3, {})
        >>> env.step(1)[:3]
        (4, 0.0, False)
        >>> env.unwrapped.true_values()[1:-1].round(3).tolist()
        [0.167, 0.333, 0.5, 0.667, 0.833]
        >>> walk19 = gym.make("rlkit/RandomWalk1D-v0", n_states=19, rewards=(-1.0, 1.0))
    """

    def __init__(
        self,
        n_states: int = 5,
        rewards: tuple[float, float] = (0.0, 1.0),
        render_mode: str | None = None,
    ) -> None:
        n_states = positive_int("RandomWalk1DEnv", "n_states", n_states)
        try:
            left, right = (float(r) for r in rewards)
        except (TypeError, ValueError):
            raise ValueError(
                f"RandomWalk1DEnv: rewards must be two numbers (left end, right end), "
                f"got {rewards!r}"
            ) from None
        if not (math.isfinite(left) and math.isfinite(right)):
            raise ValueError(f"RandomWalk1DEnv: rewards must be finite, got {rewards!r}")
        self.n_states = n_states
        self.n_actions = 2
        self.rewards = (left, right)
        self.render_mode = check_render_mode(self, render_mode)
        self.observation_space = spaces.Discrete(self.n_states + 2)
        self.action_space = spaces.Discrete(2)
        self.start_state = (self.n_states + 1) // 2
        self.terminal_states = (0, self.n_states + 1)
        self.P = self._build_model()
        self.s = self.start_state
        self.last_action: int | None = None

    def _build_model(self) -> Model:
        last = self.n_states + 1
        P: Model = {}
        for s in range(last + 1):
            if s in (0, last):
                P[s] = {a: [(1.0, s, 0.0, True)] for a in (LEFT, RIGHT)}
                continue
            P[s] = {}
            for a, nxt in ((LEFT, s - 1), (RIGHT, s + 1)):
                reward = self.rewards[0] if nxt == 0 else self.rewards[1] if nxt == last else 0.0
                P[s][a] = [(1.0, nxt, reward, nxt in (0, last))]
        return P

    # ---- gymnasium API (reset, step: ModelEnv) ----

    def _bad_action(self, action: Any) -> str:
        return (
            f"RandomWalk1DEnv: action {action!r} is outside the action space {self.action_space}; "
            "expected 0 (left) or 1 (right)"
        )

    def _render_ansi(self) -> str:
        cells = ["x" if i == self.s else "." for i in range(1, self.n_states + 1)]
        left = "X" if self.s == 0 else "|"
        right = "X" if self.s == self.n_states + 1 else "|"
        moved = "" if self.last_action is None else f"  ({('left', 'right')[self.last_action]})"
        return f"{left}{''.join(cells)}{right}{moved}\n"

    # ---- model ----

    def true_values(self, gamma: float = 1.0) -> np.ndarray:
        """Exact state values of the uniformly random policy (terminal states 0).

        Solves the Bellman equations ``v = r_pi + gamma * P_pi v`` of the non-terminal states.
        For the 5-state walk these are 1/6 .. 5/6, for the 19-state walk with rewards (-1, 1)
        -0.9 .. 0.9 (for ``gamma = 1``).
        """
        gamma = check_gamma("RandomWalk1DEnv.true_values", gamma)
        n = self.n_states + 2
        p_pi = np.zeros((n, n))
        r_pi = np.zeros(n)
        for s in range(1, n - 1):
            for transitions in self.P[s].values():
                for prob, nxt, reward, terminated in transitions:
                    r_pi[s] += 0.5 * prob * reward
                    if not terminated:
                        p_pi[s, nxt] += 0.5 * prob
        inner = slice(1, n - 1)
        values = np.zeros(n)
        values[inner] = np.linalg.solve(np.eye(n - 2) - gamma * p_pi[inner, inner], r_pi[inner])
        return values
