"""Deriving every random generator of a run from one seed (``numpy.random.SeedSequence``)."""

from __future__ import annotations

import numpy as np

from .checks import non_negative_int

__all__ = ["spawn_seeds", "spawn_generators", "int_seed"]


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
