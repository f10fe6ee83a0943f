"""``SeedBlocksEnv``: the vector envs of several seeds' runs stepped as one vector env
(docs/how-to/speed.md, many seeds in one process).

Block ``i`` (sub-envs ``i * block`` to ``(i + 1) * block - 1``) is the vector env of seed
``seeds[i]``, built exactly as a single run of that seed builds it, so each seed's environments
see the same resets and dynamics as in its own run. ``state``, ``final_state``, ``reward`` and
the flags are the blocks' arrays concatenated; ``act`` hands each block its slice. Blocks of
default ``CartPole-v1`` envs are stepped as one numpy batch, with the same results
(:class:`~rlkit.envs.cartpole_batch.CartPoleBatch`).

Example:
    >>> import rlkit as rk
    >>> env = SeedBlocksEnv([rk.VectorGymEnv("CartPole-v1", 2, seed=s) for s in (0, 1)], [0, 1])
    >>> env.reset(); env.act([0, 1, 1, 0])
    >>> env.n_envs, env.block, env.seed_of(3), env.state.shape
    (4, 2, 1, (4, 4))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.interfaces import AbstractVectorEnv
from ..core.seeding import check_seeds
from ..core.state import require_keys
from .cartpole_batch import CartPoleBatch

__all__ = ["SeedBlocksEnv"]


class SeedBlocksEnv(AbstractVectorEnv):
    """The vector envs ``envs`` (one per seed of ``seeds``, each with ``block`` sub-envs and the
    same spaces) as one vector env of ``len(envs) * block`` sub-envs (module docstring).

    Example:
        >>> import rlkit as rk
        >>> env = rk.SeedBlocksEnv([rk.VectorGymEnv("CartPole-v1", 3, seed=s) for s in (5, 6)],
        ...                        [5, 6])
        >>> env.n_envs, [env.seed_of(j) for j in range(env.n_envs)]
        (6, [5, 5, 5, 6, 6, 6])
    """

    done: Any = None  # a plain attribute (kept current in reset/act), as VectorGymEnv's

    def __init__(self, envs: Sequence[AbstractVectorEnv], seeds: Sequence[int]) -> None:
        envs = list(envs)
        if not envs or not all(isinstance(e, AbstractVectorEnv) for e in envs):
            raise TypeError(
                f"SeedBlocksEnv: envs must be a non-empty list of vector envs (rk.VectorGymEnv), "
                f"got {envs!r:.120}"
            )
        if len(seeds) != len(envs):
            raise ValueError(
                f"SeedBlocksEnv: one seed per env expected, got {len(seeds)} seeds for "
                f"{len(envs)} envs"
            )
        sizes = {e.n_envs for e in envs}
        if len(sizes) != 1:
            raise ValueError(f"SeedBlocksEnv: every env must have as many sub-envs, got {sizes}")
        first = envs[0]
        for env in envs[1:]:
            if env.state_space != first.state_space or env.action_space != first.action_space:
                raise ValueError(
                    f"SeedBlocksEnv: the envs' spaces differ: {env.state_space}, "
                    f"{env.action_space} and {first.state_space}, {first.action_space}"
                )
        self.envs = envs
        self.seeds = check_seeds("SeedBlocksEnv", seeds)
        self.block = first.n_envs
        self.n_envs = self.block * len(envs)
        self.state_space, self.action_space = first.state_space, first.action_space
        self._batch = CartPoleBatch.of(envs)  # None unless every block is a default CartPole
        self._gather()

    def __repr__(self) -> str:
        return f"SeedBlocksEnv({self.name!r}, seeds={self.seeds}, block={self.block})"

    @property
    def name(self) -> str:
        """The sub-envs' name (their gymnasium id)."""
        return getattr(self.envs[0], "name", type(self.envs[0]).__name__)

    @property
    def needs_reset(self) -> bool:  # type: ignore[override]
        return any(e.needs_reset for e in self.envs)

    def seed_of(self, sub_env: int) -> int:
        """The seed whose run sub-env ``sub_env`` belongs to."""
        return self.seeds[sub_env // self.block]

    @property
    def legal_action_mask(self) -> np.ndarray | None:
        masks = [e.legal_action_mask for e in self.envs]
        return None if any(m is None for m in masks) else np.concatenate(masks)

    def _gather(self) -> None:
        envs = self.envs
        if any(e.state is None for e in envs):
            self.state = self.final_state = None
        else:
            self.state = np.concatenate([e.state for e in envs])
            self.final_state = np.concatenate([e.final_state for e in envs])
        self.reward = np.concatenate([np.asarray(e.reward, np.float64) for e in envs])
        self.is_terminated = np.concatenate([np.asarray(e.is_terminated, bool) for e in envs])
        self.is_truncated = np.concatenate([np.asarray(e.is_truncated, bool) for e in envs])
        self.done = self.is_terminated | self.is_truncated

    def reset(self, seed: Any = None) -> None:
        """Reset every block (``seed`` is refused: each block is seeded by its own run's seed)."""
        if seed is not None:
            raise ValueError(
                "SeedBlocksEnv.reset: each block is seeded by its own seed; reset(seed=...) "
                "would give every seed the same environments"
            )
        for env in self.envs:
            env.reset()
        self._gather()

    def act(self, actions: Any) -> None:
        """One action per sub-env; block ``i`` gets ``actions[i * block:(i + 1) * block]``."""
        actions = np.asarray(actions)
        out = None if self._batch is None else self._batch.step(actions)
        if out is not None:  # every block's CartPoles stepped as one numpy batch, bit for bit
            state, self.reward, self.is_terminated, self.is_truncated, final, self.done = out
            self.state, self.final_state = state, final
            return
        b = self.block
        for i, env in enumerate(self.envs):
            env.act(actions[i * b : (i + 1) * b])
        self._gather()

    def close(self) -> None:
        """Close every block."""
        for env in self.envs:
            close = getattr(env, "close", None)
            if close is not None:
                close()

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """Every block's state, and the seeds."""
        return {"seeds": list(self.seeds), "envs": [e.state_dict() for e in self.envs]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        require_keys(f"{self!r}", state, "seeds", "envs")
        if [int(s) for s in state["seeds"]] != self.seeds:
            raise ValueError(
                f"{self!r}.load_state_dict: the checkpoint holds seeds {list(state['seeds'])}, "
                f"this env {self.seeds}"
            )
        for env, saved in zip(self.envs, state["envs"], strict=True):
            env.load_state_dict(saved)
        self._gather()
