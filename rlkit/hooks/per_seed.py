"""``TotalRewardPerSeed``: the returns of each seed's episodes when several seeds run in one
process (a ``SeedBlocksEnv``, docs/how-to/speed.md)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.interfaces import AbstractHook
from ..core.state import require_keys

__all__ = ["TotalRewardPerSeed"]


class TotalRewardPerSeed(AbstractHook):
    """The total reward of every finished episode, by seed: ``rewards[seed]`` lists the returns
    of the episodes of that seed's sub-envs, in the order they finished (what
    ``rk.TotalRewardPerEpisode`` records in a single run of that seed, up to the order of
    sub-envs finishing at the same step). It reads the env's ``seeds`` and ``block`` (sub-env
    ``j`` belongs to seed ``seeds[j // block]``); ``rewards`` (all seeds' episodes in finishing
    order) is there too, as hooks that read ``rewards`` expect.

    Example:
        >>> import rlkit as rk
        >>> env = rk.SeedBlocksEnv([rk.VectorGymEnv("CartPole-v1", 2, seed=s) for s in (3, 4)],
        ...                        [3, 4])
        >>> hook = rk.run(rk.RandomPolicy(seed=0), env, rk.StopAfterNSteps(400),
        ...               rk.TotalRewardPerSeed())
        >>> sorted(hook.per_seed), len(hook.rewards) == sum(map(len, hook.per_seed.values()))
        ([3, 4], True)
    """

    def __init__(self) -> None:
        self.per_seed: dict[int, list[float]] = {}
        self.rewards: list[float] = []
        self.current: Any = None

    def __repr__(self) -> str:
        return "TotalRewardPerSeed()"

    def vector_pre_experiment(self, policy: Any, env: Any) -> None:
        seeds = getattr(env, "seeds", None)
        if seeds is None or not hasattr(env, "block"):
            raise TypeError(
                f"TotalRewardPerSeed: the env must say which seed each sub-env belongs to "
                f"(an rk.SeedBlocksEnv), got {env!r:.80}"
            )
        self._owner = np.repeat(np.asarray(seeds), env.block)
        for seed in seeds:
            self.per_seed.setdefault(int(seed), [])
        if self.current is None or np.shape(self.current) != (env.n_envs,):
            self.current = np.zeros(env.n_envs)

    def vector_post_act(self, policy: Any, env: Any) -> None:
        self.current += getattr(env, "original_reward", env.reward)  # before VecNormalize
        done = env.done
        if done.any():
            for j in np.flatnonzero(done):
                value = float(self.current[j])
                self.per_seed[int(self._owner[j])].append(value)
                self.rewards.append(value)
                self.current[j] = 0.0

    def summary(self, last: int = 10) -> dict[int, float]:
        """Each seed's mean return over its ``last`` finished episodes (nan before any)."""
        return {
            seed: float(np.mean(values[-last:])) if values else float("nan")
            for seed, values in self.per_seed.items()
        }

    def state_dict(self) -> dict[str, Any]:
        return {
            "per_seed": {str(k): list(v) for k, v in self.per_seed.items()},
            "rewards": list(self.rewards),
            "current": None if self.current is None else [float(x) for x in self.current],
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        require_keys("TotalRewardPerSeed", state, "per_seed", "rewards", "current")
        self.per_seed = {int(k): [float(x) for x in v] for k, v in state["per_seed"].items()}
        self.rewards = [float(r) for r in state["rewards"]]
        current = state["current"]
        self.current = None if current is None else np.array(current, dtype=np.float64)
