"""Artifacts of multi-agent policies (docs/how-to/multi-agent.md): an ``rk.MultiAgentPolicy``
is saved as its children's artifacts side by side (kind ``multi_agent``), and an
``rk.SelfPlay`` as its learner playing every seat.

``policy.json`` lists the agents in order, each with the index of its *member* (the children
that act for it; a policy shared by several agents is one member, saved once and loaded
shared), and every member's own description (as :func:`rk.save` writes it for that policy
alone); the tensors of member ``i`` are stored under ``"<i>/<name>"``. Every child must be a
policy :func:`rk.save` saves (tabular or DQN-family ``QBasedPolicy``, the policies of
``rk.build_policy``, loaded policies); any other, e.g. an ``rk.RandomPolicy`` opponent, is
refused naming its agent, before anything is written.

Loading gives an ``rk.MultiAgentPolicy`` of the loaded children (``predict`` takes a dict of
observations by agent); ``rk.load(path, env=...)`` checks each agent's spaces against
``env.view(agent)``'s.

Example:
    >>> import numpy as np, rlkit as rk, tempfile, os
    >>> from rlkit.deploy.q_based import TableLearner
    >>> child = rk.QBasedPolicy(TableLearner(np.array([[0.0, 1.0], [1.0, 0.0]])),
    ...                         rk.GreedyExplorer(seed=0))
    >>> path = os.path.join(tempfile.mkdtemp(), "players.rlkit")
    >>> rk.save(rk.MultiAgentPolicy.shared(child, ["a", "b"]), path)
    >>> loaded = rk.load(path)
    >>> loaded.policy_of("a") is loaded.policy_of("b"), loaded.predict({"a": 0, "b": 1})
    (True, {'a': array(1), 'b': array(0)})
"""

from __future__ import annotations

from typing import Any

from ..core.multiagent import AbstractMultiAgentEnv, AbstractParallelEnv
from ..policies.agent import Agent
from ..policies.multi_agent import MultiAgentPolicy
from ..policies.self_play import SelfPlay
from .errors import ArtifactError
from .registry import (
    Artifact,
    artifact_meta,
    check_fits,
    env_check,
    load_kind,
    loader,
    policy_artifact,
)

__all__ = ["MULTI_AGENT", "member_tensors"]

#: the artifact kind of a multi-agent policy
MULTI_AGENT = "multi_agent"


# ---- saving: every child's artifact, a shared child once ----
@policy_artifact.register
def _(policy: MultiAgentPolicy) -> Artifact:
    members: list[Any] = []  # the acting policies, in the order of their first agent
    index: dict[int, int] = {}
    agents = []
    for agent, child in policy.policies.items():
        acting = child.policy if isinstance(child, Agent) else child  # what rk.save saves
        _check_agent_name(agent)
        if id(acting) not in index:
            index[id(acting)] = len(members)
            members.append((agent, acting))
        agents.append([agent, index[id(acting)]])
    metas, tensors = [], {}
    for i, (agent, acting) in enumerate(members):
        artifact = _member_artifact(agent, acting, [a for a, m in agents if m == i])
        metas.append(artifact_meta(artifact))
        tensors.update({f"{i}/{name}": value for name, value in artifact.tensors.items()})
    algorithms = sorted({meta["algorithm"] for meta in metas})
    meta = {"agents": agents, "members": metas}
    return Artifact(MULTI_AGENT, "MultiAgent(" + ", ".join(algorithms) + ")", None, meta, tensors)


@policy_artifact.register
def _(policy: SelfPlay) -> Artifact:
    """A self-play policy's artifact is its learner's, playing every seat (the pool's frozen
    copies are training opponents, not the trained policy)."""
    learner = policy.learner
    acting = learner.policy if isinstance(learner, Agent) else learner  # no replay copied
    return policy_artifact(MultiAgentPolicy.shared(acting, policy.agents))


