# %% [markdown]
# # 15. Multi-agent RL: tic-tac-toe by self-play
#
# Two players, one table. A PettingZoo game is a *multi-agent* environment: the players take
# turns (`env.current_agent`), each sees the board from its own side and gets its own reward.
# `rk.PettingZooEnv` adapts it for `rk.run`, and `rk.MultiAgentPolicy({agent: policy})` holds
# one ordinary single-agent policy per player. Each player's policy sees a *view* of the game
# (`env.view(agent)`): its own observation, the reward it received since it last moved, its own
# legal moves. So the tabular Q-learning of notebook 05 plays tic-tac-toe unchanged.
#
# 1. Random against random: the first player's advantage.
# 2. Self-play: one Q table plays both sides (parameter sharing), the `SelfPlayQ_TicTacToe`
#    recipe.
# 3. How good is it? Against a random player from either seat, and against a perfect player,
#    an exhaustive minimax search written here in a few lines.
#
# `RLKIT_NOTEBOOK_SCALE=full` (the default) trains for the recipe's 20,000 games (a minute or
# so); `ci` for 2,000.

# %%
import os

import gymnasium as gym
import matplotlib.pyplot as plt
import numpy as np
from pettingzoo.classic import tictactoe_v3

import rlkit as rk

SCALE = os.environ.get("RLKIT_NOTEBOOK_SCALE", "full")
assert SCALE in ("full", "ci"), f"RLKIT_NOTEBOOK_SCALE must be 'full' or 'ci', got {SCALE!r}"
GAMES = 20_000 if SCALE == "full" else 2_000


def save(fig, n):
    """Save figure n of this notebook to $RLKIT_FIGURE_DIR when it is set (the tests set it)."""
    if os.environ.get("RLKIT_FIGURE_DIR"):
        fig.savefig(os.path.join(os.environ["RLKIT_FIGURE_DIR"], f"15_multi_agent-{n}.png"))


# %% [markdown]
# ## The board as one number
#
# PettingZoo's tic-tac-toe observation is a 3 x 3 x 2 array: plane 0 holds the marks of the
# player to move, plane 1 the opponent's. Reading each cell as a base-3 digit (0 empty, 1 mine,
# 2 theirs), in the order of the actions (cell `[row, col]` is action `3 * row + col`), turns
# a board into one integer below 3^9 = 19,683: a row of a Q table. The same
# board seen by either player is the same row, which is what lets one table play both sides.

# %%
POWERS = 3 ** np.arange(9)


def board(observation):
    cells = observation[..., 0] + 2 * observation[..., 1]  # [row, col] is action 3 * row + col
    return int(cells.reshape(-1) @ POWERS)


def tictactoe(seed):
    return rk.PettingZooEnv(tictactoe_v3.env(), seed=seed, observation_fn=board,
                            observation_space=gym.spaces.Discrete(3**9))


def results(player, opponent, seat, games, seed=0):
    """``player``'s results in ``seat``: 1 a win, 0 a draw, -1 a loss, one per game."""
    other = "player_2" if seat == "player_1" else "player_1"
    policy = rk.MultiAgentPolicy({seat: player, other: opponent})
    hook = rk.run(policy, tictactoe(seed), rk.StopAfterNEpisodes(games),
                  rk.TotalRewardPerEpisode())
    return np.array([returns[seat] for returns in hook.rewards])


random_first = results(rk.RandomPolicy(seed=1), rk.RandomPolicy(seed=2), "player_1", 2000)
wins, draws, losses = ((random_first == v).mean() for v in (1, 0, -1))
print(f"random vs random, first player: wins {wins:.2f}, draws {draws:.2f}, losses {losses:.2f}")

# %% [markdown]
# ## Self-play: one table, both sides
#
# The `SelfPlayQ_TicTacToe` recipe builds one `rk.Agent` (here plain Q-learning,
# `target="qlearning"` with step size 0.5, epsilon-greedy with epsilon decaying from 1 to 0.1)
# and shares it between the players:
# `rk.MultiAgentPolicy.shared(agent, env.agents)`. The players share the Q table but each
# records its own moves. A player's *step* lasts from its move to its next turn, so its
# Q-learning target is `r + max_a Q(next board, a)` with the board it faces after the
# opponent's reply, and the loser's -1 arrives after the winner's move. `rk.explain` shows
# what runs for each player.

# %%
experiment = rk.make_experiment("SelfPlayQ_TicTacToe", seed=0, episodes=GAMES,
                                decay_episodes=int(0.7 * GAMES), target="qlearning",
                                step_size=0.5)
