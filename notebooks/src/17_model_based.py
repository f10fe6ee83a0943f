# %% [markdown]
# # 15. Model-based RL: from Dyna-Q to learned models (Janner et al. 2019, Chua et al. 2018)
#
# Chapter 8 of Sutton & Barto learns a model of the environment from real experience and uses it
# to plan: Dyna-Q replays remembered transitions between real steps, and needs far fewer real
# episodes than Q-learning. Deep model-based RL keeps the idea and replaces the table by a
# *learned* model that generalises to states never seen:
#
# 1. Dyna-Q on the Dyna maze (Figure 8.2): planning steps per real step buy sample efficiency.
# 2. A learned model of Pendulum: `rk.EnsembleDynamicsModel`, an ensemble of probabilistic
#    networks, trained on random transitions; its prediction error grows with the horizon it
#    predicts open loop. That is why MBPO rolls its model out only a few steps.
# 3. MBPO (`rk.MBPO`: SAC trained on short model rollouts) against SAC on the same budget of
#    environment steps.
#
# `RLKIT_NOTEBOOK_SCALE=full` (the default) runs the recipes' budgets: 5,000 Pendulum steps for
# MBPO and for SAC (tens of minutes on a laptop CPU: model-based RL trades computation for
# samples). `ci` runs a few hundred steps with small networks: enough to run every cell, not
# to learn to swing up; its checks are the maze's and the model's.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import torch

import rlkit as rk

SCALE = os.environ.get("RLKIT_NOTEBOOK_SCALE", "full")
assert SCALE in ("full", "ci"), f"RLKIT_NOTEBOOK_SCALE must be 'full' or 'ci', got {SCALE!r}"
torch.set_num_threads(1)


def save(fig, n):
    """Save figure n of this notebook to $RLKIT_FIGURE_DIR when it is set (the tests set it)."""
    if os.environ.get("RLKIT_FIGURE_DIR"):
        fig.savefig(os.path.join(os.environ["RLKIT_FIGURE_DIR"], f"17_model_based-{n}.png"))


# %% [markdown]
# ## Dyna-Q on the Dyna maze
#
# `rk.DynaLearner(rk.TDLearner(q), n_planning=n)` (notebook 9): after every real step, `n`
# Q-learning updates on transitions drawn from the learned table model. Steps per episode,
# averaged over runs: with 50 planning steps the agent finds the short path within a few
# episodes, without planning it takes dozens.

# %%
RUNS = 5 if SCALE == "full" else 2
N_EPISODES = 30


def dyna_steps(n, run):
    env = rk.GymEnv("rlkit/DynaMaze-v0", seed=run)
    q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.1)
    dyna = rk.DynaLearner(rk.TDLearner(q, gamma=0.95), seed=run, n_planning=n)
    agent = rk.Agent(rk.QBasedPolicy(dyna, rk.EpsilonGreedyExplorer(0.1, seed=10_000 + run)),
                     rk.VectorSARTTrajectory())
    return rk.run(agent, env, rk.StopAfterNEpisodes(N_EPISODES), rk.StepsPerEpisode()).steps


maze = {n: np.array([dyna_steps(n, run) for run in range(RUNS)]) for n in (0, 50)}
fig, ax = plt.subplots(figsize=(6, 4))
for n, steps in maze.items():
    ax.plot(range(2, N_EPISODES + 1), steps.mean(axis=0)[1:], label=f"{n} planning steps")
ax.set_xlabel("Episodes")
ax.set_ylabel("Steps per episode")
ax.set_title("Dyna-Q on the Dyna maze (Figure 8.2)")
ax.legend()
save(fig, 1)
for n, steps in maze.items():
    print(f"n = {n:2d}: episodes 2-10 take {steps[:, 1:10].mean():6.1f} steps on average")

# %% [markdown]
# ## A learned model of Pendulum
#
# Pendulum's state is `(cos theta, sin theta, angular velocity)`, its action a torque in
# `[-2, 2]`. A random policy's transitions, recorded by an `rk.Agent` into a replay
# (`rk.CircularArraySARTTrajectory`), train an ensemble of 5 networks (3 elites). Each member
# predicts a Gaussian over the reward and the change of state; training stops when the
# held-out error stops improving, and the members with the lowest held-out error are the
# elites (MBPO's recipe, `rlkit/approximators/dynamics.py`).

# %%
TRAIN_STEPS = 2000 if SCALE == "full" else 600
env = rk.GymEnv("Pendulum-v1", seed=0)
replay = rk.CircularArraySARTTrajectory(10_000, env.state_space, env.action_space)
rk.run(rk.Agent(rk.RandomPolicy(seed=0), replay), env, rk.StopAfterNSteps(TRAIN_STEPS))

