# %% [markdown]
# # 13. Deep learners from pure functions
#
# Notebook 12 ran REINFORCE with a linear softmax policy and a learner object. rlkit's deep
# learners (VPG, A2C, PPO, TRPO, ES, SAC, ...) are written another way: an algorithm is a handful
# of **pure functions**, and `rk.build_policy` compiles them into a policy class whose stage
# methods call them in one fixed order (RLlib's policy builder, without its mixins):
#
# * `model_fn(state_space, action_space, dist_class, config, seed)`: the network;
# * `postprocess_fn(policy, batch) -> batch`: adds what the loss needs (here: the returns);
# * `loss_fn(policy, model, dist_class, batch) -> scalar tensor`;
# * an `optimizer` (an `rk.optimizers` module) and `defaults` (the hyperparameters).
#
# When the rollout of `n_steps` transitions is full: `postprocess_fn`, then an optimizer step on
# `loss_fn`, then `rk.statistics(policy)` reports what happened. This notebook
#
# 1. writes REINFORCE in about ten lines and trains it on CartPole,
# 2. changes it with `with_updates` (a learned baseline: REINFORCE with baseline), and
# 3. trains the same loss with three optimizers (Adam, the natural gradient and an evolution
#    strategy), changing nothing but the optimizer spec.
#
# `RLKIT_NOTEBOOK_SCALE=full` (the default) runs 5 seeds of 50 000 steps each (about six
# minutes); `ci` one seed of 15 000 steps.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import torch

import rlkit as rk

torch.set_num_threads(1)
SCALE = os.environ.get("RLKIT_NOTEBOOK_SCALE", "full")
assert SCALE in ("full", "ci"), f"RLKIT_NOTEBOOK_SCALE must be 'full' or 'ci', got {SCALE!r}"


def save(fig, n):
    """Save figure n of this notebook to $RLKIT_FIGURE_DIR when it is set (the tests set it)."""
    if os.environ.get("RLKIT_FIGURE_DIR"):
        fig.savefig(os.path.join(os.environ["RLKIT_FIGURE_DIR"], f"13_deep_learners-{n}.png"))


def legend_outside(fig, ax):
    """Put the legend to the right of the plot, where it cannot cover a curve (and check it)."""
    legend = ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    fig.tight_layout()
    fig.canvas.draw()
    assert not legend.get_window_extent().overlaps(ax.get_window_extent()), "legend on the plot"


if SCALE == "full":
    SEEDS, N_STEPS = range(5), 50_000
else:
    SEEDS, N_STEPS = range(1), 15_000

# %% [markdown]
# ## 1. REINFORCE in ten lines
#
# REINFORCE (Sutton & Barto section 13.3) pushes up the log-probability of each action in
# proportion to the return that followed it: the loss is `-mean(G_t ln pi(A_t | S_t))`. Two
# functions say it all. `discounted_returns` walks the rollout backwards (`G = r + gamma G`,
# restarting at the end of each episode); `reinforce_loss` builds the action distribution from
# the network's outputs and returns the loss. The returns are standardised over the batch, a
# common variance reduction that leaves the direction of the expected update unchanged up to a
# baseline and a scale. (An episode cut by the end of a rollout counts only the rewards inside
# the rollout; with rollouts of 500 steps on CartPole this bias is small.)
#
# The network is VPG's (`rk.VPG.model_fn`: separate policy and value MLPs; REINFORCE uses only
# the policy). *When and how* the functions run is the builder's: when the rollout is full, the
# batch goes through `postprocess_fn`, and the optimizer gets the loss as a closure it may
# evaluate as often as it needs; section 3 uses that.

# %%
def discounted_returns(policy, batch):
    rewards, done = batch["reward"], batch["terminated"] | batch["truncated"]
    returns, g = np.zeros(rewards.shape), 0.0
    for t in reversed(range(len(rewards))):
        g = rewards[t] + policy.hp("gamma") * g * (1 - done[t])
        returns[t] = g
    return {**batch, "returns": returns}


def reinforce_loss(policy, model, dist_class, batch):
    dist = dist_class.from_inputs(model(batch["state"]), policy.action_space)
    returns = batch["returns"]
    weights = (returns - returns.mean()) / (returns.std() + 1e-8)
    return -(dist.log_prob(batch["action"]) * weights).mean()


Reinforce = rk.build_policy(
    "Reinforce",
    loss_fn=reinforce_loss,
    postprocess_fn=discounted_returns,
    model_fn=rk.VPG.model_fn,
    optimizer=rk.optimizers.make({"type": "adam", "lr": 1e-2}),
    defaults={"gamma": 0.99, "n_steps": 500, "hidden": (32,), "activation": "tanh",
              "log_std_init": 0.0},
)

# %% [markdown]
# `rk.explain` prints what a run will do at each stage: at PostAct, the learning step with the
# functions it calls, each named by its module, so a student's function and a library's are
# told apart at a glance.

# %%
env = rk.GymEnv("CartPole-v1", seed=0)
rk.explain(Reinforce.agent(env, seed=0), env)

