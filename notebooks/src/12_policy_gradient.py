# %% [markdown]
# # 12. Policy gradient (Sutton & Barto, chapter 13, Example 13.1, Figures 13.1 and 13.2)
#
# The learners so far estimate action values and act (epsilon-)greedily on them. A
# *policy-gradient* method learns the policy itself, `pi(a | s, theta)`, by gradient ascent on
# its performance. The usual parameterisation for discrete actions is the softmax of linear
# preferences, `pi(a | s) proportional to exp(theta . x(s, a))`: `rk.LinearSoftmaxPolicy`.
#
# * **REINFORCE** (section 13.3), `rk.ReinforceLearner(policy, step_size=alpha)`: after each
#   episode, `theta += alpha gamma^t G_t grad ln pi(A_t | S_t)` for every step;
# * **REINFORCE with baseline** (13.4), `baseline=rk.LinearVApproximator(...)`: `G_t - v(S_t)`
#   instead of `G_t`, with `v` learned alongside; the same expected update, less variance;
# * **one-step actor-critic** (13.5), `rk.ActorCriticLearner(policy, critic, step_size=...)`:
#   the TD error `R + gamma v(S') - v(S)` instead of the return, after every step.
#
# The learner changes the policy's `theta`; the policy acts. `rk.VBasedPolicy(learner, policy)`
# puts them together: it acts with the policy and passes the stages to the learner.
#
# `RLKIT_NOTEBOOK_SCALE=full` (the default) runs the book's 100 runs of 1000 episodes (tens of
# minutes); `ci` a few short runs.

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
        fig.savefig(os.path.join(os.environ["RLKIT_FIGURE_DIR"], f"12_policy_gradient-{n}.png"))


if SCALE == "full":
    N_RUNS, N_EPISODES, N_SIMULATED = 100, 1000, 20_000
else:
    N_RUNS, N_EPISODES, N_SIMULATED = 3, 300, 2000

# %% [markdown]
# ## Example 13.1: the short corridor with switched actions
#
# Three states and a goal, reward -1 per step; in the second state the actions are switched.
# The agent's features cannot tell the states apart: `x(s, right) = [1, 0]`,
# `x(s, left) = [0, 1]`. An action-value method must choose between always right and always
# left (both never reach the goal) or epsilon-greedy versions of them; a policy that goes right
# with probability `p` does much better. `env.value(p)` is the exact value of the start state.

# %%
corridor = rk.ShortCorridorEnv()
ps = np.linspace(0.01, 0.99, 981)
values = np.array([corridor.value(p) for p in ps])
p_best, v_best = ps[np.argmax(values)], values.max()
print(f"best probability of right {p_best:.3f}, value {v_best:.2f}")
print(f"epsilon-greedy (epsilon = 0.1): right {corridor.value(0.95):.1f}, "
      f"left {corridor.value(0.05):.1f}")

fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(ps, values)
ax.set_ylim(-100, 0)
ax.axvline(p_best, color="grey", linestyle=":")
ax.set_xlabel("probability of right action")
ax.set_ylabel("J(theta) = v(S)")
ax.set_title("Example 13.1: the short corridor")
save(fig, 1)

X = np.array([[0.0, 1.0], [1.0, 0.0]])  # row a: x(s, a) for a = left, right


def features(state, action):
    return X[action]


# The fixed stochastic policy with p = p_best, run with rk.run (nothing learns):
fixed = rk.LinearSoftmaxPolicy(features, 2, 2, init=[np.log(p_best / (1 - p_best)), 0.0],
                               seed=0)
print("pi(. | s) =", fixed.prob(0).round(3))
simulated = rk.run(fixed, rk.GymEnv("rlkit/ShortCorridor-v0", seed=0),
                   rk.StopAfterNEpisodes(N_SIMULATED), rk.TotalRewardPerEpisode())
returns = np.array(simulated.rewards)
print(f"simulated return {returns.mean():.2f} +- {returns.std() / np.sqrt(N_SIMULATED):.2f}")

# %% [markdown]
# ## Figures 13.1 and 13.2: REINFORCE, with and without a baseline
#
# The initial policy goes right with probability 0.05, as in the book (`theta = [-1.47, 1.47]`
# in the features above). Figure 13.1 runs REINFORCE with three step sizes; Figure 13.2
# compares `alpha = 2^-13` with REINFORCE with baseline (`alpha_theta = 2^-9`, a constant
# baseline `v(s) = w` learned with `alpha_w = 2^-6`). Run `i` of every learner uses the
# same seeds. (One-step actor-critic, `rk.ActorCriticLearner`, plugs in the same way; on this
# aliased problem its TD error, with a critic that cannot tell the states apart, is a poor
# learning signal, so the chapter's comparison is between the two REINFORCE variants.)


