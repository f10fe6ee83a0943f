"""``rk.Minimax``: a perfect player for small deterministic two-player zero-sum boards
(tic-tac-toe, ...) as a PettingZoo AEC policy (docs/how-to/game-solvers.md).

Alpha-beta search (fail-soft) with a transposition table of exact values and bounds, keyed by
the position (the information state of the agent to move, rlkit/envs/games/infostate.py: the
observation, which on a board is the whole position). The search steps copies of the env
(``copy_game``: a copy of ``env.unwrapped``), so any AEC board game works; the table is kept
across moves and games, so only the first game searches much. At the root every move gets an
exact value and the policy picks among the best with its own generator.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.interfaces import AbstractPolicy
from ..core.state import generator_state, set_generator_state
from ..envs.games.infostate import aec_env, copy_game, information_state, legal_actions

__all__ = ["Minimax"]

EXACT, LOWER, UPPER = 0, 1, 2


class Minimax(AbstractPolicy):
    """Play a small deterministic two-player zero-sum AEC game perfectly.

    Args:
        seed: seed of the generator that picks among equally good moves.
        max_positions: the most positions the transposition table holds before the policy
            refuses the game as too big for exhaustive search.

    ``value(env)`` is the game-theoretic value, for the agent to move, of the position.

    Example:
        >>> import rlkit as rk
        >>> from pettingzoo.classic import tictactoe_v3
        >>> env = tictactoe_v3.env(); env.reset(seed=0)
        >>> player = rk.Minimax(seed=0)
        >>> player.value(env)                     # tic-tac-toe is a draw
        0.0
        >>> env.step(0); env.step(4); env.step(8)
        >>> player(env) in (1, 3, 5, 7)           # the only moves that do not lose
        True
    """

    def __init__(self, seed: Any = None, max_positions: int = 1_000_000) -> None:
        self.rng = np.random.default_rng(seed)
        self.max_positions = int(max_positions)
        self.table: dict[Any, tuple[float, int]] = {}

    def __repr__(self) -> str:
        return f"Minimax({len(self.table)} positions known)"

    def act(self, env: Any) -> int:
        game = aec_env(env)
        scored = self._scored_moves(game)
        best = max(v for _, v in scored)
        moves = [a for a, v in scored if v >= best - 1e-12]
        return int(moves[int(self.rng.integers(len(moves)))])

    def value(self, env: Any) -> float:
        """The value of the position for the agent to move (both playing perfectly)."""
        return max(v for _, v in self._scored_moves(aec_env(env)))

    def _scored_moves(self, game: Any) -> list[tuple[int, float]]:
        """Each legal move with its exact value for the agent to move."""
        agents = list(game.possible_agents)
        _check_game(game, agents)
        agent = game.agent_selection
        sign = 1.0 if agent == agents[0] else -1.0
        scored = []
        for a in legal_actions(game, agent):
            child = copy_game(game)
            child.step(a)
            r = float(child.rewards.get(agents[0], 0.0))
            scored.append((a, sign * (r + self._search(child, agents, -math.inf, math.inf))))
        return scored

    def _search(self, env: Any, agents: list[str], alpha: float, beta: float) -> float:
        """Player 0's return from ``env`` on, with both playing perfectly (alpha-beta)."""
        if (
            not env.agents
            or env.terminations[env.agent_selection]
            or env.truncations[env.agent_selection]
        ):
            return 0.0
        key = information_state(env)
        known = self.table.get(key)
        if known is not None:
            value, flag = known
            if (
                flag == EXACT
                or (flag == LOWER and value >= beta)
                or (flag == UPPER and value <= alpha)
            ):
                return value
        maximizing = env.agent_selection == agents[0]
        alpha0, beta0 = alpha, beta
        best = -math.inf if maximizing else math.inf
        for a in legal_actions(env):
            child = copy_game(env)
            child.step(a)
            r = float(child.rewards.get(agents[0], 0.0))
            v = r + self._search(child, agents, alpha - r, beta - r)
            if maximizing:
                best = max(best, v)
                alpha = max(alpha, best)
            else:
                best = min(best, v)
                beta = min(beta, best)
            if alpha >= beta:
                break
        flag = EXACT if alpha0 < best < beta0 else (LOWER if best >= beta0 else UPPER)
        if len(self.table) >= self.max_positions:
            raise ValueError(
                f"Minimax: more than max_positions={self.max_positions} positions; the "
                f"exhaustive search is for small boards (tic-tac-toe, ...)"
            )
        self.table[key] = (best, flag)
        return best

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """The generator (the transposition table is a cache, rebuilt on demand)."""
        return {"rng": generator_state(self.rng)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore the generator saved by :meth:`state_dict`."""
        set_generator_state(self.rng, state["rng"])


def _check_game(game: Any, agents: list[str]) -> None:
    if len(agents) != 2:
        raise ValueError(
            f"Minimax: the game has agents {agents}; Minimax plays two-player zero-sum games"
        )
    chance = getattr(game.unwrapped, "chance_outcomes", None)
    if callable(chance):
        raise ValueError(
            f"Minimax: {type(game.unwrapped).__name__} has chance events (cards, dice); "
            f"Minimax plays deterministic games with perfect information (use rk.CFR for "
            f"games like poker)"
        )
