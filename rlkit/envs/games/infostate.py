"""The information state of the agent to act in a PettingZoo AEC env, the key that tabular game
policies (rk.TabularPolicy, rk.CFR) and game trees (rlkit/envs/games/tree.py) index by."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from gymnasium.spaces import Space

__all__ = ["aec_env", "information_state", "legal_actions", "copy_game"]

_INNER = ("aec_env", "env")


def aec_env(env: Any) -> Any:
    """The PettingZoo AEC env of ``env``: ``env`` itself, or the AEC env that an adapter holds
    (in its ``aec_env`` or ``env`` attribute).

    Example:
        >>> import rlkit as rk
        >>> game = rk.make_game("rlkit/KuhnPoker-v0")
        >>> aec_env(game) is game
        True
    """
    seen = env
    for _ in range(8):
        if all(hasattr(seen, a) for a in ("possible_agents", "observe", "step")):
            return seen
        inner = next((getattr(seen, n) for n in _INNER if getattr(seen, n, None) is not None), None)
        if inner is None:
            break
        seen = inner
    raise TypeError(
        f"expected a PettingZoo AEC env (or an adapter holding one in .aec_env or .env), got "
        f"{env!r}"
    )


def information_state(env: Any, agent: str | None = None) -> Any:
    """What ``agent`` (the agent to act by default) knows: ``env.unwrapped.information_state
    (agent)`` when the game defines it, else its observation (the ``"observation"`` array of
    the observation dict, as ``(agent, dtype, shape, bytes)``), which fits boards.

    Example:
        >>> import rlkit as rk
        >>> game = rk.make_game("rlkit/KuhnPoker-v0"); game.reset(seed=0)
        >>> information_state(game) in ("0", "1", "2")
        True
    """
    env = aec_env(env)
    agent = env.agent_selection if agent is None else agent
    method = getattr(env.unwrapped, "information_state", None)
    if callable(method):
        return method(agent)
    observation = env.observe(agent)
    x = observation.get("observation") if isinstance(observation, dict) else observation
    if isinstance(x, np.ndarray):
        return (agent, x.dtype.str, x.shape, x.tobytes())
    return (agent, x)


def legal_actions(env: Any, agent: str | None = None) -> list[int]:
    """The legal actions of ``agent`` (the agent to act by default): the nonzero entries of
    its ``action_mask``, else every action of its ``Discrete`` action space.

    Example:
        >>> import rlkit as rk
        >>> game = rk.make_game("rlkit/LeducPoker-v0"); game.reset(seed=0)
        >>> legal_actions(game)
        [1, 2]
    """
    env = aec_env(env)
    agent = env.agent_selection if agent is None else agent
    observation = env.observe(agent)
    mask = observation.get("action_mask") if isinstance(observation, dict) else None
    if mask is None:
        return list(range(int(env.action_space(agent).n)))
    return [int(a) for a in np.flatnonzero(np.asarray(mask))]


def copy_game(env: Any) -> Any:
    """A copy of the game state of ``env`` (its unwrapped AEC env) that steps independently.

    ``copy.deepcopy`` when the game defines ``__deepcopy__`` (the bundled games copy cheaply),
    else a new object with a deep copy of the attributes: PettingZoo's classic games pickle
    (and so deep-copy) as a fresh env made from their constructor arguments, which loses the
    position.

    Example:
        >>> from pettingzoo.classic import tictactoe_v3
        >>> env = tictactoe_v3.env(); env.reset(seed=0); env.step(4)
        >>> clone = copy_game(env); clone.step(0)
        >>> env.unwrapped.board.squares[0], clone.board.squares[:5]
        (0, [2, 0, 0, 0, 1])
    """
    game = aec_env(env).unwrapped
    if "__deepcopy__" in {k for c in type(game).__mro__ for k in vars(c)}:
        return copy.deepcopy(game)
    memo: dict[int, Any] = {}  # spaces are shared, not copied (they never change)
    for value in game.__dict__.values():
        for x in value.values() if isinstance(value, dict) else (value,):
            if isinstance(x, Space):
                memo[id(x)] = x
    clone = object.__new__(type(game))
    clone.__dict__.update(copy.deepcopy(game.__dict__, memo))
    return clone