# %% [markdown]
# `train` runs one policy class for `N_STEPS` steps per seed with `rk.run` and returns each
# seed's episode returns. A random policy keeps CartPole's pole up for about 22 steps.


# %%
def train(policy_class, seeds=SEEDS, n_steps=N_STEPS):
    runs = []
    for seed in seeds:
        env = rk.GymEnv("CartPole-v1", seed=seed)
        agent = policy_class.agent(env, seed=seed)
        hook = rk.run(agent, env, rk.StopAfterNSteps(n_steps), rk.TotalRewardPerEpisode())
        runs.append(np.array(hook.rewards))
    return runs


random_returns = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
                        rk.StopAfterNEpisodes(200), rk.TotalRewardPerEpisode()).rewards
print(f"random policy: mean return {np.mean(random_returns):.1f} over 200 episodes")

reinforce_runs = train(Reinforce)


def last(runs, n=20):
    """The mean return of the last n episodes of each run."""
    return np.array([r[-n:].mean() for r in runs])


def first(runs, n=20):
    return np.array([r[:n].mean() for r in runs])


print(f"REINFORCE: first 20 episodes {first(reinforce_runs).mean():.1f}, "
      f"last 20 {last(reinforce_runs).mean():.1f} (per seed {last(reinforce_runs).round(1)})")


def curve(runs, n_steps=N_STEPS, n_points=50):
    """Each run's return against environment steps (episode ends), averaged over runs on a
    common grid of steps."""
    grid = np.linspace(0, n_steps, n_points)
    ys = [np.interp(grid, np.cumsum(r), r) for r in runs]
    return grid, np.mean(ys, axis=0)


fig, ax = plt.subplots(figsize=(9, 4))
ax.plot(*curve(reinforce_runs), label="REINFORCE (Adam)")
ax.axhline(np.mean(random_returns), color="grey", linestyle=":", label="random policy")
ax.set_xlabel("environment steps")
ax.set_ylabel(f"return per episode (mean of {len(SEEDS)} seeds)")
ax.set_title("REINFORCE on CartPole-v1")
legend_outside(fig, ax)
save(fig, 1)

# %% [markdown]
# ## 2. Changing an algorithm with `with_updates`
#
# `Reinforce.with_updates(...)` returns a new class with the named functions or defaults
# replaced and everything else kept. REINFORCE with baseline (section 13.4) subtracts a learned
# state value from the return, `G_t - v(S_t)`, and fits `v` to the returns in the same step:
# one new `loss_fn` (the value head of the network was there all along) and one new
# hyperparameter, `vf_coef`. The postprocessing, the network, the optimizer and the learning
# step are the same objects as before.


# %%
def reinforce_with_baseline_loss(policy, model, dist_class, batch):
    dist = dist_class.from_inputs(model(batch["state"]), policy.action_space)
    values, returns = model.value(batch["state"]), batch["returns"]
    advantages = returns - values.detach()
    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    policy_loss = -(dist.log_prob(batch["action"]) * advantages).mean()
    value_loss = ((values - returns) ** 2).mean()
    return policy_loss + policy.hp("vf_coef") * value_loss


WithBaseline = Reinforce.with_updates(
    name="ReinforceWithBaseline",
    loss_fn=reinforce_with_baseline_loss,
    defaults={"vf_coef": 0.5},
)
print("same postprocess_fn:", WithBaseline.postprocess_fn is Reinforce.postprocess_fn)
print("new loss_fn:", WithBaseline.loss_fn is reinforce_with_baseline_loss)
print("defaults:", dict(WithBaseline.defaults))

baseline_runs = train(WithBaseline)
print(f"REINFORCE with baseline: last 20 episodes {last(baseline_runs).mean():.1f} "
      f"(per seed {last(baseline_runs).round(1)})")

fig, ax = plt.subplots(figsize=(9, 4))
ax.plot(*curve(reinforce_runs), label="REINFORCE")
ax.plot(*curve(baseline_runs), label="REINFORCE with baseline (with_updates)")
ax.axhline(np.mean(random_returns), color="grey", linestyle=":", label="random policy")
ax.set_xlabel("environment steps")
ax.set_ylabel(f"return per episode (mean of {len(SEEDS)} seeds)")
ax.set_title("One new loss_fn")
legend_outside(fig, ax)
save(fig, 2)

