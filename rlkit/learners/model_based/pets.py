"""PETS (Chua et al. 2018, "Deep Reinforcement Learning in a Handful of Trials using
Probabilistic Dynamics Models"): model-predictive control with the cross-entropy method through
a probabilistic ensemble, with trajectory sampling TS-∞; mbrl-lib's semantics.

* **Acting**: before ``learning_starts`` transitions, uniform actions (mbrl-lib's initial random
  trials); then, at every step, :func:`~rlkit.learners.model_based.cem.cem` optimises a
  sequence of ``horizon`` actions (in the ``Box`` bounds) for the expected return under the
  model, and the first action is taken. Each candidate's return is the mean over
  ``particles`` particles, each rolled through the model with one elite for the whole
  horizon (TS-∞: particle ``j`` always steps with elite ``j mod n_elites``), its next state
  sampled from that member's Gaussian; rewards after a predicted termination count zero. The
  optimisation starts from the previous plan shifted by one step (zeros at the end, the middle
  of the bounds at an episode's start), with the variance ``((upper - lower) / 4)^2``.
* **Learning** (PETS' own timing, so its PostAct method is here): once ``learning_starts``
  transitions were collected and then every ``model_train_freq``, the ensemble
  (``rlkit/approximators/dynamics.py``) is trained on every transition of the replay.

The reward is learned unless ``reward_fn`` gives it (mbrl-lib's PETS examples give the known
reward, as ``PETS_Pendulum`` does); ``termination_fn`` ends particles' episodes (none: they never
end). ``rk.greedy(pets)`` plans the same way with a generator and a warm start of its own, so
evaluating does not change the learner's state.

Example:
    >>> import rlkit as rk
    >>> env = rk.GymEnv("Pendulum-v1", seed=0)
    >>> agent = rk.PETS.agent(env, seed=0, learning_starts=50, model_train_freq=50,
    ...     model_hidden=(16,), horizon=3, population=20, cem_elites=4, cem_iterations=2,
    ...     particles=5, model_max_epochs=2)
    >>> _ = rk.run(agent, env, rk.StopAfterNSteps(60))
    >>> agent.policy.model_fits, agent.policy.transitions
    (1, 60)
"""

from __future__ import annotations

import copy
from types import MappingProxyType
from typing import Any

import numpy as np
import torch

from ...approximators.dynamics import EnsembleDynamicsModel
from ...approximators.neural import resolve_device
from ...core.checks import finite_float, positive_int
from ...core.dispatch import PlanStep, greedy, statistics, update, where
from ...core.interfaces import AbstractEnv, AbstractPolicy
from ...core.seeding import int_seed, spawn_seeds
from ...core.stages import POST_ACT_STAGE, PRE_EPISODE_STAGE, AbstractStage, PostActStage
from ...core.state import generator_state, require_keys, set_generator_state, state_count
from ...policies.agent import Agent
from ...policies.spaces import check_env_fits
from ...policies.stochastic import is_vector_env
from ...trajectories.circular import CircularArraySARTTrajectory
from ..actor_critic.common import check_continuous_space
from .cem import cem
from .settings import check_model_settings, make_dynamics

__all__ = ["PETS", "PETS_DEFAULTS", "expected_returns"]

PETS_DEFAULTS = {
    # the model (PETS: 5 members, all of them used; mbrl-lib: four layers of 200)
    "ensemble_size": 5,
    "n_elites": 5,
    "model_hidden": (200, 200, 200, 200),
    "model_lr": 1e-3,
    "model_batch_size": 32,
    "model_holdout_ratio": 0.2,
    "model_max_epochs": None,
    "max_epochs_since_update": 5,
    "reward_fn": None,
    "termination_fn": None,
    # its timing
    "learning_starts": 200,
    "model_train_freq": 200,
    "buffer_size": 1_000_000,
    # the planner (PETS' CEM)
    "horizon": 30,
    "population": 500,
    "cem_elites": 50,
    "cem_iterations": 5,
    "alpha": 0.1,
    "particles": 20,
}


