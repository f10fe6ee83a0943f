"""MBPO (Janner et al. 2019, "When to Trust Your Model"): SAC trained mostly on short rollouts of
a learned :class:`~rlkit.EnsembleDynamicsModel`, following the authors' code (``mbpo/``).

MBPO *is* SAC (``rlkit/learners/actor_critic/sac.py``: its losses, its
``update(policy, batch)`` and the off-policy driver's acting and gradient-step counting) with
three differences, all of them timing or data, so they live here:

* **the model's timing** (MBPO's own, so this file's PostAct method): once
  ``learning_starts`` transitions were collected (MBPO's ``init_exploration_steps``, uniform
  actions), and then every ``model_train_freq`` transitions, the ensemble is trained on every
  real transition (early stopping, elites: ``rlkit/approximators/dynamics.py``); then
  ``rollout_batch_size`` states drawn from the real replay are rolled out for
  ``rollout_length`` steps through the model with the current policy's stochastic actions
  (a random elite per transition), rows whose predicted transition terminates are not rolled
  further; the rollouts go to the model replay, which keeps ``model_retain_epochs`` epochs of
  them (MBPO's ``_reallocate``);
* **the rollout length** follows MBPO's schedule ``(min_epoch, max_epoch, min_length,
  max_length)``: ``min_length`` until ``min_epoch``, rising linearly to ``max_length`` at
  ``max_epoch``, an epoch being ``epoch_length`` environment steps;
* **the batches**: each of the ``gradient_steps`` SAC updates per environment step (the
  paper's G, its ``num_train_repeat``) draws ``real_ratio * batch_size`` transitions from the
  real replay and the rest from the model replay (MBPO's ``_get_batch``; 0.05 real).

Differences from the authors' code: the model's L2 decays are in the loss exactly as theirs,
but its Adam is rlkit's ``GradientDescent`` module; a replay of transitions with no model
training yet (before ``learning_starts``) is not trained on (MBPO does not train SAC during its
initial exploration either); rollouts are drawn with the policy's own rollout generator.

Example:
    >>> import rlkit as rk
    >>> env = rk.GymEnv("Pendulum-v1", seed=0)
    >>> agent = rk.MBPO.agent(env, seed=0, learning_starts=100, model_train_freq=50,
    ...     batch_size=32, hidden=(16, 16), model_hidden=(16,), ensemble_size=3, n_elites=2,
    ...     rollout_batch_size=20, gradient_steps=2, model_max_epochs=2)
    >>> _ = rk.run(agent, env, rk.StopAfterNSteps(120))
    >>> agent.policy.model_fits, len(agent.policy.model_replay) > 0
    (1, True)
"""

from __future__ import annotations

from collections.abc import Iterator
from types import MappingProxyType
from typing import Any

import numpy as np
import torch

from ...core.checks import finite_float, positive_int
from ...core.dispatch import PlanStep, update, where
from ...core.interfaces import AbstractEnv, AbstractVectorEnv
from ...core.seeding import int_seed
from ...core.stages import POST_ACT_STAGE, AbstractStage, PostActStage
from ...core.state import require_keys
from ...trajectories.circular import CircularArraySARTTrajectory
from ..actor_critic.sac import SAC, SAC_DEFAULTS, squashed_sample
from ..batch import Batch
from ..drivers.off_policy import train
from .model_replay import ModelReplay
from .settings import check_model_settings, make_dynamics

__all__ = ["MBPO", "MBPO_DEFAULTS", "rollout_length", "model_rollouts"]

MBPO_DEFAULTS = {
    **SAC_DEFAULTS,
    # MBPO's SAC: the paper's G SAC updates per environment step, after its initial exploration
    "gradient_steps": 20,
    "learning_starts": 5000,
    # the model (MBPO's BNN: 7 members, 5 elites, four layers of 200)
    "ensemble_size": 7,
    "n_elites": 5,
    "model_hidden": (200, 200, 200, 200),
    "model_lr": 1e-3,
    "model_batch_size": 256,
    "model_holdout_ratio": 0.2,
    "model_max_epochs": None,
    "max_epochs_since_update": 5,
    "reward_fn": None,
    "termination_fn": None,
    # its timing and its rollouts
    "model_train_freq": 250,
    "real_ratio": 0.05,
    "rollout_batch_size": 100_000,
    "rollout_schedule": (20, 100, 1, 15),
    "epoch_length": 1000,
    "model_retain_epochs": 1,
}


def rollout_length(schedule: tuple[int, int, int, int], epoch: int) -> int:
    """MBPO's ``_set_rollout_length``: ``min_length`` until ``min_epoch``, rising linearly to
    ``max_length`` at ``max_epoch`` (``schedule = (min_epoch, max_epoch, min_length,
    max_length)``), as an integer.

    Example:
        >>> [rollout_length((20, 100, 1, 15), e) for e in (0, 20, 60, 100, 300)]
        [1, 1, 8, 15, 15]
    """
    min_epoch, max_epoch, min_length, max_length = schedule
    if epoch <= min_epoch:
        return int(min_length)
    span = max(max_epoch - min_epoch, 1)
    fraction = min((epoch - min_epoch) / span, 1.0)
    return int(fraction * (max_length - min_length) + min_length)


