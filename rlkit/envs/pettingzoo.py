"""``PettingZooEnv``: a turn-based PettingZoo (AEC) environment for ``rk.run``
(docs/how-to/multi-agent.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from ..core.multiagent import AbstractMultiAgentEnv
from .pettingzoo_common import (
    AgentObservations,
    AgentRecords,
    checked_seed,
    layers_state,
    load_layers_state,
)

__all__ = ["PettingZooEnv"]


class PettingZooEnv(AgentRecords, AbstractMultiAgentEnv):
    """Adapt a PettingZoo AEC environment (turn-based: tic-tac-toe, connect four, poker).

    ``current_agent`` is PettingZoo's ``agent_selection``; ``view(agent)`` is what one agent
    sees (an ``rk.AbstractEnv``: its observation, the reward it received since it last acted,
    its termination and truncation, its legal-action mask from the ``action_mask`` of its
    observation dict, or of its info). ``rewards`` are the last step's rewards by agent.
    Agents whose episode ended are stepped out (PettingZoo's ``step(None)``) by the adapter;
    the episode is over (``done``) when no agent is left. ``act`` refuses an action outside the
    acting agent's space or not legal now (``InvalidActionError`` naming the agent).

    Options: ``seed`` (the first reset's), ``observation_fn`` with ``observation_space`` (a
    transform of every agent's observation, e.g. a board to one integer for tabular learners),
    ``agent_id=True`` (the flat observation followed by the agent's one-hot id, for a policy
    shared by several agents).

    Example:
        >>> import rlkit as rk
        >>> from pettingzoo.classic import tictactoe_v3
        >>> env = rk.PettingZooEnv(tictactoe_v3.env(), seed=0)
        >>> policy = rk.MultiAgentPolicy({a: rk.RandomPolicy(seed=i)
        ...                               for i, a in enumerate(env.agents)})
        >>> hook = rk.run(policy, env, rk.StopAfterNEpisodes(3), rk.TotalRewardPerEpisode())
        >>> len(hook.rewards), sorted(hook.rewards[0])
        (3, ['player_1', 'player_2'])
    """

    def __init__(
        self,
        env: Any,
        *,
        seed: int | None = None,
        observation_fn: Callable[[Any], Any] | None = None,
        observation_space: gym.Space | None = None,
        agent_id: bool = False,
    ) -> None:
        for needed in ("observe", "last", "step", "reset", "possible_agents"):
            if not hasattr(type(env) if needed != "possible_agents" else env, needed):
                raise TypeError(
                    f"PettingZooEnv: expected a PettingZoo AEC env (e.g. tictactoe_v3.env()), "
                    f"got {type(env).__name__} without {needed!r}: {env!r:.80}; for a parallel "
                    f"env use rk.PettingZooParallelEnv"
                )
        self.env = env
        self._raw = getattr(env, "unwrapped", env)  # its attributes, read without the wrappers
        self._pending_seed = checked_seed("PettingZooEnv", seed)
        self._obs = AgentObservations(
            self, env, observation_fn, observation_space, agent_id, self._pending_seed
        )
        self.agents = self._obs.agents
        self.open_steps: list = []
        self._clear()

    def __repr__(self) -> str:
        return f"PettingZooEnv({self.env!r})"

    def _clear(self) -> None:
        self._clear_records()
        self._final: dict[Any, Any] = {}
        self._seen: dict[Any, Any] = {}  # observations of the current step, by agent

    # ---- the contract ----
    @property
    def current_agent(self) -> Any:  # type: ignore[override]
        """The agent to act (None once the episode is over)."""
        return None if self.done else self._raw.agent_selection

    def reset(self, seed: int | None = None) -> None:
        self.env.reset(seed=self._reset_seed(seed))
        self._clear()
        self.needs_reset = False
        self._check_agents()
        self._step_out_ended()

    def act(self, action: Any) -> None:
        if self.done or self.needs_reset:
            raise RuntimeError(f"{self!r}: the episode is over; reset the env before acting")
        agent = self._raw.agent_selection
        self._check_legal(agent, action, self._mask_of(agent))
        self._returns[agent] = 0.0  # its new step's reward starts now
        self._seen.clear()
        self.env.step(action)
        self._collect()
        self._step_out_ended()

    # ---- what the views read ----
    def _state_of(self, agent: Any) -> Any:
        return self._observed(agent)[0]

    def _mask_of(self, agent: Any) -> np.ndarray | None:
        return self._observed(agent)[1]

    def _observed(self, agent: Any) -> tuple[Any, np.ndarray | None]:
        """``(state, mask)`` of ``agent`` now: its final one once it left, else observed
        once per step."""
        if agent in self._final:
            return self._final[agent]
        seen = self._seen.get(agent)
        if seen is None:
            state, mask = self._obs.state(agent, self.env.observe(agent))
            if mask is None:
                info = getattr(self._raw, "infos", {}).get(agent, {})
                mask = info.get("action_mask") if isinstance(info, dict) else None
                mask = None if mask is None else np.asarray(mask, dtype=bool)
            seen = self._seen[agent] = (state, mask)
        return seen

    # ---- the steps of one agent's action ----
    def _collect(self) -> None:
        """The last step's rewards and done flags of every agent still in the game."""
        env = self._raw
        self.rewards = {agent: float(env.rewards.get(agent, 0.0)) for agent in self.agents}
        for agent in env.agents:
            self._returns[agent] += self.rewards[agent]
            self._terminated[agent] = bool(env.terminations.get(agent, False))
            self._truncated[agent] = bool(env.truncations.get(agent, False))
        self._check_agents()

    def _step_out_ended(self) -> None:
        """Step out the agents whose episode ended (their final observation is kept)."""
        env = self._raw
        while env.agents:
            agent = env.agent_selection
            if not (env.terminations.get(agent) or env.truncations.get(agent)):
                return
            self._final[agent] = self._observed(agent)
            self._seen.clear()
            self.env.step(None)
            if env.agents:  # rewards another agent gets as one leaves
                for other in env.agents:
                    self._returns[other] += float(env.rewards.get(other, 0.0))
        self.is_terminated = all(self._terminated.values())
        self.is_truncated = not self.is_terminated

    def _check_agents(self) -> None:
        unknown = [agent for agent in self._raw.agents if agent not in self._obs.index]
        if unknown:
            raise ValueError(
                f"{self!r}: the env reports agents {unknown} that are not among its possible "
                f"agents {list(self.agents)}"
            )

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """The adapter's per-agent records and the PettingZoo env's plain state, layer by
        layer (its attributes, generators and plain-data objects such as a board)."""
        return {
            **self._records_state(),
            "final": {a: [s, m] for a, (s, m) in self._final.items()},
            "open_steps": list(self.open_steps),
            "layers": layers_state(self.env),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved into an env built the same way."""
        load_layers_state(self, self.env, state["layers"])
        self._seen = {}
        self._load_records(state)
        self._final = {a: (s, m) for a, (s, m) in state["final"].items()}
        self.open_steps[:] = state["open_steps"]
