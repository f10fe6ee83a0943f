"""ES: evolution strategies (Salimans et al. 2017), a policy trained by the ``Evolutionary``
optimizer module alone, compiled by ``rk.build_policy``.

The policy acts deterministically (the mode of its action distribution). After every episode of
the run (which shows how the current policy does), one generation: ``num_samples`` antithetic
pairs of Gaussian perturbations (``noise_std``) of the policy network's parameters are scored by
:func:`es_loss`, minus the mean return of ``episodes_per_evaluation`` deterministic episodes on a
fitness environment of its own (the same reset seeds for the whole generation, new ones each
generation, drawn from the policy's generator), and the parameters move by ``lr`` along the
rank-shaped estimate of the gradient. No gradient is computed. The value head of the network is
not used.

The fitness environment is made with ``gymnasium.make(fitness_env)``; by default the id of the
training environment (a ``GymEnv``). Its steps are counted in the statistic ``fitness_steps``
(the run's own steps are only the episodes that show progress).

Example:
    >>> import rlkit as rk
    >>> env = rk.GymEnv("CartPole-v1", seed=0)
    >>> agent = rk.ES.agent(env, seed=0, num_samples=2)
    >>> hook = rk.run(agent, env, rk.StopAfterNEpisodes(2))
    >>> agent.policy.updates, rk.statistics(agent.policy)["fitness_steps"] > 0
    (2, True)
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch

from ...core.checks import instance_of, positive_int
from ...core.dispatch import update
from ...core.interfaces import AbstractEnv
from ...core.stages import PostActStage, PostEpisodeStage
from ...optimizers import Evolutionary, NonFiniteError, make
from ...policies.spaces import short_space, spaces_fit
from ...policies.stochastic import is_vector_env
from ...trajectories.rollout import RolloutTrajectory
from ..batch import Batch
from ..builder import BuiltPolicy, build_policy
from .models import actor_critic_model

__all__ = [
    "ES",
    "ES_DEFAULTS",
    "es_loss",
    "es_optimizer",
    "known_fitness_env",
    "play_episode",
    "es_update",
]

ES_DEFAULTS = {
    "lr": 0.05,
    "n_steps": 1,
    "num_samples": 16,
    "noise_std": 0.1,
    "episodes_per_evaluation": 1,
    "fitness_env": None,
    "optimizer_spec": None,
    "hidden": (16,),
    "activation": "tanh",
    "log_std_init": 0.0,
}


def play_episode(policy: BuiltPolicy, env: gym.Env, seed: int) -> tuple[float, int]:
    """Return and length of one episode of the policy's mode actions on a gymnasium env (legal
    actions only where its ``info`` has an ``action_mask``)."""
    obs, info = env.reset(seed=seed)
    box = isinstance(policy.action_space, gym.spaces.Box)
    total, steps = 0.0, 0
    while True:
        mask = info.get("action_mask")  # legal actions, as GymEnv reads them
        mask = None if mask is None else np.asarray(mask, dtype=bool)[None]
        with torch.no_grad():
            inputs = policy.model(policy.observation_tensor(obs)[None])
            action = policy.dist_class.from_inputs(inputs, policy.action_space, mask).mode()[0]
        action = action.cpu().numpy()
        if box:
            action = np.clip(action, policy.action_space.low, policy.action_space.high)
        else:
            action = action.item() if action.ndim == 0 else action
        obs, reward, terminated, truncated, info = env.step(action)
        total += float(reward)
        steps += 1
        if terminated or truncated:
            return total, steps


def es_loss(policy, model, dist_class, batch):
    """Minus the mean return of deterministic episodes from the reset seeds
    ``batch["reset_seeds"]`` on the policy's fitness environment (adds the steps played to
    ``policy.fitness_steps``)."""
    returns = []
    for seed in batch["reset_seeds"]:
        total, steps = play_episode(policy, policy.fitness_env, int(seed))
        policy.fitness_steps += steps
        returns.append(total)
    return torch.tensor(-float(np.mean(returns)), dtype=torch.float64)


def es_optimizer(config: dict[str, Any]) -> Evolutionary:
    """``Evolutionary(lr, num_samples, noise_std=...)``, or the module of ``optimizer_spec``."""
    if config["optimizer_spec"] is not None:
        module = make(config["optimizer_spec"])
        if not isinstance(module, Evolutionary):  # the fitness is no differentiable loss
            raise TypeError(
                f"ES: optimizer_spec must make an Evolutionary module (ES computes no gradients), "
                f"got {module!r}"
            )
        return module
    return Evolutionary(
        learning_rate=config["lr"], num_samples=config["num_samples"], noise_std=config["noise_std"]
    )


_ES = build_policy(
    "ES",
    loss_fn=es_loss,
    model_fn=actor_critic_model,
    optimizer=es_optimizer,
    defaults=ES_DEFAULTS,
)


class ES(_ES):
    """The ES policy (see the module docstring): acts by the mode of its distribution.

    Example:
        >>> import rlkit as rk
        >>> rk.explain(rk.ES(rk.GymEnv("CartPole-v1"), seed=0, num_samples=4).optimizer)
        ... # doctest: +ELLIPSIS
        Evolutionary(learning_rate=0.05, num_samples=4, noise_std=0.1, ...): computes its own step
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        env = args[0] if args else kwargs.get("env")
        if is_vector_env(env):
            raise ValueError(
                f"ES: runs on one environment (its generations follow the run's episodes), got "
                f"{type(env).__name__} of {env.n_envs} envs; give it an rk.GymEnv"
            )
        super().__init__(*args, **kwargs)  # reseeds the Evolutionary module from the seed
        positive_int("ES", "episodes_per_evaluation", self.config["episodes_per_evaluation"])
        fitness_id = self.config["fitness_env"]
        if fitness_id is not None:
            instance_of("ES", "fitness_env", fitness_id, str, "a gymnasium id or None")
            known_fitness_env(fitness_id)  # an unknown id is refused now, not at the end
        self.fitness_env: gym.Env | None = None
        self.fitness_steps = 0
        value_ids = {id(p) for p in self.model.vf.parameters()}
        self.evolved = [p for p in self.params if id(p) not in value_ids]

    def choose(self, dist):
        return dist.mode()

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "fitness_steps": self.fitness_steps}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.fitness_steps = int(state["fitness_steps"])


