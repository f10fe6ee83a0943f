# %% [markdown]
# # 11. Eligibility traces (Sutton & Barto, chapter 12, Figures 12.3, 12.6 and 12.8)
#
# The n-step returns of notebook 06 pick one `n`. The *lambda-return* averages all of them,
# weighting the n-step return by `(1 - lambda) lambda^(n-1)`:
#
# `G^lambda_t = (1 - lambda) sum_n lambda^(n-1) G_{t:t+n}`
#
# so `lambda = 0` is one-step TD and `lambda = 1` is Monte Carlo. Three algorithms use it:
#
# * the **offline lambda-return algorithm** (section 12.1) waits for the end of an episode and
#   then moves every visited state toward its lambda-return (Figure 12.3);
# * **TD(lambda)** (section 12.2) does the same work online, one step at a time, with an
#   *eligibility trace* `z`: a decaying memory of the recently visited states
#   (`z = gamma lambda z + x(S_t)`, then `w += alpha delta_t z`) (Figure 12.6);
# * **true online TD(lambda)** (section 12.5) uses the *dutch* trace and a small correction, and
#   is exactly the online lambda-return algorithm (Figure 12.8).
#
# All three are `rk.TDLambdaLearner(v, lambda_=..., ...)`, with `method="lambda_return"`,
# the default, or `true_online=True`. They work on a table (as here) or a linear approximator
# (`rk.LinearVApproximator`). The problem is the 19-state random walk of notebook 06 and the
# measure is the same: the RMS error over the 19 states, averaged over the first 10 episodes,
# as a function of the step size `alpha`, one curve per `lambda`.
#
# `RLKIT_NOTEBOOK_SCALE=full` (the default) runs 8 values of `lambda`, 10 step sizes and 100
# runs of each algorithm (several minutes); `ci` a coarser grid.

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
        fig.savefig(os.path.join(os.environ["RLKIT_FIGURE_DIR"], f"11_eligibility_traces-{n}.png"))


if SCALE == "full":
    LAMBDAS = (0.0, 0.4, 0.8, 0.9, 0.95, 0.975, 0.99, 1.0)
    ALPHAS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0)
    N_RUNS = 100
else:
    LAMBDAS = (0.0, 0.4, 0.8, 0.95)
    ALPHAS = (0.1, 0.2, 0.4, 0.7, 1.0)
    N_RUNS = 8
N_EPISODES = 10

# %% [markdown]
# ## One run
#
# A run learns from 10 episodes of the random policy, starting from zero values; a hook records
# the RMS error after every episode. Run `i` of every setting sees the same walks (its
# environment and its random policy are seeded with `i`), so the settings are compared on the
# same data. `rk.explain` shows where the learner works: TD(lambda) at every PostAct, with its
# trace cleared at PreEpisode.

# %%
env = rk.GymEnv("rlkit/RandomWalk1D-v0", n_states=19, rewards=(-1.0, 1.0))
TRUE_VALUES = env.env.unwrapped.true_values()
STATES = slice(1, 20)


def make_agent(learner):
    return rk.Agent(rk.VBasedPolicy(learner, rk.RandomPolicy(seed=0)), rk.VectorSARTTrajectory())


v = rk.TabularVApproximator(env.state_space, step_size=0.1)
rk.explain(make_agent(rk.TDLambdaLearner(v, lambda_=0.8)), env)


def average_rms(run, alpha, **learner_options):
    """RMS error over the 19 states, averaged over the first N_EPISODES episodes."""
    env = rk.GymEnv("rlkit/RandomWalk1D-v0", seed=run, n_states=19, rewards=(-1.0, 1.0))
    v = rk.TabularVApproximator(env.state_space, step_size=alpha)
    learner = rk.TDLambdaLearner(v, **learner_options)
    policy = rk.VBasedPolicy(learner, rk.RandomPolicy(seed=10_000 + run))
    errors = []

    def record(episode, policy, env):
        with np.errstate(over="ignore", invalid="ignore"):  # large alphas may diverge
            errors.append(np.sqrt(np.mean((v.table[STATES] - TRUE_VALUES[STATES]) ** 2)))

    rk.run(rk.Agent(policy, rk.VectorSARTTrajectory()), env, rk.StopAfterNEpisodes(N_EPISODES),
           rk.DoEveryNEpisodes(record))
    error = np.mean(errors)
    return error if np.isfinite(error) else np.inf


