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
derived from the recipe's ``seed`` with ``numpy.random.SeedSequence``. Each recipe's parameters
are the fields of :class:`TRPOParams` or :class:`ESParams`: every hyperparameter of the
algorithm, with its defaults (``rk.TRPO.defaults``, ``rk.ES.defaults``), under the names the
other recipes use (experiments/params.py): ``rk.make_experiment("TRPO_CartPole", seed,
total_steps=3000, lr=3e-4)``, ``rlkit run ES_CartPole --set generations=10 --set lr=0.02``.
``ES_CartPole`` counts its budget in ``generations`` (one per episode), not ``total_steps``.

``normalize=True`` runs a TRPO recipe in ``rk.VecNormalize`` with the learner's ``gamma``
(rl-baselines3-zoo's ``normalize: True``; over an ``rk.VectorGymEnv`` of ``n_envs`` sub-envs,
one included); default False. ES refuses it: each perturbed policy is scored on a fitness env of
its own, outside the run's env, so statistics kept by ``rk.VecNormalize`` would never see the
episodes that decide the update (docs/how-to/normalization.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import rlkit as rk
from rlkit.core import checks
from rlkit.core.seeding import int_seed, spawn_seeds

from .params import algorithm_fields, check_device, check_hidden, check_schedule, schedule_value

__all__ = [
    "TRPOParams",
    "ESParams",
    "TRPO_CARTPOLE",
    "TRPO_PENDULUM",
    "ES_CARTPOLE",
    "trpo_experiment",
]


@dataclass(frozen=True)
class TRPOParams:
    """TRPO's hyperparameters with Stable-Baselines3 contrib's defaults (``rk.TRPO.defaults``),
    plus the run's ``total_steps``, ``n_envs`` (a ``rk.VectorGymEnv`` when above 1) and
    ``device``. ``lr`` (the value function's Adam) may be ``"lin_<start>"``;
    ``policy_optimizer`` and ``value_optimizer`` are ``rk.optimizers.make`` specs (None: TRPO's
    own).

    Example:
        >>> TRPOParams(total_steps=1000, cg_damping=1e-3).algorithm_config()["n_critic_updates"]
        10
    """

    total_steps: int
    n_envs: int = 1
    device: str = "cpu"
    n_steps: int = 2048
    batch_size: int | None = 128
    lr: float | str = 1e-3
    gamma: float = 0.99
    gae_lambda: float = 0.95
    cg_max_steps: int = 15
    cg_damping: float = 0.1
    line_search_shrinking_factor: float = 0.8
    line_search_max_iter: int = 10
    n_critic_updates: int = 10
    normalize_advantage: bool = True
    target_kl: float = 0.01
    policy_optimizer: dict | None = None
    value_optimizer: dict | None = None
    hidden: tuple[int, ...] = (64, 64)
    activation: str = "tanh"
    log_std_init: float = 0.0
    compile: bool = False  # refused by TRPO (rlkit/learners/compiled.py), listed for uniformity
    #: run in ``rk.VecNormalize`` (gamma the learner's): rl-baselines3-zoo's ``normalize: True``
    normalize: bool = False

    run_fields: ClassVar[tuple[str, ...]] = (
        "total_steps", "n_envs", "device", "compile", "normalize",
    )  # fmt: skip

    def algorithm_config(self, owner: str = "TRPO") -> dict[str, Any]:
        """The hyperparameters as ``rk.TRPO.agent(env, **config)`` takes them."""
        config = algorithm_fields(self)
        config["lr"] = schedule_value(owner, "lr", self.lr, self.total_steps)
        return config

    def check(self, owner: str) -> None:
        """Refuse values no run can use, naming ``owner`` (the recipe) and the parameter."""
        from rlkit.learners.hyperparameters import check_hyperparameters

        for name in ("total_steps", "n_envs", "n_steps", "cg_max_steps", "line_search_max_iter",
                     "n_critic_updates"):
            checks.positive_int(owner, name, getattr(self, name))
        checks.instance_of(owner, "normalize", self.normalize, bool, "True or False")
        if self.batch_size is not None:
            checks.positive_int(owner, "batch_size", self.batch_size)
        checks.finite_float(owner, "cg_damping", self.cg_damping, low=0.0)
        checks.finite_float(
            owner, "line_search_shrinking_factor", self.line_search_shrinking_factor,
            low=0.0, high=1.0, low_open=True,
        )
        check_schedule(owner, "lr", self.lr)
        check_hidden(owner, self.hidden, allow_empty=True)
        check_device(owner, self.device)
        check_hyperparameters(owner, self.algorithm_config(owner))


@dataclass(frozen=True)
class ESParams:
    """Evolution strategies' hyperparameters with ``rk.ES.defaults`` (16 antithetic pairs a
    generation, ``noise_std`` 0.1, step ``lr`` 0.05, one episode per evaluation, a tanh MLP of
    16), plus the run's budget in ``generations`` (one per episode of the run) and ``device``.
    ``fitness_env`` is a gymnasium id (None: the training env's); ``optimizer_spec`` an
    ``rk.optimizers.make`` spec (None: ES's own).

    Example:
        >>> ESParams(generations=0).check("ES_CartPole")
        Traceback (most recent call last):
        ...
        ValueError: ES_CartPole: generations must be a positive integer, got 0
    """

    generations: int = 30
    device: str = "cpu"
    lr: float = 0.05
    num_samples: int = 16
    noise_std: float = 0.1
    episodes_per_evaluation: int = 1
    fitness_env: str | None = None
    optimizer_spec: dict | None = None
    hidden: tuple[int, ...] = (16,)
    activation: str = "tanh"
    log_std_init: float = 0.0
    compile: bool = False  # refused by ES (rlkit/learners/compiled.py), listed for uniformity
    #: refused when True (see the module docstring), listed for uniformity
    normalize: bool = False

    run_fields: ClassVar[tuple[str, ...]] = ("generations", "device", "compile", "normalize")

    def algorithm_config(self) -> dict[str, Any]:
        """The hyperparameters as ``rk.ES.agent(env, **config)`` takes them."""
        return algorithm_fields(self)

    def check(self, owner: str) -> None:
        """Refuse values no run can use, naming ``owner`` (the recipe) and the parameter."""
        from rlkit.learners.hyperparameters import check_hyperparameters

        for name in ("generations", "num_samples", "episodes_per_evaluation"):
            checks.positive_int(owner, name, getattr(self, name))
        checks.instance_of(owner, "normalize", self.normalize, bool, "True or False")
        if self.normalize:
            raise ValueError(
                f"{owner}: normalize=True is not supported by ES: each perturbed policy is "
                f"scored on a fitness env of its own (rlkit/learners/policy_gradient/es.py), "
                f"outside rk.VecNormalize, whose statistics would never see those episodes; "
                f"expected normalize=False"
            )
        checks.finite_float(owner, "noise_std", self.noise_std, low=0.0, low_open=True)
        check_hidden(owner, self.hidden, allow_empty=True)
        check_device(owner, self.device)
        check_hyperparameters(owner, self.algorithm_config())


# rl-baselines3-zoo hyperparams/trpo.yml (n_steps doubled: one env instead of two)
TRPO_CARTPOLE = TRPOParams(
    total_steps=100_000,
    n_steps=1024,
    batch_size=512,
    cg_damping=1e-3,
    gae_lambda=0.98,
    gamma=0.99,
    lr=1e-3,
    n_critic_updates=20,
)
TRPO_PENDULUM = TRPOParams(total_steps=100_000, n_steps=2048, gamma=0.9, n_critic_updates=15)
ES_CARTPOLE = ESParams(
    generations=30,
    num_samples=16,
    noise_std=0.1,
    lr=0.05,
    episodes_per_evaluation=1,
    hidden=(16,),
)


def trpo_experiment(
    env_id: str, p: TRPOParams, seed: int, description: str, owner: str = "trpo_experiment"
) -> rk.Experiment:
    """A TRPO experiment on ``env_id`` with the hyperparameters ``p`` for ``p.total_steps``
    steps."""
    env_seed, policy_seed = spawn_seeds(seed, 2)
    if p.n_envs == 1 and not p.normalize:
        env = rk.GymEnv(env_id, seed=int_seed(env_seed))
    else:
        env = rk.VectorGymEnv(env_id, p.n_envs, seed=int_seed(env_seed))
    if p.normalize:  # the zoo's normalize: True (VecNormalize with the learner's gamma)
        env = rk.VecNormalize(env, gamma=p.gamma)
    agent = rk.TRPO.agent(
        env,
        seed=int_seed(policy_seed),
        device=p.device,
        compile=p.compile,
        **p.algorithm_config(owner),
    )
    return rk.Experiment(
        policy=agent,
        env=env,
        stop_condition=rk.StopAfterNSteps(p.total_steps),
        hook=rk.TotalRewardPerEpisode(),
        description=description,
    )


@rk.experiment
def TRPO_CartPole(seed: int = 0, p: TRPOParams = TRPO_CARTPOLE) -> rk.Experiment:
    """TRPO on CartPole-v1 with rl-baselines3-zoo's hyperparameters (100k steps)."""
    return trpo_experiment("CartPole-v1", p, seed, _doc(TRPO_CartPole), "TRPO_CartPole")


@rk.experiment
def TRPO_Pendulum(seed: int = 0, p: TRPOParams = TRPO_PENDULUM) -> rk.Experiment:
    """TRPO on Pendulum-v1 with rl-baselines3-zoo's hyperparameters (100k steps, no gSDE)."""
    return trpo_experiment("Pendulum-v1", p, seed, _doc(TRPO_Pendulum), "TRPO_Pendulum")


@rk.experiment
def ES_CartPole(seed: int = 0, p: ESParams = ES_CARTPOLE) -> rk.Experiment:
    """Evolution strategies on CartPole-v1: the policy trained by Evolutionary alone (30
    generations of 16 antithetic pairs)."""
    env_seed, policy_seed = spawn_seeds(seed, 2)
    env = rk.GymEnv("CartPole-v1", seed=int_seed(env_seed))
    agent = rk.ES.agent(
        env, seed=int_seed(policy_seed), device=p.device, compile=p.compile,
        **p.algorithm_config(),
    )  # fmt: skip
    return rk.Experiment(
        policy=agent,
        env=env,
        stop_condition=rk.StopAfterNEpisodes(p.generations),
        hook=rk.TotalRewardPerEpisode(),
        description=_doc(ES_CartPole),
    )


def _doc(fn: Any) -> str:
    return " ".join((fn.__doc__ or "").strip().split("\n\n")[0].split())
