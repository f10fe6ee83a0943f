"""``rk.save(policy, path)`` and ``rk.load(path, env=None)``: inference artifacts of trained
policies (the format: :mod:`rlkit.deploy.archive`; the kinds: :mod:`rlkit.deploy.registry`).

Example:
    >>> import numpy as np, rlkit as rk, tempfile, os
    >>> from rlkit.deploy.q_based import TableLearner
    >>> policy = rk.QBasedPolicy(TableLearner(np.array([[0.0, 1.0], [1.0, 0.0]])),
    ...                          rk.GreedyExplorer(seed=0))
    >>> path = os.path.join(tempfile.mkdtemp(), "q.rlkit")
    >>> rk.save(policy, path)
    >>> rk.load(path).predict(np.array([0, 1])).tolist()
    [1, 0]
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

from . import multi_agent as _multi_agent  # noqa: F401 - registers the multi-agent artifacts
from . import q_based as _q_based  # noqa: F401 - registers the tabular artifacts (no torch)
from .archive import SUFFIX, library_versions, read_archive, write_archive
from .normalization import add_normalization, take_normalization
from .registry import artifact_meta, check_fits, load_kind, policy_artifact

__all__ = [
    "save",
    "load",
    "inference_form",
    "artifact_path",
    "artifact_meta",
    "RUN_DIR_ARTIFACT",
]

#: the artifact ``rlkit run`` writes into its run directory at the end of a run
RUN_DIR_ARTIFACT = "policy" + SUFFIX


def _register_torch_kinds() -> None:
    """Register the artifacts of torch policies (the DQN family, the built policies) when torch
    is installed; tabular policies save and load without it."""
    try:
        import torch  # noqa: F401
    except ModuleNotFoundError:
        return
    from . import built, distributional, planners, q_network, recurrent  # noqa: F401 - their methods and loaders register


_register_torch_kinds()


def save(policy: Any, path: str | os.PathLike) -> None:
    """Write ``policy``'s inference artifact to ``path`` (a ``.rlkit`` file: safetensors and
    JSON, never a pickle; written atomically). ``policy`` is a trained policy (an
    ``rk.Agent``'s policy is taken from it), one :func:`load` returned, or an
    ``rk.MultiAgentPolicy`` / ``rk.SelfPlay`` of such policies (:mod:`rlkit.deploy.multi_agent`:
    every child, a shared one once; a child that cannot be saved is refused naming its agent).

    What is saved: the network (or table) and what rebuilds it, the observation and action
    spaces, the preprocessing, the algorithm's name, the explorer's epsilon for Q-based
    policies, the observation statistics of a policy trained on ``rk.VecNormalize``
    (:mod:`rlkit.deploy.normalization`: the loaded policy normalises raw observations with
    them), and the versions of rlkit, torch, gymnasium and numpy. Nothing of training
    (optimizer, replay, generators): resume a run from its checkpoint instead.

    Example:
        >>> import rlkit as rk, tempfile, os
        >>> policy = rk.PPO(rk.GymEnv("CartPole-v1", seed=0), seed=0)
        >>> path = os.path.join(tempfile.mkdtemp(), "ppo.rlkit")
        >>> rk.save(policy, path)
        >>> obs = [0.0, 0.0, 0.0, 0.0]
        >>> rk.load(path).predict(obs).item() == policy.predict(obs).item()
        True
    """
    from ..policies.agent import Agent

    if isinstance(policy, Agent):
        policy = policy.policy
    artifact = policy_artifact(policy)
    meta, tensors = artifact_meta(artifact), dict(artifact.tensors)
    add_normalization(policy, meta, tensors)  # rk.VecNormalize's statistics, if any
    write_archive(path, meta, tensors)


def artifact_path(path: str | os.PathLike) -> Path:
    """``path`` itself, or for a run directory of ``rlkit run`` its ``policy.rlkit``."""
    path = Path(path)
    if path.is_dir():
        inside = path / RUN_DIR_ARTIFACT
        if not inside.is_file():
            raise FileNotFoundError(
                f"rk.load: the directory {str(path)!r} has no {RUN_DIR_ARTIFACT} (rlkit run "
                f"writes it when a run finishes; an unfinished run has only checkpoints: "
                f"continue it with rlkit resume)"
            )
        return inside
    return path


def load(path: str | os.PathLike, env: Any = None) -> Any:
    """The policy saved at ``path`` (a ``.rlkit`` file, or a run directory of ``rlkit run``),
    ready to ``predict`` and to act in ``rk.run``.

    Checked before anything is built: the file's integrity and format version (a corrupt,
    truncated or newer file, or one holding a pickle, is an
    :class:`~rlkit.deploy.errors.ArtifactError`; nothing in it is executed), and when ``env``
    (an rlkit or gymnasium env) is given, that its spaces fit the saved ones (a
    ``ValueError`` naming both). Different library versions than the saver's give a
    warning naming them.

    What comes back: a ``QBasedPolicy`` (tabular and DQN family), a ``StochasticPolicy``
    (PPO, A2C, VPG, TRPO, ES) or a :class:`~rlkit.deploy.built.LoadedActorPolicy` (SAC, TD3,
    DDPG), each with ``predict(obs, deterministic=True, action_masks=None)``, ``state_space``,
    ``action_space`` and ``algorithm``; for a multi-agent artifact an ``rk.MultiAgentPolicy``
    of those (``predict`` takes and gives dicts by agent; ``env`` is then a multi-agent env
    and each agent's spaces are checked against ``env.view(agent)``'s).

    Example:
        >>> import rlkit as rk, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "ppo.rlkit")
        >>> rk.save(rk.PPO(rk.GymEnv("CartPole-v1", seed=0), seed=0), path)
        >>> policy = rk.load(path, env=rk.GymEnv("CartPole-v1"))
        >>> policy.algorithm, policy.predict([[0.0] * 4, [0.1] * 4]).shape
        ('PPO', (2,))
    """
    path = artifact_path(path)
    where = f"rk.load({str(path)!r})"
    meta, tensors = read_archive(path)
    _warn_versions(where, meta.get("versions") or {})
    check_fits(where, meta, env)
    return _loaded(where, meta, tensors)


def _loaded(where: str, meta: dict[str, Any], tensors: dict[str, Any]) -> Any:
    """The policy of ``meta``'s kind, with the saved observation statistics (if any) as its
    frozen ``observation_normalizer`` (:mod:`rlkit.deploy.normalization`)."""
    tensors, normalizer = take_normalization(where, meta, tensors)
    policy = load_kind(where, meta, tensors)
    if normalizer is not None:
        policy.observation_normalizer = normalizer
    return policy


def _minor(version: Any) -> tuple[str, ...] | None:
    return None if not isinstance(version, str) else tuple(version.split("+")[0].split(".")[:2])


def _warn_versions(where: str, saved: dict[str, Any]) -> None:
    here = library_versions()
    differ = [
        f"{name} {saved[name]} (here {here.get(name)})"
        for name in ("rlkit", "torch", "gymnasium")
        if saved.get(name) and _minor(saved[name]) != _minor(here.get(name))
    ]
    if differ:
        warnings.warn(
            f"{where}: saved with {', '.join(differ)}; the actions may differ in rounding",
            stacklevel=3,
        )


def inference_form(policy: Any) -> Any:
    """``policy`` as :func:`load` would return it after :func:`save` (without a file): the
    same parameters, in the loaded form ``rk.export`` translates."""
    import numpy as np

    from ..policies.agent import Agent

    if isinstance(policy, Agent):
        policy = policy.policy
    artifact = policy_artifact(policy)
    meta, tensors = artifact_meta(artifact), dict(artifact.tensors)
    add_normalization(policy, meta, tensors)
    tensors = {
        k: (v.detach().cpu().numpy() if hasattr(v, "detach") else np.asarray(v))
        for k, v in tensors.items()
    }
    return _loaded("rk.export", meta, tensors)
