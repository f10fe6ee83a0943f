"""The contracts of multi-agent runs (docs/how-to/multi-agent.md): turn-based and simultaneous
environments, and the policy that holds one child policy per agent.

A multi-agent environment is not an :class:`~rlkit.AbstractEnv`: ``run_loop`` dispatches on its
type to its own loop (:mod:`rlkit.core.multiagent_run`). What each agent sees is a *view*,
``env.view(agent)``, an ordinary :class:`~rlkit.AbstractEnv` (its observation, the reward it
received since it last acted, its own termination and truncation, its legal-action mask), so
every single-agent policy, trajectory and learner works for one agent unchanged.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from .interfaces import AbstractEnv, AbstractPolicy

__all__ = ["AbstractMultiAgentEnv", "AbstractParallelEnv", "AbstractMultiAgentPolicy"]


class _MultiAgentBase(ABC):
    """What both kinds of multi-agent environment share."""

    is_vector = False
    is_multiagent = True  # hooks use their multiagent_<stage> forms (AbstractHook.plan)
    n_envs = 1
    agents: tuple = ()  # every agent that may take part, in a fixed order
    rewards: dict | None = None  # reward of the last step, by agent
    needs_reset: bool = True
    is_terminated: bool = False  # every agent's episode ended by termination
    is_truncated: bool = False  # the episode is over and some agent's was truncated
    state: Any = None
    state_space: Any = None
    action_space: Any = None
    legal_action_mask: Any = None

    @property
    def reward(self) -> dict:
        """The rewards of the last step by agent (``rewards``): hooks read ``env.reward``."""
        return dict(self.rewards or {})

    @property
    def done(self) -> bool:
        """The episode is over: no agent is left to act."""
        return self.is_terminated or self.is_truncated

    @abstractmethod
    def view(self, agent: Any) -> AbstractEnv:
        """What ``agent`` sees: an :class:`~rlkit.AbstractEnv` (its observation, the reward it
        got since it last acted, its own done flags, its legal-action mask and spaces)."""

    @abstractmethod
    def reset(self, seed: int | None = None) -> None:
        """Start a new episode."""

    def close(self) -> None:  # noqa: B027 - optional to override
        """Release resources. The default does nothing."""


class AbstractMultiAgentEnv(_MultiAgentBase):
    """A turn-based (AEC) multi-agent environment: one agent acts at a time.

    ``current_agent`` is the agent to act; ``act(action)`` performs its action. ``open_steps``
    lists the agents that acted and whose step has not ended yet (the run loop ends an agent's
    step when it is next to act, or when the episode ends: the reward it receives in between,
    also from the other agents' actions, belongs to its action). ``rk.PettingZooEnv`` adapts
    PettingZoo AEC environments.

    Example:
        >>> import rlkit as rk
        >>> issubclass(rk.PettingZooEnv, rk.AbstractMultiAgentEnv)
        True
        >>> issubclass(rk.PettingZooEnv, rk.AbstractEnv)
        False
    """

    current_agent: Any = None
    open_steps: list

    @abstractmethod
    def act(self, action: Any) -> None:
        """Perform ``action`` for ``current_agent``."""


class AbstractParallelEnv(_MultiAgentBase):
    """A multi-agent environment whose live agents act at once (PettingZoo's parallel API).

    ``live_agents`` are the agents acting at the next step (agents leave when their episode
    ends, possibly before the others'); ``act(actions)`` takes a dict by agent.
    ``rk.PettingZooParallelEnv`` adapts PettingZoo parallel environments.

    Example:
        >>> import rlkit as rk
        >>> issubclass(rk.PettingZooParallelEnv, rk.AbstractParallelEnv)
        True
    """

    live_agents: tuple = ()

    @abstractmethod
    def act(self, actions: dict) -> None:
        """Perform one action per live agent (a dict by agent)."""


class AbstractMultiAgentPolicy(AbstractPolicy):
    """A policy made of one child policy per agent (``rk.MultiAgentPolicy``): the multi-agent
    run loops plan each child with its agent's view, and send each stage to the right child.

    Example:
        >>> import rlkit as rk
        >>> issubclass(rk.MultiAgentPolicy, rk.AbstractMultiAgentPolicy)
        True
    """

    @abstractmethod
    def policy_of(self, agent: Any) -> AbstractPolicy:
        """The child policy that acts (and learns) for ``agent``."""

    def act(self, env: Any) -> Any:
        """The acting agent's child's action in a turn-based env; a dict by live agent in a
        parallel env."""
        if isinstance(env, AbstractMultiAgentEnv):
            agent = env.current_agent
            return self.policy_of(agent).act(env.view(agent))
        if isinstance(env, AbstractParallelEnv):
            return {a: self.policy_of(a).act(env.view(a)) for a in env.live_agents}
        raise TypeError(
            f"{type(self).__name__}.act: expected a multi-agent env (rk.PettingZooEnv, "
            f"rk.PettingZooParallelEnv), got {type(env).__name__}: {env!r:.80}"
        )
