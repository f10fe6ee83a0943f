"""Small scripted PettingZoo games for the multi-agent tests (they pass PettingZoo's own
``api_test`` / ``parallel_api_test``)."""

from __future__ import annotations

import functools

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils import AgentSelector

import rlkit as rk


class TakeTurns(AECEnv):
    """Two players, ``a`` then ``b``, four moves in all. Action ``u`` in {0, 1, 2}; 2 is never
    legal. A move ``u`` gives the mover ``u`` and the other player 10 (a reward for an agent
    that did not act). Each agent observes ``[moves made, its index]``."""

    metadata = {"name": "take_turns_v0", "render_modes": [], "is_parallelizable": False}

    def __init__(self, moves: int = 4):
        super().__init__()
        self.moves = moves
        self.possible_agents = ["a", "b"]
        self.render_mode = None

    @functools.cache  # noqa: B019 - PettingZoo's own idiom
    def observation_space(self, agent):
        return spaces.Dict(
            {
                "observation": spaces.Box(0, 100, (2,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (3,), dtype=np.int8),
            }
        )

    @functools.cache  # noqa: B019
    def action_space(self, agent):
        return spaces.Discrete(3)

    def observe(self, agent):
        index = self.possible_agents.index(agent)
        return {
            "observation": np.array([self.count, index], dtype=np.float32),
            "action_mask": np.array([1, 1, 0], dtype=np.int8),
        }

    def reset(self, seed=None, options=None):
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self.count = 0
        self._selector = AgentSelector(self.agents)
        self.agent_selection = self._selector.reset()

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0
        other = "b" if agent == "a" else "a"
        self.rewards = {agent: int(action), other: 10}
        self.count += 1
        if self.count >= self.moves:
            self.terminations = dict.fromkeys(self.agents, True)
        self.agent_selection = self._selector.next()
        self._accumulate_rewards()


class LeaveEarly(ParallelEnv):
    """Three agents act together; ``z`` terminates after 2 steps, the others are truncated
    after 4. Every agent gets reward 1 per step; it observes ``[step, its index]``."""

    metadata = {"name": "leave_early_v0", "render_modes": []}

    def __init__(self, ghost: bool = False):
        self.possible_agents = ["x", "y", "z"]
        self.ghost = ghost  # returns observations for an agent it never declared
        self.render_mode = None

    @functools.cache  # noqa: B019
    def observation_space(self, agent):
        return spaces.Box(0, 10, (2,), dtype=np.float32)

    @functools.cache  # noqa: B019
    def action_space(self, agent):
        return spaces.Discrete(2)

    def _obs(self):
        observations = {
            a: np.array([self.t, self.possible_agents.index(a)], dtype=np.float32)
            for a in self.agents
        }
        if self.ghost:
            observations["ghost"] = np.zeros(2, dtype=np.float32)
        return observations

    def reset(self, seed=None, options=None):
        self.agents = list(self.possible_agents)
        self.t = 0
        return self._obs(), {a: {} for a in self.agents}

    def step(self, actions):
        self.t += 1
        rewards = dict.fromkeys(self.agents, 1.0)
        terminations = {a: a == "z" and self.t >= 2 for a in self.agents}
        truncations = {a: a != "z" and self.t >= 4 for a in self.agents}
        self.agents = [a for a in self.agents if not (terminations[a] or truncations[a])]
        observations = {
            a: np.array([self.t, self.possible_agents.index(a)], dtype=np.float32)
            for a in rewards
        }
        if self.ghost:
            observations["ghost"] = np.zeros(2, dtype=np.float32)
        infos = {a: {} for a in rewards}
        return observations, rewards, terminations, truncations, infos


# ---- a test-local exhaustive minimax player for tic-tac-toe (rk.Minimax is the games helper's)

_LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def _cells(index: int) -> tuple[int, ...]:
    """The board of ``tictactoe_state``'s integer: 0 empty, 1 the mover's, 2 the opponent's,
    in PettingZoo's cell order (the action numbers)."""
    cells = []
    for _ in range(9):
        index, cell = divmod(index, 3)
        cells.append(cell)
    return tuple(cells)


@functools.cache
def negamax(cells: tuple[int, ...]) -> int:
    """The value of ``cells`` for the player to move (1 win, 0 draw, -1 loss) with best play."""
    if any(all(cells[i] == 2 for i in line) for line in _LINES):
        return -1  # the opponent just won
    moves = [i for i in range(9) if cells[i] == 0]
    if not moves:
        return 0
    return max(-negamax(_swap(cells, i)) for i in moves)


def _swap(cells: tuple[int, ...], move: int) -> tuple[int, ...]:
    """The board after the mover plays ``move``, seen by the other player."""
    after = list(cells)
    after[move] = 1
    return tuple({0: 0, 1: 2, 2: 1}[c] for c in after)


class TicTacToeMinimax(rk.AbstractPolicy):
    """Plays a minimax-optimal move, uniformly among the optimal ones (its own generator), on
    the tabular tic-tac-toe env of ``SelfPlayQ_TicTacToe`` (states are board integers)."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def best_moves(self, cells):
        moves = [i for i in range(9) if cells[i] == 0]
        values = {i: -negamax(_swap(cells, i)) for i in moves}
        best = max(values.values())
        return [i for i in moves if values[i] == best]

    def act(self, env):
        return int(self.rng.choice(self.best_moves(_cells(int(env.state)))))


def tictactoe_games(player, opponent, seat: str, games: int, seed: int) -> np.ndarray:
    """``player``'s results (1 win, 0 draw, -1 loss) in ``games`` games of tabular tic-tac-toe
    in ``seat`` against ``opponent``."""
    from rlkit.experiments.multiagent import tictactoe_env

    other = "player_2" if seat == "player_1" else "player_1"
    env = tictactoe_env(seed, tabular=True)
    policy = rk.MultiAgentPolicy({seat: player, other: opponent})
    hook = rk.run(policy, env, rk.StopAfterNEpisodes(games), rk.TotalRewardPerEpisode())
    return np.array([r[seat] for r in hook.rewards])
