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
``stochastic`` and ``actor`` (:mod:`rlkit.deploy.built`), and ``multi_agent``
(:mod:`rlkit.deploy.multi_agent`: its children's artifacts side by side, with its own
:func:`env_check`).

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
from .spaces import check_env_spaces, space_from_json, space_to_json

__all__ = [
    "Artifact",
    "policy_artifact",
    "artifact_meta",
    "loader",
    "load_kind",
    "env_check",
    "check_fits",
]


@dataclass
class Artifact:
    """What a policy saves: its kind (which loader rebuilds it), the algorithm's name, its
    observation and action spaces (``None`` for a kind whose parts hold their own, e.g.
    ``multi_agent``), the kind's JSON description and its tensors."""

    kind: str
    algorithm: str
    spaces: tuple[Any, Any] | None
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


def artifact_meta(artifact: Artifact) -> dict[str, Any]:
    """``policy.json``'s content of ``artifact`` (the archive adds the format, the versions and
    the tensors' digest)."""
    meta = {**artifact.meta, "kind": artifact.kind, "algorithm": artifact.algorithm}
    if artifact.spaces is not None:
        state_space, action_space = artifact.spaces
        meta["observation_space"] = space_to_json(state_space)
        meta["action_space"] = space_to_json(action_space)
    return meta


_LOADERS: dict[str, Callable[[dict[str, Any], dict[str, Any]], Any]] = {}
_ENV_CHECKS: dict[str, Callable[[str, dict[str, Any], Any], None]] = {}


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


def env_check(kind: str) -> Callable:
    """Register ``fn(where, meta, env)`` as the check of artifacts of ``kind`` before loading
    (``env`` may be None); kinds without one get :func:`check_fits`'s default."""

    def register(fn: Callable) -> Callable:
        _ENV_CHECKS[kind] = fn
        return fn

    return register


def check_fits(where: str, meta: dict[str, Any], env: Any) -> None:
    """Before anything is built: the saved spaces are read (a malformed one is an
    :class:`ArtifactError`) and, when ``env`` is given, checked against the env's (a
    ``ValueError`` naming both); a kind with its own :func:`env_check` checks its own way."""
    kind = meta.get("kind")
    if kind in _ENV_CHECKS:
        _ENV_CHECKS[kind](where, meta, env)
        return
    spaces = (
        space_from_json(meta.get("observation_space"), where),
        space_from_json(meta.get("action_space"), where),
    )
    if env is not None:
        check_env_spaces(where, *spaces, env)
