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

Every recipe accepts ``total_steps=`` (a shorter run), ``n_envs=`` (a ``rk.VectorGymEnv`` of
that many copies; SB3 semantics: ``train_freq`` and ``gradient_steps`` count vector steps,
``learning_starts`` transitions), ``device=``, and ``learning_starts``, ``batch_size``,
``hidden`` and ``lr`` to replace the zoo's values (None: the zoo's). Every generator
(environments, network initialisation, sampling, replay, noise) is derived from the recipe's
``seed`` with ``numpy.random.SeedSequence``. The zoo trains with an ``EvalCallback`` only for
reporting; these recipes report the training episodes' returns (``rk.TotalRewardPerEpisode``);
evaluate the final policy with ``rk.evaluate``.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import rlkit as rk
from rlkit.core.checks import positive_int
from rlkit.core.seeding import int_seed, spawn_seeds

__all__ = [
    "SAC_PENDULUM",
    "TD3_PENDULUM",
    "TD3_MOUNTAIN_CAR",
    "SAC_HALF_CHEETAH",
    "TD3_HALF_CHEETAH",
    "continuous_experiment",
    "require_mujoco",
]

# rl-baselines3-zoo hyperparams/{sac,td3,ddpg}.yml
SAC_PENDULUM: dict[str, Any] = {"total_steps": 20_000, "lr": 1e-3}
TD3_PENDULUM: dict[str, Any] = {
    "total_steps": 20_000,
    "gamma": 0.98,
    "buffer_size": 200_000,
    "learning_starts": 10_000,
    "noise": ("normal", 0.1),
    "gradient_steps": 1,
    "train_freq": 1,
    "lr": 1e-3,
    "hidden": (400, 300),
}
TD3_MOUNTAIN_CAR: dict[str, Any] = {
    "total_steps": 300_000,
    "noise": ("ornstein-uhlenbeck", 0.5),
    "gradient_steps": 1,
    "train_freq": 1,
    "lr": 1e-3,
    "batch_size": 256,
    "hidden": (400, 300),
}
SAC_HALF_CHEETAH: dict[str, Any] = {"total_steps": 1_000_000, "learning_starts": 10_000}
TD3_HALF_CHEETAH: dict[str, Any] = {
    "total_steps": 1_000_000,
    "learning_starts": 10_000,
    "noise": ("normal", 0.1),
    "train_freq": 1,
    "gradient_steps": 1,
    "lr": 1e-3,
    "batch_size": 256,
    "hidden": (400, 300),
}


def require_mujoco(recipe: str) -> None:
    """Raise a clear ``ImportError`` when the ``mujoco`` package is missing."""
    if importlib.util.find_spec("mujoco") is None:
        raise ImportError(
            f"{recipe} runs gymnasium's MuJoCo HalfCheetah-v5, which needs the mujoco package: "
            f"pip install mujoco (or pip install 'rlkit[mujoco]')"
        )


def _noise(kind: str, sigma: float) -> rk.ActionNoise:
    if kind == "normal":
        return rk.GaussianActionNoise(sigma)
    return rk.OrnsteinUhlenbeckActionNoise(sigma)


def continuous_experiment(
    algorithm: type,
    env_id: str,
    settings: dict[str, Any],
    *,
    seed: int,
    total_steps: int | None,
    n_envs: int,
    device: str,
    description: str,
    **overrides: Any,
) -> rk.Experiment:
    """``algorithm`` (SAC, TD3 or DDPG) on ``env_id`` with ``settings`` (``total_steps``,
    ``noise`` and hyperparameters; ``overrides`` replace hyperparameters)."""
    n_envs = positive_int(f"{algorithm.name} on {env_id}", "n_envs", n_envs)
    env_seed, policy_seed = spawn_seeds(seed, 2)
    hyperparameters = {k: v for k, v in settings.items() if k not in ("total_steps", "noise")}
    if "noise" in settings:
        hyperparameters["action_noise"] = _noise(*settings["noise"])
    hyperparameters.update(overrides)
    if n_envs == 1:
        env = rk.GymEnv(env_id, seed=int_seed(env_seed))
    else:
        env = rk.VectorGymEnv(env_id, n_envs, seed=int_seed(env_seed))
    agent = algorithm.agent(env, seed=int_seed(policy_seed), device=device, **hyperparameters)
    steps = settings["total_steps"] if total_steps is None else int(total_steps)
    return rk.Experiment(
        policy=agent,
        env=env,
        stop_condition=rk.StopAfterNSteps(steps),
        hook=rk.TotalRewardPerEpisode(),
        description=description,
    )


def _make(algorithm, env_id, settings, fn, seed, total_steps, n_envs, device, overrides):
    return continuous_experiment(
        algorithm,
        env_id,
        settings,
        seed=seed,
        total_steps=total_steps,
        n_envs=n_envs,
        device=device,
        description=_doc(fn),
        **overrides,
    )


