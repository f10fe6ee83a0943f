"""V-trace (Espeholt et al. 2018, IMPALA): off-policy value targets and policy-gradient
advantages for rollouts that actors collected with an older policy (the policy lag of an
actor-learner split, :mod:`rlkit.distributed`).

Arrays are ``(n_steps, n_envs)``, as in :mod:`rlkit.learners.policy_gradient.functions`:
``values[t]`` is ``V(x_t)``, ``next_values[t]`` the value of ``final_state[t]`` (the state after
step ``t``: the real final observation where an episode ended). With the truncated importance
weights ``rho_t = min(rho_bar, pi(a_t|x_t) / mu(a_t|x_t))`` and ``c_t = min(c_bar, pi/mu)``::

    delta_t = rho_t * (r_t + gamma * (1 - terminated_t) * next_values_t - values_t)
    vs_t - values_t = delta_t + gamma * c_t * (1 - done_t) * (vs_{t+1} - values_{t+1})
    advantage_t = rho_t * (r_t + gamma * (1 - terminated_t) * q_t - values_t)

where ``q_t = vs_{t+1}`` inside an episode, and ``next_values_t`` where the episode ended at
step ``t`` or the rollout ends (the paper's recursion, cut at episode ends as GAE is: no trace
crosses a reset). With ``pi == mu`` and ``rho_bar, c_bar >= 1`` the targets are the n-step
returns of A2C (GAE with lambda 1).

Example:
    >>> import numpy as np
    >>> z, f = np.zeros((2, 1)), np.zeros((2, 1), bool)
    >>> vs, adv = vtrace(z, z, np.ones((2, 1)), z, z, f, f, gamma=0.5)
    >>> vs.ravel().tolist(), adv.ravel().tolist()
    ([1.5, 1.0], [1.5, 1.0])
"""

from __future__ import annotations

import numpy as np

from ...core.checks import finite_float

__all__ = ["vtrace"]


def vtrace(
    behaviour_log_prob: np.ndarray,
    target_log_prob: np.ndarray,
    rewards: np.ndarray,
    values: np.ndarray,
    next_values: np.ndarray,
    terminated: np.ndarray,
    truncated: np.ndarray,
    *,
    gamma: float,
    rho_bar: float = 1.0,
    c_bar: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """The V-trace targets ``vs`` and the policy-gradient advantages (see the module), both
    ``(n_steps, n_envs)`` float64. ``rho_bar`` and ``c_bar`` truncate the importance weights
    (IMPALA's defaults: 1 and 1).

    Example:
        >>> import numpy as np
        >>> z, f = np.zeros((1, 1)), np.zeros((1, 1), bool)
        >>> vtrace(np.log([[0.5]]), z, np.ones((1, 1)), z, z, f, f, gamma=0.9)[1].tolist()
        [[1.0]]
    """
    gamma = finite_float("vtrace", "gamma", gamma, low=0.0, high=1.0)
    rho_bar = finite_float("vtrace", "rho_bar", rho_bar, low=0.0, low_open=True)
    c_bar = finite_float("vtrace", "c_bar", c_bar, low=0.0, low_open=True)
    ratio = np.exp(np.asarray(target_log_prob, np.float64) - behaviour_log_prob)
    rho, c = np.minimum(rho_bar, ratio), np.minimum(c_bar, ratio)
    values = np.asarray(values, np.float64)
    alive = 1.0 - np.asarray(terminated, np.float64)
    done = np.asarray(terminated) | np.asarray(truncated)
    rewards = np.asarray(rewards, np.float64)
    deltas = rho * (rewards + gamma * alive * next_values - values)
    carry = gamma * c * (1.0 - done)
    vs = np.zeros_like(values)
    last = np.zeros_like(values[0])  # vs_{t+1} - V(x_{t+1}); zero after the rollout
    for t in range(len(values) - 1, -1, -1):
        last = deltas[t] + carry[t] * last
        vs[t] = values[t] + last
    q = np.array(next_values, np.float64)  # the episode's end or the rollout's: V(final)
    inside = ~done[:-1]
    q[:-1][inside] = vs[1:][inside]
    return vs, rho * (rewards + gamma * alive * q - values)
