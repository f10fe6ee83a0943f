"""``MultiAgentPolicy({agent: policy})``: one child policy per agent of a multi-agent env
(docs/how-to/multi-agent.md), as ReinforcementLearning.jl's ``MultiAgentPolicy``."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from ..core.dispatch import greedy
from ..core.interfaces import AbstractPolicy
from ..core.multiagent import AbstractMultiAgentPolicy
from ..core.state import get_state, require_keys, set_state
from .agent import Agent

__all__ = ["MultiAgentPolicy", "UnknownAgentError"]


class UnknownAgentError(KeyError):
    """A multi-agent policy has no child for an agent of the env (the message names it).

    Example:
        >>> import rlkit as rk
        >>> policy = rk.MultiAgentPolicy({"player_1": rk.RandomPolicy(seed=0)})
        >>> try:
        ...     policy.policy_of("player_2")
        ... except rk.UnknownAgentError as error:
        ...     print(error.args[0][:62])
        MultiAgentPolicy: no policy for agent 'player_2'; it has polic
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class MultiAgentPolicy(AbstractMultiAgentPolicy):
    """One child policy per agent: the multi-agent run loops send each stage to the acting
    agent's child, with that agent's view of the env (``env.view(agent)``), and PostEpisode to
    every child. Any single-agent policy is a child: ``rk.RandomPolicy``, an ``rk.Agent`` of a
    tabular ``QBasedPolicy``, of DQN, of PPO.

    **Parameter sharing**: the same policy object for several agents. A shared ``rk.Agent``
    keeps one policy (one set of parameters, one Q table) but each agent records its own
    episodes: the agents after the first get ``rk.Agent(agent.policy, <a copy of its
    trajectory>)``. ``MultiAgentPolicy.shared(policy, agents)`` is the
    short form; give the env ``agent_id=True`` to let the shared policy tell agents apart.

    A run on an env with an agent this policy has no child for fails before the first step with
    :class:`UnknownAgentError` naming the agent. Checkpoints save every child (``state_dict``).

    Example:
        >>> import rlkit as rk
        >>> from pettingzoo.classic import tictactoe_v3
        >>> env = rk.PettingZooEnv(tictactoe_v3.env(), seed=0)
        >>> policy = rk.MultiAgentPolicy({"player_1": rk.RandomPolicy(seed=1),
        ...                               "player_2": rk.RandomPolicy(seed=2)})
        >>> hook = rk.run(policy, env, rk.StopAfterNEpisodes(10), rk.TotalRewardPerEpisode())
        >>> sum(r["player_1"] + r["player_2"] for r in hook.rewards)  # zero-sum
        0.0
    """

    def __init__(self, policies: dict) -> None:
        if not isinstance(policies, dict) or not policies:
            raise TypeError(
                f"MultiAgentPolicy: expected a non-empty dict {{agent: policy}}, got "
                f"{type(policies).__name__}: {policies!r:.80}"
            )
        for agent, policy in policies.items():
            if not isinstance(policy, AbstractPolicy):
                raise TypeError(
                    f"MultiAgentPolicy: the policy of agent {agent!r} must be an "
                    f"rk.AbstractPolicy, got {type(policy).__name__}: {policy!r:.80}"
                )
        self.policies = _own_trajectories(policies)

    @classmethod
    def shared(cls, policy: AbstractPolicy, agents: Iterable) -> MultiAgentPolicy:
        """One policy for all ``agents`` (parameter sharing).

        Example:
            >>> import rlkit as rk
            >>> policy = rk.MultiAgentPolicy.shared(rk.RandomPolicy(seed=0), ["a", "b"])
            >>> policy.policy_of("a") is policy.policy_of("b")
            True
        """
        return cls(dict.fromkeys(agents, policy))

    def __repr__(self) -> str:
        return f"MultiAgentPolicy({self.policies!r})"

    def policy_of(self, agent: Any) -> AbstractPolicy:
        try:
            return self.policies[agent]
        except KeyError:
            raise UnknownAgentError(
                f"MultiAgentPolicy: no policy for agent {agent!r}; it has policies for "
                f"{list(self.policies)}. Give one for every agent of the env."
            ) from None

    # ---- predict: each agent's child, on plain numpy observations ----
    def predict(
        self, observations: dict, deterministic: bool = True, action_masks: dict | None = None
    ) -> dict:
        """``{agent: action}`` for ``{agent: observation}`` (one observation or a batch each):
        every agent's child's ``predict`` (:mod:`rlkit.policies.predict`), with that agent's
        legal-action mask from ``action_masks`` (a dict by agent; agents left out have none).
        An agent without a child is :class:`UnknownAgentError`, naming it.

        Example:
            >>> import numpy as np, rlkit as rk
            >>> from rlkit.deploy.q_based import TableLearner
            >>> child = rk.QBasedPolicy(TableLearner(np.eye(3)), rk.GreedyExplorer(seed=0))
            >>> policy = rk.MultiAgentPolicy({"x": child})
            >>> mask = {"x": [True, True, False]}
            >>> policy.predict({"x": 2}), policy.predict({"x": 2}, action_masks=mask)
            ({'x': array(2)}, {'x': array(0)})
        """
        if not isinstance(observations, dict):
            raise TypeError(
                f"MultiAgentPolicy.predict: expected a dict {{agent: observation}}, got "
                f"{type(observations).__name__}: {observations!r:.80}"
            )
        masks = action_masks or {}
        unknown = [agent for agent in masks if agent not in observations]
        if unknown:
            raise ValueError(
                f"MultiAgentPolicy.predict: action_masks for agents {unknown} that have no "
                f"observation (observations for {list(observations)})"
            )
        return {
            agent: _predict(self.policy_of(agent), agent, obs, deterministic, masks.get(agent))
            for agent, obs in observations.items()
        }

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """``{"policies": {agent: state}}``: every child's state."""
        return {"policies": {agent: get_state(p) for agent, p in self.policies.items()}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore every child from :meth:`state_dict`."""
        require_keys("MultiAgentPolicy", state, "policies")
        saved = state["policies"]
        if set(saved) != set(self.policies):
            raise ValueError(
                f"MultiAgentPolicy.load_state_dict: the saved agents {list(saved)} differ from "
                f"this policy's {list(self.policies)}"
            )
        for agent, policy in self.policies.items():
            set_state(policy, saved[agent])


def _predict(child: AbstractPolicy, agent: Any, obs: Any, deterministic: bool, mask: Any) -> Any:
    predict = getattr(child, "predict", None)
    if predict is None:
        raise TypeError(
            f"MultiAgentPolicy.predict: the policy of agent {agent!r}, {child!r:.80}, has no "
            f"predict (rk.load's policies, QBasedPolicy and the built policies have one)"
        )
    return predict(obs, deterministic=deterministic, action_masks=mask)


def _own_trajectories(policies: dict) -> dict:
    """A shared ``rk.Agent`` keeps its policy but gets one trajectory per agent (each agent's
    episodes are recorded apart; the first agent keeps the given trajectory, the others get a
    copy of it)."""
    seen: set[int] = set()
    own = {}
    for agent, policy in policies.items():
        if id(policy) in seen and isinstance(policy, Agent):
            own[agent] = Agent(policy.policy, copy.deepcopy(policy.trajectory))
        else:
            own[agent] = policy
        seen.add(id(policy))
    return own


@greedy.dispatch
def _(policy: MultiAgentPolicy, seed: object = None, /):
    children: dict[int, Any] = {}  # a shared policy stays shared in the greedy form
    greedy_children = {}
    for agent, child in policy.policies.items():
        acting = child.policy if isinstance(child, Agent) else child  # what greedy(Agent) uses
        if id(acting) not in children:
            children[id(acting)] = greedy(child, seed)
        greedy_children[agent] = children[id(acting)]
    return MultiAgentPolicy(greedy_children)
