"""Model-based recipes: MBPO and PETS (rlkit/learners/model_based) on a learned
``rk.EnsembleDynamicsModel`` (docs/how-to/model-based.md).

* ``MBPO_Pendulum``: 5,000 steps; SAC (lr 1e-3, 256-256, as ``SAC_Pendulum``) with 10 updates
  per step on 95% model rollouts, the model (7 members, 5 elites, three layers of 200, the
  reward learned) retrained every 250 steps from 500 random steps on, in minibatches of 32
  (MBPO's 256 gives 400 training transitions two gradient steps an epoch: its early stop then
  ends the first fits after some 30 steps with the reward off by about 1.4 of |r| about 6, and
  SAC learns from that; with 32 the first fit's reward error is about 0.7), each fit capped at
  50 epochs (a compute budget: MBPO's own stop only early), 1,000 rollouts of length 1 rising
  to 5 over the run.
* ``PETS_Pendulum``: 5,000 steps; CEM planning (population 100, 10 elites, 3 iterations,
  horizon 15, 5 particles TS-∞) through an ensemble of 5 (three layers of 64) that learns the
  dynamics, with Pendulum's known reward (:func:`pendulum_reward`, mbrl-lib's common setting),
  retrained every 200 steps from one random episode on.
* ``MBPO_HalfCheetah``: gymnasium's MuJoCo ``HalfCheetah-v5`` with MBPO's HalfCheetah settings
  (400k steps, 5,000 random steps, G = 40 SAC updates per step, 100k rollouts of length 1
  after each model training every 250 steps, 7 members of four layers of 200); needs
  ``pip install mujoco``. The benchmark runs it for as many steps as fit
  (benchmarks/model_based.py).

The Pendulum budgets are chosen for a laptop CPU: the planner's and the model's sizes are
smaller than the papers' (PETS: population 500, horizon 30, 20 particles, four layers of 200),
and say so; every parameter can be overridden (``rk.make_experiment("PETS_Pendulum", 0,
horizon=30)``, ``rlkit run PETS_Pendulum --set horizon=30``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import rlkit as rk
from rlkit.core import checks
from rlkit.core.seeding import int_seed, spawn_seeds

from .continuous import SACParams, _doc, require_mujoco
from .params import algorithm_fields, check_device, check_hidden

__all__ = [
    "MBPOParams",
    "PETSParams",
    "MBPO_PENDULUM",
    "PETS_PENDULUM",
    "MBPO_HALF_CHEETAH",
    "pendulum_reward",
]


def pendulum_reward(state: Any, action: Any, next_state: Any) -> Any:
    """Pendulum-v1's reward as a function of torch batches: ``-(theta^2 + 0.1 thetadot^2 +
    0.001 u^2)`` at the state *before* the step (``theta = atan2(sin, cos)`` in ``[-pi, pi]``,
    ``u`` clipped to ``[-2, 2]``), exactly gymnasium's.

    Example:
        >>> import torch
        >>> pendulum_reward(torch.tensor([[1.0, 0.0, 1.0]]), torch.tensor([[2.0]]), None)
        tensor([-0.1040])
    """
    import torch

    theta = torch.atan2(state[..., 1], state[..., 0])
    u = torch.clamp(action[..., 0], -2.0, 2.0)
    return -(theta**2 + 0.1 * state[..., 2] ** 2 + 0.001 * u**2)


@dataclass(frozen=True)
class MBPOParams(SACParams):
    """MBPO's hyperparameters: SAC's (:class:`~experiments.continuous.SACParams`) and the
    model's and rollouts' (``rk.MBPO``'s names; ``model_hidden`` the model's layers,
    ``hidden`` SAC's networks); ``known_reward`` gives the model Pendulum's reward instead of
    learning it (Pendulum only).

    Example:
        >>> MBPOParams(total_steps=100, real_ratio=2.0).check("MBPO_Pendulum")
        Traceback (most recent call last):
        ...
        ValueError: MBPO_Pendulum: real_ratio must be a number in [0, 1], got 2.0
    """

    gradient_steps: int = 20
    learning_starts: int = 5000
    ensemble_size: int = 7
    n_elites: int = 5
    model_hidden: tuple[int, ...] = (200, 200, 200, 200)
    model_lr: float = 1e-3
    model_batch_size: int = 256
    model_holdout_ratio: float = 0.2
    model_max_epochs: int | None = None
    max_epochs_since_update: int = 5
    model_train_freq: int = 250
    real_ratio: float = 0.05
    rollout_batch_size: int = 100_000
    rollout_schedule: tuple[int, ...] = (20, 100, 1, 15)
    epoch_length: int = 1000
    model_retain_epochs: int = 1
    known_reward: bool = False

    run_fields: ClassVar[tuple[str, ...]] = ("total_steps", "n_envs", "device", "known_reward")

    def algorithm_config(self) -> dict[str, Any]:
        config = algorithm_fields(self)
        config["rollout_schedule"] = tuple(self.rollout_schedule)
        config["reward_fn"] = pendulum_reward if self.known_reward else None
        return config

    def check(self, owner: str) -> None:
        super().check(owner)
        for name in ("ensemble_size", "n_elites", "model_batch_size", "model_train_freq",
                     "rollout_batch_size", "epoch_length", "model_retain_epochs",
                     "max_epochs_since_update"):  # fmt: skip
            checks.positive_int(owner, name, getattr(self, name))
        checks.optional_positive_int(owner, "model_max_epochs", self.model_max_epochs)
        check_hidden(owner, self.model_hidden)
        checks.finite_float(owner, "model_lr", self.model_lr, low=0.0, low_open=True)
        real = self.real_ratio
        if not (checks.is_real(real) and 0.0 <= real <= 1.0):
            raise ValueError(f"{owner}: real_ratio must be a number in [0, 1], got {real!r}")


@dataclass(frozen=True)
class PETSParams:
    """PETS' hyperparameters (``rk.PETS``'s names; ``model_hidden`` the model's layers), the
    run's ``total_steps`` and ``device``; ``known_reward`` plans with Pendulum's known reward
    (:func:`pendulum_reward`) instead of a learned one.

    Example:
        >>> PETSParams(total_steps=100, horizon=0).check("PETS_Pendulum")
        Traceback (most recent call last):
        ...
        ValueError: PETS_Pendulum: horizon must be a positive integer, got 0
    """

    total_steps: int
    ensemble_size: int = 5
    n_elites: int = 5
    model_hidden: tuple[int, ...] = (200, 200, 200, 200)
    model_lr: float = 1e-3
    model_batch_size: int = 32
    model_holdout_ratio: float = 0.2
    model_max_epochs: int | None = None
    max_epochs_since_update: int = 5
    learning_starts: int = 200
    model_train_freq: int = 200
    buffer_size: int = 1_000_000
    horizon: int = 30
    population: int = 500
    cem_elites: int = 50
    cem_iterations: int = 5
    alpha: float = 0.1
    particles: int = 20
    known_reward: bool = True
    device: str = "cpu"

    run_fields: ClassVar[tuple[str, ...]] = ("total_steps", "device", "known_reward")

    def algorithm_config(self) -> dict[str, Any]:
        config = algorithm_fields(self)
        config["reward_fn"] = pendulum_reward if self.known_reward else None
        return config

    def check(self, owner: str) -> None:
        for name in ("total_steps", "ensemble_size", "n_elites", "model_batch_size",
                     "learning_starts", "model_train_freq", "horizon", "population",
                     "cem_elites", "cem_iterations", "particles", "max_epochs_since_update",
                     "buffer_size"):  # fmt: skip
            checks.positive_int(owner, name, getattr(self, name))
        checks.optional_positive_int(owner, "model_max_epochs", self.model_max_epochs)
        check_hidden(owner, self.model_hidden)
        checks.finite_float(owner, "model_lr", self.model_lr, low=0.0, low_open=True)
        checks.finite_float(owner, "alpha", self.alpha, low=0.0, high=1.0)
        check_device(owner, self.device)


MBPO_PENDULUM = MBPOParams(
    total_steps=5000,
    lr=1e-3,
    gradient_steps=10,
    learning_starts=500,
    model_hidden=(200, 200, 200),
    model_batch_size=32,
    model_max_epochs=50,
    rollout_batch_size=1000,
    rollout_schedule=(0, 5, 1, 5),
)
PETS_PENDULUM = PETSParams(
    total_steps=5000,
    model_hidden=(64, 64, 64),
    horizon=15,
    population=100,
    cem_elites=10,
    cem_iterations=3,
    particles=5,
)
# MBPO's examples/config/halfcheetah.py: rollouts of length 1, 40 SAC updates per step
MBPO_HALF_CHEETAH = MBPOParams(
    total_steps=400_000, gradient_steps=40, rollout_schedule=(20, 150, 1, 1)
)


def _mbpo(env_id: str, p: MBPOParams, seed: int, fn: Any) -> rk.Experiment:
    p.check(fn.__name__)
    if p.n_envs != 1:
        raise ValueError(f"{fn.__name__}: MBPO runs one environment (n_envs=1), got {p.n_envs}")
    env_seed, policy_seed = spawn_seeds(seed, 2)
    env = rk.GymEnv(env_id, seed=int_seed(env_seed))
    agent = rk.MBPO.agent(env, seed=int_seed(policy_seed), device=p.device, **p.algorithm_config())
    return rk.Experiment(
        policy=agent, env=env, stop_condition=rk.StopAfterNSteps(p.total_steps),
        hook=rk.TotalRewardPerEpisode(), description=_doc(fn),
    )  # fmt: skip


@rk.experiment
def MBPO_Pendulum(seed: int = 0, p: MBPOParams = MBPO_PENDULUM) -> rk.Experiment:
    """MBPO on Pendulum-v1 (5k steps, 10 SAC updates per step on model rollouts)."""
    return _mbpo("Pendulum-v1", p, seed, MBPO_Pendulum)


@rk.experiment
def MBPO_HalfCheetah(seed: int = 0, p: MBPOParams = MBPO_HALF_CHEETAH) -> rk.Experiment:
    """MBPO on MuJoCo HalfCheetah-v5 with MBPO's HalfCheetah settings (400k steps, G = 40;
    needs pip install mujoco)."""
    require_mujoco("MBPO_HalfCheetah")
    if p.known_reward:
        raise ValueError("MBPO_HalfCheetah: known_reward is Pendulum's reward; leave it False")
    return _mbpo("HalfCheetah-v5", p, seed, MBPO_HalfCheetah)


@rk.experiment
def PETS_Pendulum(seed: int = 0, p: PETSParams = PETS_PENDULUM) -> rk.Experiment:
    """PETS on Pendulum-v1 with its known reward (5k steps, CEM through a learned ensemble)."""
    p.check("PETS_Pendulum")
    env_seed, policy_seed = spawn_seeds(seed, 2)
    env = rk.GymEnv("Pendulum-v1", seed=int_seed(env_seed))
    agent = rk.PETS.agent(env, seed=int_seed(policy_seed), device=p.device, **p.algorithm_config())
    return rk.Experiment(
        policy=agent, env=env, stop_condition=rk.StopAfterNSteps(p.total_steps),
        hook=rk.TotalRewardPerEpisode(), description=_doc(PETS_Pendulum),
    )  # fmt: skip
