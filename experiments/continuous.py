"""Continuous-control recipes: SAC, TD3 and DDPG (rlkit/learners/actor_critic) with
rl-baselines3-zoo's hyperparameters and Stable-Baselines3's semantics.

* ``SAC_Pendulum``: 20k steps, lr 1e-3, SB3's other defaults (256-256, batch 256, buffer 1M,
  learning_starts 100, tau 0.005, gamma 0.99, automatic entropy coefficient).
* ``TD3_Pendulum`` / ``DDPG_Pendulum``: 20k steps, gamma 0.98, buffer 200k, learning_starts 10k,
  Gaussian action noise 0.1, lr 1e-3, 400-300.
* ``TD3_MountainCarContinuous``: 300k steps, Ornstein-Uhlenbeck noise 0.5, lr 1e-3, 400-300.
* ``SAC_HalfCheetah`` / ``TD3_HalfCheetah``: gymnasium's MuJoCo ``HalfCheetah-v5``, 1M steps,
  learning_starts 10k (TD3: noise 0.1, lr 1e-3, 400-300); they need ``pip install mujoco``
  (``pip install 'rlkit[mujoco]'``).

Each recipe's parameters are the fields of its hyperparameter dataclass (:class:`SACParams`,
:class:`TD3Params`, :class:`DDPGParams`, all :class:`ContinuousParams`), whose defaults are the
algorithm's own (Stable-Baselines3's), so a recipe's constant (``SAC_PENDULUM``,
``TD3_PENDULUM``, ...) names only what rl-baselines3-zoo changes. Any of them can be overridden
(``rk.make_experiment("TD3_Pendulum", seed, total_steps=3000, learning_starts=1000)``,
``rlkit run TD3_Pendulum --set tau=0.01``), and ``config.json`` records them all. ``n_envs`` runs
a ``rk.VectorGymEnv`` of that many copies (SB3 semantics: ``train_freq`` and ``gradient_steps``
count vector steps, ``learning_starts`` transitions); ``device`` is torch's device. Every
generator (environments, network initialisation, sampling, replay, noise) is derived from the
recipe's ``seed`` with ``numpy.random.SeedSequence``. The zoo trains with an ``EvalCallback``
only for reporting; these recipes report the training episodes' returns
(``rk.TotalRewardPerEpisode``); evaluate the final policy with ``rk.evaluate``. torch is
imported when a recipe is built, so the recipes are listed without it.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Any, ClassVar

import rlkit as rk
from rlkit.core import checks
from rlkit.core.seeding import int_seed, spawn_seeds

from .params import algorithm_fields, check_device, check_hidden

__all__ = [
    "ContinuousParams",
    "SACParams",
    "DDPGParams",
    "TD3Params",
    "NOISE_TYPES",
    "SAC_PENDULUM",
    "TD3_PENDULUM",
    "DDPG_PENDULUM",
    "TD3_MOUNTAIN_CAR",
    "SAC_HALF_CHEETAH",
    "TD3_HALF_CHEETAH",
    "continuous_experiment",
    "require_mujoco",
]

#: rl-baselines3-zoo's ``noise_type`` values
NOISE_TYPES = ("normal", "ornstein-uhlenbeck")


@dataclass(frozen=True)
class ContinuousParams:
    """Hyperparameters of an off-policy actor-critic recipe, with Stable-Baselines3's
    ``OffPolicyAlgorithm`` defaults and its names (``lr`` is SB3's ``learning_rate``, ``hidden``
    its ``net_arch``; ``train_freq`` in steps), plus the run's ``total_steps`` (the zoo's
    ``n_timesteps``), ``n_envs`` and ``device``. They are the recipe's parameters:
    ``make_experiment`` and ``rlkit run --set`` override them and ``config.json`` records them.
    The algorithms' own fields are in the subclasses :class:`SACParams`, :class:`DDPGParams`
    and :class:`TD3Params`.

    Example:
        >>> p = TD3Params(total_steps=1000, noise_type="normal", noise_std=0.1)
        >>> sorted(p.algorithm_config())[:3], p.hidden
        (['action_noise', 'batch_size', 'buffer_size'], (400, 300))
    """

    total_steps: int
    lr: float = 1e-3
    buffer_size: int = 1_000_000
    learning_starts: int = 100
    batch_size: int = 256
    tau: float = 0.005
    gamma: float = 0.99
    train_freq: int = 1
    gradient_steps: int = 1
    hidden: tuple[int, ...] = (256, 256)
    n_critics: int = 2
    n_envs: int = 1
    device: str = "cpu"
    compile: bool = False  # torch.compile the losses and acting (rlkit/learners/compiled.py)

    #: fields that are not the algorithm's hyperparameters
    run_fields: ClassVar[tuple[str, ...]] = ("total_steps", "n_envs", "device", "compile")

    def algorithm_config(self) -> dict[str, Any]:
        """The hyperparameters as the algorithm's ``agent(env, **config)`` takes them."""
        return algorithm_fields(self)

    def check(self, owner: str) -> None:
        """Refuse values no run can use, naming ``owner`` (the recipe) and the parameter."""
        for name in (
            "total_steps", "buffer_size", "batch_size", "train_freq", "gradient_steps", "n_critics"
        ):
            checks.positive_int(owner, name, getattr(self, name))
        checks.positive_int(owner, "n_envs", self.n_envs)
        checks.non_negative_int(owner, "learning_starts", self.learning_starts)
        checks.finite_float(owner, "lr", self.lr, low=0.0, low_open=True)
        checks.finite_float(owner, "tau", self.tau, low=0.0, high=1.0, low_open=True)
        checks.check_gamma(owner, self.gamma)
        check_hidden(owner, self.hidden)
        check_device(owner, self.device)


