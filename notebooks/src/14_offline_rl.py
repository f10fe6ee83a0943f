# %% [markdown]
# # 14. Offline RL: learning from a fixed dataset (Kumar et al. 2020, Conservative Q-Learning)
#
# Offline RL learns from logged transitions and never acts while it learns. The data come from
# some *behaviour* policy; the learner wants a better one. The trap: Q-learning's target
# `r + gamma * max_a' Q(s', a')` takes a maximum over **all** actions, also those the dataset
# never tried at `s'`. Their values are never corrected by data, so whatever they hold (the
# initial value, a network's extrapolation) can win the maximum, spread backwards through the
# targets, and the greedy policy goes where the data never went.
#
# 1. On cliff walking, tabular Q-learning from a fixed dataset of a cautious walker: unseen
#    actions keep their initial value 0, which beats every real (negative) return, so the
#    greedy policy walks off the cliff.
# 2. The conservative fix (CQL's idea in a table): push down a soft maximum of `Q(s, .)` and
#    push up `Q(s, a_data)`, so actions without data look worse than those with data.
# 3. The same with neural networks: `rk.CQL` and plain `rk.SAC` trained offline on Pendulum
#    with the recipes of `experiments/offline.py` (the dataset is made when missing).
#
# `RLKIT_NOTEBOOK_SCALE=full` (the default) trains the Pendulum learners for 2,500 gradient
# steps each (minutes); `ci` for a few hundred, on a small dataset.

# %%
import os
import pathlib
import tempfile

import matplotlib.pyplot as plt
import numpy as np

import rlkit as rk

SCALE = os.environ.get("RLKIT_NOTEBOOK_SCALE", "full")
assert SCALE in ("full", "ci"), f"RLKIT_NOTEBOOK_SCALE must be 'full' or 'ci', got {SCALE!r}"


def save(fig, n):
    """Save figure n of this notebook to $RLKIT_FIGURE_DIR when it is set (the tests set it)."""
    if os.environ.get("RLKIT_FIGURE_DIR"):
        fig.savefig(os.path.join(os.environ["RLKIT_FIGURE_DIR"], f"14_offline_rl-{n}.png"))


# %% [markdown]
# ## A dataset of a cautious walker
#
# Cliff walking (4 x 12 cells, state `row * 12 + col`, start bottom-left, goal bottom-right,
# -1 a step, -100 and back to the start for a step into the cliff between them). The behaviour
# policy walks up one row, along it and down to the goal, and takes a random action 10% of the
# time. `rk.DatasetRecorder` records 50 of its episodes.

# %%
UP, RIGHT, DOWN, LEFT = 0, 1, 2, 3
N_STATES, N_ACTIONS, START = 48, 4, 36


class CautiousWalker(rk.AbstractPolicy):
    """Up from the start, right along row 2, down at the last column; random with prob epsilon."""

    def __init__(self, epsilon, seed):
        self.epsilon, self.rng = epsilon, np.random.default_rng(seed)

    def act(self, env):
        if self.rng.random() < self.epsilon:
            return int(self.rng.integers(N_ACTIONS))
        row, col = divmod(int(env.state), 12)
        if row == 3:
            return UP
        if row < 2:
            return DOWN
        return RIGHT if col < 11 else DOWN


data_dir = pathlib.Path(tempfile.mkdtemp())
walker_env = rk.GymEnv("CliffWalking-v1", seed=0, max_episode_steps=100)
rk.run(
    CautiousWalker(0.1, seed=0),
    walker_env,
    rk.StopAfterNEpisodes(50),
    rk.DatasetRecorder(data_dir / "cliff.npz", seed=0),
)
cliff = rk.Dataset.load(data_dir / "cliff.npz")
counts = np.zeros((N_STATES, N_ACTIONS))
np.add.at(counts, (cliff.observations, cliff.actions), 1)
behaviour_return = cliff.episode_returns().mean()
print(f"{len(cliff)} transitions, mean return {behaviour_return:.1f}")
print(f"state-action pairs in the data: {int((counts > 0).sum())} of {N_STATES * N_ACTIONS}")
print("actions tried at the start (up, right, down, left):", counts[START])

# %% [markdown]
# ## Q-learning from the dataset, and the conservative fix
#
# Each sweep moves every `Q(s, a)` of the data towards the mean of its targets
# `r + gamma * (1 - terminated) * max_a' Q(s', a')` (a fixed dataset: no acting). The
# conservative version also descends CQL's term `alpha * (logsumexp_a Q(s, a) - Q(s, a_data))`
# at every state of the data: its gradient `softmax(Q(s, .)) - frequency of a in the data at s`
# lowers actions the data did not take and raises those it did.


# %%
def offline_q_learning(data, alpha=0.0, sweeps=200, lr=0.5, gamma=0.99):
    """Tabular Q-learning over the dataset's transitions, with CQL's term weighted by alpha."""
    s, a, r, s_next = data.observations, data.actions, data.rewards, data.next_observations
    not_done = 1.0 - data.terminations.astype(float)
    n_at = counts.sum(1, keepdims=True)
    frequency = counts / np.maximum(n_at, 1)
    q = np.zeros((N_STATES, N_ACTIONS))
    for _ in range(sweeps):
        target = r + gamma * not_done * q[s_next].max(1)
        step = np.zeros_like(q)
        np.add.at(step, (s, a), target - q[s, a])
        step /= np.maximum(counts, 1)
        if alpha:
            soft = np.exp(q - q.max(1, keepdims=True))
            soft /= soft.sum(1, keepdims=True)
            step -= alpha * (n_at > 0) * (soft - frequency)
        q += lr * step
    return q


