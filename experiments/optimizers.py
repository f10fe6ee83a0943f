"""Recipes trained by optimizer modules (:mod:`rlkit.optimizers`): TRPO and evolution strategies.

``TRPO_CartPole`` and ``TRPO_Pendulum`` use rl-baselines3-zoo's tuned TRPO hyperparameters with
Stable-Baselines3 contrib's semantics (:mod:`rlkit.learners.policy_gradient.trpo`): the policy
is trained by ``OptimizedStep(NaturalGradient(...))``, the value function by
``MultiStep(GradientDescent(Adam))``. The zoo collects ``n_steps`` per env from 2 envs; these
recipes collect the same number of transitions per update (``2 * n_steps``) from one env.
Pendulum's zoo settings use gSDE, which rlkit does not have: its Gaussian policy has a
state-independent log standard deviation instead.

``ES_CartPole`` trains a small tanh MLP (one hidden layer of 16) by ``Evolutionary`` alone:
16 antithetic pairs a generation (``noise_std`` 0.1, step 0.05, centred-rank fitness shaping),
each scored by one deterministic episode; one generation per episode of the run, so the run's
episode returns are the current policy's, and the budget is counted in generations.

Every generator (environment, policy sampling, network initialisation, minibatch shuffling) is
derived from the recipe's ``seed`` with ``numpy.random.SeedSequence``. Recipes accept
``total_steps=`` to shorten a run.
"""

from __future__ import annotations

from typing import Any

import rlkit as rk
from rlkit.core.seeding import int_seed, spawn_seeds

__all__ = ["TRPO_CARTPOLE", "TRPO_PENDULUM", "ES_CARTPOLE", "trpo_experiment"]

# rl-baselines3-zoo hyperparams/trpo.yml (n_steps doubled: one env instead of two)
TRPO_CARTPOLE: dict[str, Any] = {
    "total_steps": 100_000,
    "n_steps": 1024,
    "batch_size": 512,
    "cg_damping": 1e-3,
    "gae_lambda": 0.98,
    "gamma": 0.99,
    "lr": 1e-3,
    "n_critic_updates": 20,
}
ES_CARTPOLE: dict[str, Any] = {
    "generations": 30,
    "num_samples": 16,
    "noise_std": 0.1,
    "lr": 0.05,
    "episodes_per_evaluation": 1,
    "hidden": (16,),
}
TRPO_PENDULUM: dict[str, Any] = {
    "total_steps": 100_000,
    "n_steps": 2048,
    "gamma": 0.9,
    "n_critic_updates": 15,
}


def trpo_experiment(
    env_id: str, settings: dict[str, Any], seed: int, total_steps: int | None, description: str
) -> rk.Experiment:
    """A TRPO experiment on ``env_id`` with ``settings`` (``total_steps`` and hyperparameters)."""
    env_seed, policy_seed = spawn_seeds(seed, 2)
    hyperparameters = {k: v for k, v in settings.items() if k != "total_steps"}
    env = rk.GymEnv(env_id, seed=int_seed(env_seed))
    agent = rk.TRPO.agent(env, seed=int_seed(policy_seed), **hyperparameters)
    steps = settings["total_steps"] if total_steps is None else int(total_steps)
    return rk.Experiment(
        policy=agent,
        env=env,
        stop_condition=rk.StopAfterNSteps(steps),
        hook=rk.TotalRewardPerEpisode(),
        description=description,
    )


@rk.experiment
def TRPO_CartPole(seed: int = 0, *, total_steps: int | None = None) -> rk.Experiment:
    """TRPO on CartPole-v1 with rl-baselines3-zoo's hyperparameters (100k steps)."""
    return trpo_experiment("CartPole-v1", TRPO_CARTPOLE, seed, total_steps, _doc(TRPO_CartPole))


@rk.experiment
def TRPO_Pendulum(seed: int = 0, *, total_steps: int | None = None) -> rk.Experiment:
    """TRPO on Pendulum-v1 with rl-baselines3-zoo's hyperparameters (100k steps, no gSDE)."""
    return trpo_experiment("Pendulum-v1", TRPO_PENDULUM, seed, total_steps, _doc(TRPO_Pendulum))


@rk.experiment
def ES_CartPole(seed: int = 0, *, generations: int | None = None) -> rk.Experiment:
    """Evolution strategies on CartPole-v1: the policy trained by Evolutionary alone (30
    generations of 16 antithetic pairs)."""
    env_seed, policy_seed = spawn_seeds(seed, 2)
    settings = {k: v for k, v in ES_CARTPOLE.items() if k != "generations"}
    env = rk.GymEnv("CartPole-v1", seed=int_seed(env_seed))
    agent = rk.ES.agent(env, seed=int_seed(policy_seed), **settings)
    n = ES_CARTPOLE["generations"] if generations is None else int(generations)
    return rk.Experiment(
        policy=agent,
        env=env,
        stop_condition=rk.StopAfterNEpisodes(n),
        hook=rk.TotalRewardPerEpisode(),
        description=_doc(ES_CartPole),
    )


def _doc(fn: Any) -> str:
    return (fn.__doc__ or "").strip().splitlines()[0]
