"""Observations a policy trained on ``rk.VecNormalize`` acts on (docs/how-to/normalization.md).

A policy built on a ``VecNormalize`` env keeps that env's observation normaliser
(``policy.observation_normalizer``, the training statistics, updated only by the env). Where
the observations come raw (``predict``; a greedy evaluation or ``rlkit enjoy`` on a plain
env) the policy normalises them itself with those statistics, frozen (Stable-Baselines3's
``sync_envs_normalization``); where the env normalises them already (it has an
``observation_normalizer`` of its own: the training ``VecNormalize``), they are taken as they
are, never normalised twice.

Example:
    >>> import numpy as np
    >>> class P: observation_normalizer = staticmethod(lambda obs: obs * 0)
    >>> class RawEnv: pass
    >>> normalized_state(P(), RawEnv(), np.ones(2)).tolist()
    [0.0, 0.0]
"""

from __future__ import annotations

from typing import Any

__all__ = ["normalized_state", "normalized_batch"]


def normalized_state(policy: Any, env: Any, state: Any) -> Any:
    """``state`` (``env.state``) as ``policy``'s model takes it: normalised with the policy's
    normaliser unless there is none or ``env`` normalises its observations itself."""
    normalizer = getattr(policy, "observation_normalizer", None)
    if normalizer is None or getattr(env, "observation_normalizer", None) is not None:
        return state
    return normalizer(state)


def normalized_batch(policy: Any, batch: Any) -> Any:
    """Raw observations given to ``predict``, normalised when the policy has a normaliser.

    Example:
        >>> class P: observation_normalizer = None
        >>> normalized_batch(P(), [1.0])
        [1.0]
    """
    normalizer = getattr(policy, "observation_normalizer", None)
    return batch if normalizer is None else normalizer(batch)
