"""``RandomPolicy``: uniformly random legal actions."""

from __future__ import annotations

import copy
from typing import Any

import gymnasium as gym
import numpy as np

from ..core.interfaces import AbstractPolicy, AbstractVectorEnv
from ..core.state import generator_state, set_generator_state

__all__ = ["RandomPolicy"]


class RandomPolicy(AbstractPolicy):
    """Choose uniformly among the legal actions of the env's action space.

    With a vector env (``rk.VectorGymEnv``) it returns one action per sub-env, an array of shape
    ``(n_envs, *action_shape)``, drawn at once.

    Args:
        seed: seed of the policy's own generator (an int, a ``SeedSequence`` or a
            ``numpy.random.Generator``); nothing reads global random state.

    Example:
        >>> import rlkit as rk
        >>> policy = rk.RandomPolicy(seed=0)
        >>> env = rk.GymEnv("CliffWalking-v1", seed=0); env.reset()
        >>> policy(env) in range(4)
        True
    """

    def __init__(self, seed: int | np.random.SeedSequence | np.random.Generator | None = None):
        self.rng = np.random.default_rng(seed)
        self._spaces: dict[int, gym.Space] = {}
        self._restored: dict[str, dict[str, Any]] = {}  # saved generators of space copies

    def __repr__(self) -> str:
        return "RandomPolicy()"

    def act(self, env: Any) -> Any:
        if getattr(env, "is_vector", False):
            return self._act_batch(env)
        space = env.action_space
        mask = env.legal_action_mask
        if type(space) is gym.spaces.Discrete:
            if mask is None:
                return space.start + self.rng.integers(space.n)
            legal = np.flatnonzero(mask)
            if legal.size == 0:
                raise ValueError(
                    f"RandomPolicy: the legal-action mask of {env!r} allows no action "
                    f"(all {len(mask)} entries are False); expected at least one legal action "
                    f"in a state that is not done"
                )
            return space.start + self.rng.choice(legal)
        return (
            self._own_copy(space).sample(mask=mask)
            if mask is not None
            else (self._own_copy(space).sample())
        )

    def _act_batch(self, env: AbstractVectorEnv) -> np.ndarray:
        """One action per sub-env of a vector env (drawn at once for a discrete space)."""
        space, masks, n = env.action_space, env.legal_action_mask, env.n_envs
        if type(space) is gym.spaces.Discrete:
            if masks is None:  # floor(u * n), as gymnasium samples (faster than integers)
                actions = (self.rng.random(n) * int(space.n)).astype(np.int64)
                return actions + int(space.start) if space.start else actions
            return space.start + np.array(
                [self.rng.choice(np.flatnonzero(mask)) for mask in masks], dtype=np.int64
            )
        own = self._own_copy(space)
        if masks is None:
            return np.stack([np.asarray(own.sample()) for _ in range(n)])
        return np.stack([np.asarray(own.sample(mask=mask)) for mask in masks])

    def _own_copy(self, space: gym.Space) -> gym.Space:
        """A copy of ``space`` seeded from this policy's generator (the env's stays untouched)."""
        own = self._spaces.get(id(space))
        if own is None:
            own = copy.deepcopy(space)
            restored = self._restored.pop(repr(space), None)
            if restored is not None:  # the copy a checkpointed run had made of this space
                for rng, rng_state in zip(_generators(own), restored, strict=True):
                    set_generator_state(rng, rng_state)
            else:
                own.seed(int(self.rng.integers(2**63 - 1)))
            self._spaces[id(space)] = own
        return own

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """The generator and the generators of the policy's copies of non-discrete spaces
        (keyed by the space's ``repr``)."""
        spaces = dict(self._restored)
        for own in self._spaces.values():
            spaces[repr(own)] = [generator_state(rng) for rng in _generators(own)]
        return {"rng": generator_state(self.rng), "spaces": spaces}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a state saved by :meth:`state_dict`; space copies are rebuilt on first use."""
        set_generator_state(self.rng, state["rng"])
        self._spaces = {}
        self._restored = dict(state["spaces"])


def _generators(space: gym.Space) -> list[np.random.Generator]:
    """The generators of a space and of its subspaces (Tuple, Dict, Sequence, Graph, ...)."""
    found = [space.np_random]
    subspaces = getattr(space, "spaces", None)
    if isinstance(subspaces, dict):
        subspaces = list(subspaces.values())
    for sub in list(subspaces or ()) + [
        getattr(space, name, None) for name in ("feature_space", "node_space", "edge_space")
    ]:
        if isinstance(sub, gym.Space):
            found.extend(_generators(sub))
    return found
