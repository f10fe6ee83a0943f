"""What the bundled card games (Kuhn and Leduc poker) share: the PettingZoo AEC bookkeeping
(whose turn, rewards per agent, terminations, dead steps) and the chance protocol that lets a
solver enumerate the game tree (:class:`rlkit.envs.games.tree.GameTree`).

A game is a small state machine: chance events (dealing cards) and the players' actions. In
normal play the env samples each chance event with its own generator (``reset(seed=...)``).
``reset(options={"explicit_chance": True})`` leaves every chance event pending instead: while
``chance_outcomes()`` is not empty, nobody acts and ``apply_chance(outcome)`` resolves it. The
game state is a handful of small attributes, copied cheaply by ``copy.deepcopy``.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding

from ._pettingzoo import require_pettingzoo

require_pettingzoo("rlkit's card games (rlkit/KuhnPoker-v0, rlkit/LeducPoker-v0)")

from pettingzoo import AECEnv  # noqa: E402 - after the check that says how to install it

__all__ = ["CardGameEnv"]

AGENTS = ("player_0", "player_1")


class CardGameEnv(AECEnv):
    """Base class of the bundled two-player card games (PettingZoo AEC API).

    Subclasses define the rules: ``num_actions``, ``observation_size``, ``_new_game()``,
    ``_chance()`` (the pending chance event's outcomes and probabilities, or ``[]``),
    ``_deal(outcome)``, ``_legal()`` (legal actions of the player to act), ``_play(action)``,
    ``_returns()`` (the players' payoffs once ``_over``), ``_observation(player)`` and
    ``information_state(agent)``.

    Example:
        >>> import rlkit as rk
        >>> env = rk.KuhnPokerEnv()
        >>> env.reset(seed=0)
        >>> env.agent_selection, env.observe("player_0")["action_mask"].tolist()
        ('player_0', [1, 1])
    """

    metadata = {"render_modes": ["ansi"], "name": "card_game", "is_parallelizable": False}
    num_actions: int = 0
    observation_size: int = 0
    #: attributes holding the game state (copied by ``__deepcopy__``; lists are copied)
    _state_attributes: tuple[str, ...] = ()

    def __init__(self, render_mode: str | None = None) -> None:
        super().__init__()
        if render_mode not in (None, "ansi"):
            raise ValueError(
                f"{type(self).__name__}: render_mode must be None or 'ansi', got {render_mode!r}"
            )
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        mask = spaces.Box(0, 1, (self.num_actions,), np.int8)
        obs = spaces.Box(0.0, 1.0, (self.observation_size,), np.float32)
        self.observation_spaces = {
            a: spaces.Dict({"observation": obs, "action_mask": mask}) for a in AGENTS
        }
        self.action_spaces = {a: spaces.Discrete(self.num_actions) for a in AGENTS}
        self.np_random, _ = seeding.np_random(None)
        self.explicit_chance = False
        self._reset_bookkeeping()
        self._new_game()
        self.agent_selection = AGENTS[0]

    # ---- PettingZoo API ----
    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of ``agent``: a dict of ``observation`` and ``action_mask``."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """``Discrete(num_actions)``."""
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """A new hand, dealt with the env's generator (seeded by ``seed``); with
        ``options={"explicit_chance": True}`` the deals are left to ``apply_chance``."""
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        self.explicit_chance = bool((options or {}).get("explicit_chance", False))
        self.agents = list(AGENTS)
        self._reset_bookkeeping()
        self._new_game()
        self._resolve_chance()
        self.agent_selection = AGENTS[self._player]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation": float32 vector, "action_mask": int8 vector}`` of ``agent`` (the
        mask is all zeros unless it is ``agent``'s turn)."""
        player = AGENTS.index(agent)
        mask = np.zeros(self.num_actions, np.int8)
        if self._acting() and player == self._player:
            mask[self._legal()] = 1
        return {"observation": self._observation(player), "action_mask": mask}

    def step(self, action: Any) -> None:
        """The acting agent plays ``action`` (``None`` for an agent whose game is over)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if self.chance_outcomes():
            raise RuntimeError(
                f"{type(self).__name__}: a chance event is pending (explicit_chance): resolve "
                f"it with apply_chance(outcome) before {agent} acts"
            )
        legal = self._legal()
        if action is None or int(action) not in legal:
            raise ValueError(
                f"{type(self).__name__}: illegal action {action!r} for {agent}; legal actions "
                f"are {legal}"
            )
        self._cumulative_rewards[agent] = 0
        self._clear_rewards()
        self._play(int(action))
        self._resolve_chance()
        self._after_move()

    def render(self) -> str | None:
        """A one-line description of the hand (``render_mode="ansi"``), else ``None``."""
        if self.render_mode != "ansi":
            return None
        return self._describe()

    def close(self) -> None:
        """Nothing to release."""

    # ---- the chance protocol (game trees, rlkit/envs/games/tree.py) ----
    def chance_outcomes(self) -> list[tuple[Any, float]]:
        """The pending chance event's ``(outcome, probability)`` pairs; ``[]`` when a player
        acts or the game is over."""
        return [] if self._over else self._chance()

    def apply_chance(self, outcome: Any) -> None:
        """Resolve the pending chance event with ``outcome`` (explicit-chance mode)."""
        outcomes = [o for o, _ in self.chance_outcomes()]
        if outcome not in outcomes:
            raise ValueError(
                f"{type(self).__name__}: chance outcome {outcome!r} is not possible now; "
                f"possible outcomes: {outcomes}"
            )
        self._deal(outcome)
        self._after_move()

    def information_state(self, agent: str) -> str:  # pragma: no cover - abstract
        """What ``agent`` knows: its cards, the public card and every action, as a string."""
        raise NotImplementedError

    # ---- internals ----
    def _reset_bookkeeping(self) -> None:
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos = {a: {} for a in AGENTS}

    def _acting(self) -> bool:
        return not self._over and not self._chance()

    def _resolve_chance(self) -> None:
        """Sample every pending chance event (unless chance is explicit)."""
        while not self.explicit_chance and self.chance_outcomes():
            outcomes = self._chance()
            probs = np.array([p for _, p in outcomes])
            pick = int(self.np_random.choice(len(outcomes), p=probs / probs.sum()))
            self._deal(outcomes[pick][0])

    def _after_move(self) -> None:
        if self._over:
            for agent, value in zip(AGENTS, self._returns(), strict=True):
                self.rewards[agent] = float(value)
            self.terminations = dict.fromkeys(AGENTS, True)
            self._accumulate_rewards()
        elif not self._chance():
            self.agent_selection = AGENTS[self._player]

    def __deepcopy__(self, memo: dict) -> CardGameEnv:
        """A cheap copy: the spaces are shared, the game state (and, unless chance is explicit,
        the generator) copied."""
        clone = copy.copy(self)
        if not self.explicit_chance:
            clone.np_random = copy.deepcopy(self.np_random, memo)
        for name in ("agents", *self._state_attributes):
            value = getattr(self, name)
            if isinstance(value, list):
                setattr(clone, name, [list(v) if isinstance(v, list) else v for v in value])
        for name in ("rewards", "_cumulative_rewards", "terminations", "truncations"):
            setattr(clone, name, dict(getattr(self, name)))
        clone.infos = {a: dict(i) for a, i in self.infos.items()}
        return clone
