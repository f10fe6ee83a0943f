"""Policy-gradient recipes (VPG, A2C, PPO) on classic-control tasks, on vector environments.

``PPO_CartPole`` and ``A2C_CartPole`` use rl-baselines3-zoo's tuned hyperparameters with
Stable-Baselines3's semantics (see :mod:`rlkit.learners.policy_gradient.ppo` and ``a2c``):

* ``PPO_CartPole``: 8 envs, 100k steps, n_steps 32, batch 256, gae_lambda 0.8, gamma 0.98,
  20 epochs, ent_coef 0, learning rate linear from 1e-3 to 0, clip range linear from 0.2 to 0
  (zoo's ``lin_1e-3`` and ``lin_0.2``, over the run's transitions);
* ``A2C_CartPole``: 8 envs, 500k steps, ent_coef 0, otherwise SB3's A2C defaults (n_steps 5,
  RMSprop 7e-4, gamma 0.99, gae_lambda 1);
* ``VPG_CartPole``: REINFORCE with a learned baseline, 8 envs, 200k steps, rollouts of 128 steps
  per env (1024 transitions), Adam 3e-3, gamma 0.99, normalised advantages (rlkit's own
  settings: Stable-Baselines3 has no VPG; with 256-step rollouts and Adam 1e-3 seed 0 ended at a
  greedy mean of 194.5, with 64 steps and 1e-3 at 446.8, with these at 500);
* ``PPO_Acrobot``: zoo's settings (16 envs, n_steps 256, gae_lambda 0.94, gamma 0.99, 4 epochs,
  ent_coef 0) with 8 envs and 200k steps instead of 1M, and without the zoo's ``normalize: True``
  (measured so; ``normalize=True`` runs it in ``rk.VecNormalize``);
* ``PPO_Pendulum``: zoo's settings (4 envs, n_steps 1024, gae_lambda 0.95, gamma 0.9, 10 epochs,
  lr 1e-3, clip 0.2, ent_coef 0) without gSDE (rlkit has none) and without the zoo's
  ``normalize: True`` (measured so; ``normalize=True`` adds it), so with plain Gaussian
  exploration it needs more steps: 200k instead of 100k.
  Measured on seed 0: greedy mean -256.7 +/- 116.8 over 20 episodes (last 20 training episodes
  -214.4): it learns to swing up but does not reach zoo's about -200 reliably;
* ``PPO_Acrobot`` measured on seed 0: greedy mean -83.3 +/- 16.7 over 20 episodes.

No model selection: the run ends with the final policy (PPO's and A2C's final greedy policies
solve CartPole; nothing is picked from evaluations). Every generator (the envs' and the policy's:
network initialisation, action sampling, minibatch shuffling) derives from the recipe's ``seed``
with ``numpy.random.SeedSequence``. Each recipe's parameters are the fields of its
hyperparameter dataclass (:class:`PPOParams`, :class:`A2CParams`, :class:`VPGParams`, all
:class:`OnPolicyParams`): every hyperparameter of the algorithm, with the algorithm's own
defaults (``rk.PPO.defaults``, ...), so a recipe's constant (``PPO_CARTPOLE``, ...) names only what
it changes; ``rk.make_experiment("PPO_CartPole", seed, total_steps=5000, lr=1e-3)``, ``rlkit run
PPO_CartPole --set lr=1e-3``. ``normalize=True`` runs a recipe in ``rk.VecNormalize`` with the
learner's ``gamma`` (rl-baselines3-zoo's ``normalize: True``; docs/how-to/normalization.md).
A learning rate or clip range ``"lin_1e-3"`` decays linearly to 0
over ``total_steps`` (rl-baselines3-zoo's notation; experiments/params.py). The recipes run
torch on one thread (``Experiment.threads``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import rlkit as rk
from rlkit.core import checks
from rlkit.core.seeding import spawn_seeds

from .params import algorithm_fields, check_device, check_hidden, check_schedule, schedule_value

__all__ = [
    "OnPolicyParams",
    "PPOParams",
    "A2CParams",
    "VPGParams",
    "PPO_CARTPOLE",
    "A2C_CARTPOLE",
    "VPG_CARTPOLE",
    "PPO_ACROBOT",
    "PPO_PENDULUM",
    "build_pg_agent",
    "many_seeds_experiment",
]


@dataclass(frozen=True)
class OnPolicyParams:
    """Hyperparameters of an on-policy recipe (rollouts of ``n_steps`` per sub-env, then
    ``n_epochs`` passes of minibatches of ``batch_size``; None: the whole rollout), with the
    learners' names, plus the run's ``total_steps``, ``n_envs`` and ``device``. Subclasses give
    an algorithm's own defaults (``algorithm`` names it: ``rk.PPO``, ...). ``lr`` and the
    ``schedulable`` fields may be ``"lin_<start>"`` (experiments/params.py).

    Example:
        >>> p = PPOParams(total_steps=1000, lr="lin_1e-3")
        >>> p.algorithm_config()["lr"](500), p.algorithm_config()["n_epochs"]
        (0.0005, 10)
    """

    total_steps: int
    n_envs: int = 1
    device: str = "cpu"
    n_steps: int = 5
    n_epochs: int = 1
    batch_size: int | None = None
    lr: float | str = 7e-4
    gamma: float = 0.99
    gae_lambda: float = 1.0
    normalize_advantage: bool = False
    ent_coef: float = 0.0
    vf_coef: float = 0.5
    max_grad_norm: float | None = 0.5
    target_kl: float | None = None
    hidden: tuple[int, ...] = (64, 64)
    activation: str = "tanh"
    log_std_init: float = 0.0
    compile: bool = False  # torch.compile the loss and acting (rlkit/learners/compiled.py)
    #: run in ``rk.VecNormalize`` (gamma the learner's): rl-baselines3-zoo's ``normalize: True``
    normalize: bool = False

    algorithm: ClassVar[str] = "A2C"
    #: fields that are not the algorithm's hyperparameters
    run_fields: ClassVar[tuple[str, ...]] = (
        "total_steps", "n_envs", "device", "compile", "normalize",
    )
    #: fields that may be rl-baselines3-zoo's ``"lin_<start>"``
    schedulable: ClassVar[tuple[str, ...]] = ("lr",)

    def algorithm_config(self, owner: str = "") -> dict[str, Any]:
        """The hyperparameters as the algorithm's ``agent(env, **config)`` takes them
        (``"lin_<start>"`` as a ``rk.LinearSchedule`` over ``total_steps``)."""
        owner = owner or self.algorithm
        config = algorithm_fields(self)
        for name in self.schedulable:
            config[name] = schedule_value(owner, name, config[name], self.total_steps)
        return config

    def check(self, owner: str) -> None:
        """Refuse values no run can use, naming ``owner`` (the recipe) and the parameter."""
        from rlkit.learners.hyperparameters import check_hyperparameters

        for name in ("total_steps", "n_envs", "n_steps", "n_epochs"):
            checks.positive_int(owner, name, getattr(self, name))
        checks.instance_of(owner, "normalize", self.normalize, bool, "True or False")
        if self.batch_size is not None:
            checks.positive_int(owner, "batch_size", self.batch_size)
        for name in self.schedulable:
            check_schedule(owner, name, getattr(self, name))
        check_hidden(owner, self.hidden, allow_empty=True)
        check_device(owner, self.device)
        check_hyperparameters(owner, self.algorithm_config(owner))


@dataclass(frozen=True)
class PPOParams(OnPolicyParams):
    """PPO's hyperparameters with Stable-Baselines3's defaults (``rk.PPO.defaults``): ``lr`` and
    ``clip_range`` may be ``"lin_<start>"``.

    Example:
        >>> PPOParams(total_steps=1000, clip_range="lin").check("PPO_CartPole")
        ... # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: PPO_CartPole: clip_range must be a number or 'lin_' followed by a number ...
    """

    n_steps: int = 2048
    n_epochs: int = 10
    batch_size: int | None = 64
    lr: float | str = 3e-4
    gae_lambda: float = 0.95
    normalize_advantage: bool = True
    clip_range: float | str = 0.2
    clip_range_vf: float | None = None

    algorithm: ClassVar[str] = "PPO"
    schedulable: ClassVar[tuple[str, ...]] = ("lr", "clip_range")


@dataclass(frozen=True)
class A2CParams(OnPolicyParams):
    """A2C's hyperparameters with Stable-Baselines3's defaults (``rk.A2C.defaults``: n_steps 5,
    RMSprop 7e-4, gae_lambda 1, no advantage normalisation).

    Example:
        >>> A2CParams(total_steps=1000).algorithm_config()["n_steps"]
        5
    """


@dataclass(frozen=True)
class VPGParams(OnPolicyParams):
    """VPG's (REINFORCE with a learned baseline) hyperparameters with rlkit's defaults
    (``rk.VPG.defaults``: rollouts of 1000 steps, Adam 1e-3, normalised advantages).

    Example:
        >>> VPGParams(total_steps=1000).algorithm_config()["lr"]
        0.001
    """

    n_steps: int = 1000
    lr: float | str = 1e-3
    normalize_advantage: bool = True

    algorithm: ClassVar[str] = "VPG"


PPO_CARTPOLE = PPOParams(
    total_steps=100_000,
    n_envs=8,
    n_steps=32,
    batch_size=256,
    gae_lambda=0.8,
    gamma=0.98,
    n_epochs=20,
    ent_coef=0.0,
    lr="lin_1e-3",
    clip_range="lin_0.2",
)
A2C_CARTPOLE = A2CParams(total_steps=500_000, n_envs=8, ent_coef=0.0)
VPG_CARTPOLE = VPGParams(total_steps=200_000, n_envs=8, n_steps=128, lr=3e-3)
PPO_ACROBOT = PPOParams(
    total_steps=200_000,
    n_envs=8,
    n_steps=256,
    gae_lambda=0.94,
    gamma=0.99,
    n_epochs=4,
    ent_coef=0.0,
)
PPO_PENDULUM = PPOParams(
    total_steps=200_000,
    n_envs=4,
    n_steps=1024,
    gae_lambda=0.95,
    gamma=0.9,
    n_epochs=10,
    lr=1e-3,
    clip_range=0.2,
    ent_coef=0.0,
)


def build_pg_agent(
    env_id: str, p: OnPolicyParams, seed: int, *, backend: str = "sync", owner: str = ""
) -> tuple[rk.Agent, Any]:
    """The agent and the vector env of a recipe on ``env_id`` (in ``rk.VecNormalize`` when
    ``p.normalize``), every generator derived from ``seed``."""
    env_seed, policy_seed = spawn_seeds(seed, 2)
    env = rk.VectorGymEnv(env_id, p.n_envs, backend=backend, seed=env_seed)
    if p.normalize:  # the zoo's normalize: True (VecNormalize with the learner's gamma)
        env = rk.VecNormalize(env, gamma=p.gamma)
    algorithm = getattr(rk, p.algorithm)
    agent = algorithm.agent(
        env, seed=policy_seed, device=p.device, compile=p.compile, **p.algorithm_config(owner)
    )
    return agent, env


def _experiment(env_id: str, p: OnPolicyParams, seed: int, fn: Callable) -> rk.Experiment:
    agent, env = build_pg_agent(env_id, p, seed, owner=fn.__name__)
    return rk.Experiment(
        policy=agent,
        env=env,
        stop_condition=rk.StopAfterNSteps(p.total_steps),
        hook=rk.TotalRewardPerEpisode(),
        description=(fn.__doc__ or "").strip(),
        threads=1,  # small MLPs: more torch threads only add synchronisation
    )


def many_seeds_experiment(
    env_id: str, p: PPOParams, seeds: list[int], fn: Callable
) -> rk.Experiment:
    """The PPO recipe ``fn`` for every seed of ``seeds`` in one process: each seed's vector env
    and policy seeded as its single run seeds them (``build_pg_agent``), the parameters stacked
    and the losses vmap-ed (``rk.ManySeedsPPO``), ``total_steps`` per seed, the returns of
    every seed's episodes in ``rk.TotalRewardPerSeed``."""
    owner = fn.__name__
    for name in ("compile", "normalize"):
        if getattr(p, name):
            raise ValueError(
                f"{owner}: {name}=True and seeds=[...] together are not supported; give one"
            )
    envs, policy_seeds = [], []
    for seed in seeds:
        env_seed, policy_seed = spawn_seeds(seed, 2)
        envs.append(rk.VectorGymEnv(env_id, p.n_envs, seed=env_seed))
        policy_seeds.append(policy_seed)
    env = rk.SeedBlocksEnv(envs, seeds)
    config = p.algorithm_config(owner)
    agent = rk.ManySeedsPPO.agent(env, policy_seeds=policy_seeds, device=p.device, **config)
    return rk.Experiment(
        policy=agent,
        env=env,
        stop_condition=rk.StopAfterNSteps(p.total_steps * len(seeds)),
        hook=rk.TotalRewardPerSeed(),
        description=(fn.__doc__ or "").strip(),
        threads=1,
    )


