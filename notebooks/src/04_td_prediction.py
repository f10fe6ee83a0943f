# %% [markdown]
# # 4. TD prediction on the random walk (Sutton & Barto, Example 6.2)
#
# Temporal-difference (TD) learning updates a value estimate from the next estimate, without
# waiting for the end of the episode. TD(0) moves `V(S_t)` toward `R_{t+1} + gamma V(S_{t+1})`;
# constant-alpha Monte Carlo moves it toward the whole return `G_t`.
#
# Example 6.2 compares the two on a *random walk*: five states A-E in a row between two
# terminal ends; every episode starts in C and moves left or right with equal probability.
# Reaching the right end pays +1, everything else 0, so the true values of A-E are
# 1/6, 2/6, ..., 5/6. All estimates start at 0.5.
#
# `RLKIT_NOTEBOOK_SCALE=full` (the default) averages over the book's 100 runs, `ci` over 50.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np

import rlkit as rk

SCALE = os.environ.get("RLKIT_NOTEBOOK_SCALE", "full")
assert SCALE in ("full", "ci"), f"RLKIT_NOTEBOOK_SCALE must be 'full' or 'ci', got {SCALE!r}"


def save(fig, n):
    """Save figure n of this notebook to $RLKIT_FIGURE_DIR when it is set (the tests set it)."""
    if os.environ.get("RLKIT_FIGURE_DIR"):
        fig.savefig(os.path.join(os.environ["RLKIT_FIGURE_DIR"], f"04_td_prediction-{n}.png"))


N_RUNS = {"full": 100, "ci": 50}[SCALE]
N_EPISODES = 100

# %% [markdown]
# ## The environment and the two learners
#
# `rlkit/RandomWalk1D-v0` numbers the positions 0..6: 0 and 6 are the terminal ends, 1..5 are
# A..E. `true_values()` solves the Bellman equations of the random policy exactly.
#
# Both learners only *predict*: `rk.VBasedPolicy(learner, rk.RandomPolicy(...))` acts at random
# and hands every step to the learner. `TDLearner(v, method="td0")` updates after every step,
# `MonteCarloLearner(v, kind="every_visit")` after every episode; a constant `step_size` is the
# alpha of the book.

# %%
env = rk.GymEnv("rlkit/RandomWalk1D-v0", seed=0)
TRUE_VALUES = env.env.unwrapped.true_values()
STATES = slice(1, 6)  # A..E
print("true values of A..E:", TRUE_VALUES[STATES].round(3))


def rms_errors(kind, alpha, run, n_episodes=N_EPISODES):
    """RMS errors over A..E before the first and after each episode, and the final values."""
    env = rk.GymEnv("rlkit/RandomWalk1D-v0", seed=run)
    v = rk.TabularVApproximator(env.state_space, init=0.5, step_size=alpha)
    if kind == "TD":
        learner = rk.TDLearner(v, method="td0")
    else:
        learner = rk.MonteCarloLearner(v, kind="every_visit")
    agent = rk.Agent(
        rk.VBasedPolicy(learner, rk.RandomPolicy(seed=10_000 + run)), rk.VectorSARTTrajectory()
    )

    def rms(*args):
        return np.sqrt(np.mean((v.table[STATES] - TRUE_VALUES[STATES]) ** 2))

    errors = [rms()]
    hook = rk.DoEveryNEpisodes(lambda *args: errors.append(rms()))
    rk.run(agent, env, rk.StopAfterNEpisodes(n_episodes), hook)
    return np.array(errors), v.table[STATES]


# %% [markdown]
# ## Left panel: what TD(0) learns in one run
#
# The values after 0, 1, 10 and 100 episodes of TD(0) with alpha = 0.1. The first episode
# changes only one value: the last state before the end (all others were updated toward an
# estimate of 0.5, which did not change them). Runs with the same seed see the same episodes,
# so the values after `n` episodes are snapshots of one run.

# %%
snapshots = {0: np.full(5, 0.5)}
for n in (1, 10, 100):
    snapshots[n] = rms_errors("TD", 0.1, run=0, n_episodes=n)[1]

fig, ax = plt.subplots(figsize=(6, 4))
for n, values in snapshots.items():
    ax.plot(range(5), values, marker="o", label=f"{n} episodes")
ax.plot(range(5), TRUE_VALUES[STATES], "k--", label="true values")
ax.set_xticks(range(5), list("ABCDE"))
ax.set_ylabel("Estimated value")
ax.legend()
ax.set_title("Example 6.2 (left): TD(0), alpha = 0.1")
save(fig, 1)

# %% [markdown]
# ## Right panel: RMS error, averaged over runs
#
# Run `r` of every learner uses the same seeds, so all learners see the same episodes: the
# comparison is between learning rules, not between lucky and unlucky walks.

# %%
ALPHAS = {"TD": (0.15, 0.1, 0.05), "MC": (0.01, 0.02, 0.03, 0.04)}
errors = {
    (kind, alpha): np.array([rms_errors(kind, alpha, run)[0] for run in range(N_RUNS)])
    for kind, alphas in ALPHAS.items()
    for alpha in alphas
}

fig, ax = plt.subplots(figsize=(7, 4.5))
for (kind, alpha), curves in errors.items():
    style = "-" if kind == "TD" else "--"
    ax.plot(curves.mean(axis=0), style, label=f"{kind}, alpha = {alpha}")
ax.set_xlabel("Walks / Episodes")
ax.set_ylabel(f"Empirical RMS error,\naveraged over states and {N_RUNS} runs")
ax.legend()
ax.set_title("Example 6.2 (right)")
save(fig, 2)

# %% [markdown]
# ## Checks against the book
#
# "TD was consistently better than MC on this task": after 100 episodes the best TD curve is
# below the best MC curve (by more than three standard errors of the paired difference), and
# the smallest TD step size, 0.05, ends lowest. (A plain numpy implementation of the two rules,
# written independently, ends at the same values: TD(0) with alpha = 0.05 near 0.035, MC with
# alpha = 0.02 near 0.08.)

# %%
final = {key: curves[:, -1] for key, curves in errors.items()}
for key, values in final.items():
    print(f"{key}: RMS error after {N_EPISODES} episodes {values.mean():.3f}")
best_td = min(ALPHAS["TD"], key=lambda alpha: final["TD", alpha].mean())
best_mc = min(ALPHAS["MC"], key=lambda alpha: final["MC", alpha].mean())
diff = final["MC", best_mc] - final["TD", best_td]
print(f"best TD (alpha {best_td}) beats best MC (alpha {best_mc}) by {diff.mean():.3f}")
assert diff.mean() > 3 * diff.std() / np.sqrt(N_RUNS)
assert best_td == 0.05  # the smallest TD step size ends lowest

# One run of TD(0), alpha = 0.1: 100 episodes get the values close to the truth.
assert np.sqrt(np.mean((snapshots[100] - TRUE_VALUES[STATES]) ** 2)) < 0.1