rk.explain(experiment.policy, experiment.env)
rk.run(experiment)
first = np.array([r["player_1"] for r in experiment.hook.rewards])

# %%
window = max(GAMES // 40, 10)
fig, ax = plt.subplots(figsize=(7, 3.5))
for value, label in ((1, "first player wins"), (0, "draws"), (-1, "second player wins")):
    share = np.convolve(first == value, np.ones(window) / window, mode="valid")
    ax.plot(share, label=label)
ax.set_xlabel("game of self-play")
ax.set_ylabel(f"share (moving average of {window})")
ax.legend()
save(fig, 1)

# %% [markdown]
# As epsilon falls both sides play better and more games end in a draw, tic-tac-toe's value
# with perfect play.
#
# ## A perfect opponent: minimax
#
# A board's value for the player to move is the best, over its moves, of minus the value of
# the board the opponent then faces (negamax); a finished game is worth -1 to the player to
# move when the opponent has just completed a line, else 0. Tic-tac-toe has few enough boards
# to search them all (`functools.cache` remembers each). The minimax player picks uniformly
# among the optimal moves, so its games differ.

# %%
import functools  # noqa: E402

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def cells_of(index):
    return tuple(index // 3**i % 3 for i in range(9))


def after(cells, move):
    """The board after the mover marks ``move``, seen by the other player."""
    marked = [1 if i == move else c for i, c in enumerate(cells)]
    return tuple((0, 2, 1)[c] for c in marked)


@functools.cache
def value(cells):
    if any(all(cells[i] == 2 for i in line) for line in LINES):
        return -1
    moves = [i for i in range(9) if cells[i] == 0]
    return max((-value(after(cells, m)) for m in moves), default=0)


class Minimax(rk.AbstractPolicy):
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def act(self, env):
        cells = cells_of(int(env.state))
        moves = [i for i in range(9) if cells[i] == 0]
        scores = [-value(after(cells, m)) for m in moves]
        best = [m for m, s in zip(moves, scores, strict=True) if s == max(scores)]
        return int(self.rng.choice(best))


print("the empty board's value:", value((0,) * 9))

# %% [markdown]
# ## How good is the self-play table?
#
# The greedy form of the shared policy (`rk.greedy`: epsilon 0) plays 1,000 games against a
# random player and 50 against minimax, from each seat.

# %%
greedy = rk.greedy(experiment.policy).policy_of("player_1")
report = {}
for seat in ("player_1", "player_2"):
    report[seat] = {
        "random": results(greedy, rk.RandomPolicy(seed=11), seat, 1000, seed=123),
        "minimax": results(greedy, Minimax(seed=5), seat, 50, seed=7),
    }
    for opponent, r in report[seat].items():
        print(f"{seat} vs {opponent:8s} wins {(r == 1).sum():4d}  draws {(r == 0).sum():4d}  "
              f"losses {(r == -1).sum():4d}")

# %%
fig, ax = plt.subplots(figsize=(7, 3.5))
labels, wins, draws, losses = [], [], [], []
for seat, by_opponent in report.items():
    for opponent, r in by_opponent.items():
        labels.append(f"{seat}\nvs {opponent}")
        wins.append((r == 1).mean())
        draws.append((r == 0).mean())
        losses.append((r == -1).mean())
ax.bar(labels, wins, label="wins")
ax.bar(labels, draws, bottom=wins, label="draws")
ax.bar(labels, losses, bottom=np.add(wins, draws), label="losses")
ax.set_ylabel("share of games")
ax.legend()
save(fig, 2)

# %% [markdown]
# ## Checks
#
# With the recipe's 20,000 games and seed 0 the table never loses to the random player from
# either seat and draws every game against minimax. That is not true of every seed: with
# seeds 1 and 2 it loses about 1% of its games against the random player as the second player
# (benchmarks/results_multiagent.txt): a few rarely visited boards keep poor values. The
# recipe's default, `target="negamax"` (`rk.NegamaxQLearner`: every legal move of each board a
# player meets is backed up from the board it leaves the opponent, the negamax of the minimax
# section below), loses none and draws every minimax game on seeds 0-4. After
# 2,000 games (`ci`) it already wins more often against a random player than a random player
# does.

# %%
random_win_rate = (random_first == 1).mean()
assert (report["player_1"]["random"] == 1).mean() > random_win_rate
assert (report["player_2"]["random"] == 1).mean() > (random_first == -1).mean()
if SCALE == "full":
    for seat in ("player_1", "player_2"):
        assert (report[seat]["random"] >= 0).all(), f"{seat} lost to the random player"
        assert (report[seat]["minimax"] == 0).all(), f"{seat} did not draw against minimax"
print("checks passed")