@torch.no_grad()
def expected_returns(
    model: EnsembleDynamicsModel,
    state: torch.Tensor,
    actions: torch.Tensor,
    particles: int,
    generator: torch.Generator,
) -> torch.Tensor:
    """Each candidate action sequence's return from ``state`` under the model, the mean over
    ``particles`` TS-∞ particles (module docstring); ``actions`` is ``(population, horizon,
    n_act)``, ``particles`` a multiple of the number of elites.

    Example:
        >>> import torch, rlkit as rk
        >>> env = rk.GymEnv("Pendulum-v1")
        >>> m = rk.EnsembleDynamicsModel(env.state_space, env.action_space, ensemble_size=5,
        ...                              hidden=(8,))
        >>> expected_returns(m, torch.zeros(3), torch.zeros(7, 4, 1), 10,
        ...                  torch.Generator()).shape
        torch.Size([7])
    """
    n_pop, horizon, _ = actions.shape
    n_elites = len(model.elites)
    per_member = particles // n_elites
    rows = n_pop * per_member  # particles of one member: (candidate, copy)
    elites = model.elite_network()  # the elites' weights, gathered once for the whole horizon
    s = state.reshape(1, 1, -1).expand(n_elites, rows, state.shape[-1]).contiguous()
    copies = actions.repeat_interleave(per_member, dim=0)  # (rows, horizon, n_act)
    total = torch.zeros(n_elites, rows, device=state.device)
    alive = None if model.termination_fn is None else torch.ones_like(total, dtype=torch.bool)
    for t in range(horizon):
        a = copies[:, t].expand(n_elites, rows, -1)
        s, reward, terminated = model.sample_grouped(s, a, generator, elites=elites)
        if alive is None:  # no termination function: every particle lives the whole horizon
            total += reward
        else:
            total += torch.where(alive, reward, torch.zeros_like(reward))
            alive &= ~terminated
    return total.reshape(n_elites, n_pop, per_member).mean(dim=(0, 2))


