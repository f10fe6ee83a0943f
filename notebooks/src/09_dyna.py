# %% [markdown]
# # 9. Planning and learning: Dyna (Sutton & Barto, chapter 8, Figures 8.2, 8.4, 8.5, Example 8.4)
#
# A model-free learner uses each real step once. **Dyna-Q** also remembers what each step did
# (a *model*: state and action -> reward and next state) and, after every real step, replays
# `n` remembered transitions chosen at random, each a one-step Q-learning update: *planning*.
# In rlkit, `rk.DynaLearner(learner, n_planning=n)` wraps any tabular control learner (here
# Q-learning, `rk.TDLearner(q)`): the wrapped learner learns from the real steps as before, and
# the wrapper adds the model and the planning updates at the end of every step (`PostAct`).
#
# Three experiments of the chapter, and a fourth with prioritized sweeping:
#
# * Figure 8.2: on the Dyna maze, more planning steps reach the goal in far fewer steps;
# * Figure 8.4: the blocking maze closes the short path after 1000 steps. Dyna-Q+ adds an
#   exploration bonus `kappa sqrt(tau)` to the simulated reward of a pair untried for `tau`
#   steps (`kappa=`), and finds the new path sooner;
# * Figure 8.5: the shortcut maze opens a shorter path after 3000 steps: Dyna-Q+ finds it,
#   Dyna-Q keeps its old path;
# * Example 8.4: prioritized sweeping (`planning="prioritized"`) plans backward from the
#   states whose values changed, and finds the optimal path with fewer updates.
#
# `RLKIT_NOTEBOOK_SCALE=full` (the default) runs the book's number of runs (a few minutes),
# `ci` fewer.

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
        fig.savefig(os.path.join(os.environ["RLKIT_FIGURE_DIR"], f"09_dyna-{n}.png"))


if SCALE == "full":
    RUNS_82, RUNS_84, RUNS_85, RUNS_SWEEP = 30, 20, 5, 10
else:
    RUNS_82, RUNS_84, RUNS_85, RUNS_SWEEP = 5, 10, 2, 3


def dyna_agent(env, run, alpha=0.1, **dyna_options):
    """epsilon-greedy (0.1) Dyna around one-step Q-learning with gamma = 0.95, as in the book."""
    q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=alpha)
    dyna = rk.DynaLearner(rk.TDLearner(q, gamma=0.95), seed=run, **dyna_options)
    policy = rk.QBasedPolicy(dyna, rk.EpsilonGreedyExplorer(0.1, seed=10_000 + run))
    return rk.Agent(policy, rk.VectorSARTTrajectory())


print(rk.MazeEnv("dyna", render_mode="ansi").render())  # S start, G goal, # walls
env = rk.GymEnv("rlkit/DynaMaze-v0")
rk.explain(dyna_agent(env, 0, n_planning=5), env)

# %% [markdown]
# ## Figure 8.2: the Dyna maze
#
# 47 states, start S, goal G, reward +1 at the goal and 0 elsewhere, `gamma = 0.95`,
# `alpha = 0.1`, `epsilon = 0.1`. Steps per episode for `n = 0` (plain Q-learning), 5 and 50
# planning steps, averaged over runs. Run `i` of every `n` sees the same random numbers, and the
# first episode is the same for all: nothing is learned until the goal is first reached.

# %%
N_EPISODES = 50
PLANNING = (0, 5, 50)


def steps_per_episode(n, run):
    env = rk.GymEnv("rlkit/DynaMaze-v0", seed=run)
    hook = rk.run(dyna_agent(env, run, n_planning=n), env, rk.StopAfterNEpisodes(N_EPISODES),
                  rk.StepsPerEpisode())
    return hook.steps


steps = {n: np.array([steps_per_episode(n, run) for run in range(RUNS_82)]) for n in PLANNING}

fig, ax = plt.subplots(figsize=(7, 5))
for n in PLANNING:
    ax.plot(range(2, N_EPISODES + 1), steps[n].mean(axis=0)[1:], label=f"{n} planning steps")
ax.set_ylim(0, 800)
ax.set_xlabel("Episodes")
ax.set_ylabel(f"Steps per episode ({RUNS_82} runs)")
ax.set_title("Figure 8.2: Dyna-Q on the Dyna maze")
ax.legend()
save(fig, 1)
for n in PLANNING:
    print(f"n = {n:2d}: episode 2 takes {steps[n][:, 1].mean():6.1f} steps, episodes 41-50 "
          f"{steps[n][:, 40:].mean():5.1f}")

# %% [markdown]
# ## Figures 8.4 and 8.5: changing mazes, Dyna-Q and Dyna-Q+
#
# The maze changes after a number of steps of the whole run, across episodes (the environment
# counts them; a reset with a seed, at the start of a run, starts over). The measure is the
# cumulative reward: the number of times the goal was reached. A `DoEveryNSteps` hook records
# the reward of every step. As in the book's figures (and the widely used code for them),
# `alpha = 1`; the blocking maze has 10 planning steps and `kappa = 1e-4`, the shortcut maze 50
# and `kappa = 1e-3`.


# %%
def cumulative_reward(env_id, total_steps, run, n_planning, kappa):
    env = rk.GymEnv(env_id, seed=run)
    agent = dyna_agent(env, run, alpha=1.0, n_planning=n_planning, kappa=kappa)
    rewards = []
    hook = rk.DoEveryNSteps(lambda step, policy, env: rewards.append(env.reward))
    rk.run(agent, env, rk.StopAfterNSteps(total_steps), hook)
    return np.cumsum(rewards)


