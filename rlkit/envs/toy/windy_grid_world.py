"""The windy gridworld of Sutton & Barto, Example 6.5 (and Exercises 6.9, 6.10)."""

from __future__ import annotations

from typing import Any

from gymnasium import spaces

from ._common import Model, ModelEnv, check_render_mode

__all__ = ["WindyGridWorldEnv"]

N_ROWS, N_COLS = 7, 10
WIND = (0, 0, 0, 1, 1, 1, 2, 2, 1, 0)
START = (3, 0)
GOAL = (3, 7)
# (row change, column change); row 0 is the top row
MOVES = ((-1, 0), (0, 1), (1, 0), (0, -1))  # up, right, down, left
KING_MOVES = MOVES + ((-1, 1), (1, 1), (1, -1), (-1, -1))  # + up-right, down-right, ...
ACTION_NAMES = ("up", "right", "down", "left", "up-right", "down-right", "down-left", "up-left")


class WindyGridWorldEnv(ModelEnv):
    """A 7x10 grid with an upward wind in the middle columns; -1 per step until the goal.

    Sutton & Barto (2018), Example 6.5. The wind strength per column is
    ``[0, 0, 0, 1, 1, 1, 2, 2, 1, 0]``: after a move, the agent is pushed that many cells up by
    the wind of the column it moved *from*; positions are clipped to the grid. Episodes start at
    (row 3, column 0) and end (``terminated``) at the goal (3, 7); every step, including the last,
    gives -1. The observation is ``row * 10 + column`` (``Discrete(70)``, row 0 on top).

    Actions: 0 up, 1 right, 2 down, 3 left; with ``king_moves=True`` (Exercise 6.9) also
    4 up-right, 5 down-right, 6 down-left, 7 up-left, and with ``stay_action=True`` a last action
    that does not move (the wind still blows). With ``stochastic_wind=True`` (Exercise 6.10) the
    wind of a windy column is one stronger, as given, or one weaker, each with probability 1/3.

    The model is in ``P[s][a] = [(prob, next_state, reward, terminated)]`` (gymnasium's toy-text
    convention; the goal loops on itself with reward 0; outcomes that coincide are merged).

    Args:
        king_moves: eight actions instead of four.
        stochastic_wind: the random wind of Exercise 6.10.
        stay_action: add a "stay" action (the ninth with king moves).
        render_mode: None or ``"ansi"``.

    Example:
        >>> import gymnasium as gym
        >>> env = gym.make("rlkit/WindyGridWorld-v0")
        >>> env.reset(seed=0)
        (30, {})
        >>> env.step(1)[:3]                     # right, no wind in column 0
        (31, -1.0, False)
        >>> king = gym.make("rlkit/WindyGridWorld-v0", king_moves=True)
        >>> king.action_space
        Discrete(8)
    """

    def __init__(
        self,
        king_moves: bool = False,
        stochastic_wind: bool = False,
        stay_action: bool = False,
        render_mode: str | None = None,
    ) -> None:
        self.king_moves = bool(king_moves)
        self.stochastic_wind = bool(stochastic_wind)
        self.stay_action = bool(stay_action)
        self.render_mode = check_render_mode(self, render_mode)
        self.moves = (KING_MOVES if self.king_moves else MOVES) + (
            ((0, 0),) if self.stay_action else ()
        )
        self.action_names = ACTION_NAMES[: len(self.moves) - self.stay_action] + (
            ("stay",) if self.stay_action else ()
        )
        self.n_rows, self.n_cols = N_ROWS, N_COLS
        self.wind = WIND
        self.n_states = N_ROWS * N_COLS
        self.n_actions = len(self.moves)
        self.observation_space = spaces.Discrete(self.n_states)
        self.action_space = spaces.Discrete(self.n_actions)
        self.start_state = self.to_state(*START)
        self.goal_state = self.to_state(*GOAL)
        self.P = self._build_model()
        self.s = self.start_state
        self.last_action: int | None = None

    @staticmethod
    def to_state(row: int, col: int) -> int:
        """The observation of grid cell (``row``, ``col``)."""
        return row * N_COLS + col

    @staticmethod
    def to_cell(state: int) -> tuple[int, int]:
        """The grid cell (row, column) of observation ``state``."""
        return divmod(int(state), N_COLS)

    def _build_model(self) -> Model:
        P: Model = {}
        for s in range(self.n_states):
            if s == self.goal_state:
                P[s] = {a: [(1.0, s, 0.0, True)] for a in range(self.n_actions)}
                continue
            row, col = self.to_cell(s)
            winds = [self.wind[col]]
            if self.stochastic_wind and self.wind[col] > 0:
                winds = [self.wind[col] - 1, self.wind[col], self.wind[col] + 1]
            P[s] = {}
            for a, (d_row, d_col) in enumerate(self.moves):
                outcomes: dict[int, float] = {}
                for wind in winds:
                    nxt = self.to_state(
                        min(max(row + d_row - wind, 0), N_ROWS - 1),
                        min(max(col + d_col, 0), N_COLS - 1),
                    )
                    outcomes[nxt] = outcomes.get(nxt, 0.0) + 1.0 / len(winds)
                P[s][a] = [
                    (prob, nxt, -1.0, nxt == self.goal_state) for nxt, prob in outcomes.items()
                ]
        return P

    # ---- gymnasium API (reset, step: ModelEnv) ----

    def _bad_action(self, action: Any) -> str:
        return (
            f"WindyGridWorldEnv: action {action!r} is outside the action space "
            f"{self.action_space}; expected an integer in [0, {self.n_actions})"
        )

    def _render_ansi(self) -> str:
        agent = self.to_cell(self.s)
        lines = []
        for row in range(N_ROWS):
            cells = []
            for col in range(N_COLS):
                if (row, col) == agent:
                    cells.append("x")
                elif (row, col) == GOAL:
                    cells.append("G")
                elif (row, col) == START:
                    cells.append("S")
                else:
                    cells.append(".")
            lines.append(" ".join(cells))
        lines.append(" ".join(str(w) for w in self.wind))
        if self.last_action is not None:
            lines.append(f"({self.action_names[self.last_action]})")
        return "\n".join(lines) + "\n"
