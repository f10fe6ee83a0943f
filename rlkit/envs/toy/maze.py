"""The mazes of Sutton & Barto chapter 8: the Dyna maze (Figure 8.2), the blocking maze (Figure
8.4) and the shortcut maze (Figure 8.5)."""

from __future__ import annotations

from typing import Any

from gymnasium import spaces

from ...core.checks import is_int, positive_int
from ...core.interfaces import InvalidActionError
from ._common import ToyEnv, check_render_mode, rng_state, set_rng_state

__all__ = ["MazeEnv", "LAYOUTS"]

# (row change, column change); row 0 is the top row
MOVES = ((-1, 0), (0, 1), (1, 0), (0, -1))  # up, right, down, left
ACTION_NAMES = ("up", "right", "down", "left")

#: The book's mazes: 6 x 9 grids, ``(row, column)`` cells, row 0 on top.
LAYOUTS: dict[str, dict[str, Any]] = {
    "dyna": {
        "start": (2, 0),
        "goal": (0, 8),
        "walls": ((1, 2), (2, 2), (3, 2), (4, 5), (0, 7), (1, 7), (2, 7)),
        "changed_walls": None,
        "change_after": None,
    },
    "blocking": {
        "start": (5, 3),
        "goal": (0, 8),
        "walls": tuple((3, c) for c in range(0, 8)),
        "changed_walls": tuple((3, c) for c in range(1, 9)),
        "change_after": 1000,
    },
    "shortcut": {
        "start": (5, 3),
        "goal": (0, 8),
        "walls": tuple((3, c) for c in range(1, 9)),
        "changed_walls": tuple((3, c) for c in range(1, 8)),
        "change_after": 3000,
    },
}