class GreedyTable(rk.AbstractPolicy):
    """Acts greedily on a Q-table."""

    def __init__(self, q):
        self.q = q

    def act(self, env):
        return int(self.q[int(env.state)].argmax())


def greedy_return(q):
    env = rk.GymEnv("CliffWalking-v1", seed=1, max_episode_steps=100)
    return rk.evaluate(GreedyTable(q), env, 1, seed=0).mean


q_naive = offline_q_learning(cliff)
q_conservative = offline_q_learning(cliff, alpha=1.0)
naive_return, conservative_return = greedy_return(q_naive), greedy_return(q_conservative)
print("Q(start, .) naive:       ", q_naive[START].round(2))
print("Q(start, .) conservative:", q_conservative[START].round(2))
print(f"greedy return: naive {naive_return:.0f}, conservative {conservative_return:.0f}")

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 3))
for ax, q, title in [(axes[0], q_naive, "naive"), (axes[1], q_conservative, "conservative")]:
    image = ax.imshow(q.max(1).reshape(4, 12), cmap="viridis")
    ax.set_title(f"max_a Q(s, a), {title} (greedy return {greedy_return(q):.0f})")
    fig.colorbar(image, ax=ax, shrink=0.7)
save(fig, 1)

# %% [markdown]
# The naive table believes stepping **right** from the start (into the cliff, never tried by the
# walker) is worth 0, better than any real return, so its greedy policy steps into the cliff
# until the episode is cut at 100 steps. The conservative table ranks the actions the data
# tried first and walks the data's path to the goal.

# %%
unseen = counts[START] == 0
assert unseen[RIGHT] and q_naive[START].argmax() == RIGHT  # the unseen action wins
assert naive_return <= -100 * 50  # falls again and again
assert conservative_return >= -20 and conservative_return > behaviour_return
assert q_conservative[START].argmax() == UP

# %% [markdown]
# ## CQL on Pendulum
#
# With networks the unseen actions are not stuck at their initial value but extrapolated, with
# the same effect on the maximum. `rk.CQL` adds the conservative term to SAC's critics (a
# log-sum-exp over sampled actions, docs/how-to/offline-rl.md). The recipes
# `CQL_PendulumRandom` and `SAC_PendulumRandom` of `experiments/offline.py` make their
# dataset when it is missing (here: in a temporary folder) and evaluate the greedy policy in
# the real Pendulum every `eval_every` gradient steps.

# %%
if SCALE == "full":
    SETTINGS = {"total_steps": 2_500, "eval_every": 500, "eval_episodes": 10}
else:
    SETTINGS = {"total_steps": 200, "eval_every": 100, "eval_episodes": 2, "dataset_size": 2_000}
SETTINGS["data_dir"] = str(data_dir)
runs = {}
for name in ("CQL_PendulumRandom", "SAC_PendulumRandom"):
    experiment = rk.make_experiment(name, 0, **SETTINGS)
    rk.run(experiment)
    runs[name] = experiment.hook.results
    print(name, [(r.step, round(r.mean)) for r in runs[name]])
random_return = experiment.env.dataset.episode_returns().mean()
print(f"the random dataset's mean return: {random_return:.0f}")

# %%
fig, ax = plt.subplots(figsize=(6, 4))
for name, results in runs.items():
    ax.plot([r.step for r in results], [r.mean for r in results], marker="o", label=name)
ax.axhline(random_return, color="gray", linestyle="--", label="dataset (random actions)")
ax.set_xlabel("gradient steps")
ax.set_ylabel("greedy return")
ax.legend()
save(fig, 2)

# %% [markdown]
# What to expect at the full scale (benchmarks/results_offline_learning.txt, 2,500 gradient
# steps): both beat the random data they learn from, and here plain SAC is *not* the one that
# fails: uniformly random actions cover Pendulum's one-dimensional action space everywhere, so
# no action is unseen and the maximum has nothing to over-estimate, while CQL's penalty
# (`conservative_weight=5`) holds its values down and slows it (seeds 0, 1, 2: SAC -370, -291,
# -372; CQL -891, -985, -788). The conservative term pays off where the data leave actions
# out, as the cautious walker's did; on Pendulum that is a narrow dataset such as
# `CQL_PendulumMedium`'s: one policy's sampled actions. There plain SAC falls below a random
# policy (`SAC_PendulumRandom` with `dataset="medium"`, 2,500 updates, seeds 0, 1, 2: -1593,
# -1646, -1575; its critics estimate about -45 where its policy really gets about -690), while
# CQL stays near or above the data's mean of -800 (seeds 0, 1: -856, -494).

# %%
for results in runs.values():
    assert len(results) == SETTINGS["total_steps"] // SETTINGS["eval_every"]
    assert all(np.isfinite(r.mean) for r in results)
if SCALE == "full":
    assert runs["CQL_PendulumRandom"][-1].mean > random_return
