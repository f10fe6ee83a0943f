"""Deriving every random generator of a run from one seed (``numpy.random.SeedSequence``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .checks import non_negative_int

__all__ = ["spawn_seeds", "spawn_generators", "int_seed", "check_seeds"]


def spawn_seeds(seed: int | np.random.SeedSequence, n: int) -> list[np.random.SeedSequence]:
    """``n`` independent child seed sequences of ``seed``.

    Example:
        >>> env_seed, policy_seed = spawn_seeds(42, 2)
    """
    if not isinstance(seed, np.random.SeedSequence):
        seed = np.random.SeedSequence(non_negative_int("spawn_seeds", "seed", seed))
    return seed.spawn(n)


def spawn_generators(seed: int | np.random.SeedSequence, n: int) -> list[np.random.Generator]:
    """``n`` independent numpy generators derived from ``seed``."""
    return [np.random.default_rng(s) for s in spawn_seeds(seed, n)]


def int_seed(seed: np.random.SeedSequence) -> int:
    """A 31-bit integer seed from a seed sequence (for gymnasium ``reset`` and ``torch``)."""
    return int(seed.generate_state(1, dtype=np.uint32)[0] >> 1)


def check_seeds(owner: str, seeds: Any) -> list[int]:
    """``seeds`` as a list of distinct non-negative integers (many seeds in one process), or a
    clear error naming ``owner``.

    Example:
        >>> check_seeds("PPO_CartPole", [0, 1, 2])
        [0, 1, 2]
        >>> check_seeds("PPO_CartPole", [0, 0])
        Traceback (most recent call last):
        ...
        ValueError: PPO_CartPole: seeds must be distinct, got [0, 0] (0 twice)
    """
    if isinstance(seeds, (str, bytes)) or not hasattr(seeds, "__iter__"):
        raise TypeError(f"{owner}: seeds must be a list of non-negative integers, got {seeds!r}")
    values = list(seeds)
    if not values:
        raise ValueError(f"{owner}: seeds must name at least one seed, got {seeds!r}")
    for s in values:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0:
            raise ValueError(
                f"{owner}: seeds must be non-negative integers, got {s!r} in {values!r}"
            )
    twice = sorted({int(s) for s in values if values.count(s) > 1})
    if twice:
        raise ValueError(f"{owner}: seeds must be distinct, got {values!r} ({twice[0]} twice)")
    return [int(s) for s in values]
