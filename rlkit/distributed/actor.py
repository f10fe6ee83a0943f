"""One actor of an actor-learner split: its own environment (from the user's ``env_fn``) and
its own copy of the learner's policy; it acts ``n_steps`` steps at a time and returns them as
a chunk of arrays, reporting the version of the weights it acted with. The same class runs
in-process (``backend="local"``) and as a Ray actor (``backend="ray"``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.interfaces import AbstractEnv
from ..core.seeding import int_seed
from ..core.state import get_state, set_state

__all__ = ["Actor"]


class Actor:
    """Actor ``index``: ``env_fn()`` (an ``rk.AbstractEnv``), the acting copy of the learner's
    policy made by ``acting.actor_policy``, seeded from ``seed``'s children (environment,
    exploration)."""

    def __init__(
        self,
        env_fn: Callable[[], Any],
        policy: Any,
        acting: Any,
        index: int,
        seed: np.random.SeedSequence,
    ) -> None:
        import torch

        torch.set_num_threads(1)
        self.index = index
        env = env_fn()
        if not isinstance(env, AbstractEnv):
            raise TypeError(
                f"ActorLearner: env_fn() must return an rk.AbstractEnv (e.g. "
                f"lambda: rk.GymEnv('CartPole-v1')), got {type(env).__name__}: {env!r:.80}"
            )
        self.env = env
        env_seed, policy_seed = seed.spawn(2)
        self.first_seed: int | None = int_seed(env_seed)
        self.acting = acting
        self.policy = acting.actor_policy(policy, index, policy_seed)
        self.version = 0

    def describe(self) -> tuple[Any, Any, str]:
        """The environment's ``(state_space, action_space, name)``."""
        name = getattr(self.env, "name", type(self.env).__name__)
        return self.env.state_space, self.env.action_space, str(name)

    def set_weights(self, weights: dict[str, Any], version: int) -> None:
        """Load the learner's weights of ``version`` into the acting copy."""
        self.acting.network(self.policy).load_state_dict(weights)
        self.version = int(version)

    def run(self, n_steps: int, weights: dict[str, Any] | None, version: int) -> dict[str, Any]:
        """Load ``weights`` (when given), then act ``n_steps`` steps; the chunk: arrays with a
        leading ``n_steps`` dimension (``state``, ``action``, ``raw_action``, ``reward``,
        ``terminated``, ``truncated``, ``final_state``, ``extra_...``), ``last_state`` (what the
        next chunk starts from) and the ``version`` acted with."""
        if weights is not None:
            self.set_weights(weights, version)
        env, policy = self.env, self.policy
        rows: dict[str, list] = {}
        if env.needs_reset:
            self._reset()
        for _ in range(n_steps):
            state = np.array(env.state)
            action = policy.act(env)
            step = {"state": state, "action": np.asarray(action)}
            step["raw_action"] = np.asarray(getattr(policy, "last_action", [action]))[0]
            for key, value in getattr(policy, "last_extras", {}).items():
                step[f"extra_{key}"] = np.asarray(value)[0]
            env.act(action)
            step.update(
                reward=float(env.reward), terminated=bool(env.is_terminated),
                truncated=bool(env.is_truncated), final_state=np.array(env.state),
            )  # fmt: skip
            for key, value in step.items():
                rows.setdefault(key, []).append(value)
            if env.done:  # the next state the policy acts on is the reset one
                self._reset()
        chunk = {key: np.stack(values) for key, values in rows.items()}
        self.acting.chunk_extras(policy, chunk)
        chunk["last_state"] = np.array(env.state)
        chunk["version"] = self.version
        return chunk

    def _reset(self) -> None:
        seed, self.first_seed = self.first_seed, None
        self.env.reset(seed=seed)

    def state_dict(self) -> dict[str, Any]:
        return {
            "env": get_state(self.env),
            "policy": get_state(self.policy),
            "version": self.version,
            "first_seed": -1 if self.first_seed is None else self.first_seed,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        set_state(self.env, state["env"])
        set_state(self.policy, state["policy"])
        self.version = int(state["version"])
        first = int(state["first_seed"])
        self.first_seed = None if first < 0 else first

    def ping(self) -> int:
        """The actor's index (a Ray readiness check)."""
        return self.index
