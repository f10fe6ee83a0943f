# %% [markdown]
# # 3. Monte Carlo methods (Sutton & Barto, chapter 5)
#
# Monte Carlo methods learn values from complete episodes, without a model: the value of a state
# is estimated by averaging the returns that followed visits to it. We reproduce two results on
# the card game blackjack (Example 5.1), using gymnasium's `Blackjack-v1` with `sab=True` (the
# book's rules):
#
# * Figure 5.1: the state values of the policy that sticks on 20 or 21 and hits otherwise,
#   estimated by first-visit Monte Carlo prediction;
# * Figure 5.3: *off-policy* estimation of one state's value from episodes of a random policy,
#   with ordinary and with weighted importance sampling.
#
# A state is `(player sum, dealer's showing card, usable ace)`; action 0 sticks, 1 hits.
# `RLKIT_NOTEBOOK_SCALE=full` (the default) runs the book's numbers of episodes (several
# minutes), `ci` far fewer (seconds).

# %%
import os

import gymnasium as gym
import matplotlib.pyplot as plt
import numpy as np
from gymnasium.envs.toy_text.blackjack import draw_card

import rlkit as rk

SCALE = os.environ.get("RLKIT_NOTEBOOK_SCALE", "full")
assert SCALE in ("full", "ci"), f"RLKIT_NOTEBOOK_SCALE must be 'full' or 'ci', got {SCALE!r}"


def save(fig, n):
    """Save figure n of this notebook to $RLKIT_FIGURE_DIR when it is set (the tests set it)."""
    if os.environ.get("RLKIT_FIGURE_DIR"):
        fig.savefig(os.path.join(os.environ["RLKIT_FIGURE_DIR"], f"03_monte_carlo-{n}.png"))


N_EPISODES = {"full": 500_000, "ci": 50_000}[SCALE]  # Figure 5.1 (the book: 500,000)
N_RUNS = 100  # Figure 5.3 (the book: 100 runs ...)
N_OFF_POLICY = {"full": 10_000, "ci": 100}[SCALE]  # ... of 10,000 episodes each
STICK, HIT = 0, 1

# %% [markdown]
# ## Figure 5.1: Monte Carlo prediction
#
# The policy is a plain function of the state. `rk.VBasedPolicy(learner, mapper)` acts with
# `mapper(env, learner)` and hands everything it sees to the learner. `MonteCarloLearner`
# learns at the end of every episode: it walks the episode backwards, computes the return of
# every step and moves the value of each first visit toward it. `step_size=None` makes the
# table keep sample averages (and visit counts, `v.counts`).


# %%
def stick_on_20(env, learner):
    player_sum, dealer_card, usable_ace = env.state
    return STICK if player_sum >= 20 else HIT


env = rk.GymEnv("Blackjack-v1", sab=True, seed=0)
v = rk.TabularVApproximator(env.state_space, step_size=None)
agent = rk.Agent(rk.VBasedPolicy(rk.MonteCarloLearner(v), stick_on_20), rk.VectorSARTTrajectory())

rk.run(agent, env, rk.StopAfterNEpisodes(10_000))
after_10k = v.table.copy()
rk.run(agent, env, rk.StopAfterNEpisodes(N_EPISODES - 10_000))  # the same agent learns on

# %%
PLAYER, DEALER = np.arange(12, 22), np.arange(1, 11)  # the states the figure shows
fig, axes = plt.subplots(2, 2, figsize=(9, 8), sharex=True, sharey=True)
for col, (table, title) in enumerate([(after_10k, "10,000"), (v.table, f"{N_EPISODES:,}")]):
    for row, ace in enumerate((1, 0)):
        ax = axes[row, col]
        image = ax.imshow(
            table[12:22, 1:11, ace],
            origin="lower",
            extent=(0.5, 10.5, 11.5, 21.5),
            vmin=-1,
            vmax=1,
            cmap="coolwarm",
        )
        ax.set_title(f"after {title} episodes\n{'usable' if ace else 'no usable'} ace")
axes[1, 0].set_xlabel("Dealer showing (1 = ace)")
axes[1, 1].set_xlabel("Dealer showing (1 = ace)")
axes[0, 0].set_ylabel("Player sum")
axes[1, 0].set_ylabel("Player sum")
fig.colorbar(image, ax=axes, shrink=0.6)
fig.suptitle("Figure 5.1: values of the policy that sticks on 20 or 21")
save(fig, 1)

