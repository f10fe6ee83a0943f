# %% [markdown]
# # 10. Function approximation (Sutton & Barto, Figures 9.1, 9.2, 10.1 and 10.2)
#
# A table has one value per state. With many states (or continuous ones) we learn a
# *parameterised* value function instead; the simplest is linear, `v(s) = w . x(s)`, over a
# feature vector `x(s)`. The learners stay the same: the tabular update
# `V(S) += alpha (target - V(S))` becomes the *semi-gradient* update
# `w += alpha (target - v(S)) x(S)`. In rlkit a `rk.LinearVApproximator(features, n_features)`
# or `rk.LinearQApproximator(features, n_features, n_actions)` plugs into `rk.TDLearner` where a
# table did: `method="td0"` with a large `n` is gradient Monte Carlo, with `n=1` semi-gradient
# TD(0), `method="sarsa"` semi-gradient SARSA.
#
# Two kinds of features:
#
# * **state aggregation** (`rk.StateAggregation`): groups of neighbouring states share one
#   value (a one-hot vector of the group);
# * **tile coding** (`rk.TileCoder`, Sutton's `tiles3`): several offset grids ("tilings") over
#   a continuous space; a point activates one tile per tiling, and nearby points share tiles.
#
# `RLKIT_NOTEBOOK_SCALE=full` (the default) runs the book's Figure 9.1 and 9.2 experiments (tens
# of minutes) and 10 Mountain Car runs (the book averages 100); `ci` much smaller ones.

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
        name = f"10_function_approximation-{n}.png"
        fig.savefig(os.path.join(os.environ["RLKIT_FIGURE_DIR"], name))


if SCALE == "full":
    MC_EPISODES, MC_ALPHA = 100_000, 2e-5
    NS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
    ALPHAS = np.round(np.linspace(0.0, 1.0, 11)[1:], 2)
    N_RUNS = 100
    CAR_ALPHAS, CAR_RUNS, CAR_EPISODES = (0.1, 0.2, 0.5), 10, 500
else:
    MC_EPISODES, MC_ALPHA = 1000, 2e-3
    NS = (1, 4, 16, 512)
    ALPHAS = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0)
    N_RUNS = 5
    CAR_ALPHAS, CAR_RUNS, CAR_EPISODES = (0.1, 0.5), 2, 20

# %% [markdown]
# ## The 1000-state random walk (Example 9.1)
#
# States 1..1000, every episode starts at 500; each step jumps uniformly to one of the 100
# states on the left or the 100 on the right (the random policy picks the side, the environment
# the distance). Jumping past an end gives -1 (left) or +1 (right) and ends the episode.

# %%
env = rk.GymEnv("rlkit/RandomWalk1000-v0")
TRUE_VALUES = env.env.unwrapped.true_values()[1:-1]  # states 1..1000

# %% [markdown]
# ## Figure 9.1: gradient Monte Carlo with state aggregation
#
# Ten groups of 100 states; `TDLearner(method="td0", n=...)` with `n` longer than any episode
# is gradient Monte Carlo (it updates every state of an episode toward the return when the
# episode ends). A hook counts the visits to each state: the on-policy distribution `mu`.

# %%
agg10 = rk.StateAggregation(1000, 10, first=1)
v = rk.LinearVApproximator(agg10, agg10.n_features, step_size=MC_ALPHA)
visits = np.zeros(1002)


def count(step, policy, env):
    visits[env.state] += 1


agent = rk.Agent(
    rk.VBasedPolicy(rk.TDLearner(v, method="td0", n=1_000_000), rk.RandomPolicy(seed=1)),
    rk.VectorSARTTrajectory(),
)
rk.run(agent, rk.GymEnv("rlkit/RandomWalk1000-v0", seed=0), rk.StopAfterNEpisodes(MC_EPISODES),
       rk.DoEveryNSteps(count))
estimate = np.array([v(s) for s in range(1, 1001)])
mu = visits[1:-1] / visits[1:-1].sum()

