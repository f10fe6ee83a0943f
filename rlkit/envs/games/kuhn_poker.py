"""Kuhn poker (``rlkit/KuhnPoker-v0``), a PettingZoo AEC environment with OpenSpiel's
``kuhn_poker`` rules, information states and observation tensor.

Three cards (0 = jack, 1 = queen, 2 = king), one dealt to each player; both ante 1. Player 0
acts first. Actions: 0 = pass (check or fold), 1 = bet (bet or call 1). The hand ends after
pass-pass, bet-call, bet-fold (the bettor wins the pot) or pass-bet-call / pass-bet-fold; at a
showdown the higher card wins. Returns are zero-sum: +-1 without a call, +-2 with one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._card_game import AGENTS, CardGameEnv

__all__ = ["KuhnPokerEnv"]

PASS, BET = 0, 1
_LETTERS = "pb"
_TERMINAL = {(PASS, PASS), (BET, PASS), (BET, BET), (PASS, BET, PASS), (PASS, BET, BET)}


class KuhnPokerEnv(CardGameEnv):
    """Kuhn poker for two players ``player_0`` and ``player_1`` (PettingZoo AEC API), with
    OpenSpiel's rules (see the module docstring). ``information_state(agent)`` is OpenSpiel's
    string: the agent's card followed by the actions (``"1pb"``: queen, pass, bet).

    Example:
        >>> import rlkit as rk
        >>> env = rk.KuhnPokerEnv()
        >>> env.reset(seed=3)
        >>> env.step(0); env.step(1); env.step(1)   # pass, bet, call: showdown
        >>> env.information_state("player_0")[1:], sorted(env.rewards.values())
        ('pbb', [-2.0, 2.0])
    """

    metadata = {"render_modes": ["ansi"], "name": "kuhn_poker_v0", "is_parallelizable": False}
    num_actions = 2
    observation_size = 11
    _state_attributes = ("cards", "history")

    def _new_game(self) -> None:
        self.cards: list[int | None] = [None, None]
        self.history: list[int] = []
        self._player = 0

    @property
    def _over(self) -> bool:
        return tuple(self.history) in _TERMINAL

    def _chance(self) -> list[tuple[Any, float]]:
        if self.cards[0] is None:
            return [(c, 1 / 3) for c in range(3)]
        if self.cards[1] is None:
            return [(c, 1 / 2) for c in range(3) if c != self.cards[0]]
        return []

    def _deal(self, outcome: Any) -> None:
        self.cards[0 if self.cards[0] is None else 1] = int(outcome)

    def _legal(self) -> list[int]:
        return [PASS, BET]

    def _play(self, action: int) -> None:
        self.history.append(action)
        self._player = 1 - self._player

    def _returns(self) -> tuple[float, float]:
        h = tuple(self.history)
        if h == (BET, PASS):
            return 1.0, -1.0
        if h == (PASS, BET, PASS):
            return -1.0, 1.0
        stake = 2.0 if BET in h else 1.0
        winner = 0 if self.cards[0] > self.cards[1] else 1
        return (stake, -stake) if winner == 0 else (-stake, stake)

    def information_state(self, agent: str) -> str:
        """The agent's card and the actions so far, as OpenSpiel writes them (``"2pb"``).

        Example:
            >>> import rlkit as rk
            >>> env = rk.KuhnPokerEnv(); env.reset(seed=0); env.step(1)
            >>> env.information_state("player_1")[1:]
            'b'
        """
        card = self.cards[AGENTS.index(agent)]
        return ("" if card is None else str(card)) + "".join(_LETTERS[a] for a in self.history)

    def _observation(self, player: int) -> np.ndarray:
        """OpenSpiel's information state tensor: player, card, then one-hot actions."""
        x = np.zeros(self.observation_size, np.float32)
        x[player] = 1.0
        card = self.cards[player]
        if card is not None:
            x[2 + card] = 1.0
        for i, a in enumerate(self.history):
            x[5 + 2 * i + a] = 1.0
        return x

    def _describe(self) -> str:
        history = "".join(_LETTERS[a] for a in self.history) or "-"
        return f"cards {self.cards}, actions {history}"
