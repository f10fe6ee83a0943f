# %% [markdown]
# # 5. TD control: SARSA, Q-learning, Expected SARSA, double Q-learning (Sutton & Barto, 6.4-6.7)
#
# TD control learns action values `Q(s, a)` and acts epsilon-greedily on them. The methods
# differ only in the *target* of the update of `Q(S_t, A_t)`:
#
# | method | target |
# |---|---|
# | SARSA (on-policy) | `R + gamma Q(S', A')`, with `A'` the action actually taken next |
# | Q-learning (off-policy) | `R + gamma max_a Q(S', a)` |
# | Expected SARSA | `R + gamma sum_a pi(a, S') Q(S', a)` |
# | double Q-learning | `R + gamma Q2(S', argmax_a Q1(S', a))`, roles of Q1/Q2 swapped at random |
#
# In rlkit they are one learner, `rk.TDLearner(q, method=...)`, with
# `method="sarsa" | "qlearning" | "expected_sarsa" | "double_qlearning"`; the agent around it
# is always the same. We reproduce the windy gridworld (Example 6.5), the cliff walk
# (Example 6.6) and the maximization bias example (Example 6.7, Figure 6.5).
#
# `RLKIT_NOTEBOOK_SCALE=full` (the default) averages over many runs (a few minutes), `ci` over
# a few (seconds).

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
        fig.savefig(os.path.join(os.environ["RLKIT_FIGURE_DIR"], f"05_td_control-{n}.png"))


N_WINDY_RUNS = {"full": 100, "ci": 20}[SCALE]  # the book shows one run
N_CLIFF_RUNS = {"full": 100, "ci": 20}[SCALE]
N_BIAS_RUNS = {"full": 10_000, "ci": 300}[SCALE]  # the book: 10,000


def td_agent(env, method, explorer_seed, alpha, epsilon=0.1, gamma=1.0, **learner_options):
    """An epsilon-greedy agent learning a table of action values with a TD method."""
    q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=alpha)
    learner = rk.TDLearner(q, method=method, gamma=gamma, **learner_options)
    explorer = rk.EpsilonGreedyExplorer(epsilon, seed=explorer_seed)
    return rk.Agent(rk.QBasedPolicy(learner, explorer), rk.VectorSARTTrajectory())


# %% [markdown]
# ## Example 6.5: the windy gridworld
#
# A 7x10 grid; an upward wind in the middle columns pushes the agent up by 1 or 2 cells. Every
# step costs -1 until the goal. SARSA with epsilon = 0.1 and alpha = 0.5; the figure plots how
# many episodes were completed after each time step: the slope grows as the agent learns.
#
# The book adds that after 8000 steps the greedy policy of its run was optimal (15 steps). In
# our runs, and in an independent plain-numpy implementation, that holds in only some of them:
# with alpha = 0.5 the estimates of rarely visited cells stay rough, and a greedy policy can
# circle between two cells. So we check the episode counts and the shortest episodes instead.

# %%
windy = []  # per run: the length of every completed episode in 8000 steps
for run in range(N_WINDY_RUNS):
    env = rk.GymEnv("rlkit/WindyGridWorld-v0", seed=run)
    agent = td_agent(env, "sarsa", explorer_seed=10_000 + run, alpha=0.5)
    hook = rk.run(agent, env, rk.StopAfterNSteps(8000), rk.StepsPerEpisode())
    windy.append(hook.steps)

fig, ax = plt.subplots(figsize=(6, 4))
for steps in windy[:5]:
    ax.plot(np.cumsum(steps), np.arange(1, len(steps) + 1), linewidth=0.8)
ax.set_xlabel("Time steps")
ax.set_ylabel("Episodes")
ax.set_title("Example 6.5: SARSA on the windy gridworld (5 runs)")
save(fig, 1)

# %% [markdown]
# ## Example 6.6: walking along a cliff
#
# gymnasium's `CliffWalking-v1`: stepping into the cliff costs -100 and sends the agent back to
# the start, every other step -1. With epsilon = 0.1 exploration, Q-learning learns the
# optimal path right along the edge (13 steps) but falls off now and then while exploring;
# SARSA takes its own exploration into account and learns a safer path, so its *online*
# return (the return of the episodes it plays while learning) is better. Expected SARSA
# removes the randomness of the next action from the target and does better still at
# alpha = 0.5 (Figure 6.3).

# %%
METHODS = ("sarsa", "qlearning", "expected_sarsa")
online = {method: [] for method in METHODS}  # per run: the return of each of 500 episodes
greedy = {method: [] for method in METHODS}  # per run: the return of the greedy policy
for method in METHODS:
    for run in range(N_CLIFF_RUNS):
        env = rk.GymEnv("CliffWalking-v1", seed=run)
        agent = td_agent(env, method, explorer_seed=10_000 + run, alpha=0.5)
        hook = rk.run(agent, env, rk.StopAfterNEpisodes(500), rk.TotalRewardPerEpisode())
        online[method].append(hook.rewards)
        # the greedy policy, played once on a separate env (cut off after 100 steps)
        result = rk.evaluate(agent, rk.GymEnv("CliffWalking-v1", max_episode_steps=100), 1, seed=0)
        greedy[method].append(result.mean)
online = {method: np.array(rewards) for method, rewards in online.items()}

fig, ax = plt.subplots(figsize=(7, 4.5))
for method, rewards in online.items():
    smooth = np.convolve(rewards.mean(axis=0), np.ones(10) / 10, mode="valid")  # 10 episodes
    ax.plot(np.arange(10, 501), smooth, label=method)
