"""How each kind of trained policy becomes an artifact and back: the generic function
:func:`policy_artifact` (``functools.singledispatch`` on the policy's type) and the loaders by
kind. A new algorithm adds one small method::

    @policy_artifact.register
    def _(policy: MyPolicy) -> Artifact:
        return Artifact("my_kind", algorithm="Mine", spaces=(obs_space, action_space),
                        meta={...}, tensors={...})

    @loader("my_kind")
    def _(meta, tensors):
        return MyInferencePolicy(...)

The bundled kinds are ``q_table`` and ``q_network`` (:mod:`rlkit.deploy.q_based`),
``stochastic`` and ``actor`` (:mod:`rlkit.deploy.built`).

Example:
    >>> policy_artifact(object())
    Traceback (most recent call last):
    ...
    TypeError: rk.save: no artifact for a object; rlkit saves QBasedPolicy (tabular and DQN family), the policies of rk.build_policy (PPO, A2C, VPG, TRPO, ES, SAC, TD3, DDPG) and policies returned by rk.load
"""  # noqa: E501

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import ArtifactError

__all__ = ["Artifact", "policy_artifact", "loader", "load_kind"]


@dataclass
class Artifact:
    """What a policy saves: its kind (which loader rebuilds it), the algorithm's name, its
    observation and action spaces, the kind's JSON description and its tensors."""

    kind: str
    algorithm: str
    spaces: tuple[Any, Any]
    meta: dict[str, Any] = field(default_factory=dict)
    tensors: dict[str, Any] = field(default_factory=dict)


@functools.singledispatch
def policy_artifact(policy: Any) -> Artifact:
    """The :class:`Artifact` of a trained ``policy`` (one method per policy type)."""
    raise TypeError(
        f"rk.save: no artifact for a {type(policy).__name__}; rlkit saves QBasedPolicy (tabular "
        f"and DQN family), the policies of rk.build_policy (PPO, A2C, VPG, TRPO, ES, SAC, TD3, "
        f"DDPG) and policies returned by rk.load"
    )


_LOADERS: dict[str, Callable[[dict[str, Any], dict[str, Any]], Any]] = {}


def loader(kind: str) -> Callable:
    """Register ``fn(meta, tensors) -> policy`` as the loader of artifacts of ``kind``."""

    def register(fn: Callable) -> Callable:
        _LOADERS[kind] = fn
        return fn

    return register


def load_kind(where: str, meta: dict[str, Any], tensors: dict[str, Any]) -> Any:
    """The policy the loader of ``meta["kind"]`` rebuilds."""
    kind = meta.get("kind")
    if kind not in _LOADERS:
        raise ArtifactError(
            f"{where}: unknown policy kind {kind!r} (this rlkit loads {sorted(_LOADERS)})"
        )
    try:
        return _LOADERS[kind](meta, tensors)
    except (KeyError, TypeError) as error:
        raise ArtifactError(f"{where}: malformed {kind} artifact: {error!r}") from error
