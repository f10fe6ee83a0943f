"""Ape-X's per-actor exploration (Horgan et al. 2018): actor ``i`` of ``N`` acts epsilon-greedily
with ``epsilon_i = epsilon ** (1 + alpha * i / (N - 1))`` (``epsilon=0.4``, ``alpha=7``), so a
few actors explore much and the others little.

Example:
    >>> [round(e, 4) for e in apex_epsilons(3)]
    [0.4, 0.0162, 0.0007]
"""

from __future__ import annotations

from ..core.checks import finite_float, positive_int

__all__ = ["apex_epsilons"]


def apex_epsilons(n_actors: int, epsilon: float = 0.4, alpha: float = 7.0) -> list[float]:
    """The epsilons of ``n_actors`` Ape-X actors (one actor: ``epsilon``).

    Example:
        >>> apex_epsilons(1)
        [0.4]
    """
    n = positive_int("apex_epsilons", "n_actors", n_actors)
    epsilon = finite_float("apex_epsilons", "epsilon", epsilon, low=0.0, high=1.0)
    alpha = finite_float("apex_epsilons", "alpha", alpha, low=0.0)
    if n == 1:
        return [epsilon]
    return [epsilon ** (1 + alpha * i / (n - 1)) for i in range(n)]