# %%
def total_rewards(run, make_learner):
    policy = rk.LinearSoftmaxPolicy(features, 2, 2, init=[-1.47, 1.47], seed=run)
    agent = rk.Agent(rk.VBasedPolicy(make_learner(policy), policy), rk.VectorSARTTrajectory())
    hook = rk.run(agent, rk.GymEnv("rlkit/ShortCorridor-v0", seed=run),
                  rk.StopAfterNEpisodes(N_EPISODES), rk.TotalRewardPerEpisode())
    return np.array(hook.rewards)


def constant_v(alpha_w):
    return rk.LinearVApproximator(lambda s: np.ones(1), 1, step_size=alpha_w)


LEARNERS = {
    "REINFORCE 2^-12": lambda pi: rk.ReinforceLearner(pi, step_size=2**-12),
    "REINFORCE 2^-13": lambda pi: rk.ReinforceLearner(pi, step_size=2**-13),
    "REINFORCE 2^-14": lambda pi: rk.ReinforceLearner(pi, step_size=2**-14),
    "REINFORCE with baseline": lambda pi: rk.ReinforceLearner(
        pi, step_size=2**-9, baseline=constant_v(2**-6)
    ),
}
results = {
    name: np.array([total_rewards(run, make) for run in range(N_RUNS)])
    for name, make in LEARNERS.items()
}


def smooth(curve, width=10):
    return np.convolve(curve, np.ones(width) / width, mode="valid")


fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=True)
for ax, names, title in (
    (axes[0], ["REINFORCE 2^-12", "REINFORCE 2^-13", "REINFORCE 2^-14"], "Figure 13.1"),
    (axes[1], ["REINFORCE 2^-13", "REINFORCE with baseline"], "Figure 13.2"),
):
    for name in names:
        ax.plot(smooth(results[name].mean(axis=0)), label=name)
    ax.axhline(v_best, color="grey", linestyle=":", label="v*(s0)")
    ax.set_ylim(-90, -10)
    ax.set_xlabel("Episode")
    ax.set_title(title + ": the short corridor")
    ax.legend()
axes[0].set_ylabel(f"Total reward per episode ({N_RUNS} runs, 10-episode average)")
save(fig, 2)

# %% [markdown]
# ## Checks against the book
#
# * Example 13.1: the best probability of right is about 0.59 (exactly `2 - sqrt(2)`), with
#   value about -11.6; the epsilon-greedy policies are far worse (about -44 and -82); simulating
#   the best policy with `rk.run` gives its value, within three standard errors.
# * Figure 13.1: every step size learns from about -80 toward the optimum, and the largest
#   learns fastest over these episodes.
# * Figure 13.2: REINFORCE with baseline learns faster than without: its average total reward
#   over the episodes is higher, paired run by run, by more than three standard errors, and it
#   ends close to `v*`.

# %%
assert abs(p_best - 0.59) < 0.01 and abs(v_best - (-11.6)) < 0.1
assert corridor.value(0.95) < -40 and corridor.value(0.05) < -80
se = returns.std() / np.sqrt(N_SIMULATED)
assert abs(returns.mean() - corridor.value(p_best)) < 3 * se

for name, rewards in results.items():
    print(f"{name:24s}: first 10 episodes {rewards[:, :10].mean():6.1f}, "
          f"last 50 {rewards[:, -50:].mean():6.1f}, all {rewards.mean():6.1f}")
for name in ("REINFORCE 2^-12", "REINFORCE 2^-13", "REINFORCE 2^-14"):
    assert results[name][:, :10].mean() < -40
    assert results[name][:, -50:].mean() > results[name][:, :10].mean() + 20
assert (results["REINFORCE 2^-12"].mean() > results["REINFORCE 2^-13"].mean()
        > results["REINFORCE 2^-14"].mean())

diff = results["REINFORCE with baseline"].mean(axis=1) - results["REINFORCE 2^-13"].mean(axis=1)
tol = 3 * diff.std() / np.sqrt(N_RUNS) if N_RUNS > 1 else 0.0
print(f"baseline beats no baseline by {diff.mean():.1f} per episode (3 standard errors {tol:.1f})")
assert diff.mean() > tol and (diff > 0).all()
assert results["REINFORCE with baseline"][:, -50:].mean() > v_best - 2.0
