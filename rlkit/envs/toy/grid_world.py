"""The 5x5 gridworld of Sutton & Barto, Example 3.5 (Figure 3.2) and Example 3.8 (Figure 3.5)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from ...core.checks import is_int
from ._common import Model, ModelEnv, check_render_mode

__all__ = ["GridWorldEnv", "FIGURE_3_2", "FIGURE_3_5"]

SIZE = 5
A_POS, A_PRIME, A_REWARD = (0, 1), (4, 1), 10.0
B_POS, B_PRIME, B_REWARD = (0, 3), (2, 3), 5.0
MOVES = ((-1, 0), (1, 0), (0, 1), (0, -1))  # north, south, east, west (row 0 on top)
ACTION_NAMES = ("north", "south", "east", "west")


def _table(rows: list[list[float]]) -> np.ndarray:
    table = np.array(rows)
    table.setflags(write=False)
    return table


#: State values of the equiprobable random policy, gamma = 0.9, as printed in the book
#: (Figure 3.2, one decimal), ``FIGURE_3_2[row, col]``.
FIGURE_3_2 = _table(
    [
        [3.3, 8.8, 4.4, 5.3, 1.5],
        [1.5, 3.0, 2.3, 1.9, 0.5],
        [0.1, 0.7, 0.7, 0.4, -0.4],
        [-1.0, -0.4, -0.4, -0.6, -1.2],
        [-1.9, -1.3, -1.2, -1.4, -2.0],
    ]
)

#: Optimal state values v*, gamma = 0.9, as printed in the book (Figure 3.5, one decimal).
FIGURE_3_5 = _table(
    [
        [22.0, 24.4, 22.0, 19.4, 17.5],
        [19.8, 22.0, 19.8, 17.8, 16.0],
        [17.8, 19.8, 17.8, 16.0, 14.4],
        [16.0, 17.8, 16.0, 14.4, 13.0],
        [14.4, 16.0, 14.4, 13.0, 11.7],
    ]
)


class GridWorldEnv(ModelEnv):
    """A continuing 5x5 gridworld with two special states A and B.

    Sutton & Barto (2018), Example 3.5 (Figure 3.2) and Example 3.8 (Figure 3.5). Actions:
    0 north, 1 south, 2 east, 3 west. From A = (0, 1) every action moves to A' = (4, 1) with
    reward +10, from B = (0, 3) to B' = (2, 3) with +5. A move off the grid leaves the state
    unchanged with reward -1; every other move gives 0. The observation is ``row * 5 + column``
    (``Discrete(25)``, row 0 on top).

    The task is continuing: it never terminates. Use it with a time limit
    (``gymnasium.make("rlkit/GridWorld-v0", max_episode_steps=100)``; truncation, so learners
    bootstrap) and discount ``gamma = 0.9`` as in the book. ``FIGURE_3_2`` and ``FIGURE_3_5``
    (module constants) are the book's state values of the random and the optimal policy.

    The model is in ``P[s][a] = [(prob, next_state, reward, terminated)]`` (gymnasium's toy-text
    convention; ``terminated`` is always False).

    Args:
        start: the start state of every episode (an observation), or None for a uniformly random
            one. ``reset(options={"state": s})`` overrides it for one episode.
        render_mode: None or ``"ansi"``.

    Example:
        >>> import gymnasium as gym
        >>> env = gym.make("rlkit/GridWorld-v0", max_episode_steps=100)
        >>> env.reset(seed=0, options={"state": 1})     # in A
        (1, {})
        >>> env.step(0)[:3]                              # any action: to A' with +10
        (21, 10.0, False)
        >>> env.unwrapped.P[0][0]                        # north from the corner: bump
        [(1.0, 0, -1.0, False)]
    """

    _tracks_reward = True

    def __init__(self, start: int | None = None, render_mode: str | None = None) -> None:
        self.render_mode = check_render_mode(self, render_mode)
        self.n_rows = self.n_cols = SIZE
        self.n_states = SIZE * SIZE
        self.n_actions = len(MOVES)
        self.observation_space = spaces.Discrete(self.n_states)
        self.action_space = spaces.Discrete(self.n_actions)
        self.start = None if start is None else self._checked_state("start", start)
        self.P = self._build_model()
        self.s = 0 if self.start is None else self.start
        self.last_action: int | None = None
        self.last_reward = 0.0

    @staticmethod
    def to_state(row: int, col: int) -> int:
        """The observation of grid cell (``row``, ``col``)."""
        return row * SIZE + col

    @staticmethod
    def to_cell(state: int) -> tuple[int, int]:
        """The grid cell (row, column) of observation ``state``."""
        return divmod(int(state), SIZE)

    def _checked_state(self, name: str, state: Any) -> int:
        if not is_int(state) or not 0 <= state < self.n_states:
            raise ValueError(
                f"GridWorldEnv: {name} must be a state in [0, {self.n_states}), got {state!r}"
            )
        return int(state)

    def _build_model(self) -> Model:
        P: Model = {}
        for s in range(self.n_states):
            cell = self.to_cell(s)
            P[s] = {}
            for a, (d_row, d_col) in enumerate(MOVES):
                if cell == A_POS:
                    nxt, reward = A_PRIME, A_REWARD
                elif cell == B_POS:
                    nxt, reward = B_PRIME, B_REWARD
                else:
                    nxt = (cell[0] + d_row, cell[1] + d_col)
                    reward = 0.0
                    if not (0 <= nxt[0] < SIZE and 0 <= nxt[1] < SIZE):
                        nxt, reward = cell, -1.0
                P[s][a] = [(1.0, self.to_state(*nxt), reward, False)]
        return P

    # ---- gymnasium API (reset, step: ModelEnv) ----

    def _start_state(self, options: dict[str, Any] | None) -> int:
        if options and "state" in options:
            return self._checked_state('options["state"]', options["state"])
        if self.start is not None:
            return self.start
        return int(self.np_random.integers(self.n_states))

    def _bad_action(self, action: Any) -> str:
        return (
            f"GridWorldEnv: action {action!r} is outside the action space {self.action_space}; "
            "expected 0 (north), 1 (south), 2 (east) or 3 (west)"
        )

    def _render_ansi(self) -> str:
        agent = self.to_cell(self.s)
        marks = {A_POS: "A", A_PRIME: "a", B_POS: "B", B_PRIME: "b"}
        lines = [
            " ".join(
                "x" if (row, col) == agent else marks.get((row, col), ".") for col in range(SIZE)
            )
            for row in range(SIZE)
        ]
        if self.last_action is not None:
            lines.append(f"({ACTION_NAMES[self.last_action]}, reward {self.last_reward:+.0f})")
        return "\n".join(lines) + "\n"

    # ---- checkpoint protocol (state_dict, load_state_dict: ModelEnv) ----

    def _loaded_state(self, s: int) -> int:
        return self._checked_state("load_state_dict: state", s)
