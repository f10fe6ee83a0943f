"""What the two PettingZoo adapters share: checking the arguments, each agent's spaces and
observation (with an ``observation_fn`` and the agent-id feature), the per-agent records
(rewards, returns, done flags, views, the pending seed, legal actions) and the checkpoint state
of a PettingZoo env (its plain attributes and generators, layer by layer)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from ..core.checks import non_negative_int
from ..core.interfaces import InvalidActionError
from ..core.state import attribute_state, is_plain, load_attribute_state
from .agent_view import AgentView, agent_id_space, observation_part, with_agent_id
from .space_seeds import seed_space_pair

__all__ = [
    "AgentObservations",
    "AgentRecords",
    "checked_seed",
    "inner_space",
    "layers_state",
    "load_layers_state",
]


def checked_seed(owner: str, seed: Any) -> int | None:
    """None, or ``seed`` as an int >= 0."""
    return None if seed is None else non_negative_int(owner, "seed", seed)


class AgentObservations:
    """Each agent's spaces, view and observation transform."""

    def __init__(
        self,
        owner: Any,
        env: Any,
        observation_fn: Callable[[Any], Any] | None,
        observation_space: gym.Space | None,
        agent_id: bool,
        seed: int | None = None,
    ) -> None:
        name = type(owner).__name__
        if observation_fn is not None and not callable(observation_fn):
            raise TypeError(
                f"{name}: observation_fn must be callable (observation -> state), got "
                f"{type(observation_fn).__name__}: {observation_fn!r}"
            )
        if (observation_fn is None) != (observation_space is None):
            raise ValueError(
                f"{name}: observation_fn and observation_space go together (the space of the "
                f"states observation_fn returns); got only "
                f"{'observation_fn' if observation_space is None else 'observation_space'}"
            )
        if not isinstance(agent_id, bool):
            raise TypeError(f"{name}: agent_id must be True or False, got {agent_id!r}")
        self.agents = tuple(env.possible_agents)
        self.index = {agent: i for i, agent in enumerate(self.agents)}
        self.observation_fn = observation_fn
        self.agent_id = agent_id
        self.views: dict[Any, AgentView] = {}
        for agent in self.agents:
            space = observation_space or inner_space(env.observation_space(agent))
            if agent_id:
                space = agent_id_space(space, len(self.agents))
            view = AgentView(owner, agent, env.action_space(agent), space)
            seed_space_pair(view.action_space, view.state_space, seed, self.index[agent])
            self.views[agent] = view

    def state(self, agent: Any, obs: Any) -> tuple[Any, np.ndarray | None]:
        """``(state, mask)`` of ``agent`` from its raw PettingZoo observation."""
        observation, mask = observation_part(obs)
        if self.observation_fn is not None:
            observation = self.observation_fn(observation)
        if self.agent_id:
            observation = with_agent_id(observation, self.index[agent], len(self.agents))
        return observation, mask