# %% [markdown]
# ## 3. One loss, three optimizers
#
# An `rk.optimizers` module receives the loss as a *closure*, so it can evaluate it as often as
# it needs (TensorForce 0.3's design). That makes the optimizer a setting like any other; three
# specs for `rk.optimizers.make`:
#
# * `GradientDescent` with Adam: one gradient step per rollout (what sections 1 and 2 used);
# * `NaturalGradient`: the steepest step whose KL divergence from the rollout's policy is
#   `max_kl`, found by conjugate gradient on Fisher-vector products. VPG's learning step passes
#   it that KL as a second closure. A bare natural-gradient step is sensible here (TRPO wraps it
#   in `OptimizedStep`, a backtracking line search, to guard against steps that make the
#   surrogate worse; on this loss and `max_kl` the bare step works, so we keep it simple);
# * `Evolutionary`: no gradient at all. It evaluates the loss at 16 antithetic pairs of random
#   perturbations of the parameters and moves along the rank-weighted perturbations, a
#   zeroth-order estimate of the same gradient. (The `seed=0` its description shows is the
#   spec's; each policy reseeds its copy from its own seed, so seeds draw different
#   perturbations.)
#
# `rk.explain(optimizer)` prints each module tree. The loop changes **only** the optimizer:
# `Reinforce.with_updates(optimizer=rk.optimizers.make(spec))`.
#
# Why REINFORCE's loss and not `rk.VPG`'s own? VPG's loss also fits its value head (a
# baseline) in the same step. The KL divergence says nothing about parameters the action
# distribution does not depend on, so the natural gradient's step on the value head is set by
# the conjugate-gradient damping alone: tried on CartPole (8 envs, rollouts of 128 steps,
# seed 0), the value loss reached infinity at the 8th update (rlkit stops with an error naming
# the loss); the evolution strategy, perturbing the critic's weights too, did not learn in
# 50 000 steps (a mean return of 22 over the last 20 episodes). A loss for a
# natural-gradient or evolutionary step should be the policy's alone (TRPO trains its critic
# with a second optimizer).

# %%
SPECS = {
    "GradientDescent (Adam)": {"type": "adam", "lr": 1e-2},
    "NaturalGradient": {"type": "natural_gradient", "max_kl": 0.01, "cg_iterations": 10},
    "Evolutionary": {"type": "evolutionary", "learning_rate": 0.02, "num_samples": 16,
                     "noise_std": 0.05},
}
optimizer_runs = {}
for name, spec in SPECS.items():
    optimizer = rk.optimizers.make(spec)
    rk.explain(optimizer)
    optimizer_runs[name] = train(Reinforce.with_updates(optimizer=optimizer))
    print(f"  -> first 20 episodes {first(optimizer_runs[name]).mean():.1f}, "
          f"last 20 {last(optimizer_runs[name]).mean():.1f} "
          f"(per seed {last(optimizer_runs[name]).round(1)})\n")

fig, ax = plt.subplots(figsize=(9, 4))
for name, runs in optimizer_runs.items():
    ax.plot(*curve(runs), label=name)
ax.axhline(np.mean(random_returns), color="grey", linestyle=":", label="random policy")
ax.set_xlabel("environment steps")
ax.set_ylabel(f"return per episode (mean of {len(SEEDS)} seeds)")
ax.set_title("The REINFORCE loss under three optimizers")
legend_outside(fig, ax)
save(fig, 3)

# %% [markdown]
# ## Checks
#
# At the `ci` scale (seed 0, 15 000 steps) and at the full scale:
#
# * the random policy's mean return is about 22;
# * REINFORCE, and REINFORCE with baseline, end far above it: the mean of the last 20 episodes
#   of every seed is above 100;
# * under each of the three optimizers the same loss learns: every seed's last 20 episodes
#   average at least 50 more than its first 20;
# * the Adam run of section 3 is section 1's run again, return for return: one seed gives the
#   same results, and an optimizer made from the same spec is the same optimizer.
#
# At the full scale (5 seeds, 50 000 steps each; about six minutes on one loaded core) the
# last-20-episode means per seed (seeds 0 to 4) were:
#
# | | seed 0 | 1 | 2 | 3 | 4 | mean |
# |---|---|---|---|---|---|---|
# | REINFORCE (Adam) | 406.1 | 479.2 | 195.4 | 138.9 | 500.0 | 343.9 |
# | REINFORCE with baseline (Adam) | 451.9 | 418.4 | 414.1 | 461.8 | 500.0 | 449.2 |
# | REINFORCE, NaturalGradient | 421.7 | 477.6 | 408.4 | 401.7 | 405.0 | 422.9 |
# | REINFORCE, Evolutionary | 122.0 | 219.3 | 231.6 | 307.8 | 247.8 | 225.7 |
#
# The baseline helps (as in notebook 12), the natural gradient's KL-bounded steps are the most
# even across seeds, and the evolution strategy learns too but more slowly: 32 loss
# evaluations per rollout estimate a gradient that backpropagation gives exactly. (A random
# policy: 22.5.)

# %%
assert 15 < np.mean(random_returns) < 30
assert (first(reinforce_runs) < 40).all()
assert (last(reinforce_runs) > 100).all(), last(reinforce_runs)
assert (last(baseline_runs) > 100).all(), last(baseline_runs)
for name, runs in optimizer_runs.items():
    gain = last(runs) - first(runs)
    print(f"{name:24s}: gain per seed {gain.round(1)}")
    assert (gain > 50).all(), (name, gain)
same = optimizer_runs["GradientDescent (Adam)"]
assert all(np.array_equal(a, b) for a, b in zip(same, reinforce_runs, strict=True))
