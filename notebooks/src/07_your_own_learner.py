# %% [markdown]
# # 7. Writing your own learner: the gradient bandit (Sutton & Barto, section 2.8)
#
# rlkit's run loop announces *stages* (PreExperiment, PreEpisode, PreAct, PostAct, PostEpisode,
# PostExperiment), and behaviour is attached to them by *multiple dispatch*: a learner learns in
# methods of the generic function `rk.update(learner, trajectory, env, stage)`, one per stage it
# cares about. A new algorithm is therefore a small class plus one or two methods; the agent,
# the run loop, the explorers and the hooks stay as they are.
#
# As an example we add an algorithm rlkit does not ship: the **gradient bandit** of section 2.8.
# It keeps a *preference* `H(a)` per arm, acts with the softmax policy
# `pi(a) = exp(H(a)) / sum_b exp(H(b))` and after each pull of arm `A` with reward `R` moves
#
# `H(A) += alpha (R - baseline) (1 - pi(A))`, and `H(a) -= alpha (R - baseline) pi(a)` for
# `a != A`,
#
# where the baseline is the average of the rewards so far (or 0 without a baseline). We then
# reproduce Figure 2.5: on a testbed whose true values have mean +4, the baseline matters a lot.
#
# `RLKIT_NOTEBOOK_SCALE=full` (the default) runs the book's 2000 problems, `ci` 100.

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
        fig.savefig(os.path.join(os.environ["RLKIT_FIGURE_DIR"], f"07_your_own_learner-{n}.png"))


N_RUNS = {"full": 2000, "ci": 100}[SCALE]
N_STEPS = 1000

# %% [markdown]
# ## The learner
#
# A learner subclasses `rk.AbstractLearner`. Calling it on an environment returns what the
# policy acts on: here the preferences, which `rk.SoftmaxExplorer` turns into the softmax
# policy. It stores whatever it learns; a learner that should be checkpointed also implements
# `state_dict()` and `load_state_dict(state)`.


# %%
class GradientBandit(rk.AbstractLearner):
    """Preferences over arms, learned by stochastic gradient ascent on the expected reward.

    Example:
        >>> learner = GradientBandit(n_actions=10, alpha=0.1)
    """

    def __init__(self, n_actions, alpha, baseline=True):
        self.preferences = np.zeros(n_actions)
        self.alpha = alpha
        self.baseline = baseline
        self.average_reward = 0.0
        self.pulls = 0

    def __call__(self, env):
        return self.preferences

    def state_dict(self):
        return {
            "preferences": self.preferences.copy(),
            "average_reward": self.average_reward,
            "pulls": self.pulls,
        }

    def load_state_dict(self, state):
        self.preferences[:] = state["preferences"]
        self.average_reward, self.pulls = state["average_reward"], state["pulls"]


# %% [markdown]
# ## Its learning step, attached to a stage
#
# The gradient step happens after every pull, at the **PostAct** stage. By then the agent's
# trajectory (`rk.VectorSARTTrajectory`) has recorded the action and the reward of the step:
# `trajectory.action[-1]`, `trajectory.reward[-1]`. The method is registered with
# `@rk.update.dispatch`; the types of its positional-only arguments say when it applies (its
# name does not matter). rlkit resolves it once, when a run starts, so the loop calls it as a
# plain function.


# %%
# ---- PostAct: one gradient-bandit step ----
@rk.update.dispatch
def _(
    learner: GradientBandit,
    trajectory: rk.VectorSARTTrajectory,
    env: rk.AbstractEnv,
    stage: rk.PostActStage,
    /,
):
    action, reward = trajectory.action[-1], trajectory.reward[-1]
    learner.pulls += 1
    if learner.baseline:
        learner.average_reward += (reward - learner.average_reward) / learner.pulls
    h = learner.preferences
    pi = np.exp(h - h.max())
    pi /= pi.sum()
    step = learner.alpha * (reward - learner.average_reward)
    h -= step * pi
    h[action] += step


# Optional: numbers worth logging, for rk.statistics and the logging hooks.
@rk.statistics.dispatch
def _(learner: GradientBandit, /):
    return {"average_reward": float(learner.average_reward)}


# %% [markdown]
# ## The agent, and what it will do
#
# The learner goes into the same pieces as every built-in one. `rk.explain` prints the plan of a
# run: for every stage, which methods will be called, and where they are defined. Our method
# shows up at PostAct, after the trajectory's own recording step. Stages the learner has no
# method for cost nothing: they are not in the plan.
#
# Hooks observe a run. We compose three with `+`: the reward of every pull, whether the pull
# was the optimal arm, and a snapshot of the preferences every 100 pulls (for the plot below).