def _check_agent_name(agent: Any) -> None:
    if isinstance(agent, bool) or not isinstance(agent, str | int):
        raise TypeError(
            f"rk.save: the agent name {agent!r} ({type(agent).__name__}) cannot be stored in "
            f"policy.json; rlkit saves multi-agent policies whose agents are named by strings "
            f"or integers (PettingZoo's are strings)"
        )


def _member_artifact(agent: Any, acting: Any, agents: list) -> Artifact:
    try:
        artifact = policy_artifact(acting)
    except (TypeError, ValueError) as error:
        shared = f" (shared by agents {agents})" if len(agents) > 1 else ""
        raise type(error)(
            f"rk.save: the policy of agent {agent!r}{shared}, a {type(acting).__name__}, cannot "
            f"be saved: {error}"
        ) from error
    if artifact.kind == MULTI_AGENT:
        raise TypeError(
            f"rk.save: the policy of agent {agent!r} is itself a multi-agent policy; give each "
            f"agent a single-agent policy"
        )
    return artifact


# ---- loading: the children, then the MultiAgentPolicy ----
def member_tensors(tensors: dict[str, Any], i: int) -> dict[str, Any]:
    """The tensors of member ``i`` under their own names (without the ``"<i>/"`` prefix).

    Example:
        >>> member_tensors({"0/q": 1, "1/q": 2, "1/w": 3}, 1)
        {'q': 2, 'w': 3}
    """
    prefix = f"{i}/"
    return {k[len(prefix) :]: v for k, v in tensors.items() if k.startswith(prefix)}


def _members(meta: dict[str, Any]) -> tuple[list, list[dict[str, Any]]]:
    agents, members = meta["agents"], meta["members"]
    if not isinstance(agents, list) or not isinstance(members, list) or not agents:
        raise TypeError(f"agents and members must be non-empty lists, got {agents!r:.80}")
    for pair in agents:
        if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[1], int)
                and 0 <= pair[1] < len(members)):  # fmt: skip
            raise TypeError(f"an agent entry must be [agent, member index], got {pair!r:.80}")
    return agents, members


@loader(MULTI_AGENT)
def _(meta: dict[str, Any], tensors: dict[str, Any]) -> Any:
    agents, members = _members(meta)
    where = "rk.load"
    loaded = [
        load_kind(f"{where} (member {i})", member, member_tensors(tensors, i))
        for i, member in enumerate(members)
    ]
    policy = MultiAgentPolicy({agent: loaded[i] for agent, i in agents})
    policy.algorithm = meta["algorithm"]
    return policy


@env_check(MULTI_AGENT)
def _(where: str, meta: dict[str, Any], env: Any) -> None:
    """Each member's spaces are read (a malformed one is refused); with an env, every agent's
    spaces are checked against ``env.view(agent)``'s and the env's agents against the saved."""
    try:
        agents, members = _members(meta)
    except (KeyError, TypeError) as error:
        raise ArtifactError(f"{where}: malformed {MULTI_AGENT} artifact: {error!r}") from error
    for i, member in enumerate(members):
        if not isinstance(member, dict) or member.get("kind") == MULTI_AGENT:
            raise ArtifactError(f"{where}: member {i} is not a single-agent policy description")
        check_fits(f"{where} (member {i})", member, None)
    if env is None:
        return
    if not isinstance(env, AbstractMultiAgentEnv | AbstractParallelEnv):
        raise TypeError(
            f"{where}: a multi-agent policy (agents {[a for a, _ in agents]}) is checked "
            f"against a multi-agent env (rk.PettingZooEnv, rk.PettingZooParallelEnv), got "
            f"{type(env).__name__}: {env!r:.80}"
        )
    saved = [agent for agent, _ in agents]
    missing = [agent for agent in env.agents if agent not in saved]
    if missing:
        raise ValueError(
            f"{where}: the env ({type(env).__name__}) has agents {missing} the saved policy has "
            f"no child for (it has {saved})"
        )
    for agent, i in agents:
        if agent in env.agents:
            check_fits(f"{where} (agent {agent!r})", members[i], env.view(agent))