fig, ax = plt.subplots(figsize=(8, 5))
ax.plot(range(1, 1001), TRUE_VALUES, label="true value")
ax.plot(range(1, 1001), estimate, label="approximate MC value")
ax.set_xlabel("State")
ax.set_ylabel("Value scale")
ax2 = ax.twinx()
ax2.plot(range(1, 1001), mu, color="grey", alpha=0.5, label="state distribution mu")
ax2.set_ylabel("Distribution scale")
ax.legend(loc="upper left")
ax.set_title(f"Figure 9.1: gradient MC, state aggregation ({MC_EPISODES} episodes)")
save(fig, 1)

# %% [markdown]
# ## Figure 9.2 (right): n-step semi-gradient TD
#
# Twenty groups of 50 states; the RMS error over the 1000 states averaged over the first 10
# episodes, for several `n` and step sizes, as Figure 7.2 did with a table. Run `i` of every
# setting sees the same walks.

# %%
agg20 = rk.StateAggregation(1000, 20, first=1)


def average_rms(n, alpha, run):
    env = rk.GymEnv("rlkit/RandomWalk1000-v0", seed=run)
    v = rk.LinearVApproximator(agg20, agg20.n_features, step_size=alpha)
    policy = rk.VBasedPolicy(rk.TDLearner(v, method="td0", n=n), rk.RandomPolicy(seed=10_000 + run))
    errors = []

    def record(episode, policy, env):
        errors.append(np.sqrt(np.mean((np.repeat(v.weights, 50) - TRUE_VALUES) ** 2)))

    rk.run(rk.Agent(policy, rk.VectorSARTTrajectory()), env, rk.StopAfterNEpisodes(10),
           rk.DoEveryNEpisodes(record))
    return np.mean(errors)


errors = np.array(
    [[[average_rms(n, alpha, run) for run in range(N_RUNS)] for alpha in ALPHAS] for n in NS]
)
fig, ax = plt.subplots(figsize=(7, 5))
for n, curve in zip(NS, errors.mean(axis=2), strict=True):
    ax.plot(ALPHAS, curve, label=f"n = {n}")
ax.set_ylim(0.25, 0.55)
ax.set_xlabel("alpha")
ax.set_ylabel(f"Average RMS error over 1000 states\nand the first 10 episodes ({N_RUNS} runs)")
ax.legend()
ax.set_title("Figure 9.2: n-step semi-gradient TD, state aggregation")
save(fig, 2)

# %% [markdown]
# ## Figures 10.1 and 10.2: Mountain Car with tile-coded semi-gradient SARSA
#
# gymnasium's `MountainCar-v0` (without its 200-step limit: the book's episodes can be much
# longer): position in [-1.2, 0.5], velocity in [-0.07, 0.07], three actions, reward -1 per
# step. The features are 8 tilings of 8 x 8 tiles over position and velocity, with the action
# as an extra integer coordinate, hashed into 4096 entries (`rk.TileCoder(4096, 8, scale)`);
# the action values start at 0, optimistic, so even the greedy policy (`epsilon = 0`) explores.
# Step sizes are given per tiling, `alpha / 8`, as in the book.


# %%
def mountain_car(alpha, run):
    env = rk.GymEnv("MountainCar-v0", seed=run, max_episode_steps=100_000)
    coder = rk.TileCoder(4096, 8, scale=(8 / 1.7, 8 / 0.14))
    q = rk.LinearQApproximator(lambda s, a: coder(s, (a,)), coder.n_features, 3,
                               step_size=alpha / 8)
    explorer = rk.EpsilonGreedyExplorer(0.0, seed=run)  # greedy, random ties
    policy = rk.QBasedPolicy(rk.TDLearner(q, method="sarsa"), explorer)
    hook = rk.run(rk.Agent(policy, rk.VectorSARTTrajectory()), env,
                  rk.StopAfterNEpisodes(CAR_EPISODES), rk.StepsPerEpisode())
    return np.array(hook.steps), q


car = {alpha: [mountain_car(alpha, run) for run in range(CAR_RUNS)] for alpha in CAR_ALPHAS}
car_steps = {alpha: np.array([steps for steps, _ in runs]) for alpha, runs in car.items()}

