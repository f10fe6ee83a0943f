# %% [markdown]
# # 2. Dynamic programming (Sutton & Barto, chapters 3 and 4)
#
# When the model of the environment is known, values can be computed instead of learned.
# The model is the table `P[s][a] = [(probability, next_state, reward, terminated), ...]`, the
# format of gymnasium's toy-text environments (FrozenLake, CliffWalking, Taxi) and of rlkit's
# bundled ones. rlkit's dynamic-programming functions take an environment with such a table, or
# the table itself:
#
# * `rk.policy_evaluation(mdp, policy, gamma=...)`: the state values `v_pi` of a policy
#   (default: the equiprobable random policy), by iterative policy evaluation (section 4.1);
# * `rk.policy_iteration(mdp, gamma=...)` and `rk.value_iteration(mdp, gamma=...)`: the optimal
#   values `v*` and a greedy optimal policy (sections 4.3 and 4.4).
#
# We reproduce the gridworld of Example 3.5 (Figures 3.2 and 3.5), the small gridworld of
# Example 4.1 (Figure 4.1) and the gambler's problem (Example 4.3, Figure 4.3). Dynamic
# programming is fast, so `RLKIT_NOTEBOOK_SCALE` only changes how many episodes we simulate at
# the end to compare the computed values with what the policy achieves.

# %%
import os

import gymnasium as gym
import matplotlib.pyplot as plt
import numpy as np

import rlkit as rk

SCALE = os.environ.get("RLKIT_NOTEBOOK_SCALE", "full")
assert SCALE in ("full", "ci"), f"RLKIT_NOTEBOOK_SCALE must be 'full' or 'ci', got {SCALE!r}"


def save(fig, n):
    """Save figure n of this notebook to $RLKIT_FIGURE_DIR when it is set (the tests set it)."""
    if os.environ.get("RLKIT_FIGURE_DIR"):
        fig.savefig(os.path.join(os.environ["RLKIT_FIGURE_DIR"], f"02_dynamic_programming-{n}.png"))


N_EPISODES = {"full": 100_000, "ci": 5_000}[SCALE]  # simulated gambles at the end

# %% [markdown]
# ## The gridworld of Example 3.5
#
# A 5x5 grid; the actions move north, south, east or west. From A every action moves to A' with
# reward +10, from B to B' with +5; bumping into the wall costs -1, all other moves give 0.
# The task is continuing and discounted with `gamma = 0.9`. Figure 3.2 shows the values of the
# equiprobable random policy, Figure 3.5 the optimal values.

# %%
grid = gym.make("rlkit/GridWorld-v0")
print(grid.unwrapped.P[1])  # A = (row 0, column 1): every action jumps to A' = 21, reward +10

v_random = rk.policy_evaluation(grid, gamma=0.9).reshape(5, 5)
v_star, greedy_policy = rk.value_iteration(grid, gamma=0.9)
v_star = v_star.reshape(5, 5)
print(np.round(v_random, 1))
print(np.round(v_star, 1))


# %%
def show_values(ax, values, title):
    ax.imshow(values, cmap="coolwarm")
    for (row, col), value in np.ndenumerate(values):
        ax.text(col, row, f"{value:.1f}", ha="center", va="center")
    ax.set_title(title)
    ax.set_xticks([])
    ax.set_yticks([])


ARROWS = np.array(["↑", "↓", "→", "←"])  # actions 0..3: north, south, east, west
fig, axes = plt.subplots(1, 3, figsize=(11, 3.8))
show_values(axes[0], v_random, "Figure 3.2: v of the random policy")
show_values(axes[1], v_star, "Figure 3.5: v*")
axes[2].imshow(v_star, cmap="coolwarm")
for (row, col), arrow in np.ndenumerate(ARROWS[greedy_policy.reshape(5, 5)]):
    axes[2].text(col, row, arrow, ha="center", va="center", fontsize=14)
axes[2].set_title("a greedy optimal policy")
axes[2].set_xticks([])
axes[2].set_yticks([])
save(fig, 1)

# %% [markdown]
# ## The small gridworld of Example 4.1: a model written by hand
#
# Dynamic programming needs nothing but the table `P`, so we can write a model down directly.
# In Example 4.1 the 4x4 grid has terminal corners (states 0 and 15), every move costs -1 and
# moves off the grid leave the state unchanged. A terminal state has no actions. Figure 4.1
# shows the values of the random policy (undiscounted) converging to `v_pi`.

# %%
MOVES = ((-1, 0), (1, 0), (0, 1), (0, -1))
small_grid = {0: {}, 15: {}}
for s in range(1, 15):
    row, col = divmod(s, 4)
    small_grid[s] = {}
    for a, (d_row, d_col) in enumerate(MOVES):
        r, c = row + d_row, col + d_col
        nxt = r * 4 + c if 0 <= r < 4 and 0 <= c < 4 else s
        small_grid[s][a] = [(1.0, nxt, -1.0, nxt in (0, 15))]
small_grid = dict(sorted(small_grid.items()))