def sweep(**learner_options):
    """Errors of shape (lambda, alpha, run)."""
    return np.array(
        [
            [[average_rms(run, alpha, lambda_=lam, **learner_options) for run in range(N_RUNS)]
             for alpha in ALPHAS]
            for lam in LAMBDAS
        ]
    )


def plot(ax, errors, title):
    for lam, curve in zip(LAMBDAS, errors.mean(axis=2), strict=True):
        ax.plot(ALPHAS, curve, label=f"lambda = {lam}")
    ax.set_ylim(0.2, 0.6)
    ax.set_xlabel("alpha")
    ax.set_title(title)


# %% [markdown]
# ## The three algorithms

# %%
offline = sweep(method="lambda_return")
td_lambda = sweep()
true_online = sweep(true_online=True)

fig, axes = plt.subplots(1, 3, figsize=(16, 5), sharey=True)
plot(axes[0], offline, "Figure 12.3: offline lambda-return")
plot(axes[1], td_lambda, "Figure 12.6: TD(lambda)")
plot(axes[2], true_online, "Figure 12.8: true online TD(lambda)")
axes[0].set_ylabel(f"RMS error over the first {N_EPISODES} episodes\n({N_RUNS} runs)")
axes[2].legend()
save(fig, 1)

# %% [markdown]
# ## Checks against the book
#
# For each `lambda` take its best step size. Figure 12.3: an intermediate `lambda` is best;
# the offline lambda-return algorithm with `lambda = 0.8` (about 0.26 at its best) beats
# `lambda = 0` (one-step TD, about 0.34), paired run by run, by more than three standard
# errors. Figure 12.8: true online TD(lambda) does as well as the offline algorithm at its
# best. Figures 12.6 vs 12.8: with a large `lambda` and a large step size the accumulating
# trace of TD(lambda) is unstable, the true online algorithm much less so.


# %%
def best(errors, lam):
    """Per-run errors of `lam` at its best step size, and that step size."""
    i = LAMBDAS.index(lam)
    j = int(np.argmin(errors[i].mean(axis=1)))
    return errors[i, j], ALPHAS[j]


for name, errors in (("offline", offline), ("TD(lambda)", td_lambda),
                     ("true online", true_online)):
    for lam in LAMBDAS:
        runs, alpha = best(errors, lam)
        print(f"{name:12s} lambda = {lam:5}: best alpha {alpha}, error {runs.mean():.3f}")

lam0, _ = best(offline, 0.0)
lam8, _ = best(offline, 0.8)
diff = lam0 - lam8
tol = 3 * diff.std() / np.sqrt(N_RUNS)
print(f"offline: lambda = 0.8 beats lambda = 0 by {diff.mean():.3f} (3 standard errors {tol:.3f})")
assert diff.mean() > tol
assert 0.22 < lam8.mean() < 0.31, lam8.mean()  # the book: about 0.26
assert 0.30 < lam0.mean() < 0.40, lam0.mean()  # the book: about 0.34

online8, _ = best(true_online, 0.8)
print(f"true online lambda = 0.8: {online8.mean():.3f}, offline {lam8.mean():.3f}")
assert abs(online8.mean() - lam8.mean()) < 0.03

# a large lambda and step size: accumulating traces blow up, true online stays bounded
i, j = LAMBDAS.index(0.95), ALPHAS.index(0.7)
print(f"lambda = 0.95, alpha = 0.7: TD(lambda) {td_lambda[i, j].mean():.3g}, "
      f"true online {true_online[i, j].mean():.3f}")
assert td_lambda[i, j].mean() > 2 * true_online[i, j].mean()