def _check_planner(owner: str, c: dict[str, Any]) -> None:
    for name in ("horizon", "population", "cem_elites", "cem_iterations", "particles"):
        value = c[name]
        if not (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
            what = " (the number of actions planned ahead)" if name == "horizon" else ""
            raise ValueError(f"{owner}: {name}{what} must be a positive integer, got {value!r}")
    if c["cem_elites"] > c["population"]:
        raise ValueError(
            f"{owner}: cem_elites {c['cem_elites']} exceeds population {c['population']}; the "
            f"elites are the best candidates of a population"
        )
    if c["particles"] % c["n_elites"]:
        raise ValueError(
            f"{owner}: particles {c['particles']} must be a multiple of n_elites "
            f"{c['n_elites']} (TS-∞ gives every elite the same number of particles)"
        )
    finite_float(owner, "alpha", c["alpha"], low=0, high=1)


class PETS(AbstractPolicy):
    """PETS (module docstring): CEM model-predictive control through a learned ensemble.

    ``PETS(env, seed=0, **config)``, or ``PETS.agent(env, seed=0, **config)`` with the replay the
    model learns from; ``config`` overrides :data:`PETS_DEFAULTS` (an unknown name is an error).
    ``dynamics`` is the :class:`~rlkit.EnsembleDynamicsModel`.

    Example:
        >>> import rlkit as rk
        >>> rk.PETS(rk.GymEnv("Pendulum-v1"), horizon=0)
        Traceback (most recent call last):
        ...
        ValueError: PETS: horizon (the number of actions planned ahead) must be a positive integer, got 0
    """  # noqa: E501

    name = "PETS"
    defaults = MappingProxyType(dict(PETS_DEFAULTS))

    def __init__(
        self,
        env: Any = None,
        *,
        state_space: Any = None,
        action_space: Any = None,
        seed: int | np.random.SeedSequence = 0,
        device: str | torch.device = "cpu",
        **config: Any,
    ) -> None:
        owner = self.name
        if env is not None:
            state_space = env.state_space if state_space is None else state_space
            action_space = env.action_space if action_space is None else action_space
        if state_space is None or action_space is None:
            raise TypeError(f"{owner}: give an env, or both state_space and action_space")
        unknown = sorted(set(config) - set(self.defaults))
        if unknown:
            raise TypeError(
                f"{owner}: unknown hyperparameter(s) {unknown}; known: {sorted(self.defaults)}"
            )
        c = self.config = copy.deepcopy({**self.defaults, **config})
        self.action_space = check_continuous_space(owner, action_space)
        self.state_space = state_space
        self._check(owner)
        self.device = resolve_device(device, owner)
        model_seed, plan_seed, shuffle_seed = spawn_seeds(seed, 3)
        self.dynamics = make_dynamics(owner, state_space, action_space, c, model_seed, self.device)
        self.generator = torch.Generator().manual_seed(int_seed(plan_seed))
        self.rng = np.random.default_rng(shuffle_seed)
        self.low = torch.as_tensor(action_space.low, dtype=torch.float32).reshape(-1)
        self.high = torch.as_tensor(action_space.high, dtype=torch.float32).reshape(-1)
        self.n_actions = len(self.low)
        self.plan_mean = self.initial_plan()
        self.transitions = 0
        self.model_fits = 0
        self.stats: dict[str, float] = {}

    def _check(self, owner: str) -> None:
        c = self.config
        check_model_settings(owner, c)
        positive_int(owner, "buffer_size", c["buffer_size"])
        positive_int(owner, "learning_starts", c["learning_starts"])
        _check_planner(owner, c)

    def __repr__(self) -> str:
        return f"PETS({self.action_space})"

    @classmethod
    def agent(cls, env: Any, *, seed: int = 0, **config: Any) -> Agent:
        """A new PETS for ``env`` and the replay its model learns from, as an ``rk.Agent``."""
        policy = cls(env, seed=seed, **config)
        replay = CircularArraySARTTrajectory(
            policy.config["buffer_size"], env.state_space, env.action_space
        )
        return Agent(policy, replay)

    # ---- planning ----
    def initial_plan(self) -> torch.Tensor:
        """The middle of the bounds at every step of the horizon (an episode's first plan)."""
        middle = (self.low + self.high) / 2
        return middle.expand(self.config["horizon"], self.n_actions).clone()

    def plan_action(
        self, state: Any, warm: torch.Tensor, generator: torch.Generator
    ) -> tuple[np.ndarray, torch.Tensor]:
        """The first action of the CEM plan from ``state`` started at ``warm``, and the plan
        shifted by one step (the next warm start)."""
        c = self.config
        s = torch.as_tensor(np.asarray(state, np.float32), device=self.device).reshape(-1)
        var = ((self.high - self.low) / 4).pow(2).expand_as(warm).clone()

        def objective(candidates: torch.Tensor) -> torch.Tensor:
            return expected_returns(self.dynamics, s, candidates, c["particles"], generator)

        best = cem(
            objective, warm, var, self.low, self.high,
            population=c["population"], n_elites=c["cem_elites"],
            iterations=c["cem_iterations"], alpha=c["alpha"], generator=generator,
        )  # fmt: skip
        shifted = torch.cat([best[1:], ((self.low + self.high) / 2).reshape(1, -1)])
        action = best[0].cpu().numpy().astype(self.action_space.dtype)
        return action.reshape(self.action_space.shape), shifted

    def act(self, env: Any) -> Any:
        if is_vector_env(env):
            raise TypeError(f"{self.name}: plans for one environment; got the vector env {env!r}")
        if self.transitions < self.config["learning_starts"]:
            space = self.action_space
            return self.rng.uniform(space.low, space.high).astype(space.dtype)
        action, self.plan_mean = self.plan_action(env.state, self.plan_mean, self.generator)
        return action

    # ---- the model's timing (PETS' own) ----
    def model_due(self) -> bool:
        """Whether the model is retrained after this step: at ``learning_starts`` transitions,
        then every ``model_train_freq``."""
        c = self.config
        past = self.transitions - c["learning_starts"]
        return past >= 0 and past % c["model_train_freq"] == 0

    def train_model(self, replay: CircularArraySARTTrajectory) -> None:
        """Train the ensemble on every transition of ``replay``."""
        self.stats = self.dynamics.fit(replay)
        self.model_fits += 1

    def plan(self, env: Any) -> dict[AbstractStage, list[PlanStep]]:
        check_env_fits(self.name, self.state_space, self.action_space, env)
        step = PlanStep(
            self.reset_plan, "  PETS.reset_plan (the next episode plans from scratch)",
            where(PETS.reset_plan),
        )  # fmt: skip
        train_step = PlanStep(
            _nothing,
            f"  PETS.train_model (every {self.config['model_train_freq']} transitions from "
            f"learning_starts)",
            where(PETS.train_model),
        )
        return {PRE_EPISODE_STAGE: [step], POST_ACT_STAGE: [train_step]}

    def reset_plan(self) -> None:
        """Forget the warm start (an episode begins)."""
        self.plan_mean = self.initial_plan()

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        return {
            "algorithm": self.name,
            "dynamics": self.dynamics.state_dict(),
            "generator": self.generator.get_state().clone(),
            "rng": generator_state(self.rng),
            "plan_mean": self.plan_mean.clone(),
            "transitions": self.transitions,
            "model_fits": self.model_fits,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        owner = self.name
        require_keys(owner, state, "dynamics", "generator", "rng", "plan_mean", "transitions")
        self.dynamics.load_state_dict(state["dynamics"])
        self.generator.set_state(state["generator"])
        set_generator_state(self.rng, state["rng"])
        self.plan_mean = torch.as_tensor(state["plan_mean"]).clone()
        self.transitions = state_count(owner, state, "transitions")
        self.model_fits = state_count(owner, state, "model_fits")


def _nothing() -> None:
    return None


class GreedyPETS(AbstractPolicy):
    """``rk.greedy(pets)``: the same planner with a generator and a warm start of its own
    (seeded by ``seed``), so evaluating leaves the learner as it was."""

    def __init__(self, policy: PETS, seed: Any = None) -> None:
        self.policy = policy
        seed = 0 if seed is None else seed
        self.generator = torch.Generator().manual_seed(int_seed(spawn_seeds(seed, 1)[0]))
        self.plan_mean = policy.initial_plan()

    def __repr__(self) -> str:
        return f"GreedyPETS({self.policy!r})"

    def plan(self, env: Any) -> dict[AbstractStage, list[PlanStep]]:
        return {PRE_EPISODE_STAGE: [PlanStep(self.reset_plan, "GreedyPETS.reset_plan",
                                             where(GreedyPETS.reset_plan))]}  # fmt: skip

    def reset_plan(self) -> None:
        self.plan_mean = self.policy.initial_plan()

    def act(self, env: Any) -> Any:
        action, self.plan_mean = self.policy.plan_action(env.state, self.plan_mean,
                                                         self.generator)  # fmt: skip
        return action


@greedy.dispatch
def _(policy: PETS, seed: object = None, /):
    return GreedyPETS(policy, seed)


@statistics.dispatch
def _(policy: PETS, /):
    return {**policy.stats, "transitions": float(policy.transitions),
            "model_fits": float(policy.model_fits)}  # fmt: skip


# ---- PostAct: count the transition; retrain the model when due (PETS' timing) ----
@update.dispatch
def _(
    policy: PETS, trajectory: CircularArraySARTTrajectory, env: AbstractEnv, stage: PostActStage, /
):
    policy.transitions += 1
    if policy.model_due():
        policy.train_model(trajectory)
