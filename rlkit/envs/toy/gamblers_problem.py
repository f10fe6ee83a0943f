"""The gambler's problem of Sutton & Barto, Example 4.3 (Figure 4.3)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from ...core.checks import int_at_least, is_int, unit_interval
from ...core.interfaces import InvalidActionError
from ._common import Model, ModelEnv, check_render_mode

__all__ = ["GamblersProblemEnv"]


class GamblersProblemEnv(ModelEnv):
    """Bet on coin flips until the capital reaches ``goal`` (reward +1) or 0.

    Sutton & Barto (2018), Example 4.3. The state (observation) is the capital
    ``0 .. goal`` (``Discrete(goal + 1)``); the action is the stake (``Discrete(goal // 2 + 1)``).
    In a capital ``s`` strictly between 0 and ``goal`` the legal stakes are
    ``1 .. min(s, goal - s)``; in the terminal capitals 0 and ``goal`` only the stake 0 is legal
    (a no-op). With probability ``p_heads`` the gambler wins the stake, otherwise loses it.
    Reaching ``goal`` gives +1 and ends the episode (``terminated``), as does reaching 0 (reward
    0); every other step gives 0. Undiscounted, the value of a capital is the probability of
    reaching the goal.

    The legal stakes are in ``info["action_mask"]`` (an ``np.int8`` array, as gymnasium's Taxi
    does) and ``action_mask(state)``. By default the environment follows gymnasium's rule that
    every action of the action space can be stepped (``gymnasium.utils.env_checker.check_env``
    relies on it): an illegal stake is clipped to the legal range. Through :class:`rlkit.GymEnv`
    an action outside the mask raises :class:`rlkit.InvalidActionError`, and so does the raw
    environment with ``strict=True``.

    The model ``P[s][a] = [(prob, next_state, reward, terminated)]`` has an entry for the legal
    stakes of ``s`` only (``P[s].keys()`` is the legal set); the terminal capitals have
    ``P[s][0] = [(1.0, s, 0.0, True)]``.

    Args:
        p_heads: probability of winning a bet, in [0, 1].
        goal: the capital that wins (>= 2).
        start_capital: the capital every episode starts with (``1 .. goal - 1``), or None for a
            uniformly random one. ``reset(options={"capital": c})`` overrides it for one episode.
        strict: raise on illegal stakes (True) or clip them (False, the default; see above).
        render_mode: None or ``"ansi"``.

    Example:
        >>> import gymnasium as gym
        >>> env = gym.make("rlkit/GamblersProblem-v0")
        >>> obs, info = env.reset(seed=0, options={"capital": 50})
        >>> obs, int(info["action_mask"].sum())      # stakes 1..50
        (50, 50)
        >>> obs, reward, terminated, truncated, info = env.step(50)
        >>> obs in (0, 100), terminated
        (True, True)
        >>> env.unwrapped.P[30][10]
        [(0.4, 40, 0.0, False), (0.6, 20, 0.0, False)]
    """

    _state_name = "capital"

    def __init__(
        self,
        p_heads: float = 0.4,
        goal: int = 100,
        start_capital: int | None = None,
        strict: bool = False,
        render_mode: str | None = None,
    ) -> None:
        self.p_heads = unit_interval("GamblersProblemEnv", "p_heads", p_heads)
        self.goal = int_at_least("GamblersProblemEnv", "goal", goal, 2)
        self.strict = bool(strict)
        self.render_mode = check_render_mode(self, render_mode)
        self.n_states = self.goal + 1
        self.n_actions = self.goal // 2 + 1
        self.observation_space = spaces.Discrete(self.n_states)
        self.action_space = spaces.Discrete(self.n_actions)
        self.terminal_states = (0, self.goal)
        self.start_capital = (
            None if start_capital is None else self._checked_capital("start_capital", start_capital)
        )
        capital = np.arange(self.n_states)[:, None]
        stake = np.arange(self.n_actions)[None, :]
        self._max_stake = np.minimum(capital, self.goal - capital)[:, 0]
        self._masks = ((stake >= 1) & (stake <= self._max_stake[:, None])).astype(np.int8)
        self._masks[list(self.terminal_states), 0] = 1
        self.P = self._build_model()
        self.s = self.goal // 2 if self.start_capital is None else self.start_capital
        self.last_action: int | None = None

    def _checked_capital(self, name: str, capital: Any) -> int:
        if not is_int(capital) or not 1 <= capital <= self.goal - 1:
            raise ValueError(
                f"GamblersProblemEnv: {name} must be a capital in 1..{self.goal - 1}, "
                f"got {capital!r}"
            )
        return int(capital)

    def _build_model(self) -> Model:
        p, goal = self.p_heads, self.goal
        P: Model = {s: {0: [(1.0, s, 0.0, True)]} for s in self.terminal_states}
        for s in range(1, goal):
            P[s] = {}
            for stake in range(1, int(self._max_stake[s]) + 1):
                win, lose = s + stake, s - stake
                P[s][stake] = [
                    (p, win, 1.0 if win == goal else 0.0, win == goal),
                    (1.0 - p, lose, 0.0, lose == 0),
                ]
        return dict(sorted(P.items()))

    def action_mask(self, state: int | None = None) -> np.ndarray:
        """The legal stakes of capital ``state`` (default: the current one), an ``np.int8`` mask."""
        state = self.s if state is None else state
        if not is_int(state) or not 0 <= state <= self.goal:
            raise ValueError(
                f"GamblersProblemEnv.action_mask: state must be a capital in 0..{self.goal}, "
                f"got {state!r}"
            )
        return self._masks[state].copy()

    # ---- gymnasium API (reset, step: ModelEnv) ----

    def _start_state(self, options: dict[str, Any] | None) -> int:
        if options and "capital" in options:
            return self._checked_capital('options["capital"]', options["capital"])
        if self.start_capital is not None:
            return self.start_capital
        return int(self.np_random.integers(1, self.goal))

    def _info(self, s: int) -> dict[str, Any]:
        return {"action_mask": self._masks[s].copy()}

    def _transitions(self, action: Any) -> list[tuple[float, int, float, bool]]:
        """``P[s][action]``, an illegal stake clipped to the legal ones (or raising if strict).

        The win comes first, so ModelEnv's draw wins with probability ``p_heads``.
        """
        if not is_int(action) or not 0 <= action < self.n_actions:
            raise InvalidActionError(
                f"GamblersProblemEnv: stake {action!r} is outside the action space "
                f"{self.action_space}; expected an integer in [0, {self.n_actions})"
            )
        s = self.s
        transitions = self.P[s].get(action)
        if transitions is None:
            if self.strict:
                raise InvalidActionError(self._illegal(s, action))
            stake = 0 if s in self.terminal_states else min(max(int(action), 1), self._max_stake[s])
            transitions = self.P[s][int(stake)]
        return transitions

    def _illegal(self, s: int, action: Any) -> str:
        if s in self.terminal_states:
            legal = "only 0 (the episode is over)"
        else:
            legal = f"1..{self._max_stake[s]}"
        return (
            f"GamblersProblemEnv: stake {action!r} is illegal with capital {s}; "
            f"expected {legal} (see info['action_mask'])"
        )

    def _render_ansi(self) -> str:
        last = "" if self.last_action is None else f"  (staked {self.last_action})"
        return f"capital {self.s}/{self.goal}{last}\n"
