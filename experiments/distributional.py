"""Distributional recipes: ``C51_CartPole``, ``IQN_CartPole`` and ``Rainbow_CartPole``
(``--set env=Acrobot-v1`` runs them on Acrobot-v1, or any classic-control task with discrete
actions).

They share the DQN recipes' machinery and semantics (``experiments/dqn.py``): rl-baselines3-zoo's
CartPole settings of DQN and QR-DQN (50k-step schedules counted in environment steps, a random
warm-up of ``learning_starts`` actions, epsilon decaying linearly over
``exploration_fraction`` of the run, ``gradient_steps`` gradient steps every ``train_freq``
steps, the target network hard-synced every ``target_update_interval`` environment steps, Adam,
ReLU MLPs of 256-256), rl-baselines3-zoo's model selection (every 10% of the run 5 greedy
episodes; the run ends with the best evaluated policy) and one seed for every generator. The
budget is 80k environment steps (the issue's anchor: Tianshou's CI reaches 195 on CartPole
within it).

Each builds its agent with the library's one-liner (``rk.C51.agent``, ``rk.IQN.agent``,
``rk.Rainbow.agent``: ``rlkit/learners/value_based/distributional_agents.py``) from the
recipe's parameters.

What each adds:

* ``C51_CartPole``: 51 atoms (Dopamine's and CleanRL's count) on CleanRL's CartPole support
  ``[-100, 100]`` (returns of CartPole and Acrobot with ``gamma = 0.99`` lie within it).
* ``IQN_CartPole``: ``N = N' = 64`` sampled fractions, ``K = 32`` fixed acting fractions,
  64 cosines, ``kappa = 1`` (Dopamine's); MLP 128-128 then the embedding's product and the
  output layer (the loss evaluates the network at 64 fractions per sample, so it is kept
  narrower than C51's to cost about as much).
* ``Rainbow_CartPole``: C51's support, double Q-learning, a dueling head with noisy streams
  (factorised, ``sigma0 = 0.5``), 3-step returns, prioritized replay (``alpha = 0.5``,
  ``beta`` 0.4 -> 1 over the run's gradient steps, as Rainbow's paper and Dopamine). The noisy
  layers explore: epsilon is 0 after the random warm-up (Dopamine sets it to 0 with noisy
  networks); ``--set exploration_final_eps=...`` and ``exploration_initial_eps`` bring
  epsilon-greedy back on top.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar

import rlkit as rk
from rlkit.core import checks

from .dqn import (
    CARTPOLE,
    DQNParams,
    RecipeSeeds,
    agent_hyperparameters,
    best_policy_evaluation,
    gym_env,
)

__all__ = ["DistributionalParams", "C51_CARTPOLE", "IQN_CARTPOLE", "RAINBOW_CARTPOLE"]


@dataclass(frozen=True)
class DistributionalParams(DQNParams):
    """The DQN recipes' hyperparameters (:class:`experiments.dqn.DQNParams`) and those of the
    distribution: C51's and Rainbow's support (``n_atoms``, ``v_min``, ``v_max``), IQN's
    fractions (``n_tau``, ``n_tau_target``, ``n_acting``, ``n_cos``, ``kappa``), Rainbow's noise
    (``sigma0``) and prioritized replay (``alpha``, ``beta``), and the task (``env``).

    Example:
        >>> C51_CARTPOLE.n_atoms, RAINBOW_CARTPOLE.n_step, RAINBOW_CARTPOLE.exploration_final_eps
        (51, 3, 0.0)
    """

    env: str = "CartPole-v1"
    n_atoms: int = 51
    v_min: float = -100.0
    v_max: float = 100.0
    n_tau: int = 64
    n_tau_target: int = 64
    n_acting: int = 32
    n_cos: int = 64
    kappa: float = 1.0
    sigma0: float = 0.5
    alpha: float = 0.5
    beta: float = 0.4

    run_fields: ClassVar[tuple[str, ...]] = ("total_steps", "n_envs", "device", "env")

    def check(self, owner: str) -> None:
        """:meth:`DQNParams.check`, and the distribution's values."""
        super().check(owner)
        from rlkit.approximators.distributional import check_support

        check_support(owner, self.n_atoms, self.v_min, self.v_max)
        for name in ("n_tau", "n_tau_target", "n_acting", "n_cos"):
            checks.positive_int(owner, name, getattr(self, name))
        checks.finite_float(owner, "kappa", self.kappa, low=0.0, low_open=True)
        checks.finite_float(owner, "sigma0", self.sigma0, low=0.0)
        checks.finite_float(owner, "alpha", self.alpha, low=0.0)
        checks.unit_interval(owner, "beta", self.beta)
        checks.instance_of(owner, "env", self.env, str, "a gymnasium environment id")


_ZOO = {f.name: getattr(CARTPOLE, f.name) for f in fields(DQNParams)}
C51_CARTPOLE = DistributionalParams(**{**_ZOO, "total_steps": 80_000})
IQN_CARTPOLE = DistributionalParams(**{**_ZOO, "total_steps": 80_000, "hidden": (128, 128)})
RAINBOW_CARTPOLE = DistributionalParams(
    **{
        **_ZOO,
        "total_steps": 80_000,
        "n_step": 3,
        "exploration_initial_eps": 0.0,
        "exploration_final_eps": 0.0,
    }
)


def _one_line(algorithm: str, seed: int, p: DistributionalParams, **extra: object) -> rk.Experiment:
    """``rk.<algorithm>.agent(env, seed=seed, **p's DQN parameters, **extra)`` trained on
    ``p.env`` (seeded from the seed's first child), as the DQN recipes."""
    s = RecipeSeeds.of(seed)
    env = gym_env(p.env, s.env, p.n_envs)
    hyperparameters = {k: v for k, v in agent_hyperparameters(p).items() if k != "compile"}
    agent = getattr(rk, algorithm).agent(env, seed=seed, **hyperparameters, **extra)
    return rk.Experiment(
        policy=agent,
        env=env,
        stop_condition=rk.StopAfterNSteps(p.total_steps),
        hook=rk.TotalRewardPerEpisode() + best_policy_evaluation(p.env, p, s.evaluation),
        threads=1,
    )


@rk.experiment
def C51_CartPole(seed: int = 0, p: DistributionalParams = C51_CARTPOLE) -> rk.Experiment:
    """C51 (51 atoms on [-100, 100]) on CartPole-v1, DQN's zoo settings, 80k steps."""
    return _one_line("C51", seed, p, n_atoms=p.n_atoms, v_min=p.v_min, v_max=p.v_max)


@rk.experiment
def IQN_CartPole(seed: int = 0, p: DistributionalParams = IQN_CARTPOLE) -> rk.Experiment:
    """IQN (N = N' = 64, K = 32) on CartPole-v1, DQN's zoo settings, MLP 128-128, 80k steps."""
    return _one_line(
        "IQN", seed, p, n_tau=p.n_tau, n_tau_target=p.n_tau_target, n_acting=p.n_acting,
        n_cos=p.n_cos, kappa=p.kappa,
    )  # fmt: skip


@rk.experiment
def Rainbow_CartPole(seed: int = 0, p: DistributionalParams = RAINBOW_CARTPOLE) -> rk.Experiment:
    """Rainbow (C51, double, dueling, noisy, 3-step, prioritized) on CartPole-v1, 80k steps."""
    return _one_line(
        "Rainbow", seed, p, n_atoms=p.n_atoms, v_min=p.v_min, v_max=p.v_max, sigma0=p.sigma0,
        alpha=p.alpha, beta=p.beta, beta_end=1.0,
    )  # fmt: skip