@rk.experiment
def SAC_Pendulum(
    seed: int = 0,
    *,
    total_steps: int | None = None,
    n_envs: int = 1,
    device: str = "cpu",
    learning_starts: int | None = None,
    batch_size: int | None = None,
    hidden: tuple[int, ...] | None = None,
    lr: float | None = None,
) -> rk.Experiment:
    """SAC on Pendulum-v1 with rl-baselines3-zoo's hyperparameters (20k steps, lr 1e-3)."""
    overrides = _overrides(learning_starts, batch_size, hidden, lr)
    args = (seed, total_steps, n_envs, device, overrides)
    return _make(rk.SAC, "Pendulum-v1", SAC_PENDULUM, SAC_Pendulum, *args)


@rk.experiment
def TD3_Pendulum(
    seed: int = 0,
    *,
    total_steps: int | None = None,
    n_envs: int = 1,
    device: str = "cpu",
    learning_starts: int | None = None,
    batch_size: int | None = None,
    hidden: tuple[int, ...] | None = None,
    lr: float | None = None,
) -> rk.Experiment:
    """TD3 on Pendulum-v1 with rl-baselines3-zoo's hyperparameters (20k steps, noise 0.1)."""
    overrides = _overrides(learning_starts, batch_size, hidden, lr)
    args = (seed, total_steps, n_envs, device, overrides)
    return _make(rk.TD3, "Pendulum-v1", TD3_PENDULUM, TD3_Pendulum, *args)


@rk.experiment
def DDPG_Pendulum(
    seed: int = 0,
    *,
    total_steps: int | None = None,
    n_envs: int = 1,
    device: str = "cpu",
    learning_starts: int | None = None,
    batch_size: int | None = None,
    hidden: tuple[int, ...] | None = None,
    lr: float | None = None,
) -> rk.Experiment:
    """DDPG on Pendulum-v1 with rl-baselines3-zoo's hyperparameters (20k steps, noise 0.1)."""
    overrides = _overrides(learning_starts, batch_size, hidden, lr)
    args = (seed, total_steps, n_envs, device, overrides)
    return _make(rk.DDPG, "Pendulum-v1", TD3_PENDULUM, DDPG_Pendulum, *args)


@rk.experiment
def TD3_MountainCarContinuous(
    seed: int = 0,
    *,
    total_steps: int | None = None,
    n_envs: int = 1,
    device: str = "cpu",
    learning_starts: int | None = None,
    batch_size: int | None = None,
    hidden: tuple[int, ...] | None = None,
    lr: float | None = None,
) -> rk.Experiment:
    """TD3 on MountainCarContinuous-v0 with rl-baselines3-zoo's hyperparameters (300k steps,
    Ornstein-Uhlenbeck noise 0.5)."""
    overrides = _overrides(learning_starts, batch_size, hidden, lr)
    args = (seed, total_steps, n_envs, device, overrides)
    env_id = "MountainCarContinuous-v0"
    return _make(rk.TD3, env_id, TD3_MOUNTAIN_CAR, TD3_MountainCarContinuous, *args)


@rk.experiment
def SAC_HalfCheetah(
    seed: int = 0,
    *,
    total_steps: int | None = None,
    n_envs: int = 1,
    device: str = "cpu",
    learning_starts: int | None = None,
    batch_size: int | None = None,
    hidden: tuple[int, ...] | None = None,
    lr: float | None = None,
) -> rk.Experiment:
    """SAC on MuJoCo HalfCheetah-v5 with rl-baselines3-zoo's hyperparameters (1M steps;
    needs pip install mujoco)."""
    require_mujoco("SAC_HalfCheetah")
    overrides = _overrides(learning_starts, batch_size, hidden, lr)
    args = (seed, total_steps, n_envs, device, overrides)
    return _make(rk.SAC, "HalfCheetah-v5", SAC_HALF_CHEETAH, SAC_HalfCheetah, *args)


@rk.experiment
def TD3_HalfCheetah(
    seed: int = 0,
    *,
    total_steps: int | None = None,
    n_envs: int = 1,
    device: str = "cpu",
    learning_starts: int | None = None,
    batch_size: int | None = None,
    hidden: tuple[int, ...] | None = None,
    lr: float | None = None,
) -> rk.Experiment:
    """TD3 on MuJoCo HalfCheetah-v5 with rl-baselines3-zoo's hyperparameters (1M steps, noise
    0.1; needs pip install mujoco)."""
    require_mujoco("TD3_HalfCheetah")
    overrides = _overrides(learning_starts, batch_size, hidden, lr)
    args = (seed, total_steps, n_envs, device, overrides)
    return _make(rk.TD3, "HalfCheetah-v5", TD3_HALF_CHEETAH, TD3_HalfCheetah, *args)


def _overrides(learning_starts, batch_size, hidden, lr) -> dict[str, Any]:
    given = {
        "learning_starts": learning_starts,
        "batch_size": batch_size,
        "hidden": hidden,
        "lr": lr,
    }
    return {k: v for k, v in given.items() if v is not None}


def _doc(fn: Any) -> str:
    return " ".join((fn.__doc__ or "").strip().split("\n\n")[0].split())
