"""``RandomOpening``: exploring starts for turn-based games (docs/how-to/multi-agent.md).

Every episode of the wrapped PettingZoo AEC game starts from the position a random number of
uniformly random legal moves leads to (Sutton & Barto's *exploring starts*, section 5.3), so
a self-play learner meets the positions an opponent's unusual moves lead to, which its own
play rarely reaches. The opening's moves are nobody's: no agent acts, records or is rewarded
for them; an opening that would end the game or give a reward is drawn again.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo.utils.wrappers import BaseWrapper

from ..core.checks import non_negative_int

__all__ = ["RandomOpening"]


class RandomOpening(BaseWrapper):
    """A PettingZoo AEC game whose episodes start after ``k`` uniformly random legal moves,
    ``k`` drawn uniformly from ``0 .. max_moves`` at each reset (exploring starts).

    Args:
        env: a PettingZoo AEC env whose observations hold an ``action_mask`` (or whose infos
            do), e.g. ``tictactoe_v3.env()``.
        max_moves: the longest opening (an integer >= 0; 0 leaves the game unchanged).
        seed: seed of the wrapper's own generator (the openings' lengths and moves).

    Example:
        >>> import rlkit as rk
        >>> from pettingzoo.classic import tictactoe_v3
        >>> game = rk.RandomOpening(tictactoe_v3.env(), max_moves=4, seed=0)
        >>> game.reset(seed=0)
        >>> game.opening_moves
        4
        >>> int(game.observe(game.agent_selection)["observation"].sum())  # marks on the board
        4
    """

    def __init__(self, env: Any, max_moves: int, seed: Any = None) -> None:
        super().__init__(env)
        self.max_moves = non_negative_int("RandomOpening", "max_moves", max_moves)
        self.rng = np.random.default_rng(seed)
        self.opening_moves = 0

    def __str__(self) -> str:
        return f"RandomOpening<{self.env}, max_moves={self.max_moves}>"

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Reset the game, then play the opening (drawn again until one leaves the game
        running with no reward given)."""
        self.env.reset(seed=seed, options=options)
        while not self._opening():
            self.env.reset(options=options)

    def _opening(self) -> bool:
        moves = int(self.rng.integers(self.max_moves + 1))
        raw = self.env.unwrapped
        for _ in range(moves):
            agent = raw.agent_selection
            mask = _legal_moves(self.env, agent)
            self.env.step(int(self.rng.choice(np.flatnonzero(mask))))
            ended = any(raw.terminations.values()) or any(raw.truncations.values())
            if ended or any(raw.rewards.values()) or len(raw.agents) < len(raw.possible_agents):
                return False
        self.opening_moves = moves
        return True


def _legal_moves(env: Any, agent: Any) -> np.ndarray:
    observation = env.observe(agent)
    mask = observation.get("action_mask") if isinstance(observation, dict) else None
    if mask is None:
        mask = env.unwrapped.infos.get(agent, {}).get("action_mask")
    if mask is None or not np.any(mask):
        raise ValueError(
            f"RandomOpening: {env} gives agent {agent!r} no action_mask (in its observation or "
            f"info) with a legal move; it needs one to play random legal moves"
        )
    return np.asarray(mask, dtype=bool)
