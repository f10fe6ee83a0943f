"""``PettingZooParallelEnv``: a PettingZoo parallel environment (simultaneous actions) for
``rk.run`` (docs/how-to/multi-agent.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from ..core.multiagent import AbstractParallelEnv
from .pettingzoo_common import (
    AgentObservations,
    AgentRecords,
    checked_seed,
    layers_state,
    load_layers_state,
)

__all__ = ["PettingZooParallelEnv"]


class PettingZooParallelEnv(AgentRecords, AbstractParallelEnv):
    """Adapt a PettingZoo parallel environment: every live agent acts at each step.

    ``live_agents`` are PettingZoo's ``agents`` (those still in the episode: an agent whose
    episode ends leaves, the others go on); ``act(actions)`` takes a dict with one action per
    live agent; ``view(agent)`` is what one agent sees (its observation, its last reward, its
    own termination and truncation, its action mask from an ``action_mask`` in its observation
    dict or info). After an agent left, its view keeps its final observation. The episode is
    over (``done``) when no agent is live. Observations, rewards or flags for agents the env
    did not declare (``possible_agents``) are refused with a ``ValueError`` naming them.

    Options as ``rk.PettingZooEnv``: ``seed``, ``observation_fn`` with ``observation_space``,
    ``agent_id=True`` (the agent's one-hot id after its flat observation, for parameter
    sharing, as SuperSuit's ``agent_indicator``).

    Example:
        >>> import rlkit as rk
        >>> from mpe2 import simple_spread_v3
        >>> env = rk.PettingZooParallelEnv(simple_spread_v3.parallel_env(max_cycles=5), seed=0)
        >>> policy = rk.MultiAgentPolicy.shared(rk.RandomPolicy(seed=0), env.agents)
        >>> hook = rk.run(policy, env, rk.StopAfterNEpisodes(2), rk.StepsPerEpisode())
        >>> hook.steps
        [5, 5]
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
        for needed in ("possible_agents", "step", "reset", "observation_space"):
            if not hasattr(env, needed):
                raise TypeError(
                    f"PettingZooParallelEnv: expected a PettingZoo parallel env (e.g. "
                    f"simple_spread_v3.parallel_env()), got {type(env).__name__} without "
                    f"{needed!r}: {env!r:.80}"
                )
        if hasattr(type(env), "observe") and hasattr(type(env), "last"):
            raise TypeError(
                f"PettingZooParallelEnv: {type(env).__name__} is a turn-based (AEC) env; use "
                f"rk.PettingZooEnv, or pettingzoo.utils.aec_to_parallel first"
            )
        self.env = env
        self._pending_seed = checked_seed("PettingZooParallelEnv", seed)
        self._obs = AgentObservations(
            self, env, observation_fn, observation_space, agent_id, self._pending_seed
        )
        self.agents = self._obs.agents
        self._clear()

    def __repr__(self) -> str:
        return f"PettingZooParallelEnv({self.env!r})"

    def _clear(self) -> None:
        self._clear_records()
        self._states: dict[Any, tuple[Any, Any]] = {}
        self.live_agents = ()

    def reset(self, seed: int | None = None) -> None:
        observations, infos = self.env.reset(seed=self._reset_seed(seed))
        self._clear()
        self.needs_reset = False
        self._record(observations, infos)
        self._update_live()

    def act(self, actions: dict) -> None:
        if self.done or self.needs_reset:
            raise RuntimeError(f"{self!r}: the episode is over; reset the env before acting")
        self._check_actions(actions)
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        for name, values in (
            ("rewards", rewards),
            ("terminations", terminations),
            ("truncations", truncations),
        ):
            self._check_known(name, values)
        self.rewards = {agent: float(rewards.get(agent, 0.0)) for agent in self.agents}
        for agent in actions:
            self._returns[agent] = self.rewards[agent]
            self._terminated[agent] = bool(terminations.get(agent, False))
            self._truncated[agent] = bool(truncations.get(agent, False))
        self._record(observations, infos)
        self._update_live()

    def _update_live(self) -> None:
        self.live_agents = tuple(a for a in self.env.agents if a in self._obs.index)
        self._check_known("agents", self.env.agents)
        if not self.live_agents:
            self.is_terminated = all(self._terminated.values())
            self.is_truncated = not self.is_terminated

    def _record(self, observations: dict, infos: dict) -> None:
        self._check_known("observations", observations)
        for agent, obs in observations.items():
            state, mask = self._obs.state(agent, obs)
            if mask is None:
                info = infos.get(agent, {}) if isinstance(infos, dict) else {}
                raw = info.get("action_mask") if isinstance(info, dict) else None
                mask = None if raw is None else np.asarray(raw, dtype=bool)
            self._states[agent] = (state, mask)

    def _check_known(self, what: str, values: Any) -> None:
        unknown = [agent for agent in values if agent not in self._obs.index]
        if unknown:
            raise ValueError(
                f"{self!r}: the env returned {what} for unknown agents {unknown}; its agents "
                f"(possible_agents) are {list(self.agents)}"
            )

    def _check_actions(self, actions: Any) -> None:
        if not isinstance(actions, dict):
            raise TypeError(
                f"{self!r}.act: expected a dict of actions by agent, got "
                f"{type(actions).__name__}: {actions!r:.80}"
            )
        missing = [a for a in self.live_agents if a not in actions]
        extra = [a for a in actions if a not in self.live_agents]
        if missing or extra:
            raise ValueError(
                f"{self!r}.act: expected one action for each live agent {list(self.live_agents)}"
                f"; missing {missing}, not live {extra}"
            )
        for agent, action in actions.items():
            self._check_legal(agent, action, self._states[agent][1])

    # ---- what the views read ----
    def _state_of(self, agent: Any) -> Any:
        return self._states[agent][0] if agent in self._states else None

    def _mask_of(self, agent: Any) -> np.ndarray | None:
        return self._states[agent][1] if agent in self._states else None

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """The per-agent records and the PettingZoo env's plain state, layer by layer."""
        return {
            **self._records_state(),
            "states": {a: [s, m] for a, (s, m) in self._states.items()},
            "live": list(self.live_agents),
            "layers": layers_state(self.env),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved into an env built the same way."""
        load_layers_state(self, self.env, state["layers"])
        self._load_records(state)
        self._states = {a: (s, m) for a, (s, m) in state["states"].items()}
        self.live_agents = tuple(state["live"])
