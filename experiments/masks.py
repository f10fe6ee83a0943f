"""Recipes on an environment with invalid actions, masked as sb3-contrib's ``MaskablePPO`` masks
them (docs/how-to/action-masks.md).

* ``PPO_InvalidActionGrid``: PPO on ``rlkit/InvalidActionGrid-v0`` (a 7x7 maze where in every
  cell two of the four moves run into a wall or off the grid; see
  :mod:`rlkit.envs.toy.invalid_action_grid`), 4 envs, rollouts of 128 steps per env, minibatches
  of 64, 4 epochs, Adam 3e-4, gamma 0.99, gae_lambda 0.95, ent_coef 0.01, 50k steps. With
  ``masked=True`` (the default) the env's ``action_masks()`` reach the policy: it samples from
  the masked categorical and its loss rebuilds the same masked distribution from the rollout
  (log-probabilities and entropy over the legal actions only, as ``MaskablePPO``);
  ``--set masked=false`` runs the same PPO on the same env with the masks ignored (an invalid
  move is then a wasted step with a penalty), the contrast that shows what masking is worth.

``StepsToThreshold`` (the recipe's hook) records when each episode ends, so that
``steps_to_threshold`` can say after how many environment steps the mean return of the last
``window`` episodes first reached a threshold (benchmarks/structure.py ``--part masks``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

import rlkit as rk
from rlkit.core.seeding import spawn_seeds

from .policy_gradient import PPOParams

__all__ = [
    "MaskedPPOParams",
    "PPO_INVALID_ACTION_GRID",
    "StepsToThreshold",
    "steps_to_threshold",
    "INVALID_ACTION_GRID_THRESHOLD",
]

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

    run_fields: ClassVar[tuple[str, ...]] = ("total_steps", "n_envs", "device", "compile", "masked")


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
    env = rk.VectorGymEnv(
        "rlkit/InvalidActionGrid-v0", p.n_envs, seed=env_seed, use_masking=p.masked
    )
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
