# %% [markdown]
# # 8. From tables to networks: DQN on CartPole
#
# Everything so far stored values in tables, one entry per state. CartPole's state is four real
# numbers (cart position and velocity, pole angle and angular velocity): no table can hold it.
# Deep Q-learning (DQN, Mnih et al. 2015) replaces the table by a neural network
# `Q(s, .; theta)` and keeps the idea of Q-learning: move `Q(s, a)` toward
# `r + gamma max_a' Q_target(s', a')`. Two additions make it stable:
#
# * **experience replay**: transitions go into a large buffer, and every update uses a random
#   batch from it, not just the last step;
# * a **target network**: a copy of the network, synchronised now and then, gives the targets.
#
# In rlkit the loop does not change. Compare the tabular Q-learning agent of notebook 5 with the
# DQN agent below: the approximator, the learner and the trajectory change; `rk.Agent`,
# `rk.QBasedPolicy`, the epsilon-greedy explorer, `rk.run`, the hooks and `rk.evaluate` stay.
#
# `RLKIT_NOTEBOOK_SCALE=full` (the default) trains for 50,000 steps (about a minute on a laptop),
# `ci` for 20,000.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import torch
from torch import nn

import rlkit as rk

SCALE = os.environ.get("RLKIT_NOTEBOOK_SCALE", "full")
assert SCALE in ("full", "ci"), f"RLKIT_NOTEBOOK_SCALE must be 'full' or 'ci', got {SCALE!r}"


def save(fig, n):
    """Save figure n of this notebook to $RLKIT_FIGURE_DIR when it is set (the tests set it)."""
    if os.environ.get("RLKIT_FIGURE_DIR"):
        fig.savefig(os.path.join(os.environ["RLKIT_FIGURE_DIR"], f"08_tables_to_networks-{n}.png"))


TOTAL_STEPS = {"full": 50_000, "ci": 20_000}[SCALE]

# %% [markdown]
# ## The tabular agent, for comparison
#
# Q-learning on the cliff walk, as in notebook 5: a table, a TD learner updating after every
# step, and a trajectory that records the episode.

# %%
cliff = rk.GymEnv("CliffWalking-v1", seed=0)
table = rk.TabularQApproximator(cliff.state_space, cliff.action_space, step_size=0.5)
tabular_agent = rk.Agent(
    rk.QBasedPolicy(rk.TDLearner(table, method="qlearning"), rk.EpsilonGreedyExplorer(0.1, seed=0)),
    rk.VectorSARTTrajectory(),
)
rk.run(tabular_agent, cliff, rk.StopAfterNEpisodes(200))
print(rk.evaluate(tabular_agent, rk.GymEnv("CliffWalking-v1", max_episode_steps=100), 1, seed=0))
rk.explain(tabular_agent, cliff)

# %% [markdown]
# ## The baseline: a random policy on CartPole
#
# CartPole pays +1 per step while the pole is up; an episode ends when it falls or after 500
# steps.

# %%
cartpole = rk.GymEnv("CartPole-v1", seed=0)
random_returns = rk.run(
    rk.RandomPolicy(seed=0), cartpole, rk.StopAfterNEpisodes(100), rk.TotalRewardPerEpisode()
).rewards
print(f"random policy: {np.mean(random_returns):.1f} +/- {np.std(random_returns):.1f}")

# %% [markdown]
# ## The DQN agent
#
# * the approximator: a torch network wrapped with its optimizer in
#   `rk.NeuralNetworkApproximator` (gradient norms clipped at 10). Its initial weights come from
#   a seeded generator: `torch.random.fork_rng` leaves torch's global random state untouched;
# * the learner: `rk.DQNLearner` with a `rk.TargetNetwork` (synchronised every 10 steps), a
#   `rk.BatchSampler` drawing batches of 64 transitions from the replay buffer, and a
#   `rk.InsertSampleRatioController` that says when to learn: after 1000 steps of warm-up, 128
#   gradient steps every 256 environment steps;
# * the trajectory: `rk.CircularArraySARTTrajectory`, a preallocated replay buffer;
# * the explorer: epsilon decays linearly from 1 to 0.04 over the first 16% of the steps.
#
# These are rl-baselines3-zoo's tuned settings for CartPole, the ones of rlkit's bundled recipe
# `DQN_CartPole` (`rk.make_experiment("DQN_CartPole", seed=0)`, or `rlkit run DQN_CartPole`
# from the command line).

# %%
env = rk.GymEnv("CartPole-v1", seed=1)
with torch.random.fork_rng(devices=[]):
    torch.manual_seed(1)
    net = nn.Sequential(
        nn.Linear(4, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 2)
    )
q = rk.NeuralNetworkApproximator(
    net, lambda params: torch.optim.Adam(params, lr=2.3e-3), max_grad_norm=10.0
)
learner = rk.DQNLearner(
    q,
    sampler=rk.BatchSampler(64, seed=2),
    controller=rk.InsertSampleRatioController(warmup_steps=1000, update_every=256, n_updates=128),
    gamma=0.99,
    target=rk.TargetNetwork(q, sync_every=10),
)
explorer = rk.EpsilonGreedyExplorer(
    0.04, kind="linear", epsilon_start=1.0, decay_steps=int(0.16 * TOTAL_STEPS), seed=3
)
replay = rk.CircularArraySARTTrajectory(TOTAL_STEPS, env.state_space, env.action_space)
agent = rk.Agent(rk.QBasedPolicy(learner, explorer), replay)
rk.explain(agent, env)

# %% [markdown]
# ## Training and evaluation
#
# The same `rk.run`, the same hook. `rk.evaluate` plays the greedy policy (no exploration, no
# learning) on a separate environment.

# %%
hook = rk.run(agent, env, rk.StopAfterNSteps(TOTAL_STEPS), rk.TotalRewardPerEpisode())
result = rk.evaluate(agent, rk.GymEnv("CartPole-v1"), 20, seed=4)
print(f"after {TOTAL_STEPS} steps, {len(hook.rewards)} episodes: greedy return {result}")

fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(np.cumsum([0, *hook.rewards])[1:], hook.rewards, linewidth=0.8, label="training episodes")
ax.axhline(result.mean, color="C1", label="greedy policy after training")
ax.axhline(np.mean(random_returns), color="k", linestyle="--", label="random policy")
ax.set_xlabel("Time steps")
ax.set_ylabel("Return")
ax.legend()
ax.set_title("DQN on CartPole-v1")
save(fig, 1)

# %% [markdown]
# ## Checks
#
# There is no figure of the book to match here; the check is that a short run learns: the
# greedy policy keeps the pole up several times longer than the random one.

# %%
assert 15 < np.mean(random_returns) < 30  # a random policy lasts about 22 steps
assert result.mean > 3 * np.mean(random_returns), result
assert max(hook.rewards[-20:]) > 100
