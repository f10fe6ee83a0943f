"""A maze whose walls make most moves invalid, with sb3-contrib's ``action_masks()``: the
environment of the masked-action recipes (docs/how-to/action-masks.md)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from ...core.interfaces import InvalidActionError
from ._common import ToyEnv, check_render_mode

__all__ = ["InvalidActionGridEnv", "LAYOUT"]

#: The maze: ``S`` start, ``G`` goal, ``#`` wall, ``.`` floor (row 0 on top).
LAYOUT = (
    "S.#....",
    "#.#.##.",
    "..#..#.",
    ".##.##.",
    "....#..",
    "##.##.#",
    "......G",
)
MOVES = ((-1, 0), (1, 0), (0, 1), (0, -1))  # north, south, east, west
ACTION_NAMES = ("north", "south", "east", "west")


class InvalidActionGridEnv(ToyEnv):
    """A 7x7 maze (``LAYOUT``) from the top-left corner to the bottom-right one, where a move
    into a wall or off the grid is an invalid action: in most cells two of the four moves are.

    Actions: 0 north, 1 south, 2 east, 3 west. The observation is the one-hot vector of the
    agent's cell (``Box(0, 1, (49,))``, ``row * 7 + column``). Rewards: -0.01 per step, +1 on
    reaching the goal (the episode terminates); an invalid action leaves the agent where it is
    and costs -0.1 more (a wasted step with a penalty). The shortest path takes 14 moves, so the
    best return is 1 - 0.14 = 0.86. Registered as ``rlkit/InvalidActionGrid-v0`` with a time
    limit of 100 steps.

    ``action_masks()`` (sb3-contrib's convention, read by ``rk.GymEnv`` and ``rk.VectorGymEnv``)
    gives the valid moves of the current cell; the same mask is in ``info["action_mask"]``.
    A masked policy never wastes a step; an unmasked one must learn to avoid the walls.

    Example:
        >>> import gymnasium as gym
        >>> env = gym.make("rlkit/InvalidActionGrid-v0")
        >>> obs, info = env.reset(seed=0)
        >>> int(obs.argmax()), env.unwrapped.action_masks().tolist()  # only east is valid
        (0, [False, False, True, False])
        >>> env.step(3)[1:3]  # west, off the grid: a wasted step
        (-0.11, False)
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self, step_reward: float = -0.01, invalid_penalty: float = -0.1,
        render_mode: str | None = None,
    ) -> None:
        self.render_mode = check_render_mode(self, render_mode)
        self.walls = np.array([[c == "#" for c in row] for row in LAYOUT])
        self.n_rows, self.n_cols = self.walls.shape
        self.start = _find("S")
        self.goal = _find("G")
        self.step_reward = float(step_reward)
        self.invalid_penalty = float(invalid_penalty)
        n = self.n_rows * self.n_cols
        self.observation_space = spaces.Box(0.0, 1.0, (n,), np.float32)
        self.action_space = spaces.Discrete(len(MOVES))
        self._masks = self._all_masks()
        self._eye = np.eye(n, dtype=np.float32)
        self.cell = self.start
        self.last_action: int | None = None

    def _all_masks(self) -> dict[tuple[int, int], np.ndarray]:
        masks = {}
        for row in range(self.n_rows):
            for col in range(self.n_cols):
                masks[row, col] = np.array(
                    [self._target((row, col), a) is not None for a in range(len(MOVES))]
                )
        return masks

    def _target(self, cell: tuple[int, int], action: int) -> tuple[int, int] | None:
        row, col = cell[0] + MOVES[action][0], cell[1] + MOVES[action][1]
        if 0 <= row < self.n_rows and 0 <= col < self.n_cols and not self.walls[row, col]:
            return row, col
        return None

    def action_masks(self) -> np.ndarray:
        """The valid moves of the agent's cell (bools, one per action)."""
        return self._masks[self.cell].copy()

    def _observation(self) -> np.ndarray:
        return self._eye[self.cell[0] * self.n_cols + self.cell[1]].copy()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.cell = self.start
        self.last_action = None
        return self._observation(), {"action_mask": self.action_masks()}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if not self.action_space.contains(action):
            raise InvalidActionError(
                f"InvalidActionGridEnv: action {action!r} is outside the action space "
                f"{self.action_space}; expected 0 (north), 1 (south), 2 (east) or 3 (west)"
            )
        action = int(action)
        self.last_action = action
        target = self._target(self.cell, action)
        reward = self.step_reward
        if target is None:
            reward += self.invalid_penalty
        else:
            self.cell = target
        terminated = self.cell == self.goal
        if terminated:
            reward += 1.0
        return self._observation(), round(reward, 10), terminated, False, {
            "action_mask": self.action_masks()
        }

    def _render_ansi(self) -> str:
        lines = [
            "".join(
                "x" if (r, c) == self.cell else LAYOUT[r][c].replace("S", ".")
                for c in range(self.n_cols)
            )
            for r in range(self.n_rows)
        ]
        if self.last_action is not None:
            lines.append(f"({ACTION_NAMES[self.last_action]})")
        return "\n".join(lines) + "\n"


def _find(mark: str) -> tuple[int, int]:
    for row, line in enumerate(LAYOUT):
        if mark in line:
            return row, line.index(mark)
    raise ValueError(f"InvalidActionGridEnv: the layout has no {mark!r}")