model = rk.EnsembleDynamicsModel(env.state_space, env.action_space, ensemble_size=5,
                                 n_elites=3, hidden=(64, 64), batch_size=32, seed=0)
stats = model.fit(replay)
print(f"{len(replay)} transitions, {stats['model_epochs']:.0f} epochs, elites {model.elites}, "
      f"held-out MSE of the elites {stats['model_holdout_mse']:.4f}")

# %% [markdown]
# How far can the model be trusted? From states of fresh random episodes, the model predicts
# `h` steps ahead **open loop** (each prediction fed back as the next input, with the real
# actions), and we compare with where the real pendulum went.

# %%
test_env = rk.GymEnv("Pendulum-v1", seed=1)
test = rk.CircularArraySARTTrajectory(1000, env.state_space, env.action_space)
rk.run(rk.Agent(rk.RandomPolicy(seed=1), test), test_env, rk.StopAfterNSteps(600))
HORIZON = 20
errors = np.zeros(HORIZON)
starts = range(0, 600 - HORIZON, 7)
for t in starts:
    if test.truncated[t : t + HORIZON - 1].any():  # the episode ends in between
        continue
    state = test.state[t : t + 1]
    for h in range(HORIZON):
        state, _ = model((state, test.action[t + h : t + h + 1]))
        errors[h] += ((state - test.next_state[t + h]) ** 2).mean()
errors /= len([t for t in starts if not test.truncated[t : t + HORIZON - 1].any()])

fig, ax = plt.subplots(figsize=(6, 4))
ax.semilogy(range(1, HORIZON + 1), errors, marker="o")
ax.set_xlabel("Steps predicted open loop")
ax.set_ylabel("Mean squared error of the state")
ax.set_title("A learned Pendulum model: error over the horizon")
save(fig, 2)
print(f"1-step error {errors[0]:.5f}, 10-step error {errors[9]:.4f}, 20-step {errors[19]:.4f}")

# %% [markdown]
# ## MBPO against SAC
#
# `rk.MBPO` is SAC with a model: from `learning_starts` on, every `model_train_freq` steps, it
# retrains the ensemble on the real replay and rolls many real states out through it for a
# few steps with its current policy; its SAC updates (several per real step) draw 95% of each
# batch from those rollouts. `MBPO_Pendulum` and `SAC_Pendulum` are the bundled recipes; both
# run for the same number of real steps and the deterministic policy is evaluated every
# `EVERY` steps (`rk.EvaluationHook`).

# %%
STEPS = 5000 if SCALE == "full" else 400
EVERY = 500 if SCALE == "full" else 200
SMALL = {} if SCALE == "full" else {"hidden": (32, 32), "batch_size": 64}
MBPO_SMALL = {} if SCALE == "full" else {
    "learning_starts": 200, "model_hidden": (32, 32), "rollout_batch_size": 100,
    "gradient_steps": 2, "model_max_epochs": 5,
}


def curve(recipe, **overrides):
    experiment = rk.make_experiment(recipe, 0, total_steps=STEPS, **overrides)
    evaluation = rk.EvaluationHook(rk.GymEnv("Pendulum-v1"), every_n_steps=EVERY, n_episodes=3,
                                   seed=0)
    rk.run(experiment.policy, experiment.env, experiment.stop_condition, evaluation)
    return evaluation.results


curves = {"MBPO": curve("MBPO_Pendulum", **SMALL, **MBPO_SMALL), "SAC": curve("SAC_Pendulum", **SMALL)}
fig, ax = plt.subplots(figsize=(6, 4))
for name, results in curves.items():
    ax.plot([r.step for r in results], [r.mean for r in results], marker="o", label=name)
ax.axhline(-200, color="grey", linestyle="--")
ax.set_xlabel("Environment steps")
ax.set_ylabel("Deterministic mean return")
ax.set_title("Pendulum-v1: MBPO against SAC")
ax.legend()
save(fig, 3)
for name, results in curves.items():
    print(name, [(r.step, round(r.mean)) for r in results])

# %% [markdown]
# ## Checks
#
# - Dyna-Q with 50 planning steps needs far fewer steps per episode early on than Q-learning
#   (the book's Figure 8.2).
# - The model's one-step error is small, and its error grows with the horizon it predicts.
#
# The curves of MBPO and SAC are shown, not asserted here: one seed is no evidence either way.
# benchmarks/model_based.py measures the steps each needs to reach -200 on several seeds
# (benchmarks/results_model_based.txt).

# %%
assert maze[50][:, 1:10].mean() < 0.5 * maze[0][:, 1:10].mean()
assert errors[0] < 0.01, errors[0]
assert errors[9] > 2 * errors[0] and errors[19] > errors[9]
print("all checks passed")
