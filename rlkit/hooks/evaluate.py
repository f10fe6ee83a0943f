"""Evaluating a policy greedily on a separate environment: ``rk.evaluate``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.checks import positive_int
from ..core.dispatch import greedy
from ..core.interfaces import AbstractEnv
from ..core.plan import evaluation_only
from ..core.run import run
from ..core.seeding import int_seed, spawn_seeds
from ..core.stop_conditions import StopAfterNEpisodes
from .basic import TotalRewardPerEpisode

__all__ = ["EvaluationResult", "evaluate"]


@dataclass(frozen=True)
class EvaluationResult:
    """Returns of the evaluation episodes and their mean and (population) standard deviation."""

    mean: float
    std: float
    returns: tuple[float, ...]

    def __str__(self) -> str:
        return f"{self.mean:.2f} +/- {self.std:.2f} over {len(self.returns)} episodes"


def evaluate(
    policy: Any,
    env: Any,
    n_episodes: int = 20,
    *,
    seed: int | np.random.SeedSequence | None = None,
) -> EvaluationResult:
    """Run ``rk.greedy(policy)`` for ``n_episodes`` whole episodes on ``env`` and report the
    returns. Nothing learns and the training environment is not touched: pass a separate env.

    ``env`` is reset first (with a seed derived from ``seed`` when given, so the same seed
    evaluates on the same initial states); an episode ``env`` was in the middle of is abandoned.

    Example:
        >>> import rlkit as rk
        >>> result = rk.evaluate(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1"), 5, seed=0)
        >>> len(result.returns), result.mean > 0
        (5, True)
    """
    n_episodes = positive_int("evaluate", "n_episodes", n_episodes)
    if not isinstance(env, AbstractEnv):
        hint = f"rk.GymEnv({env!r})" if isinstance(env, str) else "rk.GymEnv(env)"
        raise TypeError(
            f"evaluate: env must be an rk.AbstractEnv (wrap gymnasium environments: {hint}), "
            f"got {type(env).__name__}: {env!r}"
        )
    if seed is None:
        env_seed, explorer_seed = None, None
    else:
        env_sequence, explorer_seed = spawn_seeds(seed, 2)
        env_seed = int_seed(env_sequence)
    evaluated = greedy(policy, explorer_seed)
    env.reset(seed=env_seed)  # the run continues this fresh episode
    with evaluation_only():  # nothing is meant to learn here
        hook = run(evaluated, env, StopAfterNEpisodes(int(n_episodes)), TotalRewardPerEpisode())
    returns = np.asarray(hook.rewards, dtype=np.float64)
    return EvaluationResult(float(returns.mean()), float(returns.std()), tuple(returns.tolist()))