fig, axes = plt.subplots(1, 2, figsize=(13, 5))
for alpha, steps in car_steps.items():
    axes[0].plot(range(1, CAR_EPISODES + 1), steps.mean(axis=0), label=f"alpha = {alpha}/8")
axes[0].set_yscale("log")
axes[0].set_xlabel("Episode")
axes[0].set_ylabel(f"Steps per episode ({CAR_RUNS} runs)")
axes[0].set_title("Figure 10.2: Mountain Car, semi-gradient SARSA")
axes[0].legend()

q = car[max(CAR_ALPHAS)][0][1]
positions = np.linspace(-1.2, 0.5, 40)
velocities = np.linspace(-0.07, 0.07, 40)
cost_to_go = np.array([[-q.q(np.array([p, v])).max() for p in positions] for v in velocities])
image = axes[1].imshow(cost_to_go, origin="lower", aspect="auto",
                       extent=(-1.2, 0.5, -0.07, 0.07))
fig.colorbar(image, ax=axes[1])
axes[1].set_xlabel("Position")
axes[1].set_ylabel("Velocity")
axes[1].set_title(f"Figure 10.1: cost-to-go -max_a q(s, a) after {CAR_EPISODES} episodes")
save(fig, 3)

# %% [markdown]
# ## Checks against the book
#
# * Figure 9.1: state aggregation learns a staircase: the value of a group is close to the
#   true values of its states (the RMS error over the states is small, about 0.06 for the
#   exact staircase), from about -0.8 at the left end to +0.8 at the right end, and the
#   on-policy distribution peaks in the middle, where episodes start.
# * Figure 9.2: an intermediate `n` (4 to 16) does better at its best step size than
#   one-step TD and than `n = 512` (nearly Monte Carlo), paired, by three standard errors.
# * Figure 10.2: the first episode takes more than a thousand steps, the last ones less than a
#   third of that (a few hundred with alpha = 0.5/8), and the larger step size 0.5/8 learns
#   faster over these episodes than 0.1/8 (average steps per episode).
# * Figure 10.1: the cost-to-go is largest at rest at the bottom of the valley and small near
#   the goal when moving toward it.

# %%
rms = np.sqrt(np.mean((estimate - TRUE_VALUES) ** 2))
print(f"Figure 9.1: RMS error {rms:.3f}; group values {v.weights.round(2).tolist()}")
assert rms < 0.2  # the exact staircase: about 0.06; the rest is the noise of MC returns
assert v.weights[0] < -0.6 and v.weights[-1] > 0.6
assert np.argmax(mu) in range(400, 600) and mu[450:550].mean() > 2 * mu[:50].mean()


def best_runs(n):
    i = NS.index(n)
    return errors[i, int(np.argmin(errors[i].mean(axis=1)))]


for n in NS:
    print(f"n = {n:3d}: best error {best_runs(n).mean():.3f}")
winner = min((n for n in NS if 4 <= n <= 16), key=lambda n: best_runs(n).mean())
for other in (1, 512):
    diff = best_runs(other) - best_runs(winner)
    tol = 3 * diff.std() / np.sqrt(N_RUNS)
    print(f"n = {winner} beats n = {other} by {diff.mean():.3f} (3 standard errors {tol:.3f})")
    assert diff.mean() > tol

for alpha, steps in car_steps.items():
    print(f"alpha = {alpha}/8: first episode {steps[:, 0].mean():.0f} steps, last five "
          f"{steps[:, -5:].mean():.0f}, average {steps.mean():.0f}")
    assert steps[:, 0].mean() > 1000
    assert steps[:, -5:].mean() < steps[:, 0].mean() / 3
assert car_steps[0.5][:, -5:].mean() < 400
assert car_steps[0.5].mean() < car_steps[0.1].mean()

bottom = -q.q(np.array([-0.5, 0.0])).max()
near_goal = -q.q(np.array([0.4, 0.05])).max()
print(f"cost-to-go at rest at the bottom {bottom:.1f}, near the goal {near_goal:.1f}")
assert bottom > near_goal