# %% [markdown]
# ## Figure 5.3: off-policy prediction with importance sampling
#
# Now the episodes come from a *behaviour* policy that hits or sticks at random, and we estimate
# the value of one state under the *target* policy above (stick on 20 or 21): the player holds
# an ace and a deuce (sum 13, usable ace) and the dealer shows a deuce. Its true value is
# -0.27726 (the book, from 100 million episodes).
#
# Every episode starts in that state: a small gymnasium wrapper deals those cards at reset.
# The learner reweights each return by the importance-sampling ratio
# `rho = prod pi(a|s) / b(a|s)` of the actions from the visit on: `sampling="ordinary"` averages
# `rho * G`, `sampling="weighted"` takes the `rho`-weighted average of `G`.
# A `DoEveryNEpisodes` hook records the squared error after every episode.


# %%
class DealAceDeuceVsDeuce(gym.Wrapper):
    """Blackjack whose every episode starts with player: ace + 2, dealer showing: 2."""

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed, options=options)
        game = self.unwrapped
        game.player = [1, 2]
        game.dealer = [2, draw_card(game.np_random)]
        return (13, 2, 1), {}


STATE, TRUE_VALUE = (13, 2, 1), -0.27726


def target_prob(state, action):
    return 1.0 if action == (STICK if state[0] >= 20 else HIT) else 0.0


def behaviour_prob(state, action):
    return 0.5


def squared_errors(sampling, run):
    """The squared error of the estimate of STATE after each of N_OFF_POLICY episodes."""
    env = rk.GymEnv(DealAceDeuceVsDeuce(gym.make("Blackjack-v1", sab=True)), seed=run)
    v = rk.TabularVApproximator(env.state_space, step_size=None)
    learner = rk.MonteCarloLearner(
        v, sampling=sampling, target_prob=target_prob, behaviour_prob=behaviour_prob
    )
    behaviour = rk.RandomPolicy(seed=10_000 + run)
    agent = rk.Agent(rk.VBasedPolicy(learner, behaviour), rk.VectorSARTTrajectory())
    errors = []
    record = rk.DoEveryNEpisodes(lambda t, policy, env: errors.append((v(STATE) - TRUE_VALUE) ** 2))
    rk.run(agent, env, rk.StopAfterNEpisodes(N_OFF_POLICY), record)
    return errors


mse = {
    sampling: np.mean([squared_errors(sampling, run) for run in range(N_RUNS)], axis=0)
    for sampling in ("ordinary", "weighted")
}

fig, ax = plt.subplots(figsize=(7, 4))
episodes = np.arange(1, N_OFF_POLICY + 1)
for sampling, curve in mse.items():
    ax.plot(episodes, curve, label=f"{sampling} importance sampling")
ax.set_xscale("log")
ax.set_xlabel("Episodes (log scale)")
ax.set_ylabel(f"Mean square error\n(average over {N_RUNS} runs)")
ax.set_ylim(0, 5)
ax.legend()
ax.set_title("Figure 5.3")
save(fig, 2)

# %% [markdown]
# ## Checks against the book
#
# Figure 5.1 is a surface plot without printed numbers; we compare a few of its points with the
# exact values of the policy (computed for an infinite deck, which is what gymnasium deals from;
# the surfaces after 500,000 episodes are indistinguishable from them). Returns lie in [-1, 1],
# so an average of `n` of them has a standard error of at most `1 / sqrt(n)`: each estimate
# must be within 3 such errors (`v.counts` holds `n`).

# %%
EXACT = {  # (player sum, dealer showing, usable ace): value
    (20, 10, 0): 0.4350,
    (20, 5, 0): 0.6704,
    (18, 7, 0): -0.6936,
    (13, 2, 0): -0.5774,
    (20, 10, 1): 0.4350,
}
for state, exact in EXACT.items():
    n = v.counts[state]
    print(f"V{state} = {v(state):+.3f} from {n} visits, exact {exact:+.3f}")
    assert abs(v(state) - exact) < 3 / np.sqrt(n), state

# The shape of Figure 5.1: sticking on 20 or 21 pays, states below 20 (where the policy hits)
# have negative values.
without_ace = v.table[12:22, 1:11, 0]
assert (without_ace[-2:] > 0).all() and (without_ace[:-2] < 0).all()

# Figure 5.3: weighted importance sampling has a much lower error early on ...
first_10, first_100 = (
    {sampling: round(float(curve[:n].mean()), 3) for sampling, curve in mse.items()}
    for n in (10, 100)
)
print(f"mean square error over the first 10 episodes: {first_10}")
print(f"mean square error over the first 100 episodes: {first_100}")
assert first_10["weighted"] < 0.5 * first_10["ordinary"]
assert first_100["weighted"] < first_100["ordinary"]
# ... and both estimates converge to the true value: their errors are variances over the number
# of episodes, about 10 / N_OFF_POLICY for both with these policies.
assert mse["weighted"][-1] < 25 / N_OFF_POLICY and mse["ordinary"][-1] < 25 / N_OFF_POLICY
