# %% [markdown]
# # 1. Multi-armed bandits (Sutton & Barto, chapter 2)
#
# A *k-armed bandit* has one state and `k` actions ("arms"). Pulling arm `a` pays a reward drawn
# from a normal distribution around the arm's true value `q*(a)`, which the agent does not know.
# The agent estimates every arm's value from the rewards it has seen and must trade off
# **exploiting** the arm that looks best against **exploring** the others.
#
# We reproduce three figures of the book on its *10-armed testbed* (section 2.3): 2000 bandit
# problems with `q*(a) ~ N(0, 1)`, each played for 1000 pulls.
#
# * Figure 2.2: greedy vs epsilon-greedy (epsilon = 0.01 and 0.1) with sample-average estimates;
# * Figure 2.3: optimistic initial values (`Q1 = 5`, greedy) vs a realistic start (`Q1 = 0`,
#   epsilon = 0.1), both with a constant step size 0.1;
# * Figure 2.4: upper-confidence-bound (UCB, `c = 2`) action selection vs epsilon-greedy.
#
# The size of the experiment is set by the environment variable `RLKIT_NOTEBOOK_SCALE`: `full`
# (the default) runs the book's 2000 problems (a few minutes), `ci` runs 200 (seconds).

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
        fig.savefig(os.path.join(os.environ["RLKIT_FIGURE_DIR"], f"01_bandits-{n}.png"))


N_RUNS = {"full": 2000, "ci": 200}[SCALE]  # bandit problems (the book: 2000)
N_STEPS = 1000  # pulls per problem

# %% [markdown]
# ## The testbed and the agent
#
# `rlkit/MultiArmBandits-v0` is a gymnasium environment in which **every episode is one pull**.
# Its true values `q*` are drawn on a seeded reset and kept afterwards, so one "run" of the book
# is 1000 one-step episodes of one environment, and the next run is a new environment with
# another seed. The same seeds are used for every method, so all methods face the same 2000
# problems. `env.info["optimal_action"]` tells which arm was the best one at each pull.
#
# The agent is built from rlkit's usual pieces:
#
# * a `TabularQApproximator` with a single state holds the estimates `Q(a)`; `step_size=None`
#   makes them sample averages (the step size of the n-th update of an arm is 1/n), a number
#   makes it a constant step size;
# * a `TDLearner` moves `Q(a)` toward the reward. A one-pull episode always ends, so its target
#   is just the reward `R` and the update is the book's incremental rule (eq. 2.3)
#   `Q(a) <- Q(a) + step_size * (R - Q(a))`;
# * an explorer turns the estimates into an action: `EpsilonGreedyExplorer`, `UCBExplorer`.


# %%
def bandit_agent(env, explorer, init=0.0, step_size=None):
    """One row of action values, updated toward every reward, acting through `explorer`."""
    q = rk.TabularQApproximator(env.state_space, env.action_space, init=init, step_size=step_size)
    return rk.Agent(rk.QBasedPolicy(rk.TDLearner(q), explorer), rk.VectorSARTTrajectory())


class OptimalAction(rk.AbstractHook):
    """Records for every pull whether it was the best arm of the problem."""

    def __init__(self):
        self.optimal = []

    def pre_act(self, policy, env, action):
        self.action = action

    def post_act(self, policy, env):
        self.optimal.append(self.action == env.info["optimal_action"])


def testbed(make_explorer, **table):
    """Rewards and optimal-action flags, shape (N_RUNS, N_STEPS), of one method."""
    rewards = np.zeros((N_RUNS, N_STEPS))
    optimal = np.zeros((N_RUNS, N_STEPS))
    for run in range(N_RUNS):
        env = rk.GymEnv("rlkit/MultiArmBandits-v0", seed=run)
        agent = bandit_agent(env, make_explorer(seed=10_000 + run), **table)
        hook = rk.TotalRewardPerEpisode() + OptimalAction()
        rk.run(agent, env, rk.StopAfterNEpisodes(N_STEPS), hook)
        rewards[run], optimal[run] = hook[0].rewards, hook[1].optimal
    return rewards, optimal


# %% [markdown]
# ## Figure 2.2: greedy and epsilon-greedy
#
# Sample-average estimates starting at 0; epsilon = 0 is the greedy method.

# %%
EPSILONS = (0.0, 0.01, 0.1)
eps_greedy = {
    eps: testbed(lambda seed, eps=eps: rk.EpsilonGreedyExplorer(eps, seed=seed)) for eps in EPSILONS
}

fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 7), sharex=True)
for eps, (rewards, optimal) in eps_greedy.items():
    label = "greedy" if eps == 0 else f"epsilon = {eps}"
    top.plot(rewards.mean(axis=0), label=label, linewidth=0.8)
    bottom.plot(100 * optimal.mean(axis=0), label=label, linewidth=0.8)
top.set_ylabel("Average reward")
bottom.set_ylabel("% Optimal action")
bottom.set_xlabel("Steps")
top.legend()
fig.suptitle(f"Figure 2.2 ({N_RUNS} runs)")
save(fig, 1)

