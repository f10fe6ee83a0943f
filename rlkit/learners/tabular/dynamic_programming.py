"""Dynamic programming on a known model (Sutton & Barto chapter 4).

The model is the gymnasium toy-text convention ``P[s][a] = [(prob, next_state, reward, terminated),
...]``: pass an environment that has it (``env.unwrapped.P``: FrozenLake, CliffWalking, Taxi and
rlkit's toy environments) or the table itself. Actions missing from ``P[s]`` are illegal in ``s``;
a state with no actions is terminal. Transitions flagged ``terminated`` do not bootstrap.

Example:
    >>> import gymnasium as gym, rlkit as rk
    >>> values, policy = rk.value_iteration(gym.make("FrozenLake-v1"), gamma=0.9)
    >>> round(float(values[0]), 3)
    0.069
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core.checks import check_gamma

__all__ = [
    "TabularModel",
    "tabular_model",
    "policy_evaluation",
    "policy_iteration",
    "value_iteration",
    "q_from_v",
]


@dataclass(frozen=True)
class TabularModel:
    """A finite MDP as flat transition arrays (one entry per (s, a, outcome))."""

    n_states: int
    n_actions: int
    state: np.ndarray
    action: np.ndarray
    prob: np.ndarray
    next_state: np.ndarray
    reward: np.ndarray
    terminated: np.ndarray
    legal: np.ndarray  # (n_states, n_actions) bool


def tabular_model(mdp: Any) -> TabularModel:
    """Flatten ``P`` (or an env exposing ``unwrapped.P``) into a :class:`TabularModel`."""
    table = _transition_table(mdp)
    n_states = len(table)
    n_actions = 1 + max((a for s in table for a in table[s]), default=0)
    rows = [(s, a, p, s2, r, d) for s in table for a in table[s] for p, s2, r, d in table[s][a]]
    if not rows:
        raise ValueError("tabular_model: the transition table P has no transitions")
    s, a, p, s2, r, d = (np.array(column) for column in zip(*rows, strict=True))
    legal = np.zeros((n_states, n_actions), dtype=bool)
    legal[s, a] = True
    return TabularModel(
        n_states,
        n_actions,
        s.astype(np.int64),
        a.astype(np.int64),
        p.astype(np.float64),
        s2.astype(np.int64),
        r.astype(np.float64),
        d.astype(bool),
        legal,
    )


def _transition_table(mdp: Any) -> Any:
    table = getattr(getattr(mdp, "unwrapped", mdp), "P", mdp)
    if not hasattr(table, "__getitem__") or not hasattr(table, "__len__"):
        raise TypeError(
            f"dynamic programming needs a transition table P[s][a] = [(prob, next_state, reward, "
            f"terminated), ...] or an env exposing unwrapped.P, got {type(mdp).__name__}"
        )
    return table


def _model(mdp: Any) -> TabularModel:
    return mdp if isinstance(mdp, TabularModel) else tabular_model(mdp)


def q_from_v(mdp: Any, values: np.ndarray, gamma: float) -> np.ndarray:
    """Action values ``q(s, a) = sum p (r + gamma v(s'))``; ``-inf`` for illegal actions."""
    m = _model(mdp)
    backup = m.prob * (m.reward + gamma * np.where(m.terminated, 0.0, values[m.next_state]))
    q = np.zeros((m.n_states, m.n_actions))
    np.add.at(q, (m.state, m.action), backup)
    q[~m.legal] = -np.inf
    return q


def _as_policy(m: TabularModel, policy: Any) -> np.ndarray:
    """A (n_states, n_actions) probability matrix; None means equiprobable over legal actions."""
    if policy is None:
        counts = m.legal.sum(axis=1, keepdims=True)
        return np.divide(m.legal, counts, out=np.zeros(m.legal.shape), where=counts > 0)
    policy = np.asarray(policy)
    if policy.shape == (m.n_states,):
        matrix = np.zeros((m.n_states, m.n_actions))
        matrix[np.arange(m.n_states), policy.astype(np.int64)] = 1.0
        return matrix
    if policy.shape != (m.n_states, m.n_actions):
        raise ValueError(
            f"policy_evaluation: policy must have shape ({m.n_states},) of actions or "
            f"({m.n_states}, {m.n_actions}) of probabilities, got {policy.shape}"
        )
    return policy.astype(np.float64)


def policy_evaluation(
    mdp: Any,
    policy: Any = None,
    *,
    gamma: float = 1.0,
    theta: float = 1e-10,
    max_sweeps: int = 100_000,
) -> np.ndarray:
    """Iterative policy evaluation (S&B 4.1): the state values of ``policy``.

    ``policy`` is an array of actions per state, a (states, actions) probability matrix, or None
    for the equiprobable random policy over legal actions. Sweeps until the largest change is
    below ``theta``; raises ``RuntimeError`` if that does not happen within ``max_sweeps``
    (e.g. gamma = 1 on a task that does not terminate).

    Example:
        >>> import gymnasium as gym
        >>> import rlkit as rk
        >>> values = rk.policy_evaluation(gym.make("FrozenLake-v1"), gamma=0.9)  # random policy
        >>> round(float(values[0]), 4)
        0.0045
    """
    check_gamma("policy_evaluation", gamma)
    m = _model(mdp)
    pi = _as_policy(m, policy)
    values = np.zeros(m.n_states)
    for _ in range(max_sweeps):
        q = q_from_v(m, values, gamma)
        new = np.where(m.legal, pi * np.where(m.legal, q, 0.0), 0.0).sum(axis=1)
        if np.max(np.abs(new - values)) < theta:
            return new
        values = new
    raise RuntimeError(f"policy_evaluation: no convergence within {max_sweeps} sweeps")


def _greedy(q: np.ndarray, tolerance: float) -> np.ndarray:
    """Greedy action per state; among actions within ``tolerance`` of the best, the first."""
    best = q.max(axis=1, keepdims=True)
    return np.argmax(q >= best - tolerance, axis=1)


def policy_iteration(
    mdp: Any, *, gamma: float = 1.0, theta: float = 1e-10, tolerance: float = 1e-9
) -> tuple[np.ndarray, np.ndarray]:
    """Policy iteration (S&B 4.3): returns (optimal state values, a greedy deterministic policy).

    Example:
        >>> import gymnasium as gym
        >>> import rlkit as rk
        >>> values, policy = rk.policy_iteration(gym.make("FrozenLake-v1"), gamma=0.9)
        >>> round(float(values[0]), 3), policy[:4]
        (0.069, array([0, 3, 0, 3]))
    """
    check_gamma("policy_iteration", gamma)
    m = _model(mdp)
    policy = np.argmax(m.legal, axis=1)  # the first legal action everywhere
    while True:
        values = policy_evaluation(m, policy, gamma=gamma, theta=theta)
        q = q_from_v(m, values, gamma)
        improved = _greedy(q, tolerance)
        stable = q[np.arange(m.n_states), improved] <= q[np.arange(m.n_states), policy] + tolerance
        if np.all(stable):
            return values, policy
        policy = np.where(stable, policy, improved)


def value_iteration(
    mdp: Any,
    *,
    gamma: float = 1.0,
    theta: float = 1e-10,
    tolerance: float = 1e-9,
    max_sweeps: int = 100_000,
) -> tuple[np.ndarray, np.ndarray]:
    """Value iteration (S&B 4.4): returns (optimal state values, a greedy deterministic policy).

    Among actions whose values are within ``tolerance`` of the best, the policy takes the first
    (for the Gambler's problem: the smallest stake).

    Example:
        >>> import gymnasium as gym
        >>> import numpy as np
        >>> import rlkit as rk
        >>> lake = gym.make("FrozenLake-v1")
        >>> values, policy = rk.value_iteration(lake, gamma=0.9)
        >>> np.allclose(rk.policy_evaluation(lake, policy, gamma=0.9), values, atol=1e-6)
        True
    """
    check_gamma("value_iteration", gamma)
    m = _model(mdp)
    values = np.zeros(m.n_states)
    for _ in range(max_sweeps):
        q = q_from_v(m, values, gamma)
        new = np.where(m.legal.any(axis=1), q.max(axis=1), 0.0)
        delta = np.max(np.abs(new - values))
        values = new
        if delta < theta:
            return values, _greedy(q_from_v(m, values, gamma), tolerance)
    raise RuntimeError(f"value_iteration: no convergence within {max_sweeps} sweeps")
