"""``TabularPolicy``: a policy of a game as a table, information state -> action probabilities
(what ``rk.CFR`` computes, what ``rk.exploitability`` measures; docs/how-to/game-solvers.md)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from ..core.interfaces import AbstractPolicy
from ..core.state import generator_state, set_generator_state
from ..envs.games.infostate import aec_env, information_state, legal_actions

__all__ = ["TabularPolicy"]


class TabularPolicy(AbstractPolicy):
    """Act in a PettingZoo AEC game by sampling from a table of action probabilities per
    information state (``env.unwrapped.information_state(agent)``, see
    ``rlkit/envs/games/infostate.py``).

    Args:
        table: ``{information state: probabilities}``, each a sequence of ``num_actions``
            non-negative numbers (or a ``{action: probability}`` dict) that sums to 1.
        num_actions: the size of the action space (inferred from the table's sequences).
        seed: seed of the policy's own generator (nothing reads global random state).

    ``policy(env)`` acts for the agent whose turn it is in an AEC env (or an adapter holding
    one); an information state missing from the table, or probabilities on illegal actions,
    raise ``ValueError`` naming it.

    Example:
        >>> import rlkit as rk
        >>> always_bet = rk.TabularPolicy({f"{c}{h}": [0.0, 1.0] for c in "012"
        ...                                for h in ("", "p", "b", "pb")}, seed=0)
        >>> env = rk.make_game("rlkit/KuhnPoker-v0"); env.reset(seed=0)
        >>> always_bet(env), always_bet.probabilities("2pb").tolist()
        (1, [0.0, 1.0])
    """

    def __init__(
        self,
        table: Mapping[Hashable, Any],
        num_actions: int | None = None,
        seed: int | np.random.SeedSequence | np.random.Generator | None = None,
    ) -> None:
        if not isinstance(table, Mapping):
            raise TypeError(
                f"TabularPolicy: table must be a mapping {{information state: probabilities}}, "
                f"got {type(table).__name__}"
            )
        self.num_actions = _num_actions(table) if num_actions is None else int(num_actions)
        self.infosets = list(table)
        self.index = {key: i for i, key in enumerate(self.infosets)}
        self.probs = np.zeros((len(self.infosets), self.num_actions))
        for i, (key, row) in enumerate(table.items()):
            self.probs[i] = _row(key, row, self.num_actions)
        self.rng = np.random.default_rng(seed)

    @classmethod
    def from_arrays(
        cls, infosets: list[Hashable], probs: np.ndarray, seed: Any = None
    ) -> TabularPolicy:
        """A policy from a list of information states and a ``[n, num_actions]`` array of
        probabilities (rows already checked, as solvers produce them).

        Example:
            >>> import numpy as np
            >>> TabularPolicy.from_arrays(["a"], np.array([[0.5, 0.5]])).probabilities("a")
            array([0.5, 0.5])
        """
        policy = cls({}, num_actions=probs.shape[1], seed=seed)
        policy.infosets = list(infosets)
        policy.index = {key: i for i, key in enumerate(policy.infosets)}
        policy.probs = np.array(probs, dtype=np.float64)
        return policy

    def __repr__(self) -> str:
        return f"TabularPolicy({len(self.infosets)} information states)"

    def __len__(self) -> int:
        return len(self.infosets)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.index

    def probabilities(self, key: Hashable) -> np.ndarray:
        """The action probabilities at information state ``key`` (``ValueError`` if absent)."""
        i = self.index.get(key)
        if i is None:
            raise ValueError(
                f"TabularPolicy: no probabilities for the information state {key!r} "
                f"({len(self.infosets)} states in the table)"
            )
        return self.probs[i]

    def act(self, env: Any) -> int:
        game = aec_env(env)
        probs = self.probabilities(information_state(game))
        legal = legal_actions(game)
        if not np.all(np.isin(np.flatnonzero(probs), legal)):
            raise ValueError(
                f"TabularPolicy: the probabilities {probs.tolist()} at "
                f"{information_state(game)!r} put weight on an illegal action (legal: {legal})"
            )
        return int(self.rng.choice(self.num_actions, p=probs / probs.sum()))

    def as_dict(self) -> dict[Hashable, list[float]]:
        """The table as ``{information state: [probabilities]}``.

        Example:
            >>> import rlkit as rk
            >>> rk.TabularPolicy({"x": [1.0, 0.0]}).as_dict()
            {'x': [1.0, 0.0]}
        """
        return {key: self.probs[i].tolist() for i, key in enumerate(self.infosets)}

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """The table's probabilities and the generator."""
        return {"probs": self.probs.copy(), "rng": generator_state(self.rng)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a state saved by :meth:`state_dict` (same information states)."""
        probs = np.asarray(state["probs"], dtype=np.float64)
        if probs.shape != self.probs.shape:
            raise ValueError(
                f"TabularPolicy: saved probabilities of shape {probs.shape}, this table has "
                f"{self.probs.shape}"
            )
        self.probs = probs.copy()
        set_generator_state(self.rng, state["rng"])


def _num_actions(table: Mapping[Hashable, Any]) -> int:
    for row in table.values():
        if not isinstance(row, Mapping):
            return len(row)
    actions = [int(a) for row in table.values() for a in row]
    return max(actions, default=-1) + 1


def _row(key: Hashable, row: Any, num_actions: int) -> np.ndarray:
    if isinstance(row, Mapping):
        x = np.zeros(num_actions)
        for a, p in row.items():
            x[int(a)] = p
    else:
        x = np.asarray(row, dtype=np.float64)
    if x.shape != (num_actions,) or not np.all(np.isfinite(x)) or np.any(x < 0):
        raise ValueError(
            f"TabularPolicy: the probabilities at information state {key!r} must be "
            f"{num_actions} finite non-negative numbers, got {row!r}"
        )
    if abs(x.sum() - 1.0) > 1e-6:
        raise ValueError(
            f"TabularPolicy: the probabilities at information state {key!r} sum to "
            f"{x.sum():.6g}, expected 1"
        )
    return x
