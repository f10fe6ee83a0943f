"""The short corridor with switched actions of Sutton & Barto, Example 13.1."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from ._common import Model, ModelEnv, check_render_mode

__all__ = ["ShortCorridorEnv"]

LEFT, RIGHT = 0, 1
GOAL = 3


class ShortCorridorEnv(ModelEnv):
    """Three states and a goal in a row; reward -1 per step. In the first and third states
    left (0) moves left and right (1) moves right (left at the left end stays put); in the
    second state the actions are *switched*. The episode ends at the goal, right of the third
    state.

    Sutton & Barto (2018), Example 13.1. All states look the same to the book's agent: its
    features are ``x(s, right) = [1, 0]``, ``x(s, left) = [0, 1]`` whatever ``s``, so the best it
    can do is a stochastic policy. The observation is still the state (``Discrete(4)``; 3 is
    the goal); ``value(p)`` is the exact value of the start state for the policy that goes right
    with probability ``p`` (best: ``p = 2 - sqrt(2)``, about 0.59, value
    ``-(6 + 4 sqrt(2))``, about -11.6).

    Args:
        render_mode: None or ``"ansi"``.

    Example:
        >>> import gymnasium as gym
        >>> env = gym.make("rlkit/ShortCorridor-v0")
        >>> env.reset(seed=0)
        (0, {})
        >>> env.step(1)[:3], env.step(1)[:3]       # right, then right is switched: back left
        ((1, -1.0, False), (0, -1.0, False))
        >>> round(env.unwrapped.value(2 - 2**0.5), 3)    # the best p, 0.586
        -11.657
    """

    def __init__(self, render_mode: str | None = None) -> None:
        self.render_mode = check_render_mode(self, render_mode)
        self.n_states, self.n_actions = 4, 2
        self.observation_space = spaces.Discrete(4)
        self.action_space = spaces.Discrete(2)
        self.start_state = 0
        self.goal_state = GOAL
        self.P = self._build_model()
        self.s = self.start_state
        self.last_action: int | None = None

    @staticmethod
    def _build_model() -> Model:
        moves = {0: (0, 1), 1: (2, 0), 2: (1, 3)}  # state: (after left, after right)
        P: Model = {GOAL: {a: [(1.0, GOAL, 0.0, True)] for a in (LEFT, RIGHT)}}
        for s, nexts in moves.items():
            P[s] = {a: [(1.0, nexts[a], -1.0, nexts[a] == GOAL)] for a in (LEFT, RIGHT)}
        return P

    def _bad_action(self, action: Any) -> str:
        return (
            f"ShortCorridorEnv: action {action!r} is outside the action space "
            f"{self.action_space}; expected 0 (left) or 1 (right)"
        )

    def _render_ansi(self) -> str:
        cells = ["x" if s == self.s else "." for s in range(3)]
        return f"{cells[0]} {cells[1]}(switched) {cells[2]} {'G*' if self.s == GOAL else 'G'}\n"

    def value(self, p: float) -> float:
        """The exact value of the start state when every step goes right with probability
        ``p`` (in (0, 1]; -inf at 0, which never reaches the goal)."""
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"ShortCorridorEnv.value: p must be in [0, 1], got {p!r}")
        if p in (0.0, 1.0):
            return -np.inf
        a = np.zeros((3, 3))
        b = -np.ones(3)
        for s in range(3):
            a[s, s] += 1.0
            for action, prob in ((LEFT, 1.0 - p), (RIGHT, p)):
                nxt = self.P[s][action][0][1]
                if nxt != GOAL:
                    a[s, nxt] -= prob
        return float(np.linalg.solve(a, b)[0])
