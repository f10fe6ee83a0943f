"""``OneEnvVector``: a single environment as a vector env of one sub-env, so that a seed whose
single run steps an ``rk.GymEnv`` (``DQN_CartPole`` with ``n_envs=1``) can be a block of an
:class:`~rlkit.envs.seed_blocks.SeedBlocksEnv` with exactly the episodes of its single run.

The wrapped env keeps its own seed and generator: ``reset`` is the env's ``reset`` (the first
one with the env's seed, later ones continuing its generator, as the run loop of a single env
resets it at each episode start), and an episode that ends in ``act`` is reset there (the
vector envs' same-step autoreset), ``final_state`` holding its real final observation.

Example:
    >>> import rlkit as rk
    >>> env = OneEnvVector(rk.GymEnv("CartPole-v1", seed=3))
    >>> env.reset(); env.act([1])
    >>> env.n_envs, env.state.shape, env.final_state.shape, env.reward.tolist()
    (1, (1, 4), (1, 4), [1.0])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.interfaces import AbstractEnv, AbstractVectorEnv
from ...core.state import require_keys

__all__ = ["OneEnvVector"]


class OneEnvVector(AbstractVectorEnv):
    """The single env ``env`` as a vector env of one sub-env (module docstring): its states,
    rewards and flags as arrays of one row, reset in ``act`` when an episode ends.

    Example:
        >>> import rlkit as rk
        >>> single = rk.GymEnv("CartPole-v1", seed=3); single.reset()
        >>> vector = rk.OneEnvVector(rk.GymEnv("CartPole-v1", seed=3)); vector.reset()
        >>> bool((vector.state[0] == single.state).all())
        True
    """

    done: Any = None

    def __init__(self, env: AbstractEnv) -> None:
        if not isinstance(env, AbstractEnv):
            raise TypeError(
                f"OneEnvVector: env must be a single rk.AbstractEnv (e.g. rk.GymEnv), got "
                f"{type(env).__name__}: {env!r:.80}"
            )
        self.env = env
        self.n_envs = 1
        self.state_space, self.action_space = env.state_space, env.action_space
        self.state = self.final_state = None
        self.reward = np.zeros(1)
        self.is_terminated = np.zeros(1, bool)
        self.is_truncated = np.zeros(1, bool)
        self.done = np.zeros(1, bool)
        self.needs_reset = True

    def __repr__(self) -> str:
        return f"OneEnvVector({self.env!r})"

    @property
    def name(self) -> str:
        """The wrapped env's name (its gymnasium id)."""
        return getattr(self.env, "name", type(self.env).__name__)

    @property
    def legal_action_mask(self) -> np.ndarray | None:
        mask = self.env.legal_action_mask
        return None if mask is None else np.asarray(mask)[None]

    def reset(self, seed: Any = None) -> None:
        """Reset the env (``seed``: as the env's own ``reset``)."""
        self.env.reset(seed)
        self.state = self.final_state = np.asarray(self.env.state)[None].copy()
        self.reward = np.zeros(1)
        self.is_terminated = np.zeros(1, bool)
        self.is_truncated = np.zeros(1, bool)
        self.done = np.zeros(1, bool)
        self.needs_reset = False

    def act(self, actions: Any) -> None:
        """Perform ``actions[0]``; an episode that ends is reset now (``final_state``: its
        real final observation)."""
        env = self.env
        env.act(np.asarray(actions)[0])
        self.final_state = np.asarray(env.state)[None].copy()
        self.reward = np.array([float(env.reward)])
        self.is_terminated = np.array([bool(env.is_terminated)])
        self.is_truncated = np.array([bool(env.is_truncated)])
        self.done = self.is_terminated | self.is_truncated
        if self.done[0]:
            env.reset()
            self.state = np.asarray(env.state)[None].copy()
        else:
            self.state = self.final_state

    def close(self) -> None:
        """Close the wrapped env."""
        close = getattr(self.env, "close", None)
        if close is not None:
            close()

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """The wrapped env's state and this adapter's arrays."""
        return {
            "env": self.env.state_dict(),
            "state": None if self.state is None else self.state.copy(),
            "final_state": None if self.final_state is None else self.final_state.copy(),
            "reward": self.reward.copy(),
            "is_terminated": self.is_terminated.copy(),
            "is_truncated": self.is_truncated.copy(),
            "needs_reset": self.needs_reset,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved."""
        require_keys(f"{self!r}", state, "env", "state", "final_state", "reward",
                     "is_terminated", "is_truncated", "needs_reset")  # fmt: skip
        self.env.load_state_dict(state["env"])
        for key in ("state", "final_state"):
            value = state[key]
            setattr(self, key, None if value is None else np.array(value))
        self.reward = np.array(state["reward"], dtype=np.float64)
        self.is_terminated = np.array(state["is_terminated"], dtype=bool)
        self.is_truncated = np.array(state["is_truncated"], dtype=bool)
        self.done = self.is_terminated | self.is_truncated
        self.needs_reset = bool(state["needs_reset"])
