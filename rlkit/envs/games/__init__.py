"""Bundled two-player games as PettingZoo AEC environments (``pip install pettingzoo``), and the
game trees that the exact solvers (rk.CFR, rk.exploitability) work on.

PettingZoo has no registry of ids, so ``rk.make_game(id)`` makes a bundled game by its id:

* ``rlkit/KuhnPoker-v0``: :class:`~rlkit.KuhnPokerEnv` (OpenSpiel's ``kuhn_poker``);
* ``rlkit/LeducPoker-v0``: :class:`~rlkit.LeducPokerEnv` (OpenSpiel's ``leduc_poker``).

Nothing here imports pettingzoo until a game is made.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["GAMES", "make_game"]

#: id -> "module:class" of the bundled games
GAMES = {
    "rlkit/KuhnPoker-v0": "rlkit.envs.games.kuhn_poker:KuhnPokerEnv",
    "rlkit/LeducPoker-v0": "rlkit.envs.games.leduc_poker:LeducPokerEnv",
}


def make_game(game_id: str, **kwargs: Any) -> Any:
    """A new bundled game (a PettingZoo AEC env, not yet reset) by its id.

    Example:
        >>> import rlkit as rk
        >>> env = rk.make_game("rlkit/KuhnPoker-v0")
        >>> env.reset(seed=0)
        >>> env.possible_agents
        ['player_0', 'player_1']
    """
    if game_id not in GAMES:
        raise ValueError(f"make_game: unknown game {game_id!r}; bundled games: {sorted(GAMES)}")
    module, name = GAMES[game_id].split(":")
    return getattr(importlib.import_module(module), name)(**kwargs)