blocking = {
    kappa: np.array([cumulative_reward("rlkit/BlockingMaze-v0", 3000, run, 10, kappa)
                     for run in range(RUNS_84)])
    for kappa in (0.0, 1e-4)
}
shortcut = {
    kappa: np.array([cumulative_reward("rlkit/ShortcutMaze-v0", 6000, run, 50, kappa)
                     for run in range(RUNS_85)])
    for kappa in (0.0, 1e-3)
}

fig, axes = plt.subplots(1, 2, figsize=(13, 5))
for ax, results, change, title in (
    (axes[0], blocking, 1000, "Figure 8.4: blocking maze"),
    (axes[1], shortcut, 3000, "Figure 8.5: shortcut maze"),
):
    for kappa, curves in results.items():
        ax.plot(curves.mean(axis=0), label="Dyna-Q+" if kappa else "Dyna-Q")
    ax.axvline(change, color="grey", linestyle=":")
    ax.set_xlabel("Time steps")
    ax.set_ylabel("Cumulative reward")
    ax.set_title(title)
    ax.legend()
save(fig, 2)

# %% [markdown]
# ## Example 8.4: prioritized sweeping
#
# Planning at random wastes updates on pairs whose values did not change. Prioritized sweeping
# keeps a queue ordered by the size of the update a pair would get, and after updating a pair
# queues the pairs that lead into it. The measure of Example 8.4: the number of updates (real
# and simulated) until the greedy policy takes the shortest path, 14 steps. After every
# episode the greedy policy (`rk.greedy`, the same table) walks the maze once, on an
# environment cut off at 100 steps.


# %%
def updates_until_optimal(run, planning, max_episodes=300):
    env = rk.GymEnv("rlkit/DynaMaze-v0", seed=run)
    agent = dyna_agent(env, run, alpha=0.5, n_planning=5, planning=planning)
    dyna = agent.policy.learner
    test_env = rk.GymEnv("rlkit/DynaMaze-v0", seed=0, max_episode_steps=100)
    for _ in range(max_episodes):
        rk.run(agent, env, rk.StopAfterNEpisodes(1))
        walk = rk.run(rk.greedy(agent.policy), test_env, rk.StopAfterNEpisodes(1),
                      rk.StepsPerEpisode())
        if walk.steps[-1] == 14:
            return dyna.n_updates
    return np.inf


sweep_updates = {
    planning: np.array([updates_until_optimal(run, planning) for run in range(RUNS_SWEEP)])
    for planning in ("random", "prioritized")
}
for planning, updates in sweep_updates.items():
    print(f"{planning:11s}: updates until the optimal path {updates.tolist()}")

fig, ax = plt.subplots(figsize=(5, 4))
ax.bar(["Dyna-Q", "prioritized sweeping"],
       [np.median(sweep_updates["random"]), np.median(sweep_updates["prioritized"])])
ax.set_ylabel("Updates until optimal solution (median)")
ax.set_title("Example 8.4 on the Dyna maze")
save(fig, 3)

# %% [markdown]
# ## Checks against the book
#
# * Figure 8.2: the first episode is the same for every `n` (about 1700 steps in the book);
#   by the second episode 50 planning steps need a small fraction of the steps of `n = 0`, and
#   by the end both planning agents are near the shortest path of 14 steps (plus the
#   exploration of epsilon = 0.1).
# * Figure 8.4: after the change, Dyna-Q+ collects more reward than Dyna-Q, paired run by run,
#   by more than three standard errors.
# * Figure 8.5: after the shortcut opens, Dyna-Q+ reaches the goal more often than Dyna-Q in
#   every run over the last 1000 steps: it takes the 10-step shortcut, Dyna-Q stays on its
#   16-step path.
# * Example 8.4: prioritized sweeping needs fewer updates than Dyna-Q in every run.

# %%
first = steps[0][:, 0]
assert all((steps[n][:, 0] == first).all() for n in PLANNING)
assert 500 < first.mean() < 3500, first.mean()
print(f"episode 2: n = 50 {steps[50][:, 1].mean():.0f} steps, n = 0 {steps[0][:, 1].mean():.0f}")
assert steps[50][:, 1].mean() * 5 < steps[0][:, 1].mean()
assert steps[5][:, 1].mean() < steps[0][:, 1].mean()
for n in (5, 50):
    assert 14 <= steps[n][:, 40:].mean() < 20

after = {kappa: curves[:, -1] - curves[:, 999] for kappa, curves in blocking.items()}
diff = after[1e-4] - after[0.0]
tol = 3 * diff.std() / np.sqrt(RUNS_84)
print(f"blocking maze, reward after the change: Dyna-Q {after[0.0].mean():.1f}, "
      f"Dyna-Q+ {after[1e-4].mean():.1f} (difference {diff.mean():.1f}, 3 SE {tol:.1f})")
assert diff.mean() > tol

late = {kappa: curves[:, -1] - curves[:, -1001] for kappa, curves in shortcut.items()}
print(f"shortcut maze, reward in the last 1000 steps: Dyna-Q {late[0.0].tolist()}, "
      f"Dyna-Q+ {late[1e-3].tolist()}")
assert (late[1e-3] > late[0.0]).all()
assert late[1e-3].mean() > 1000 / 14 > late[0.0].mean()

assert (sweep_updates["prioritized"] < sweep_updates["random"]).all()