# %%
def gradient_agent(env, alpha, baseline, seed):
    learner = GradientBandit(env.action_space.n, alpha, baseline)
    explorer = rk.SoftmaxExplorer(temperature=1.0, seed=seed)
    return rk.Agent(rk.QBasedPolicy(learner, explorer), rk.VectorSARTTrajectory())


class OptimalAction(rk.AbstractHook):
    """Records for every pull whether it was the best arm of the problem."""

    def __init__(self):
        self.optimal = []

    def pre_act(self, policy, env, action):
        self.action = action

    def post_act(self, policy, env):
        self.optimal.append(self.action == env.info["optimal_action"])


env = rk.GymEnv("rlkit/MultiArmBandits-v0", seed=0, mean=4.0)
agent = gradient_agent(env, alpha=0.1, baseline=True, seed=10_000)
snapshots = []
hook = (
    rk.TotalRewardPerEpisode()
    + OptimalAction()
    + rk.DoEveryNEpisodes(
        lambda t, policy, env: snapshots.append(policy.policy.learner(env).copy()), n=100
    )
)
rk.explain(agent, env, hook, rk.StopAfterNEpisodes(N_STEPS))

# %%
rk.run(agent, env, rk.StopAfterNEpisodes(N_STEPS), hook)
print(rk.statistics(agent.policy.learner))  # what the learner reports to logging hooks

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
left.plot(np.cumsum(hook[0].rewards) / np.arange(1, N_STEPS + 1))
left.set_xlabel("Steps")
left.set_ylabel("Average reward so far")
left.set_title("One run, alpha = 0.1, with baseline")
right.plot(np.arange(100, N_STEPS + 1, 100), np.array(snapshots))
right.set_xlabel("Steps")
right.set_ylabel("Preference H(a) of each arm")
save(fig, 1)

# %% [markdown]
# ## Figure 2.5: with and without a baseline
#
# The true values have mean +4, so every reward is large and positive. Without a baseline every
# pull raises the preference of the arm just pulled, good or bad; with the baseline only
# better-than-average pulls do.


# %%
def testbed(alpha, baseline):
    optimal = np.zeros((N_RUNS, N_STEPS))
    for run in range(N_RUNS):
        env = rk.GymEnv("rlkit/MultiArmBandits-v0", seed=run, mean=4.0)
        agent = gradient_agent(env, alpha, baseline, seed=10_000 + run)
        optimal[run] = rk.run(agent, env, rk.StopAfterNEpisodes(N_STEPS), OptimalAction()).optimal
    return optimal


SETTINGS = [(0.1, True), (0.4, True), (0.1, False), (0.4, False)]
optimal = {setting: testbed(*setting) for setting in SETTINGS}

fig, ax = plt.subplots(figsize=(7, 4.5))
for (alpha, baseline), flags in optimal.items():
    label = f"alpha = {alpha}, {'with' if baseline else 'without'} baseline"
    ax.plot(100 * flags.mean(axis=0), label=label, linewidth=0.8)
ax.set_xlabel("Steps")
ax.set_ylabel("% Optimal action")
ax.legend()
ax.set_title(f"Figure 2.5 ({N_RUNS} runs)")
save(fig, 2)

# %% [markdown]
# ## Checks against the book
#
# In Figure 2.5, after 1000 steps, both runs with a baseline pick the optimal arm about 80% of
# the time (alpha = 0.1 slightly more often than alpha = 0.4), both runs without a baseline far
# less often. We compare the last 100 steps of every run: a comparison must
# exceed three standard errors of the paired difference (the settings see the same problems),
# a level must match the book's to 0.1 (the precision of reading it off the figure) plus three
# standard errors.

# %%
late = {setting: flags[:, -100:].mean(axis=1) for setting, flags in optimal.items()}
for setting, values in late.items():
    print(f"alpha, baseline = {setting}: {100 * values.mean():.1f}% optimal")


def check_better(better, worse):
    diff = late[better] - late[worse]
    mean, tol = diff.mean(), 3 * diff.std() / np.sqrt(N_RUNS)
    print(f"{better} beats {worse} by {mean:.3f} (3 standard errors: {tol:.3f})")
    assert mean > tol


check_better((0.1, True), (0.1, False))
check_better((0.4, True), (0.4, False))
for setting in ((0.1, True), (0.4, True)):
    values = late[setting]
    assert abs(values.mean() - 0.8) < 0.1 + 3 * values.std() / np.sqrt(N_RUNS), setting