@rk.experiment
def PPO_CartPole(
    seed: int = 0, p: PPOParams = PPO_CARTPOLE, seeds: list[int] | None = None
) -> rk.Experiment:
    """PPO on CartPole-v1 with rl-baselines3-zoo's hyperparameters (8 envs, 100k steps)."""
    if seeds is not None:
        return many_seeds_experiment("CartPole-v1", p, seeds, PPO_CartPole)
    return _experiment("CartPole-v1", p, seed, PPO_CartPole)


@rk.experiment
def A2C_CartPole(seed: int = 0, p: A2CParams = A2C_CARTPOLE) -> rk.Experiment:
    """A2C on CartPole-v1 with rl-baselines3-zoo's hyperparameters (8 envs, 500k steps)."""
    return _experiment("CartPole-v1", p, seed, A2C_CartPole)


@rk.experiment
def VPG_CartPole(seed: int = 0, p: VPGParams = VPG_CARTPOLE) -> rk.Experiment:
    """REINFORCE with a learned baseline on CartPole-v1 (8 envs, 200k steps)."""
    return _experiment("CartPole-v1", p, seed, VPG_CartPole)


@rk.experiment
def PPO_Acrobot(
    seed: int = 0, p: PPOParams = PPO_ACROBOT, seeds: list[int] | None = None
) -> rk.Experiment:
    """PPO on Acrobot-v1, zoo's settings with 8 envs and 200k steps, no VecNormalize."""
    if seeds is not None:
        return many_seeds_experiment("Acrobot-v1", p, seeds, PPO_Acrobot)
    return _experiment("Acrobot-v1", p, seed, PPO_Acrobot)


@rk.experiment
def PPO_Pendulum(seed: int = 0, p: PPOParams = PPO_PENDULUM) -> rk.Experiment:
    """PPO on Pendulum-v1 (continuous actions), zoo's settings without gSDE, 200k steps."""
    return _experiment("Pendulum-v1", p, seed, PPO_Pendulum)
