"""``AgentView``: one agent's view of a multi-agent env, an ordinary single-agent env.

A multi-agent env (``rk.PettingZooEnv``, ``rk.PettingZooParallelEnv``) gives each agent a view
(``env.view(agent)``): its observation (``state``), the reward it received since it last acted
(``reward``), its own ``is_terminated`` / ``is_truncated``, its ``legal_action_mask`` and its
spaces. Single-agent policies, trajectories and learners run on a view unchanged.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from ..core.interfaces import AbstractEnv

__all__ = ["AgentView", "observation_part", "with_agent_id", "agent_id_space"]


class AgentView(AbstractEnv):
    """What ``agent`` sees of ``owner`` (a multi-agent env adapter). It reads the owner's
    per-agent records (``_state_of``, ``_returns``, ``_terminated``, ``_truncated``,
    ``_mask_of``); ``act`` performs the agent's action in a turn-based env when it is its
    turn; the owner resets, never the view.

    Example:
        >>> import rlkit as rk
        >>> from pettingzoo.classic import tictactoe_v3
        >>> env = rk.PettingZooEnv(tictactoe_v3.env(), seed=0)
        >>> env.reset()
        >>> view = env.view("player_1")
        >>> view.state.shape, view.legal_action_mask.sum(), view.reward
        ((3, 3, 2), np.int64(9), 0.0)
    """

    def __init__(self, owner: Any, agent: Any, action_space: Any, state_space: Any) -> None:
        self.owner = owner
        self.agent = agent
        self.action_space = action_space
        self.state_space = state_space

    def __repr__(self) -> str:
        return f"AgentView({self.agent!r} of {type(self.owner).__name__})"

    @property
    def state(self) -> Any:  # type: ignore[override]
        return self.owner._state_of(self.agent)

    @property
    def reward(self) -> float:  # type: ignore[override]
        return float(self.owner._returns[self.agent])

    @property
    def is_terminated(self) -> bool:  # type: ignore[override]
        return self.owner._terminated[self.agent]

    @property
    def is_truncated(self) -> bool:  # type: ignore[override]
        return self.owner._truncated[self.agent]

    @property
    def needs_reset(self) -> bool:  # type: ignore[override]
        return self.owner.needs_reset

    @property
    def legal_action_mask(self) -> np.ndarray | None:
        return self.owner._mask_of(self.agent)

    def reset(self, seed: int | None = None) -> None:
        raise TypeError(
            f"{self!r}: an agent's view is not reset on its own; reset the multi-agent env "
            f"{self.owner!r}"
        )

    def act(self, action: Any) -> None:
        """Perform ``action`` for this agent in a turn-based env (when it is its turn)."""
        if not hasattr(self.owner, "current_agent"):
            raise TypeError(
                f"{self!r}: in a parallel env all live agents act at once: "
                f"env.act({{agent: action, ...}}), not one agent's view"
            )
        current = self.owner.current_agent
        if current != self.agent:
            raise ValueError(
                f"{self!r}: it is {current!r}'s turn, not {self.agent!r}'s: an action for "
                f"{self.agent!r} now is refused"
            )
        self.owner.act(action)


def observation_part(obs: Any) -> tuple[Any, np.ndarray | None]:
    """PettingZoo's observation of one agent split into ``(observation, action mask)``: a dict
    with ``"observation"`` (and ``"action_mask"``) gives its parts, anything else is the
    observation itself with no mask."""
    if isinstance(obs, dict) and "observation" in obs:
        mask = obs.get("action_mask")
        return obs["observation"], None if mask is None else np.asarray(mask, dtype=bool)
    return obs, None


def with_agent_id(obs: Any, index: int, n_agents: int) -> np.ndarray:
    """The observation flattened, followed by the one-hot id of the agent (SuperSuit's
    ``agent_indicator``): a shared policy tells the agents apart."""
    flat = np.asarray(obs, dtype=np.float32).reshape(-1)
    one_hot = np.zeros(n_agents, dtype=np.float32)
    one_hot[index] = 1.0
    return np.concatenate([flat, one_hot])


def agent_id_space(space: gym.Space, n_agents: int) -> gym.spaces.Box:
    """The space of :func:`with_agent_id`'s observations for observations of ``space``."""
    if not isinstance(space, gym.spaces.Box):
        raise TypeError(
            f"agent_id=True: the observation space must be a Box to append the agent id, got "
            f"{space!r}"
        )
    low = np.concatenate([np.asarray(space.low, np.float32).reshape(-1), np.zeros(n_agents)])
    high = np.concatenate([np.asarray(space.high, np.float32).reshape(-1), np.ones(n_agents)])
    return gym.spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)