@dataclass(frozen=True)
class SACParams(ContinuousParams):
    """SAC's hyperparameters, with Stable-Baselines3's defaults: lr 3e-4, the entropy
    coefficient learned from 1.0 (``ent_coef="auto"``; ``"auto_0.1"`` starts it at 0.1, a
    positive number fixes it), target entropy ``-dim(A)`` (``"auto"``, or a number) and the
    target critics moved every ``target_update_interval`` gradient steps.

    Example:
        >>> SACParams(total_steps=1000).check("SAC_Pendulum")
        >>> SACParams(total_steps=1000, target_update_interval=0).check("SAC_Pendulum")
        Traceback (most recent call last):
        ...
        ValueError: SAC_Pendulum: target_update_interval must be a positive integer, got 0
    """

    lr: float = 3e-4
    ent_coef: str | float = "auto"
    target_entropy: str | float = "auto"
    target_update_interval: int = 1

    def check(self, owner: str) -> None:
        super().check(owner)
        # torch is imported when a recipe is built, not when recipes are listed
        from rlkit.learners.actor_critic.sac import check_target_entropy, parse_ent_coef

        parse_ent_coef(owner, self.ent_coef)
        check_target_entropy(owner, self.target_entropy)
        checks.positive_int(owner, "target_update_interval", self.target_update_interval)