# %% [markdown]
# ## Figure 2.3: optimistic initial values
#
# Both methods use a constant step size of 0.1. Starting every estimate at +5, far above any
# `q*(a)`, makes even the greedy method try every arm: whatever it pulls disappoints. The spike
# at step 11 is the first pull after every arm was tried once.

# %%
optimistic = testbed(lambda seed: rk.GreedyExplorer(seed=seed), init=5.0, step_size=0.1)
realistic = testbed(lambda seed: rk.EpsilonGreedyExplorer(0.1, seed=seed), step_size=0.1)

fig, ax = plt.subplots(figsize=(7, 3.5))
ax.plot(100 * optimistic[1].mean(axis=0), label="optimistic, greedy: Q1 = 5, epsilon = 0")
ax.plot(100 * realistic[1].mean(axis=0), label="realistic, epsilon-greedy: Q1 = 0, epsilon = 0.1")
ax.set_xlabel("Steps")
ax.set_ylabel("% Optimal action")
ax.legend()
ax.set_title(f"Figure 2.3 ({N_RUNS} runs)")
save(fig, 2)

# %% [markdown]
# ## Figure 2.4: upper confidence bound
#
# UCB picks `argmax_a Q(a) + c * sqrt(ln t / N(a))`: arms that were pulled rarely get a bonus
# that shrinks as they are tried. `rk.UCBExplorer` keeps the counts `N(a)` itself.

# %%
ucb = testbed(lambda seed: rk.UCBExplorer(c=2.0, seed=seed))

fig, ax = plt.subplots(figsize=(7, 3.5))
ax.plot(ucb[0].mean(axis=0), label="UCB, c = 2", linewidth=0.8)
ax.plot(eps_greedy[0.1][0].mean(axis=0), label="epsilon-greedy, epsilon = 0.1", linewidth=0.8)
ax.set_xlabel("Steps")
ax.set_ylabel("Average reward")
ax.legend()
ax.set_title(f"Figure 2.4 ({N_RUNS} runs)")
save(fig, 3)

# %% [markdown]
# ## Checks against the book
#
# We compare averages over the last steps of every run. With `N_RUNS` problems, an average over
# runs has a standard error of about `std / sqrt(N_RUNS)`, where `std` is the spread of the
# per-run values; every tolerance below is three standard errors (of paired differences for
# comparisons, as all methods see the same problems) plus, where the book gives a number, the
# precision with which it gives it.


# %%
def late(values, steps=500):
    """Per-run average over the last `steps` pulls."""
    return values[:, -steps:].mean(axis=1)


def check_close(name, values, expected, precision):
    """The mean of `values` is `expected`, give or take the book's `precision` and 3 std errors."""
    mean, tol = values.mean(), precision + 3 * values.std() / np.sqrt(len(values))
    print(f"{name}: {mean:.3f} (book: about {expected:.2f}, tolerance {tol:.3f})")
    assert abs(mean - expected) < tol, f"{name}: {mean:.3f} is not within {tol:.3f} of {expected}"


def check_better(name, better, worse):
    diff = better - worse
    mean, tol = diff.mean(), 3 * diff.std() / np.sqrt(len(diff))
    print(f"{name}: better by {mean:.3f} (at least 3 standard errors: {tol:.3f})")
    assert mean > tol, f"{name}: the difference {mean:.3f} is not above {tol:.3f}"


greedy_reward, greedy_optimal = (late(x) for x in eps_greedy[0.0])
eps01_reward, eps01_optimal = (late(x) for x in eps_greedy[0.1])
eps001_optimal = late(eps_greedy[0.01][1])

# Figure 2.2 / section 2.3: greedy levels off at an average reward of about 1 and finds the best
# arm in about one third of the problems; epsilon = 0.1 explores and does better on both counts,
# epsilon = 0.01 lies in between in % optimal action (after 1000 steps).
check_close("greedy: average reward", greedy_reward, 1.0, precision=0.05)
check_close("greedy: fraction optimal", greedy_optimal, 1 / 3, precision=0.05)
check_better("epsilon 0.1 vs greedy: average reward", eps01_reward, greedy_reward)
check_better("epsilon 0.1 vs greedy: % optimal", eps01_optimal, greedy_optimal)
check_better("epsilon 0.1 vs 0.01: % optimal", eps01_optimal, eps001_optimal)
check_better("epsilon 0.01 vs greedy: % optimal", eps001_optimal, greedy_optimal)
# epsilon = 0.1 explores 10% of the time: it can pick the best arm at most 91% of the time.
assert eps01_optimal.mean() < 0.91

# Figure 2.3: optimism wins in the long run; its curve spikes at step 11 and drops right after.
check_better("optimistic vs realistic: % optimal", late(optimistic[1]), late(realistic[1]))
spike = (optimistic[1][:, 10], optimistic[1][:, 11:15].mean(axis=1))
check_better("optimistic: % optimal at step 11 vs steps 12-15", *spike)

# Figure 2.4: UCB beats epsilon-greedy in average reward after the first steps.
check_better("UCB vs epsilon 0.1: average reward", late(ucb[0]), eps01_reward)
