# %% [markdown]
# # 16. Solving poker: counterfactual regret minimisation on Kuhn poker (Zinkevich et al. 2007)
#
# In a game of imperfect information a player cannot choose a move per *position*, only per
# *information state*: what it knows (its own card and the actions so far), not the opponent's
# card. Kuhn poker is the smallest interesting such game: three cards (jack, queen, king), one
# each, ante 1, then pass or bet 1. Its equilibrium bluffs: a player with the jack sometimes
# bets, and the queen sometimes calls.
#
# Counterfactual regret minimisation (CFR) finds an equilibrium by self-play on the whole game
# tree: at every information state it accumulates, for each action, how much better that
# action would have done than the current policy (its *regret*, weighted by the probability
# that the others reach the state), and plays the actions in proportion to their positive
# regrets. The **average** policy over the iterations converges to a Nash equilibrium. How
# far a policy is from one is its *exploitability*: what a best-responding opponent wins
# against it, on average over the two seats (0 exactly at an equilibrium).
#
# 1. The game, and the exploitability of a uniformly random player (OpenSpiel's 11/12 NashConv).
# 2. CFR and CFR+ (Tammelin 2014) run with `rk.run`: each step of the run is one iteration,
#    `rk.ExploitabilityCurve` records the curve.
# 3. The equilibrium found: the game's value -1/18 for the first player, and its bluffs.
#
# `RLKIT_NOTEBOOK_SCALE=full` (the default) runs 10,000 iterations (a few seconds); `ci` 1,000.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np

import rlkit as rk

SCALE = os.environ.get("RLKIT_NOTEBOOK_SCALE", "full")
assert SCALE in ("full", "ci"), f"RLKIT_NOTEBOOK_SCALE must be 'full' or 'ci', got {SCALE!r}"
ITERATIONS = 10_000 if SCALE == "full" else 1_000
KUHN = "rlkit/KuhnPoker-v0"


def save(fig, n):
    """Save figure n of this notebook to $RLKIT_FIGURE_DIR when it is set (the tests set it)."""
    if os.environ.get("RLKIT_FIGURE_DIR"):
        fig.savefig(os.path.join(os.environ["RLKIT_FIGURE_DIR"], f"16_cfr_poker-{n}.png"))


# %% [markdown]
# ## The game and its tree
#
# `rk.make_game(KUHN)` is a PettingZoo AEC environment (`player_0` acts first). The solvers
# work on its whole tree, enumerated once: 58 histories (the deal is a chance event) and 12
# information states, named as OpenSpiel names them: the card (0 = jack, 1 = queen, 2 = king)
# then the actions (`p` pass, `b` bet). `"1pb"` is player 0 holding the queen, facing a bet
# after passing.

# %%
tree = rk.GameTree.from_game(KUHN)
print(tree)
print(tree.infosets)

uniform = {key: [0.5, 0.5] for key in tree.infosets}
print("NashConv of the uniform policy:", rk.nash_conv(uniform, KUHN))

# %% [markdown]
# ## CFR and CFR+ in a run
#
# `rk.GameTreeEnv(KUHN)` is the tree as the env of a run: nothing acts, each step is one CFR
# iteration (the offline loop of `rk.run`), so stop conditions, hooks and checkpoints work as
# anywhere. CFR+ floors the cumulative regrets at 0 and weighs iteration `t` by `t` in the
# average: it converges much faster.

# %%
curves = {}
solvers = {}
for name, plus in (("CFR", False), ("CFR+", True)):
    solvers[name] = rk.CFR(KUHN, plus=plus)
    curve = rk.ExploitabilityCurve(n=10)
    rk.run(solvers[name], rk.GameTreeEnv(KUHN), rk.StopAfterNSteps(ITERATIONS), curve)
    curves[name] = np.array(curve.curve)
    print(f"{name}: exploitability after {ITERATIONS} iterations {curves[name][-1, 1]:.2e}")

fig, ax = plt.subplots(figsize=(6, 4))
for name, curve in curves.items():
    ax.loglog(curve[:, 0], curve[:, 1], label=name)
ax.loglog(curves["CFR"][:, 0], 1 / np.sqrt(curves["CFR"][:, 0]), "k:", label="1/sqrt(t)")
ax.set_xlabel("iterations")
ax.set_ylabel("exploitability of the average policy")
ax.set_title("CFR on Kuhn poker")
ax.legend()
save(fig, 1)

# %% [markdown]
# ## The equilibrium
#
# Kuhn poker's equilibria form a family with one parameter `alpha` in [0, 1/3]: player 0 bets
# the jack with probability `alpha` (a bluff), the king with `3 * alpha`, and calls a bet with
# the queen with `alpha + 1/3`; player 1 bets the jack after a pass with probability 1/3 and
# calls a bet with the queen with 1/3. Every equilibrium gives player 0 the value -1/18.

# %%
average = solvers["CFR"].average_policy()
for key in ("0", "2", "1pb", "0p", "1b"):
    print(
        f"{key:>4}: pass/fold {average.probabilities(key)[0]:.3f}, "
        f"bet/call {average.probabilities(key)[1]:.3f}"
    )

alpha = average.probabilities("0")[1]
print(f"alpha = {alpha:.3f}")

# %% [markdown]
# The value of the game under the average policy, computed exactly on the tree
# (`rk.game_value`), is the equilibrium value, and a best response gains nearly nothing
# against it (`rk.nash_conv` sums the two players' gains). OpenSpiel's test of its CFR: after
# 300 iterations of CFR, or 200 of CFR+, the values are within 1e-3 of [-1/18, 1/18].

# %%
print("game values [player 0, player 1]:", rk.game_value(average, KUHN), "; -1/18 =", -1 / 18)
print(f"NashConv of CFR's average policy: {rk.nash_conv(average, KUHN):.2e}")

short = {}
for name, plus, n in (("CFR", False, 300), ("CFR+", True, 200)):
    short[name] = rk.CFR(KUHN, plus=plus)
    short[name].iterate(n)
    print(f"{name} after {n} iterations: values {rk.game_value(short[name], KUHN)}")

# %% [markdown]
# ## Checks
#
# OpenSpiel's CFR tests: after 300 iterations of CFR (200 of CFR+) the average policies' game
# value is -1/18 for player 0 within 1e-3; exploitability falls below 0.005; the uniform
# policy's NashConv is 11/12; CFR+ is ahead of CFR at the end; the equilibrium's bluffing
# ratios hold.

# %%
assert abs(rk.nash_conv(uniform, KUHN) - 11 / 12) < 1e-12
for solver in short.values():
    np.testing.assert_allclose(rk.game_value(solver, KUHN), [-1 / 18, 1 / 18], atol=1e-3)
assert curves["CFR"][-1, 1] < 0.005 and curves["CFR+"][-1, 1] < curves["CFR"][-1, 1]
assert curves["CFR+"][-1, 1] < curves["CFR+"][0, 1] / 100
assert 0 <= alpha <= 1 / 3 + 0.02
assert abs(average.probabilities("2")[1] - 3 * alpha) < 0.05
assert abs(average.probabilities("1pb")[1] - (alpha + 1 / 3)) < 0.05
assert abs(average.probabilities("0p")[1] - 1 / 3) < 0.05
assert abs(average.probabilities("1b")[1] - 1 / 3) < 0.05
print("all checks passed")