@dataclass(frozen=True)
class DDPGParams(ContinuousParams):
    """DDPG's hyperparameters (Stable-Baselines3's defaults: 400-300 networks, no action
    noise), the action noise in rl-baselines3-zoo's terms: ``noise_type`` None, ``"normal"``
    (``rk.GaussianActionNoise(noise_std)``) or ``"ornstein-uhlenbeck"``
    (``rk.OrnsteinUhlenbeckActionNoise(noise_std)``).

    Example:
        >>> DDPGParams(total_steps=1000, noise_type="normal").algorithm_config()["action_noise"]
        GaussianActionNoise(sigma=0.1)
    """

    hidden: tuple[int, ...] = (400, 300)
    n_critics: int = 1
    noise_type: str | None = None
    noise_std: float = 0.1

    run_fields: ClassVar[tuple[str, ...]] = (
        *ContinuousParams.run_fields,
        "noise_type",
        "noise_std",
    )

    def algorithm_config(self) -> dict[str, Any]:
        return {**super().algorithm_config(), "action_noise": self.action_noise()}

    def action_noise(self) -> rk.ActionNoise | None:
        """The exploration noise ``noise_type`` and ``noise_std`` describe (None: none)."""
        if self.noise_type is None:
            return None
        if self.noise_type == "normal":
            return rk.GaussianActionNoise(self.noise_std)
        return rk.OrnsteinUhlenbeckActionNoise(self.noise_std)

    def check(self, owner: str) -> None:
        super().check(owner)
        if self.noise_type is not None and self.noise_type not in NOISE_TYPES:
            raise ValueError(
                f"{owner}: noise_type must be None, 'normal' or 'ornstein-uhlenbeck', "
                f"got {self.noise_type!r}"
            )
        checks.finite_float(owner, "noise_std", self.noise_std, low=0.0)


@dataclass(frozen=True)
class TD3Params(DDPGParams):
    """TD3's hyperparameters: DDPG's, and target policy smoothing (``target_policy_noise``
    clipped at ``target_noise_clip``) with the actor and the targets updated every
    ``policy_delay`` gradient steps (Stable-Baselines3's defaults: 0.2, 0.5, 2).

    Example:
        >>> TD3Params(total_steps=1000, policy_delay=0).check("TD3_Pendulum")
        Traceback (most recent call last):
        ...
        ValueError: TD3_Pendulum: policy_delay must be a positive integer, got 0
    """

    n_critics: int = 2
    policy_delay: int = 2
    target_policy_noise: float = 0.2
    target_noise_clip: float = 0.5

    def check(self, owner: str) -> None:
        super().check(owner)
        checks.positive_int(owner, "policy_delay", self.policy_delay)
        checks.finite_float(owner, "target_policy_noise", self.target_policy_noise, low=0.0)
        checks.finite_float(owner, "target_noise_clip", self.target_noise_clip, low=0.0)


# rl-baselines3-zoo hyperparams/{sac,td3,ddpg}.yml
SAC_PENDULUM = SACParams(total_steps=20_000, lr=1e-3)
TD3_PENDULUM = TD3Params(
    total_steps=20_000,
    gamma=0.98,
    buffer_size=200_000,
    learning_starts=10_000,
    noise_type="normal",
    noise_std=0.1,
)
DDPG_PENDULUM = DDPGParams(
    total_steps=20_000,
    gamma=0.98,
    buffer_size=200_000,
    learning_starts=10_000,
    noise_type="normal",
    noise_std=0.1,
)
TD3_MOUNTAIN_CAR = TD3Params(total_steps=300_000, noise_type="ornstein-uhlenbeck", noise_std=0.5)
SAC_HALF_CHEETAH = SACParams(total_steps=1_000_000, learning_starts=10_000)
TD3_HALF_CHEETAH = TD3Params(
    total_steps=1_000_000, learning_starts=10_000, noise_type="normal", noise_std=0.1
)


def require_mujoco(recipe: str) -> None:
    """Raise a clear ``ImportError`` when the ``mujoco`` package is missing."""
    if importlib.util.find_spec("mujoco") is None:
        raise ImportError(
            f"{recipe} runs gymnasium's MuJoCo HalfCheetah-v5, which needs the mujoco package: "
            f"pip install mujoco (or pip install 'rlkit[mujoco]')"
        )