def _check_schedule(owner: str, schedule: Any) -> None:
    ok = (
        isinstance(schedule, (tuple, list))
        and len(schedule) == 4
        and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in schedule)
    )
    if not ok or schedule[1] < schedule[0] or schedule[2] < 1 or schedule[3] < schedule[2]:
        raise ValueError(
            f"{owner}: rollout_schedule must be (min_epoch, max_epoch, min_length, max_length) "
            f"of non-negative ints with min_epoch <= max_epoch and 1 <= min_length <= "
            f"max_length, got {schedule!r}"
        )


@torch.no_grad()
def model_rollouts(
    policy: Any,
    start: np.ndarray,
    length: int,
    generator: torch.Generator,
) -> dict[str, torch.Tensor]:
    """``length`` model steps from the states ``start`` with the policy's stochastic actions
    (``[-1, 1]``, rescaled to the ``Box`` for the model): the transitions, concatenated
    (``state``, ``action`` scaled, ``reward``, ``terminal``, ``next_state``); a row whose
    transition is predicted to terminate is not rolled further (MBPO's ``nonterm_mask``).

    Example:
        >>> import rlkit as rk, numpy as np, torch
        >>> env = rk.GymEnv("Pendulum-v1", seed=0)
        >>> policy = rk.MBPO(env, seed=0, model_hidden=(8,), ensemble_size=5)
        >>> out = model_rollouts(policy, np.zeros((4, 3), np.float32), 3, torch.Generator())
        >>> out["state"].shape
        torch.Size([12, 3])
    """
    model, space, device = policy.dynamics, policy.action_space, policy.device
    state = torch.as_tensor(np.asarray(start, np.float32), device=device)
    parts: dict[str, list[torch.Tensor]] = {k: [] for k in MODEL_KEYS}
    low = torch.as_tensor(space.low, dtype=torch.float32, device=device).reshape(-1)
    high = torch.as_tensor(space.high, dtype=torch.float32, device=device).reshape(-1)
    for _ in range(length):
        if not len(state):
            break
        scaled = squashed_sample(policy.model, state, generator)
        action = torch.clamp(low + 0.5 * (scaled + 1.0) * (high - low), low, high)
        next_state, reward, terminated = model.sample(state, action, generator)
        for key, value in zip(
            MODEL_KEYS,
            (state, scaled, reward, terminated.to(torch.float32), next_state),
            strict=True,
        ):
            parts[key].append(value)
        state = next_state[~terminated]
    if not parts["state"]:
        return {k: torch.zeros(0) for k in MODEL_KEYS}
    return {k: torch.cat(v) for k, v in parts.items()}


MODEL_KEYS = ("state", "action", "reward", "terminal", "next_state")