def known_fitness_env(env_id: str) -> None:
    """Refuse a ``fitness_env`` gymnasium does not know, naming ES, the setting and the id."""
    try:
        gym.spec(env_id)
    except gym.error.Error as error:
        raise ValueError(
            f"ES: fitness_env={env_id!r} is not a registered gymnasium environment "
            f"({type(error).__name__}: {error}); give the id of a registered one (e.g. "
            f"'CartPole-v1'), or None to evaluate on the training env's id"
        ) from error


def _fitness_env(policy: ES, env: Any) -> gym.Env:
    if policy.fitness_env is None:
        env_id = policy.config["fitness_env"]
        if env_id is None:
            spec = getattr(getattr(env, "env", None), "spec", None)
            if spec is None:
                raise ValueError(
                    f"ES: cannot tell which environment to evaluate fitness on from "
                    f"{type(env).__name__}; give fitness_env='<gymnasium id>'"
                )
            env_id = spec.id
        fitness_env = gym.make(env_id)
        if not spaces_fit(
            policy.state_space, policy.action_space,
            fitness_env.observation_space, fitness_env.action_space,
        ):  # fmt: skip
            fitness_env.close()
            raise ValueError(
                f"ES: the fitness env {env_id!r} has observations "
                f"{short_space(fitness_env.observation_space)} and actions "
                f"{short_space(fitness_env.action_space)}; the policy was made for "
                f"{short_space(policy.state_space)} and {short_space(policy.action_space)}"
            )
        policy.fitness_env = fitness_env
    return policy.fitness_env


def es_update(policy: ES, batch: Batch) -> None:
    """One generation on ``batch["reset_seeds"]``: one ``Evolutionary`` step on :func:`es_loss`."""
    before = policy.fitness_steps
    try:
        result = policy.optimizer.step(
            policy.evolved,
            lambda: type(policy).loss_fn(policy, policy.model, policy.dist_class, batch),
        )
    except NonFiniteError as error:
        policy.fitness_steps = before
        fitness = "fitness" if error.what == "loss" else "fitness at a perturbation"
        raise error.restated(
            f"ES: the {fitness} is {-error.value} at generation {policy.updates + 1} (a nan or "
            f"inf reward in fitness_env {policy.config['fitness_env'] or 'the training env'}?)"
        ) from None
    policy.updates += 1
    policy.stats = {
        "fitness": -float(result.loss_before),
        "best_perturbed_fitness": -float(result.statistics["perturbed_loss_min"]),
        "mean_perturbed_fitness": -float(result.statistics["perturbed_loss_mean"]),
        "fitness_steps": float(policy.fitness_steps - before),
    }


# ---- what ES learns from one batch (the reset seeds of a generation's evaluations) ----
@update.dispatch
def _(policy: ES, batch: Batch, /):
    es_update(policy, batch)


# ---- PostAct: count the transitions (ES's own timing: it learns once per episode, not from
# the rollout, which it clears) ----
@update.dispatch
def _(policy: ES, trajectory: RolloutTrajectory, env: AbstractEnv, stage: PostActStage, /):
    policy.transitions += 1
    trajectory.clear()


# ---- PostEpisode: one generation, on fresh reset seeds of the fitness environment ----
@update.dispatch
def _(policy: ES, trajectory: RolloutTrajectory, env: AbstractEnv, stage: PostEpisodeStage, /):
    _fitness_env(policy, env)
    seeds = policy.rng.integers(2**31, size=policy.config["episodes_per_evaluation"])
    update(policy, Batch({"reset_seeds": seeds}))