class AgentRecords:
    """The per-agent records both adapters keep: the last step's ``rewards``, each agent's
    return in the current step (``_returns``), its ``_terminated`` / ``_truncated`` flags, its
    view (``view``), the seed the next reset takes, the legal-action check, and their part of
    the checkpoint state. The adapters set ``_obs`` (an :class:`AgentObservations`),
    ``agents`` and ``_pending_seed``."""

    _obs: AgentObservations
    agents: tuple
    _pending_seed: int | None

    def _clear_records(self) -> None:
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._returns = dict.fromkeys(self.agents, 0.0)
        self._terminated = dict.fromkeys(self.agents, False)
        self._truncated = dict.fromkeys(self.agents, False)
        self.is_terminated = self.is_truncated = False

    def view(self, agent: Any) -> AgentView:
        if agent not in self._obs.views:
            raise KeyError(f"{self!r}: no agent {agent!r}; its agents are {list(self.agents)}")
        return self._obs.views[agent]

    def _reset_seed(self, seed: int | None) -> int | None:
        """``seed`` (checked), else the seed given at construction, once."""
        seed = checked_seed(f"{type(self).__name__}.reset", seed)
        if seed is None:
            seed, self._pending_seed = self._pending_seed, None
        return seed

    def _check_legal(self, agent: Any, action: Any, mask: np.ndarray | None) -> None:
        space = self.env.action_space(agent)  # type: ignore[attr-defined]
        if not space.contains(np.asarray(action) if isinstance(action, list) else action):
            raise InvalidActionError(
                f"{self!r}: action {action!r} of {agent!r} is not in its action space {space}"
            )
        if mask is not None and not mask[int(action)]:
            raise InvalidActionError(
                f"{self!r}: action {action!r} is not legal for {agent!r} now; its legal "
                f"actions are {np.flatnonzero(mask).tolist()}"
            )

    def _records_state(self) -> dict[str, Any]:
        return {
            "rewards": dict(self.rewards),
            "returns": dict(self._returns),
            "terminated": dict(self._terminated),
            "truncated": dict(self._truncated),
            "flags": [self.is_terminated, self.is_truncated, self.needs_reset],  # type: ignore[attr-defined]
            "pending_seed": self._pending_seed,
        }

    def _load_records(self, state: dict[str, Any]) -> None:
        self.rewards = dict(state["rewards"])
        self._returns = dict(state["returns"])
        self._terminated = dict(state["terminated"])
        self._truncated = dict(state["truncated"])
        self.is_terminated, self.is_truncated, self.needs_reset = state["flags"]
        self._pending_seed = state["pending_seed"]


def inner_space(space: gym.Space) -> gym.Space:
    """The ``"observation"`` part of a dict space with an action mask, else the space."""
    if isinstance(space, gym.spaces.Dict) and "observation" in space.spaces:
        return space.spaces["observation"]
    return space


# ---- checkpoints: the plain state of every layer of a PettingZoo env ----

_SKIP = ("metadata", "render_mode", "possible_agents", "observation_spaces", "action_spaces")


def _layers(env: Any) -> list[Any]:
    layers = [env]
    while hasattr(layers[-1], "env") and layers[-1].env is not layers[-1]:
        layers.append(layers[-1].env)
    return layers


def _data_objects(layer: Any) -> dict[str, Any]:
    """Attributes that are objects holding only plain data (a board, an agent selector)."""
    found = {}
    for name, value in vars(layer).items():
        attributes = getattr(value, "__dict__", None)
        if name in _SKIP or not attributes or is_plain(value) or isinstance(value, type):
            continue
        if hasattr(value, "possible_agents") or isinstance(value, gym.Space):
            continue  # an env (the next layer) or a space
        if all(is_plain(v) or isinstance(v, np.random.Generator) for v in attributes.values()):
            found[name] = attribute_state(value)
    return found


def layers_state(env: Any) -> list[dict[str, Any]]:
    """Each layer's plain attributes, generators and data objects (see ``GymEnv.state_dict``:
    engines and other state in foreign objects are not saved)."""
    return [
        {
            "type": type(layer).__qualname__,
            "attributes": attribute_state(layer, exclude=_SKIP),
            "objects": _data_objects(layer),
        }
        for layer in _layers(env)
    ]


def load_layers_state(owner: Any, env: Any, saved: list[dict[str, Any]]) -> None:
    """Restore :func:`layers_state` into an env built the same way."""
    layers = _layers(env)
    if [s["type"] for s in saved] != [type(layer).__qualname__ for layer in layers]:
        raise ValueError(
            f"{owner!r}.load_state_dict: the saved wrapper chain {[s['type'] for s in saved]} "
            f"differs from this environment's {[type(x).__qualname__ for x in layers]}"
        )
    for layer, state in zip(layers, saved, strict=True):
        load_attribute_state(layer, state["attributes"])
        for name, attributes in state["objects"].items():
            load_attribute_state(getattr(layer, name), attributes)
