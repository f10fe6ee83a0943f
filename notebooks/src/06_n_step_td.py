# %% [markdown]
# # 6. n-step TD prediction (Sutton & Barto, section 7.1, Figure 7.2)
#
# TD(0) bootstraps after one step, Monte Carlo waits for the end of the episode. n-step TD sits
# in between: it moves `V(S_t)` toward the n-step return
#
# `G_{t:t+n} = R_{t+1} + gamma R_{t+2} + ... + gamma^(n-1) R_{t+n} + gamma^n V(S_{t+n})`
#
# (the plain return if the episode ends sooner). Figure 7.2 runs it on a random walk with 19
# states, rewards -1 at the left end and +1 at the right end, for many `n` and step sizes
# `alpha`, and plots the RMS error averaged over the first 10 episodes: intermediate `n` do
# best. In rlkit, n-step TD is `rk.TDLearner(v, method="td0", n=n)`.
#
# `RLKIT_NOTEBOOK_SCALE=full` (the default) runs the book's grid (10 values of `n`, 11 step
# sizes, 100 runs; a few minutes), `ci` a coarser one.

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
        fig.savefig(os.path.join(os.environ["RLKIT_FIGURE_DIR"], f"06_n_step_td-{n}.png"))


if SCALE == "full":
    NS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
    ALPHAS = np.round(np.linspace(0.0, 1.0, 11)[1:], 2)
    N_RUNS = 100
else:
    NS = (1, 2, 4, 8, 512)
    ALPHAS = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0)
    N_RUNS = 15
N_EPISODES = 10

# %% [markdown]
# ## One run
#
# The walk has positions 0..20; 1..19 are the states, 0 and 20 the terminal ends. The true
# values of the random policy are -0.9, -0.8, ..., 0.9. Estimates start at 0. A hook records
# the RMS error after every episode. Runs with the same seed see the same walks, whatever `n`
# and `alpha` are, so the settings are compared on identical data.

# %%
env = rk.GymEnv("rlkit/RandomWalk1D-v0", n_states=19, rewards=(-1.0, 1.0))
TRUE_VALUES = env.env.unwrapped.true_values()
STATES = slice(1, 20)
print(TRUE_VALUES[STATES].round(2))


def average_rms(n, alpha, run):
    """RMS error over the 19 states, averaged over the first N_EPISODES episodes."""
    env = rk.GymEnv("rlkit/RandomWalk1D-v0", seed=run, n_states=19, rewards=(-1.0, 1.0))
    v = rk.TabularVApproximator(env.state_space, init=0.0, step_size=alpha)
    policy = rk.VBasedPolicy(rk.TDLearner(v, method="td0", n=n), rk.RandomPolicy(seed=10_000 + run))
    errors = []

    def record(episode, policy, env):
        errors.append(np.sqrt(np.mean((v.table[STATES] - TRUE_VALUES[STATES]) ** 2)))

    agent = rk.Agent(policy, rk.VectorSARTTrajectory())
    rk.run(agent, env, rk.StopAfterNEpisodes(N_EPISODES), rk.DoEveryNEpisodes(record))
    return np.mean(errors)


# %% [markdown]
# ## The sweep

# %%
errors = np.array(
    [[[average_rms(n, alpha, run) for run in range(N_RUNS)] for alpha in ALPHAS] for n in NS]
)  # shape (n, alpha, run)
curves = errors.mean(axis=2)

fig, ax = plt.subplots(figsize=(7, 5))
for n, curve in zip(NS, curves, strict=True):
    ax.plot(ALPHAS, curve, label=f"n = {n}")
ax.set_ylim(0.25, 0.55)
ax.set_xlabel("alpha")
ax.set_ylabel(f"Average RMS error over {N_EPISODES} episodes\nand 19 states ({N_RUNS} runs)")
ax.legend()
ax.set_title("Figure 7.2: n-step TD on the 19-state random walk")
save(fig, 1)

# %% [markdown]
# ## Checks against the book
#
# For each `n` we take its best step size. Figure 7.2's message: an intermediate `n` (the
# book's best curves are n = 4 and 8, reaching about 0.25-0.3) is better than both
# extremes, one-step TD (n = 1) and the Monte-Carlo-like n = 512.
# The comparison is paired run by run and must exceed three standard errors.

# %%
best = {n: int(np.argmin(curve)) for n, curve in zip(NS, curves, strict=True)}
for i, n in enumerate(NS):
    print(f"n = {n:3d}: best alpha {ALPHAS[best[n]]}, error {curves[i, best[n]]:.3f}")


def best_runs(n):
    """Per-run errors of `n` at its best step size."""
    return errors[NS.index(n), best[n]]


winner = min((4, 8), key=lambda n: best_runs(n).mean())
for other in (1, 512):
    diff = best_runs(other) - best_runs(winner)
    tol = 3 * diff.std() / np.sqrt(N_RUNS)
    print(f"n = {winner} beats n = {other} by {diff.mean():.3f} (3 standard errors: {tol:.3f})")
    assert diff.mean() > tol

assert 0.22 < best_runs(winner).mean() < 0.32