class MBPO(SAC):
    """MBPO (see the module docstring): SAC on a mix of real and model-rollout batches.

    ``MBPO(env, seed=0, **config)`` or ``MBPO.agent(env, seed=0, **config)`` (the real replay
    as an ``rk.Agent``); SAC's hyperparameters and MBPO's (``MBPO_DEFAULTS``, the paper's
    values; ``model_hidden`` is the model's layers, ``hidden`` SAC's networks). ``dynamics``
    is the :class:`~rlkit.EnsembleDynamicsModel`, ``model_replay`` the rollouts.

    Example:
        >>> import rlkit as rk
        >>> rk.MBPO(rk.GymEnv("Pendulum-v1"), ensemble_size=3)
        Traceback (most recent call last):
        ...
        ValueError: MBPO: ensemble_size 3 is below n_elites 5; the elites are chosen among the members (give ensemble_size >= n_elites)
    """  # noqa: E501

    name = "MBPO"
    defaults = MappingProxyType(dict(MBPO_DEFAULTS))
    #: refused on rk.VecNormalize: its dynamics model learns from the replay's raw transitions
    #: and its rollouts would mix with normalised ones (rlkit/policies/agent.py)
    normalizes_replay = False
    seed_names = (*SAC.seed_names, "dynamics", "rollout")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        c = self.config
        self.dynamics = make_dynamics(
            type(self).name, self.state_space, self.action_space, c, self.seeds["dynamics"],
            self.device,
        )  # fmt: skip
        self.rollout_generator = torch.Generator().manual_seed(int_seed(self.seeds["rollout"]))
        n_obs = self.dynamics.n_obs
        self.model_replay = ModelReplay(0, n_obs, self.n_actions, self.device)
        self.model_fits = 0
        self.model_stats: dict[str, float] = {}

    def check_config(self, owner: str, action_space: Any, env: Any) -> None:
        """SAC's checks, and MBPO's hyperparameters."""
        super().check_config(owner, action_space, env)
        c = self.config
        check_model_settings(owner, c)
        for name in ("rollout_batch_size", "epoch_length", "model_retain_epochs"):
            positive_int(owner, name, c[name])
        finite_float(owner, "real_ratio", c["real_ratio"], low=0, high=1)
        _check_schedule(owner, c["rollout_schedule"])

    # ---- the model's timing (MBPO's own) ----
    def model_due(self, before: int) -> bool:
        """Whether the model is retrained after the step that took the transitions from
        ``before`` to ``self.transitions``: when ``learning_starts`` (at least 1) transitions
        are reached, then every ``model_train_freq`` more (MBPO trains it at the end of its
        initial exploration and every ``model_train_freq`` steps)."""
        c = self.config
        start, freq = max(int(c["learning_starts"]), 1), c["model_train_freq"]
        if self.transitions < start:
            return False
        last = start + (self.transitions - start) // freq * freq  # the last due count
        return before < last <= self.transitions

    def rollout_length(self) -> int:
        """The scheduled rollout length at this epoch (:func:`rollout_length`)."""
        epoch = self.transitions // self.config["epoch_length"]
        return rollout_length(tuple(self.config["rollout_schedule"]), epoch)

    def train_model_and_rollout(self, replay: CircularArraySARTTrajectory) -> None:
        """Train the ensemble on every real transition, then fill the model replay with
        rollouts from ``rollout_batch_size`` real states (module docstring)."""
        c = self.config
        stats = self.dynamics.fit(replay)
        self.model_fits += 1
        length = self.rollout_length()
        per_epoch = c["rollout_batch_size"] * c["epoch_length"] // c["model_train_freq"]
        self.model_replay.resize(max(c["model_retain_epochs"] * per_epoch * length, 1))
        start = replay.state[_uniform_indices(replay, c["rollout_batch_size"], self.rng)]
        rollouts = model_rollouts(self, start, length, self.rollout_generator)
        self.model_replay.add(rollouts)
        self.model_stats = {
            **stats,
            "rollout_length": float(length),
            "model_replay_size": float(len(self.model_replay)),
        }

    # ---- the batches: real_ratio of them real ----
    def batches(self, replay: CircularArraySARTTrajectory, n: int) -> Iterator[Batch]:
        """``n`` batches of ``batch_size``: ``int(real_ratio * batch_size)`` transitions from
        the real replay, the rest from the model replay (MBPO's ``_get_batch``)."""
        c = self.config
        n_real = int(c["batch_size"] * c["real_ratio"])
        n_model = c["batch_size"] - n_real
        if not len(self.model_replay):
            n_real, n_model = c["batch_size"], 0
        for _ in range(n):
            real = None
            if n_real:
                idx = _uniform_indices(replay, n_real, self.rng)
                real = self._as_batch(
                    replay.state[idx], replay.action[idx], replay.reward[idx],
                    replay.terminal[idx], replay.next_state[idx], "the real part of the batch",
                )  # fmt: skip
            if not n_model:
                yield real
                continue
            fake = self.model_replay.sample(n_model, self.rng)
            if real is None:
                batch = Batch(**fake)
            else:
                batch = Batch(**{k: torch.cat([real[k], fake[k]]) for k in MODEL_KEYS})
            batch.owner = "MBPO: the mixed batch"
            yield batch

    def end_round(self, n: int, means: dict[str, float]) -> None:
        super().end_round(n, means)
        self.stats.update(self.model_stats)

    # ---- what rk.explain shows ----
    def plan(self, env: Any) -> dict[AbstractStage, list[PlanStep]]:
        steps = super().plan(env)
        fn = MBPO.train_model_and_rollout
        here = PlanStep(
            _nothing,
            f"  MBPO.train_model_and_rollout (every {self.config['model_train_freq']} "
            f"transitions from learning_starts)",
            where(fn),
        )
        steps[POST_ACT_STAGE] = [here, *steps.get(POST_ACT_STAGE, [])]
        return steps

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        state.update(
            dynamics=self.dynamics.state_dict(),
            model_replay=self.model_replay.state_dict(),
            rollout_generator=self.rollout_generator.get_state().clone(),
            model_fits=self.model_fits,
        )
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        require_keys(type(self).name, state, "dynamics", "model_replay", "rollout_generator")
        super().load_state_dict(state)
        self.dynamics.load_state_dict(state["dynamics"])
        self.model_replay.load_state_dict(state["model_replay"])
        self.rollout_generator.set_state(state["rollout_generator"])
        self.model_fits = int(state.get("model_fits", 0))


def _uniform_indices(
    replay: CircularArraySARTTrajectory, n: int, rng: np.random.Generator
) -> np.ndarray:
    """``n`` slots of ``replay``'s transitions drawn uniformly with replacement (more than it
    holds, too: MBPO's ``random_batch``)."""
    return (replay.oldest + rng.integers(len(replay), size=n)) % replay.capacity


def _nothing() -> None:
    return None


# ---- PostAct: count the step; retrain the model when due (MBPO's timing); SAC's updates ----
@update.dispatch
def _(
    policy: MBPO,
    trajectory: CircularArraySARTTrajectory,
    env: AbstractEnv | AbstractVectorEnv,
    stage: PostActStage,
    /,
):
    before = policy.transitions
    n = policy.due(env)
    if policy.model_due(before):
        policy.train_model_and_rollout(trajectory)
    if n and policy.model_fits:
        train(policy, trajectory, n)