def continuous_experiment(
    algorithm: type,
    env_id: str,
    p: ContinuousParams,
    *,
    seed: int,
    description: str = "",
    owner: str = "continuous_experiment",
) -> rk.Experiment:
    """``algorithm`` (``rk.SAC``, ``rk.TD3`` or ``rk.DDPG``) on ``env_id`` with the
    hyperparameters ``p`` (checked, naming ``owner``) for ``p.total_steps`` steps."""
    p.check(owner)
    env_seed, policy_seed = spawn_seeds(seed, 2)
    if p.n_envs == 1:
        env = rk.GymEnv(env_id, seed=int_seed(env_seed))
    else:
        env = rk.VectorGymEnv(env_id, p.n_envs, seed=int_seed(env_seed))
    agent = algorithm.agent(
        env,
        seed=int_seed(policy_seed),
        device=p.device,
        compile=p.compile,
        **p.algorithm_config(),
    )
    return rk.Experiment(
        policy=agent,
        env=env,
        stop_condition=rk.StopAfterNSteps(p.total_steps),
        hook=rk.TotalRewardPerEpisode(),
        description=description,
    )


def _recipe(algorithm: type, env_id: str, p: ContinuousParams, seed: int, fn: Any) -> Any:
    """``continuous_experiment`` for the recipe ``fn`` (its name, its description)."""
    return continuous_experiment(
        algorithm, env_id, p, seed=seed, description=_doc(fn), owner=fn.__name__
    )


# ---- recipes ----


@rk.experiment
def SAC_Pendulum(seed: int = 0, p: SACParams = SAC_PENDULUM) -> rk.Experiment:
    """SAC on Pendulum-v1 with rl-baselines3-zoo's hyperparameters (20k steps, lr 1e-3)."""
    return _recipe(rk.SAC, "Pendulum-v1", p, seed, SAC_Pendulum)


@rk.experiment
def TD3_Pendulum(seed: int = 0, p: TD3Params = TD3_PENDULUM) -> rk.Experiment:
    """TD3 on Pendulum-v1 with rl-baselines3-zoo's hyperparameters (20k steps, noise 0.1)."""
    return _recipe(rk.TD3, "Pendulum-v1", p, seed, TD3_Pendulum)


@rk.experiment
def DDPG_Pendulum(seed: int = 0, p: DDPGParams = DDPG_PENDULUM) -> rk.Experiment:
    """DDPG on Pendulum-v1 with rl-baselines3-zoo's hyperparameters (20k steps, noise 0.1)."""
    return _recipe(rk.DDPG, "Pendulum-v1", p, seed, DDPG_Pendulum)


@rk.experiment
def TD3_MountainCarContinuous(seed: int = 0, p: TD3Params = TD3_MOUNTAIN_CAR) -> rk.Experiment:
    """TD3 on MountainCarContinuous-v0 with rl-baselines3-zoo's hyperparameters (300k steps,
    Ornstein-Uhlenbeck noise 0.5)."""
    return _recipe(rk.TD3, "MountainCarContinuous-v0", p, seed, TD3_MountainCarContinuous)


@rk.experiment
def SAC_HalfCheetah(seed: int = 0, p: SACParams = SAC_HALF_CHEETAH) -> rk.Experiment:
    """SAC on MuJoCo HalfCheetah-v5 with rl-baselines3-zoo's hyperparameters (1M steps;
    needs pip install mujoco)."""
    require_mujoco("SAC_HalfCheetah")
    return _recipe(rk.SAC, "HalfCheetah-v5", p, seed, SAC_HalfCheetah)


@rk.experiment
def TD3_HalfCheetah(seed: int = 0, p: TD3Params = TD3_HALF_CHEETAH) -> rk.Experiment:
    """TD3 on MuJoCo HalfCheetah-v5 with rl-baselines3-zoo's hyperparameters (1M steps, noise
    0.1; needs pip install mujoco)."""
    require_mujoco("TD3_HalfCheetah")
    return _recipe(rk.TD3, "HalfCheetah-v5", p, seed, TD3_HalfCheetah)


def _doc(fn: Any) -> str:
    return " ".join((fn.__doc__ or "").strip().split("\n\n")[0].split())
