"""Recipes on an environment with invalid actions, masked as sb3-contrib's ``MaskablePPO`` masks
them (docs/how-to/action-masks.md).

* ``PPO_InvalidActionGrid``: PPO on ``rlkit/InvalidActionGrid-v0`` (a 7x7 maze where, on average,
  two of the four moves of a cell run into a wall or off the grid; see
  :mod:`rlkit.envs.toy.invalid_action_grid`), 4 envs, rollouts of 128 steps per env, minibatches
  of 64, 4 epochs, Adam 3e-4, gamma 0.99, gae_lambda 0.95, ent_coef 0.01, 50k steps. With
  ``masked=True`` (the default) the env's ``action_masks()`` reach the policy: it samples from
  the masked categorical and its loss rebuilds the same masked distribution from the rollout
  (log-probabilities and entropy over the legal actions only, as ``MaskablePPO``);
  ``--set masked=false`` runs the same PPO on the same env with the masks ignored (an invalid
  move is then a wasted step with a penalty), the contrast that shows what masking is worth.

* ``DQN_InvalidActionGrid``: DQN on the same maze (1 env, 30k steps, MLP 64, Adam 1e-3, batch
  64, replay 30k, learning from 1,000 steps, one gradient step every 4 steps, target synced
  every 500 steps, epsilon from 1 to 0.05 over the first 30%, gamma 0.99). With ``masked=True``
  the explorer chooses among the legal actions only and the replay keeps the next states' masks
  (``legal_action_masks=True``), so the target's max ranges over the next state's legal actions
  (sb3-contrib has no masked DQN; this is the masked target of the issue); ``masked=false``:
  plain DQN.

``StepsToThreshold`` (the recipes' hook) records when each episode ends, so that
``steps_to_threshold`` can say after how many environment steps the mean return of the last
``window`` episodes first reached a threshold (benchmarks/structure.py ``--part masks``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

import rlkit as rk
from rlkit.core.seeding import int_seed, spawn_seeds

from .dqn import (
    DQNParams,
    RecipeSeeds,
    q_approximator,
    replay_sampler,
    zoo_controller,
    zoo_explorer,
)
from .policy_gradient import PPOParams

__all__ = [
    "MaskedPPOParams",
    "MaskedDQNParams",
    "PPO_INVALID_ACTION_GRID",
    "DQN_INVALID_ACTION_GRID",
    "StepsToThreshold",
    "steps_to_threshold",
    "INVALID_ACTION_GRID_THRESHOLD",
]

GRID = "rlkit/InvalidActionGrid-v0"

#: The return the masked-action recipe must reach (mean of 20 episodes): the best is 0.86
#: (14 moves), 0.8 means at most 20 steps and no invalid move on average.
INVALID_ACTION_GRID_THRESHOLD = 0.8


@dataclass(frozen=True)
class MaskedPPOParams(PPOParams):
    """PPO's hyperparameters (:class:`~experiments.policy_gradient.PPOParams`) and ``masked``:
    whether the env's legal-action masks reach the policy (False: the same run unmasked).

    Example:
        >>> p = MaskedPPOParams(total_steps=1000, masked=False)
        >>> p.masked, "masked" in p.algorithm_config()
        (False, False)
    """

    masked: bool = True

    run_fields: ClassVar[tuple[str, ...]] = (*PPOParams.run_fields, "masked")


PPO_INVALID_ACTION_GRID = MaskedPPOParams(
    total_steps=50_000,
    n_envs=4,
    n_steps=128,
    batch_size=64,
    n_epochs=4,
    lr=3e-4,
    gamma=0.99,
    gae_lambda=0.95,
    ent_coef=0.01,
)


@dataclass(frozen=True)
class MaskedDQNParams(DQNParams):
    """DQN's recipe hyperparameters (:class:`~experiments.dqn.DQNParams`) and ``masked``:
    whether the env's legal-action masks reach the explorer and the replay (False: plain DQN).

    Example:
        >>> MaskedDQNParams(**{**vars(DQN_INVALID_ACTION_GRID), "masked": False}).masked
        False
    """

    masked: bool = True


DQN_INVALID_ACTION_GRID = MaskedDQNParams(
    total_steps=30_000,
    lr=1e-3,
    batch_size=64,
    buffer_size=30_000,
    learning_starts=1000,
    gamma=0.99,
    target_update_interval=500,
    train_freq=4,
    gradient_steps=1,
    exploration_fraction=0.3,
    exploration_final_eps=0.05,
    hidden=(64,),
)


class StepsToThreshold(rk.TotalRewardPerEpisode):
    """:class:`rk.TotalRewardPerEpisode` that also records ``ends[i]``, the environment steps
    (transitions, all sub-envs together) taken when episode ``i`` finished.

    Example:
        >>> hook = rk.run(rk.RandomPolicy(seed=0), rk.VectorGymEnv("CartPole-v1", 2, seed=0),
        ...               rk.StopAfterNEpisodes(3), StepsToThreshold())
        >>> len(hook.ends) == len(hook.rewards), hook.ends == sorted(hook.ends)
        (True, True)
    """

    def __init__(self) -> None:
        super().__init__()
        self.ends: list[int] = []
        self.steps = 0

    def __repr__(self) -> str:
        return "StepsToThreshold()"

    def post_act(self, policy: Any, env: Any) -> None:
        self.steps += 1
        super().post_act(policy, env)

    def post_episode(self, policy: Any, env: Any) -> None:
        super().post_episode(policy, env)
        self.ends.append(self.steps)

    def vector_post_act(self, policy: Any, env: Any) -> None:
        self.steps += env.n_envs
        before = len(self.rewards)
        super().vector_post_act(policy, env)
        self.ends.extend([self.steps] * (len(self.rewards) - before))


def steps_to_threshold(
    rewards: list[float], ends: list[int], threshold: float, window: int = 20
) -> int | None:
    """The environment steps at which the mean return of the last ``window`` finished episodes
    first reached ``threshold`` (None: never).

    Example:
        >>> steps_to_threshold([0.0, 1.0, 1.0, 1.0], [10, 20, 30, 40], 1.0, window=2)
        30
        >>> steps_to_threshold([0.0, 0.5], [10, 20], 1.0, window=2) is None
        True
    """
    if len(rewards) < window:
        return None
    means = np.convolve(np.asarray(rewards, np.float64), np.ones(window) / window, "valid")
    reached = np.flatnonzero(means >= threshold)
    return None if len(reached) == 0 else int(ends[reached[0] + window - 1])


@rk.experiment
def PPO_InvalidActionGrid(
    seed: int = 0, p: MaskedPPOParams = PPO_INVALID_ACTION_GRID
) -> rk.Experiment:
    """PPO on the invalid-action maze with action masks (``--set masked=false``: without)."""
    env_seed, policy_seed = spawn_seeds(seed, 2)
    env = rk.VectorGymEnv(GRID, p.n_envs, seed=env_seed, use_masking=p.masked)
    if p.normalize:  # rk.VecNormalize (experiments/policy_gradient.py's normalize)
        env = rk.VecNormalize(env, gamma=p.gamma)
    agent = rk.PPO.agent(
        env,
        seed=policy_seed,
        device=p.device,
        compile=p.compile,
        **p.algorithm_config("PPO_InvalidActionGrid"),
    )
    return rk.Experiment(
        policy=agent,
        env=env,
        stop_condition=rk.StopAfterNSteps(p.total_steps),
        hook=StepsToThreshold(),
        description=(PPO_InvalidActionGrid.__doc__ or "").strip(),
        threads=1,
    )


@rk.experiment
def DQN_InvalidActionGrid(
    seed: int = 0, p: MaskedDQNParams = DQN_INVALID_ACTION_GRID
) -> rk.Experiment:
    """DQN on the invalid-action maze, masked acting and target max (``masked=false``: plain)."""
    s = RecipeSeeds.of(seed)
    if p.n_envs == 1:
        env: rk.AbstractEnv = rk.GymEnv(GRID, seed=int_seed(s.env), use_masking=p.masked)
    else:
        env = rk.VectorGymEnv(GRID, p.n_envs, seed=int_seed(s.env), use_masking=p.masked)
    q = q_approximator(env, p, s.network)
    learner = rk.DQNLearner(
        q,
        target=rk.TargetNetwork(q, sync_every=p.target_update_interval),
        sampler=replay_sampler(p, s.sampler),
        controller=zoo_controller(p),
        gamma=p.gamma,
        compile=p.compile,
    )
    replay = rk.CircularArraySARTTrajectory(
        p.buffer_size, env.state_space, env.action_space, legal_action_masks=p.masked
    )
    return rk.Experiment(
        policy=rk.Agent(rk.QBasedPolicy(learner, zoo_explorer(p, s.explorer)), replay),
        env=env,
        stop_condition=rk.StopAfterNSteps(p.total_steps),
        hook=StepsToThreshold(),
        description=(DQN_InvalidActionGrid.__doc__ or "").strip(),
        threads=1,
    )
