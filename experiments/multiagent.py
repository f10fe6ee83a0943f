"""Multi-agent recipes (docs/how-to/multi-agent.md) on PettingZoo games: tabular self-play on
tic-tac-toe, DQN against a random masked opponent on tic-tac-toe (Tianshou's test), DQN by
self-play against a pool of its frozen past copies on connect four, and PPO with parameter
sharing on MPE's simple_spread.

They need the ``multiagent`` extra (``pip install rlkit-toolkit[multiagent]``: PettingZoo) and,
for simple_spread, the ``mpe`` extra (``mpe2``); both are imported when a recipe is built, so
the recipes are listed without them. Every generator is derived from the recipe's ``seed``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

import rlkit as rk
from rlkit.core.checks import non_negative_int, positive_int, unit_interval
from rlkit.core.seeding import int_seed, spawn_seeds

from .dqn import (
    DQNParams,
    RecipeSeeds,
    q_approximator,
    replay_sampler,
    zoo_controller,
    zoo_explorer,
)

__all__ = [
    "tictactoe_state",
    "tictactoe_env",
    "tictactoe_successors",
    "connect_four_afterstate",
    "TICTACTOE_DQN",
    "SelfPlayQ_TicTacToe",
    "DQN_TicTacToe",
    "connect_four_env",
    "CONNECT4_DQN",
    "SelfPlayDQN_ConnectFour",
    "SharedPPO_SimpleSpread",
]

_POWERS = 3 ** np.arange(9)
#: the number of tic-tac-toe boards seen from the player to move: each cell empty, mine, theirs
TICTACTOE_STATES = 3**9


def tictactoe_state(observation: Any) -> int:
    """PettingZoo's tic-tac-toe observation (3x3 cells, plane 0 the mover's marks, plane 1 the
    opponent's) as one integer in ``[0, 3**9)``: cell values 0 empty, 1 mine, 2 theirs, read
    as base-3 digits in the order of the actions (``observation[row, col]`` is the cell of
    action ``3 * row + col``). A tabular learner's state.

    Example:
        >>> board = np.zeros((3, 3, 2), dtype=np.int8)
        >>> board[0, 0, 0] = board[0, 1, 1] = 1  # my mark at action 0, theirs at action 1
        >>> tictactoe_state(board)
        7
    """
    cells = observation[..., 0] + 2 * observation[..., 1]
    return int(cells.reshape(-1) @ _POWERS)


_LINES = np.array([[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8],
                   [2, 4, 6]])  # fmt: skip


@functools.cache
def tictactoe_successors(state: int) -> tuple[np.ndarray, ...]:
    """The legal moves of ``state`` (:func:`tictactoe_state`'s integer, seen by the player to
    move) and for each: the board the opponent then faces (from its side), its legal moves
    (the empty cells), the mover's reward (1 for a line of three) and whether the game ends
    (a line, or a full board): ``rk.NegamaxQLearner``'s rule of the game. Cached.

    Example:
        >>> actions, opponents, legal, rewards, dones = tictactoe_successors(0)
        >>> actions.tolist(), int(opponents[4]) == 2 * 3**4, int(legal[4].sum()), bool(dones.any())
        ([0, 1, 2, 3, 4, 5, 6, 7, 8], True, 8, False)
    """
    cells = (int(state) // _POWERS) % 3
    actions = np.flatnonzero(cells == 0)
    after = np.repeat(cells[None], len(actions), axis=0)
    after[np.arange(len(actions)), actions] = 1
    wins = (after[:, _LINES] == 1).all(axis=2).any(axis=1)
    dones = wins | (after != 0).all(axis=1)
    swapped = np.array([0, 2, 1])[after]  # the opponent's marks are the mover's and vice versa
    return actions, swapped @ _POWERS, swapped == 0, wins.astype(np.float64), dones


def _flat(observation: Any) -> np.ndarray:
    return np.asarray(observation, dtype=np.float32).reshape(-1)


def tictactoe_env(
    seed: int | np.random.SeedSequence, *, tabular: bool, opening: int = 0, opening_seed: Any = None
) -> rk.PettingZooEnv:
    """PettingZoo's ``tictactoe_v3`` with each state as :func:`tictactoe_state`'s integer
    (``tabular=True``) or as the 18 flat 0/1 cells (for a network); with ``opening > 0``,
    each game starts after up to ``opening`` random moves (``rk.RandomOpening``, exploring
    starts, its generator seeded with ``opening_seed``).

    Example:
        >>> tictactoe_env(0, tabular=True).view("player_1").state_space
        Discrete(19683)
    """
    from pettingzoo.classic import tictactoe_v3

    seed = int_seed(seed) if isinstance(seed, np.random.SeedSequence) else seed
    game = tictactoe_v3.env()
    if opening:
        game = rk.RandomOpening(game, opening, seed=opening_seed)
    if tabular:
        fn, space = tictactoe_state, gym.spaces.Discrete(TICTACTOE_STATES)
    else:
        fn, space = _flat, gym.spaces.Box(0.0, 1.0, (18,), dtype=np.float32)
    return rk.PettingZooEnv(game, seed=seed, observation_fn=fn, observation_space=space)


@rk.experiment
def SelfPlayQ_TicTacToe(
    seed: int = 0,
    episodes: int = 20_000,
    step_size: float = 1.0,
    epsilon: float = 0.1,
    decay_episodes: int = 14_000,
    opening: int = 0,
    target: str = "negamax",
) -> rk.Experiment:
    """Tabular self-play on tic-tac-toe: one Q table shared by both players (each sees the
    board from its own side), each player recording its own moves; epsilon decays linearly
    from 1 to ``epsilon`` over about ``decay_episodes`` episodes (9 moves each at most; the
    schedule counts moves). ``target="negamax"`` (default): ``rk.NegamaxQLearner``, every legal
    move of each position a player meets backed up from the position the opponent then faces
    (:func:`tictactoe_successors`): the game's minimax values, whatever the players explore;
    ``"qlearning"`` (with ``step_size=0.5``: this recipe before): plain Q-learning, the
    opponent part of the environment. ``opening``: games start after up to that many random
    moves (``rk.RandomOpening``; off by default: it did not help, see
    benchmarks/results_multiagent.txt)."""
    name = "SelfPlayQ_TicTacToe"
    env_seed, explorer_seed, opening_seed = spawn_seeds(seed, 3)
    env = tictactoe_env(
        env_seed,
        tabular=True,
        opening=non_negative_int(name, "opening", opening),
        opening_seed=opening_seed,
    )
    view = env.view("player_1")
    q = rk.TabularQApproximator(view.state_space, view.action_space, step_size=step_size)
    explorer = rk.EpsilonGreedyExplorer(
        unit_interval(name, "epsilon", epsilon),
        kind="linear",
        decay_steps=8 * positive_int(name, "decay_episodes", decay_episodes),
        seed=explorer_seed,
    )
    if target == "negamax":
        learner = rk.NegamaxQLearner(q, tictactoe_successors, gamma=1.0)
    elif target == "qlearning":
        learner = rk.TDLearner(q, method="qlearning", gamma=1.0)
    else:
        raise ValueError(f"{name}: target must be 'negamax' or 'qlearning', got {target!r}")
    agent = rk.Agent(rk.QBasedPolicy(learner, explorer), rk.VectorSARTTrajectory())
    return rk.Experiment(
        rk.MultiAgentPolicy.shared(agent, env.agents),
        env,
        rk.StopAfterNEpisodes(positive_int(name, "episodes", episodes)),
        rk.TotalRewardPerEpisode(),
    )


#: DQN on tic-tac-toe against a random masked opponent with Tianshou's test's settings
#: (test/pettingzoo/tic_tac_toe.py: 4 hidden layers of 128, gamma 0.9, 3-step returns, lr 1e-4,
#: batch 64, one gradient step per 10 moves, the target network synced every 320 gradient
#: steps, epsilon 0.1 throughout, 640 random moves first, a replay of 20,000, at most 50,000
#: moves), on Stable-Baselines3's driver (gradient norm not clipped, as Tianshou)
TICTACTOE_DQN = DQNParams(
    total_steps=50_000,
    lr=1e-4,
    batch_size=64,
    buffer_size=20_000,
    learning_starts=640,
    gamma=0.9,
    target_update_interval=3_200,
    train_freq=10,
    gradient_steps=1,
    exploration_fraction=0.01,
    exploration_final_eps=0.1,
    exploration_initial_eps=0.1,
    hidden=(128, 128, 128, 128),
    max_grad_norm=None,
    n_step=3,
)


#: the seat DQN_TicTacToe's learner plays
DQN_SEAT = "player_2"


@rk.experiment
def DQN_TicTacToe(seed: int = 0, p: DQNParams = TICTACTOE_DQN) -> rk.Experiment:
    """DQN plays the second player of tic-tac-toe against a uniformly random player of the
    legal moves (Tianshou's tic-tac-toe test, whose learner is the second player by default).
    The budget ``total_steps`` counts the moves of both players."""
    learner_seat = DQN_SEAT
    s = RecipeSeeds.of(seed)
    env = tictactoe_env(s.env, tabular=False)
    view = env.view(learner_seat)
    q = q_approximator(view, p, s.network)
    learner = rk.Agent(
        rk.QBasedPolicy(
            rk.DQNLearner(
                q,
                target=rk.TargetNetwork(q, sync_every=p.target_update_interval),
                sampler=replay_sampler(p, s.sampler),
                controller=zoo_controller(p),
                gamma=p.gamma,
            ),
            zoo_explorer(p, s.explorer),
        ),
        rk.CircularArraySARTTrajectory(p.buffer_size, view.state_space, view.action_space),
    )
    other = "player_1" if learner_seat == "player_2" else "player_2"
    policy = rk.MultiAgentPolicy({learner_seat: learner, other: rk.RandomPolicy(s.evaluation)})
    return rk.Experiment(
        policy,
        env,
        rk.StopAfterNSteps(positive_int("DQN_TicTacToe", "total_steps", p.total_steps)),
        rk.TotalRewardPerEpisode(),
        threads=1,
    )


def connect_four_env(
    seed: int | np.random.SeedSequence, *, opening: int = 0, opening_seed: Any = None
) -> rk.PettingZooEnv:
    """PettingZoo's ``connect_four_v3`` with each state as the 84 flat 0/1 cells (6 rows, 7
    columns, plane 0 the mover's discs, plane 1 the opponent's); the legal columns are the
    action mask.

    Example:
        >>> connect_four_env(0).view("player_0").state_space.shape
        (84,)
    """
    from pettingzoo.classic import connect_four_v3

    seed = int_seed(seed) if isinstance(seed, np.random.SeedSequence) else seed
    space = gym.spaces.Box(0.0, 1.0, (84,), dtype=np.float32)
    game = connect_four_v3.env()
    if opening:
        game = rk.RandomOpening(game, opening, seed=opening_seed)
    return rk.PettingZooEnv(game, seed=seed, observation_fn=_flat, observation_space=space)


def connect_four_afterstate(states: Any, actions: Any) -> tuple[Any, Any]:
    """The boards the opponent faces after the mover drops a disc in column ``actions`` of
    ``states`` (batches of torch tensors: ``(n, 84)`` flat boards of :func:`connect_four_env`,
    ``(n,)`` columns), and the opponent's legal columns (those not full):
    ``rk.NegamaxDQNLearner``'s afterstate. The disc lands on the lowest empty row (row 5 is
    the bottom, as PettingZoo's).

    Example:
        >>> import torch
        >>> after, legal = connect_four_afterstate(torch.zeros(1, 84), torch.tensor([3]))
        >>> after.view(6, 7, 2)[5, 3].tolist(), bool(legal.all())  # a disc of theirs now
        ([0.0, 1.0], True)
    """
    import torch

    boards = states.reshape(-1, 6, 7, 2)
    mine, theirs = boards[..., 0], boards[..., 1]
    column = actions.long().view(-1, 1, 1).expand(-1, 6, 1)
    filled = (mine + theirs).gather(2, column).squeeze(2)  # (n, 6): the chosen column
    row = (6 - filled.sum(dim=1)).long() - 1  # the lowest empty row
    rows = torch.arange(6, device=states.device).view(1, 6)
    drop = (rows == row.view(-1, 1)).to(states.dtype)  # (n, 6): the landing cell
    placed = torch.zeros_like(mine).scatter(2, column, drop.unsqueeze(2))
    after_mine = mine + placed
    opponent = torch.stack((theirs, after_mine), dim=-1).reshape(states.shape)
    legal = (theirs + after_mine)[:, 0, :] == 0  # the top row empty
    return opponent, legal


#: DQN by self-play on connect four: DQN_TicTacToe's network (4 hidden layers of 128, no
#: gradient clipping) with negamax targets (``rk.NegamaxDQNLearner``: each move's target is minus
#: the opponent's best legal reply in the position the move leaves it, so one-step, n_step=1)
#: and double DQN (the online network picks that reply), gamma 0.99 (games last up to 42 moves),
#: lr 3e-4, batch 64, one gradient step per 4 moves, the target synced every 2,000 moves,
#: epsilon 1 -> 0.2 over the first 15% of the moves (the pool's copies keep exploring too, which
#: varies the games), 1,000 random moves first, 240,000 moves; ``total_steps`` counts the moves
#: of both seats (the learner records and learns from its own, about half). Before: plain DQN
#: targets with 3-step returns and 120,000 moves (``target="dqn", n_step=3, double=False,
#: total_steps=120_000``; benchmarks/results_multiagent.txt)
@dataclass(frozen=True)
class SelfPlayDQNParams(DQNParams):
    """``DQNParams`` and the self-play learner's target (``"dqn"`` or ``"negamax"``:
    ``rk.NegamaxDQNLearner``), double DQN, masked targets (the replay keeps the legal columns
    of each next state) and exploring starts (``opening``: games start after up to that many
    random moves, ``rk.RandomOpening``)."""

    target: str = "dqn"
    double: bool = False
    masked_targets: bool = False
    opening: int = 0


CONNECT4_DQN = SelfPlayDQNParams(
    total_steps=240_000,
    lr=3e-4,
    batch_size=64,
    buffer_size=50_000,
    learning_starts=1_000,
    gamma=0.99,
    target_update_interval=2_000,
    train_freq=4,
    gradient_steps=1,
    exploration_fraction=0.15,
    exploration_final_eps=0.2,
    hidden=(128, 128, 128, 128),
    max_grad_norm=None,
    n_step=1,
    target="negamax",
    double=True,
)

#: SelfPlayDQN_ConnectFour's pool: its size and how many games between two new frozen copies
CONNECT4_POOL_SIZE = 5
CONNECT4_REFRESH_EVERY = 100


@rk.experiment
def SelfPlayDQN_ConnectFour(seed: int = 0, p: SelfPlayDQNParams = CONNECT4_DQN) -> rk.Experiment:
    """DQN learns connect four by self-play (``rk.SelfPlay``): it plays the two seats in turn,
    episode by episode, against a copy drawn from a pool of its frozen past selves (a new copy
    every ``CONNECT4_REFRESH_EVERY`` games, the ``CONNECT4_POOL_SIZE`` latest kept); illegal
    columns are masked out of its choices as in ``DQN_TicTacToe``. Only the learner's own moves
    are recorded; with ``target="negamax"`` (the default, ``rk.NegamaxDQNLearner``) each is
    learned from the position it leaves the opponent (:func:`connect_four_afterstate`), so a
    move that allows the opponent a winning reply is learned as lost even when the training
    opponent missed it. ``total_steps`` counts the moves of both seats."""
    name = "SelfPlayDQN_ConnectFour"
    s = RecipeSeeds.of(seed)
    opening_seed = np.random.SeedSequence(s.env.entropy, spawn_key=(*s.env.spawn_key, 1))
    env = connect_four_env(s.env, opening=p.opening, opening_seed=opening_seed)
    view = env.view(env.agents[0])
    q = q_approximator(view, p, s.network)
    settings = {
        "target": rk.TargetNetwork(q, sync_every=p.target_update_interval),
        "sampler": replay_sampler(p, s.sampler),
        "controller": zoo_controller(p),
        "gamma": p.gamma,
        "double": p.double,
    }
    if p.target == "negamax":
        if p.n_step != 1:
            raise ValueError(f"{name}: target='negamax' is one move deep; n_step must be 1, "
                             f"got {p.n_step}")  # fmt: skip
        dqn = rk.NegamaxDQNLearner(q, afterstate=connect_four_afterstate, **settings)
    elif p.target == "dqn":
        dqn = rk.DQNLearner(q, **settings)
    else:
        raise ValueError(f"{name}: target must be 'negamax' or 'dqn', got {p.target!r}")
    learner = rk.Agent(
        rk.QBasedPolicy(dqn, zoo_explorer(p, s.explorer)),
        rk.CircularArraySARTTrajectory(
            p.buffer_size, view.state_space, view.action_space, legal_action_masks=p.masked_targets
        ),
    )
    policy = rk.SelfPlay(
        learner,
        env.agents,
        pool_size=CONNECT4_POOL_SIZE,
        refresh_every=CONNECT4_REFRESH_EVERY,
        seed=s.evaluation,
    )
    return rk.Experiment(
        policy,
        env,
        rk.StopAfterNSteps(positive_int(name, "total_steps", p.total_steps)),
        rk.TotalRewardPerEpisode(),
        threads=1,
    )


@rk.experiment
def SharedPPO_SimpleSpread(
    seed: int = 0,
    total_steps: int = 450_000,
    lr: float = 3e-4,
    n_steps: int = 1024,
    max_cycles: int = 25,
    agent_id: bool = True,
) -> rk.Experiment:
    """PPO with parameter sharing on MPE's simple_spread (3 agents; mpe2's default
    ``local_ratio=0.5``: each agent's reward is half the shared distance term, half its own
    collisions): one network acts for every agent (with its one-hot id appended to its
    observation). The agents are the rows of one vector env (``rk.PettingZooVectorEnv``, one
    copy: SuperSuit's ``pettingzoo_env_to_vec_env_v1``, the way Stable-Baselines3 trains
    PettingZoo's parallel games), so one rollout holds ``n_steps`` moves of every agent and
    PPO makes one update from all of them, as Stable-Baselines3 with SuperSuit and MAPPO do;
    Stable-Baselines3's PPO defaults otherwise. ``total_steps`` counts every agent's moves:
    450,000 (150,000 joint steps), the data the recipe's former budget gave it.

    Before (benchmarks/results_multiagent.txt): an ``rk.MultiAgentPolicy.shared`` agent on
    ``rk.PettingZooParallelEnv`` gave each agent its own rollout, so the shared PPO made one
    update per agent in turn, the second and third from moves the first update's parameters
    did not make (off-policy for PPO); it got worse than the random policy with training.
    """
    import functools

    from mpe2 import simple_spread_v3

    name = "SharedPPO_SimpleSpread"
    env_seed, policy_seed = spawn_seeds(seed, 2)
    env_fn = functools.partial(
        simple_spread_v3.parallel_env, max_cycles=positive_int(name, "max_cycles", max_cycles)
    )
    env = rk.PettingZooVectorEnv(env_fn, 1, seed=int_seed(env_seed), agent_id=agent_id)
    agent = rk.PPO.agent(
        env, seed=policy_seed, lr=lr, n_steps=positive_int(name, "n_steps", n_steps)
    )
    return rk.Experiment(
        agent,
        env,
        rk.StopAfterNSteps(positive_int(name, "total_steps", total_steps)),
        rk.TotalRewardPerEpisode(),
        threads=1,
    )