class MazeEnv(ToyEnv):
    """A deterministic 6 x 9 maze: reward +1 on reaching the goal (``terminated``), 0 otherwise.

    Sutton & Barto (2018), section 8.2-8.3. ``layout="dyna"`` is the maze of Example 8.1 /
    Figure 8.2, ``"blocking"`` the maze of Example 8.2 / Figure 8.4 (the gap in the wall moves
    from the right end to the left end after 1000 steps), ``"shortcut"`` the maze of Example
    8.3 / Figure 8.5 (a shortcut opens at the right end after 3000 steps). Moves into a wall or
    off the grid leave the agent where it is. The observation is ``row * 9 + column``
    (``Discrete(54)``); actions are 0 up, 1 right, 2 down, 3 left.

    A changing maze counts the steps of the whole experiment, across episodes: the count (and
    the layout) start again when the environment is reset *with a seed*, which ``rk.run`` does
    only at the start of a run (``rk.GymEnv(..., seed=s)``); resets between episodes keep it.

    Args:
        layout: ``"dyna"``, ``"blocking"`` or ``"shortcut"``.
        change_after: steps after which a changing maze changes (default: the book's, 1000 or
            3000).
        render_mode: None or ``"ansi"``.

    Example:
        >>> import gymnasium as gym
        >>> env = gym.make("rlkit/DynaMaze-v0")
        >>> env.reset(seed=0)
        (18, {})
        >>> env.step(2)[:3]                        # down
        (27, 0.0, False)
        >>> blocking = gym.make("rlkit/BlockingMaze-v0").unwrapped
        >>> blocking.change_after, blocking.shortest_path()
        (1000, 10)
    """

    def __init__(
        self,
        layout: str = "dyna",
        change_after: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        if layout not in LAYOUTS:
            raise ValueError(f"MazeEnv: layout must be one of {sorted(LAYOUTS)}, got {layout!r}")
        spec = LAYOUTS[layout]
        self.layout = layout
        self.render_mode = check_render_mode(self, render_mode)
        self.n_rows, self.n_cols = 6, 9
        self.n_states = self.n_rows * self.n_cols
        self.n_actions = 4
        self.observation_space = spaces.Discrete(self.n_states)
        self.action_space = spaces.Discrete(self.n_actions)
        self.start_state = self.to_state(*spec["start"])
        self.goal_state = self.to_state(*spec["goal"])
        self.initial_walls = frozenset(spec["walls"])
        self.changed_walls = None if spec["changed_walls"] is None else frozenset(
            spec["changed_walls"]
        )
        if change_after is None:
            change_after = spec["change_after"]
        elif self.changed_walls is None:
            raise ValueError(f"MazeEnv: the {layout!r} maze does not change; got change_after")
        else:
            change_after = positive_int("MazeEnv", "change_after", change_after)
        self.change_after = change_after
        self.walls = self.initial_walls
        self.total_steps = 0
        self.s = self.start_state
        self.last_action: int | None = None

    def to_state(self, row: int, col: int) -> int:
        """The observation of cell (``row``, ``col``)."""
        return row * self.n_cols + col

    def to_cell(self, state: int) -> tuple[int, int]:
        """The cell (row, column) of observation ``state``."""
        return divmod(int(state), self.n_cols)

    def move(self, state: int, action: int) -> int:
        """The state after ``action`` in ``state`` in the current layout (deterministic)."""
        row, col = self.to_cell(state)
        d_row, d_col = MOVES[action]
        nxt = (min(max(row + d_row, 0), self.n_rows - 1), min(max(col + d_col, 0), self.n_cols - 1))
        return self.to_state(*nxt) if nxt not in self.walls else int(state)

    def shortest_path(self) -> int:
        """The number of steps of a shortest path from the start to the goal (current layout)."""
        frontier, seen, steps = [self.start_state], {self.start_state}, 0
        while frontier:
            if self.goal_state in frontier:
                return steps
            steps += 1
            frontier = [
                n for s in frontier for a in range(4) if (n := self.move(s, a)) not in seen
                and not seen.add(n)
            ]
        raise RuntimeError("MazeEnv: the goal cannot be reached")  # pragma: no cover

    # ---- gymnasium API ----

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[int, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:  # a new experiment
            self.total_steps = 0
            self.walls = self.initial_walls
        self.s = self.start_state
        self.last_action = None
        return self.s, {}

    def step(self, action: int) -> tuple[int, float, bool, bool, dict[str, Any]]:
        if not is_int(action) or not 0 <= action < 4:
            raise InvalidActionError(
                f"MazeEnv: action {action!r} is outside the action space {self.action_space}; "
                f"expected 0 (up), 1 (right), 2 (down) or 3 (left)"
            )
        self.s = self.move(self.s, int(action))
        self.last_action = int(action)
        self.total_steps += 1
        if self.change_after is not None and self.total_steps == self.change_after:
            self.walls = self.changed_walls
        terminated = self.s == self.goal_state
        return self.s, 1.0 if terminated else 0.0, terminated, False, {}

    def _render_ansi(self) -> str:
        agent = self.to_cell(self.s)
        lines = []
        for row in range(self.n_rows):
            cells = []
            for col in range(self.n_cols):
                s = self.to_state(row, col)
                cells.append(
                    "x" if (row, col) == agent else "#" if (row, col) in self.walls
                    else "G" if s == self.goal_state else "S" if s == self.start_state else "."
                )
            lines.append(" ".join(cells))
        if self.last_action is not None:
            lines.append(f"({ACTION_NAMES[self.last_action]})")
        return "\n".join(lines) + "\n"

    # ---- checkpoint protocol ----

    def state_dict(self) -> dict[str, Any]:
        """The position, the step count (and so the layout) and the generator state."""
        return {
            "s": self.s,
            "last_action": self.last_action,
            "total_steps": self.total_steps,
            "changed": self.walls is not self.initial_walls,
            "rng": rng_state(self),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        s = int(state["s"])
        if not 0 <= s < self.n_states:
            raise ValueError(
                f"MazeEnv.load_state_dict: state {s} is outside 0..{self.n_states - 1}"
            )
        self.s = s
        self.last_action = state["last_action"]
        self.total_steps = int(state["total_steps"])
        self.walls = self.changed_walls if state["changed"] else self.initial_walls
        set_rng_state(self, state["rng"])