v_small = rk.policy_evaluation(small_grid, gamma=1.0).reshape(4, 4)
print(np.round(v_small, 1))

fig, ax = plt.subplots(figsize=(3.8, 3.8))
show_values(ax, v_small, "Figure 4.1: v of the random policy")
save(fig, 2)

# %% [markdown]
# ## The gambler's problem (Example 4.3)
#
# A gambler bets on coin flips that come up heads with probability `p_h = 0.4`. With capital `s`
# she may stake `1 .. min(s, 100 - s)`; heads she wins the stake, tails she loses it. The
# episode ends at 0 or when the capital reaches 100, which pays +1. Undiscounted, the value of a
# capital is the probability of reaching the goal from it. `rlkit/GamblersProblem-v0` has the
# model (the legal stakes of `s` are the keys of `P[s]`).
#
# Value iteration returns, among the optimal stakes, the smallest one; this tie-breaking gives
# the policy drawn in Figure 4.3.

# %%
gambler = gym.make("rlkit/GamblersProblem-v0", p_heads=0.4)
v_gambler, stake = rk.value_iteration(gambler, gamma=1.0)
v_pi_iteration, _ = rk.policy_iteration(gambler, gamma=1.0)

capital = np.arange(1, 100)
fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
top.plot(capital, v_gambler[1:100])
top.set_ylabel("Value estimates")
bottom.step(capital, stake[1:100], where="mid")
bottom.set_ylabel("Final policy (stake)")
bottom.set_xlabel("Capital")
fig.suptitle("Figure 4.3: the gambler's problem, p_h = 0.4")
save(fig, 3)

# %% [markdown]
# ## The computed policy, played
#
# A policy is anything with an `act(env)` method. This one looks the stake up in the table
# value iteration returned; `rk.run` plays it from a capital of 50, and the fraction of
# episodes that reach the goal estimates `v*(50)`.


# %%
class StakeTable(rk.AbstractPolicy):
    """Act by looking the action up in a table indexed by the state."""

    def __init__(self, table):
        self.table = table

    def act(self, env):
        return int(self.table[env.state])


env = rk.GymEnv("rlkit/GamblersProblem-v0", seed=0, p_heads=0.4, start_capital=50)
hook = rk.run(StakeTable(stake), env, rk.StopAfterNEpisodes(N_EPISODES), rk.TotalRewardPerEpisode())
win_rate = np.mean(hook.rewards)
print(f"won {win_rate:.3f} of {N_EPISODES} episodes starting with 50")

# %% [markdown]
# ## Checks against the book

# %%
# Figures 3.2 and 3.5 as printed in the book, with one decimal: ours agree to that precision.
FIGURE_3_2 = np.array(
    [
        [3.3, 8.8, 4.4, 5.3, 1.5],
        [1.5, 3.0, 2.3, 1.9, 0.5],
        [0.1, 0.7, 0.7, 0.4, -0.4],
        [-1.0, -0.4, -0.4, -0.6, -1.2],
        [-1.9, -1.3, -1.2, -1.4, -2.0],
    ]
)
FIGURE_3_5 = np.array(
    [
        [22.0, 24.4, 22.0, 19.4, 17.5],
        [19.8, 22.0, 19.8, 17.8, 16.0],
        [17.8, 19.8, 17.8, 16.0, 14.4],
        [16.0, 17.8, 16.0, 14.4, 13.0],
        [14.4, 16.0, 14.4, 13.0, 11.7],
    ]
)
np.testing.assert_array_equal(np.round(v_random, 1), FIGURE_3_2)
np.testing.assert_array_equal(np.round(v_star, 1), FIGURE_3_5)
# Figure 3.5: from A the optimal policy goes anywhere (every action jumps to A');
# in the bottom row it heads north.
assert set(greedy_policy.reshape(5, 5)[4]) == {0}

# Figure 4.1 (k = infinity), printed as integers.
FIGURE_4_1 = np.array(
    [[0, -14, -20, -22], [-14, -18, -20, -20], [-20, -20, -18, -14], [-22, -20, -14, 0]]
)
np.testing.assert_array_equal(np.round(v_small), FIGURE_4_1)

# Gambler's problem: with 50 the best is to stake everything, so v*(50) = p_h = 0.4;
# v*(25) = 0.4 * v*(50) and v*(75) = 0.4 + 0.6 * v*(50).
np.testing.assert_allclose(v_gambler[[25, 50, 75]], [0.16, 0.4, 0.64], atol=1e-8)
np.testing.assert_allclose(v_pi_iteration, v_gambler, atol=1e-8)
assert stake[50] == 50 and stake[25] == 25 and stake[75] == 25
# Figure 4.3's policy: stakes rise 1, 2, ... up to capital 12, 12 at 13, then fall back to 1.
assert list(stake[1:26]) == [*range(1, 13), 12, *range(11, 0, -1), 25]
# Playing the policy wins as often as v*(50) says (3 standard errors of a binomial proportion).
assert abs(win_rate - 0.4) < 3 * np.sqrt(0.4 * 0.6 / N_EPISODES)