ax.set_ylim(-100, 0)
ax.set_xlabel("Episodes")
ax.set_ylabel(f"Sum of rewards during episode\n(average of {N_CLIFF_RUNS} runs)")
ax.legend()
ax.set_title("Example 6.6: the cliff walk, epsilon = 0.1, alpha = 0.5")
save(fig, 2)
# The greedy policy's return per run: -13 is the optimal path along the cliff, -15, -17, ...
# longer, safer paths away from the edge; -100 means the greedy policy did not reach the goal
# and was cut off after 100 steps (it walks into a wall or around in a loop where the
# estimates are rough).
for method, returns in greedy.items():
    cut_off = sum(r == -100 for r in returns)
    print(f"{method}: greedy returns {sorted(set(returns))}; cut off after 100 steps in "
          f"{cut_off} of {len(returns)} runs")

# %% [markdown]
# ## Example 6.7 and Figure 6.5: maximization bias
#
# From state A, "right" ends the episode with reward 0; "left" leads to B, from which each of
# 10 actions ends the episode with a reward drawn from N(-0.1, 1). Going left is worse on
# average, yet Q-learning's max over the noisy estimates in B makes it look better at first.
# Double Q-learning keeps two independent estimates, one to choose the best action in B and
# the other to evaluate it, which removes the bias. In A only two of the 10 actions are legal:
# the environment's legal-action mask (`env.legal_action_mask`) tells the explorer and the
# learner so.
#
# A hook records whether each action taken in A was "left" (action 0).


# %%
class LeftFromA(rk.AbstractHook):
    def __init__(self):
        self.left = []

    def pre_act(self, policy, env, action):
        if env.state == 0:  # A
            self.left.append(action == 0)


left = {}
for method in ("qlearning", "double_qlearning"):
    left[method] = np.zeros((N_BIAS_RUNS, 300))
    for run in range(N_BIAS_RUNS):
        env = rk.GymEnv("rlkit/MaximizationBias-v0", seed=run)
        options = {"seed": 20_000 + run} if method == "double_qlearning" else {}
        agent = td_agent(env, method, explorer_seed=10_000 + run, alpha=0.1, **options)
        left[method][run] = rk.run(agent, env, rk.StopAfterNEpisodes(300), LeftFromA()).left

fig, ax = plt.subplots(figsize=(6, 4))
for method, actions in left.items():
    ax.plot(np.arange(1, 301), 100 * actions.mean(axis=0), label=method)
ax.axhline(5, color="k", linestyle="--", linewidth=0.8, label="optimal (epsilon / 2)")
ax.set_xlabel("Episodes")
ax.set_ylabel("% left actions from A")
ax.legend()
ax.set_title(f"Figure 6.5 ({N_BIAS_RUNS} runs)")
save(fig, 3)


# %% [markdown]
# ## Checks against the book
#
# Comparisons use the paired difference of per-run averages (all methods see the same seeds)
# and require it to exceed three standard errors.


# %%
def check_better(name, better, worse, what="better by"):
    """Assert that ``better`` exceeds ``worse`` (paired) by more than three standard errors."""
    diff = np.asarray(better) - np.asarray(worse)
    mean, tol = diff.mean(), 3 * diff.std() / np.sqrt(len(diff))
    print(f"{name}: {what} {mean:.3f} (3 standard errors: {tol:.3f})")
    assert mean > tol, f"{name}: the difference {mean:.3f} is not above {tol:.3f}"


# Example 6.5: about 170 episodes in 8000 steps in the book's run; runs differ, so the book's
# run must lie within two standard deviations of ours. The shortest episodes are the optimal
# 15 steps (never fewer).
episodes = np.array([len(steps) for steps in windy])
print(f"windy: {episodes.mean():.1f} +/- {episodes.std():.1f} episodes in 8000 steps")
assert abs(episodes.mean() - 170) < 2 * episodes.std()
shortest = np.array([min(steps) for steps in windy])
assert shortest.min() == 15 and np.median(shortest) == 15

# Example 6.6: late in learning, SARSA's online return beats Q-learning's (book: about -25
# against -50), and Expected SARSA's beats SARSA's (Figure 6.3, alpha = 0.5) ...
late = {method: rewards[:, -100:].mean(axis=1) for method, rewards in online.items()}
print({method: round(float(values.mean()), 1) for method, values in late.items()})
check_better("SARSA vs Q-learning: online return", late["sarsa"], late["qlearning"])
check_better("Expected SARSA vs SARSA: online return", late["expected_sarsa"], late["sarsa"])
assert abs(late["sarsa"].mean() - (-25)) < 5 and abs(late["qlearning"].mean() - (-50)) < 10
# ... while Q-learning's greedy policy is the optimal path along the cliff (13 steps) in every
# run, and SARSA's greedy policy never is: it keeps away from the edge.
assert set(greedy["qlearning"]) == {-13.0}
assert -13.0 not in greedy["sarsa"]

# Figure 6.5: early on, Q-learning goes left far more often than double Q-learning; Q-learning's
# curve peaks well above 50%. After 300 episodes double Q-learning is near the optimal 5%.
early = {method: actions[:, :50].mean(axis=1) for method, actions in left.items()}
check_better(
    "Q-learning vs double Q, episodes 1-50",
    early["qlearning"],
    early["double_qlearning"],
    what="fraction of left actions from A higher by",
)
assert left["qlearning"].mean(axis=0).max() > 0.5
late_left = {method: actions[:, -100:].mean(axis=1) for method, actions in left.items()}
print(f"last 100 episodes: {100 * late_left['double_qlearning'].mean():.1f}% left (double Q)")
assert late_left["double_qlearning"].mean() < 0.1
check_better(
    "Q-learning vs double Q, last 100 episodes",
    late_left["qlearning"],
    late_left["double_qlearning"],
    what="fraction of left actions from A higher by",
)
