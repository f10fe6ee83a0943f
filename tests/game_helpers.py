"""A tiny configurable AEC game for the tests of the game tree and the solvers: player_0 picks
a bit, then player_1 picks a bit without seeing it (matching pennies, played in turn)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv


class Pennies(AECEnv):
    """Matching pennies in turn: player_1 wins 1 if the bits match, else player_0 does.

    ``agents``: how many agents (the rest only watch); ``payoff``: the two players' returns as
    a function of the bits (zero-sum by default); ``key``: the information state of an agent
    (a string by default)."""

    metadata = {"name": "pennies", "is_parallelizable": False, "render_modes": []}

    def __init__(self, n_agents: int = 2, payoff: Any = None, key: Any = None) -> None:
        super().__init__()
        self.possible_agents = [f"player_{i}" for i in range(n_agents)]
        self.payoff = payoff or (lambda a, b: (-1.0, 1.0) if a == b else (1.0, -1.0))
        self.key = key or (lambda agent, bits: f"{agent}:{len(bits)}")
        self.action_spaces = {a: spaces.Discrete(2) for a in self.possible_agents}
        obs = spaces.Box(0, 1, (1,), np.float32)
        mask = spaces.Box(0, 1, (2,), np.int8)
        self.observation_spaces = {
            a: spaces.Dict({"observation": obs, "action_mask": mask}) for a in self.possible_agents
        }

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def reset(self, seed=None, options=None):
        self.agents = list(self.possible_agents)
        self.bits: list[int] = []
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.agents[0]

    def information_state(self, agent):
        return self.key(agent, self.bits)

    def observe(self, agent):
        mask = np.ones(2, np.int8) if agent == self.agent_selection else np.zeros(2, np.int8)
        return {"observation": np.zeros(1, np.float32), "action_mask": mask}

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0
        self._clear_rewards()
        self.bits.append(int(action))
        if len(self.bits) == 2:
            for a, r in zip(self.possible_agents, self.payoff(*self.bits), strict=False):
                self.rewards[a] = r
            self.terminations = dict.fromkeys(self.agents, True)
            self._accumulate_rewards()
        else:
            self.agent_selection = self.possible_agents[1]
