"""Leduc poker (``rlkit/LeducPoker-v0``), a PettingZoo AEC environment with OpenSpiel's
``leduc_poker`` rules (its defaults), information states and information-state tensor.

Six cards, jack, queen and king in two suits (card ``c`` has rank ``c // 2``); each player is
dealt one private card and antes 1. Two betting rounds, player 0 first in each: actions 0 =
fold (only when facing a bet), 1 = call (or check), 2 = raise (by 2 in the first round, 4 in
the second; at most 2 raises per round). A round ends with a call after a raise or with two
checks; then one public card is dealt. At the showdown a pair with the public card wins, else
the higher rank; equal ranks split the pot. A fold gives the pot to the other player.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._card_game import AGENTS, CardGameEnv

__all__ = ["LeducPokerEnv"]

FOLD, CALL, RAISE = 0, 1, 2
RAISE_AMOUNTS = (2, 4)
MAX_RAISES = 2
MAX_ACTIONS_PER_ROUND = 4
STARTING_MONEY = 100


class LeducPokerEnv(CardGameEnv):
    """Leduc poker for ``player_0`` and ``player_1`` (PettingZoo AEC API), OpenSpiel's rules
    (see the module docstring). ``information_state(agent)`` is OpenSpiel's string
    (``"[Observer: 0][Private: 4][Round 1][Player: 0][Pot: 2][Money: 99 99][Round1: ][Round2: ]"``).

    Example:
        >>> import rlkit as rk
        >>> env = rk.LeducPokerEnv()
        >>> env.reset(seed=0)
        >>> env.observe(env.agent_selection)["action_mask"].tolist()   # no fold without a bet
        [0, 1, 1]
        >>> env.step(2); env.step(0)                                   # raise, fold
        >>> env.rewards
        {'player_0': 1.0, 'player_1': -1.0}
    """  # noqa: E501

    metadata = {"render_modes": ["ansi"], "name": "leduc_poker_v0", "is_parallelizable": False}
    num_actions = 3
    observation_size = 30
    _state_attributes = ("cards", "rounds", "money_in")

    def _new_game(self) -> None:
        self.cards: list[int | None] = [None, None]
        self.public: int | None = None
        self.rounds: list[list[int]] = [[], []]
        self.money_in: list[int] = [1, 1]
        self.round = 0
        self.num_raises = 0
        self.folded: int | None = None
        self._player = 0

    @property
    def _over(self) -> bool:
        if self.folded is not None:
            return True
        return self.round == 1 and self._round_done(self.rounds[1])

    @staticmethod
    def _round_done(actions: list[int]) -> bool:
        return len(actions) >= 2 and actions[-1] == CALL

    def _chance(self) -> list[tuple[Any, float]]:
        dealt = [c for c in (*self.cards, self.public) if c is not None]
        if self.cards[0] is None or self.cards[1] is None:
            left = [c for c in range(6) if c not in dealt]
            return [(c, 1 / len(left)) for c in left]
        if self.round == 0 and self._round_done(self.rounds[0]) and self.folded is None:
            left = [c for c in range(6) if c not in dealt]
            return [(c, 1 / len(left)) for c in left]
        return []

    def _deal(self, outcome: Any) -> None:
        card = int(outcome)
        if self.cards[0] is None:
            self.cards[0] = card
        elif self.cards[1] is None:
            self.cards[1] = card
        else:  # the public card: the second round starts, player 0 first
            self.public = card
            self.round = 1
            self.num_raises = 0
            self._player = 0

    def _legal(self) -> list[int]:
        legal = [FOLD] if self.money_in[self._player] < max(self.money_in) else []
        legal.append(CALL)
        if self.num_raises < MAX_RAISES:
            legal.append(RAISE)
        return legal

    def _play(self, action: int) -> None:
        player = self._player
        self.rounds[self.round].append(action)
        if action == FOLD:
            self.folded = player
        elif action == CALL:
            self.money_in[player] = max(self.money_in)
        else:
            self.money_in[player] = max(self.money_in) + RAISE_AMOUNTS[self.round]
            self.num_raises += 1
        self._player = 1 - player

    def _returns(self) -> tuple[float, float]:
        if self.folded is not None:
            lost = float(self.money_in[self.folded])
            return (-lost, lost) if self.folded == 0 else (lost, -lost)
        strength = [self._strength(card) for card in self.cards]
        stake = float(self.money_in[0])
        if strength[0] == strength[1]:
            return 0.0, 0.0
        return (stake, -stake) if strength[0] > strength[1] else (-stake, stake)

    def _strength(self, card: int | None) -> int:
        rank = card // 2
        return 10 + rank if rank == self.public // 2 else rank

    def information_state(self, agent: str) -> str:
        """OpenSpiel's information state string of ``agent``: its card, the round, whose turn,
        the pot, the money left, the public card once dealt and the actions of each round.

        Example:
            >>> import rlkit as rk
            >>> env = rk.LeducPokerEnv(); env.reset(seed=1); env.step(1)
            >>> env.information_state("player_1").split("]")[2:6]
            ['[Round 1', '[Player: 1', '[Pot: 2', '[Money: 99 99']
        """
        observer = AGENTS.index(agent)
        card = self.cards[observer]
        money = " ".join(str(STARTING_MONEY - m) for m in self.money_in)
        text = (
            f"[Observer: {observer}][Private: {'' if card is None else card}]"
            f"[Round {self.round + 1}][Player: {self._player}][Pot: {sum(self.money_in)}]"
            f"[Money: {money}]"
        )
        if self.public is not None:
            text += f"[Public: {self.public}]"
        return text + "".join(
            f"[Round{i + 1}: {' '.join(map(str, actions))}]"
            for i, actions in enumerate(self.rounds)
        )

    def _observation(self, player: int) -> np.ndarray:
        """OpenSpiel's information state tensor: player, private card, public card, then each
        round's actions as two bits (call, raise)."""
        x = np.zeros(self.observation_size, np.float32)
        x[player] = 1.0
        if self.cards[player] is not None:
            x[2 + self.cards[player]] = 1.0
        if self.public is not None:
            x[8 + self.public] = 1.0
        for r, actions in enumerate(self.rounds):
            for i, a in enumerate(actions[:MAX_ACTIONS_PER_ROUND]):
                if a != FOLD:
                    x[14 + 8 * r + 2 * i + (a - 1)] = 1.0
        return x

    def _describe(self) -> str:
        rounds = " / ".join("".join("fcr"[a] for a in r) or "-" for r in self.rounds)
        return f"cards {self.cards}, public {self.public}, actions {rounds}"
