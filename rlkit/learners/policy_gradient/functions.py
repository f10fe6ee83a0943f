"""Pure functions shared by the policy-gradient learners: advantages and returns (GAE),
the clipped surrogate, the value loss and the entropy bonus.

Arrays are ``(n_steps, n_envs)``. ``next_values[t]`` is the value of ``final_state[t]``, the
state after step ``t`` (the real final observation where an episode ended), so one rule covers
termination (no bootstrap), truncation (bootstrap from the final state) and the end of the
rollout (bootstrap from the state the next rollout starts in).

Example:
    >>> import numpy as np
    >>> adv, ret = gae(np.array([[1.0], [1.0]]), np.zeros((2, 1)), np.zeros((2, 1)),
    ...                np.array([[False], [True]]), np.zeros((2, 1), bool), gamma=0.5, lam=1.0)
    >>> ret.ravel().tolist()
    [1.5, 1.0]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

__all__ = [
    "gae",
    "clipped_surrogate",
    "policy_gradient_loss",
    "value_loss",
    "entropy_bonus",
    "normalize",
    "approx_kl",
    "explained_variance",
    "add_advantages",
    "value_stats",
    "extra_value_and_log_prob",
]


def gae(
    rewards: np.ndarray,
    values: np.ndarray,
    next_values: np.ndarray,
    terminated: np.ndarray,
    truncated: np.ndarray,
    *,
    gamma: float,
    lam: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Generalised advantage estimates and returns (``advantages + values``).

    ``delta_t = r_t + gamma * (1 - terminated_t) * next_values_t - values_t`` and
    ``A_t = delta_t + gamma * lam * (1 - done_t) * A_{t+1}`` with ``A`` zero after the last
    step. ``lam=1`` gives Monte-Carlo returns bootstrapped at truncation and at the rollout's
    end (REINFORCE with a baseline, A2C); ``lam=0`` one-step TD errors.
    """
    rewards = np.asarray(rewards, dtype=np.float64)
    deltas = rewards + gamma * (1.0 - terminated) * next_values - values
    carry = gamma * lam * (1.0 - (np.asarray(terminated) | np.asarray(truncated)))
    advantages = np.zeros_like(deltas)
    last = np.zeros_like(deltas[0])
    for t in range(len(deltas) - 1, -1, -1):
        last = deltas[t] + carry[t] * last
        advantages[t] = last
    return advantages, advantages + values


def normalize(x: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """``(x - mean) / (std + eps)`` (Stable-Baselines3's advantage normalisation; unbiased std);
    a single element is returned unchanged."""
    if x.numel() < 2:
        return x
    return (x - x.mean()) / (x.std() + eps)


def clipped_surrogate(
    log_prob: torch.Tensor, old_log_prob: torch.Tensor, advantages: torch.Tensor, clip: float
) -> torch.Tensor:
    """PPO's clipped surrogate loss: ``-mean(min(r A, clip(r, 1-c, 1+c) A))``."""
    ratio = torch.exp(log_prob - old_log_prob)
    unclipped = advantages * ratio
    clipped = advantages * torch.clamp(ratio, 1.0 - clip, 1.0 + clip)
    return -torch.min(unclipped, clipped).mean()


def policy_gradient_loss(log_prob: torch.Tensor, advantages: torch.Tensor) -> torch.Tensor:
    """The vanilla policy-gradient loss ``-mean(log_prob * A)`` (A2C, REINFORCE)."""
    return -(log_prob * advantages).mean()


def value_loss(
    values: torch.Tensor,
    returns: torch.Tensor,
    old_values: torch.Tensor | None = None,
    clip: float | None = None,
) -> torch.Tensor:
    """Mean squared error of the values; with ``clip`` the prediction is first kept within
    ``clip`` of ``old_values`` (Stable-Baselines3's ``clip_range_vf``: no max of two losses)."""
    if clip is not None:
        values = old_values + torch.clamp(values - old_values, -clip, clip)
    return F.mse_loss(returns, values)


def entropy_bonus(entropy: torch.Tensor) -> torch.Tensor:
    """The entropy loss ``-mean(entropy)`` (weighted by the entropy coefficient)."""
    return -entropy.mean()


def entropy_term(dist: Any, coef: float) -> tuple[torch.Tensor, torch.Tensor | float]:
    """``(entropy loss, coef * entropy loss)`` for a loss to add the second. With ``coef`` 0
    (the zoo's CartPole settings) the entropy is computed without gradient: it is reported,
    and the loss and its gradient are the same numbers without back-propagating through it."""
    if coef:
        ent_loss = entropy_bonus(dist.entropy())
        return ent_loss, coef * ent_loss
    with torch.no_grad():
        return entropy_bonus(dist.entropy()), 0.0


def approx_kl(log_prob: torch.Tensor, old_log_prob: torch.Tensor) -> torch.Tensor:
    """``mean((r - 1) - log r)``, the low-variance KL estimate Stable-Baselines3 uses."""
    log_ratio = log_prob - old_log_prob
    return torch.mean(torch.exp(log_ratio) - 1 - log_ratio)


def explained_variance(predicted: np.ndarray, target: np.ndarray) -> float:
    """``1 - Var(target - predicted) / Var(target)`` (nan when the target is constant)."""
    var = np.var(target)
    return float("nan") if var == 0 else float(1 - np.var(target - predicted) / var)


# ---- the shared postprocess_fn and stats_fn of VPG, A2C and PPO ----


def add_advantages(policy, batch):
    """``postprocess_fn``: values of the final states with the current model, then GAE with
    the policy's ``gamma`` and ``gae_lambda``; adds ``advantages`` and ``returns``."""
    final, shape = rollout_observations(batch["final_state"], policy.device)
    with torch.no_grad():
        next_values = policy.model.value(final).reshape(shape)
    advantages, returns = gae(
        batch["reward"],
        batch["value"],
        next_values.cpu().numpy().astype(np.float64),
        batch["terminated"],
        batch["truncated"],
        gamma=float(policy.hp("gamma")),
        lam=float(policy.hp("gae_lambda")),
    )
    return {**batch, "advantages": advantages, "returns": returns}


def rollout_observations(value: Any, device: torch.device) -> tuple[Any, tuple[int, int]]:
    """A rollout's ``(n_steps, n_envs, ...)`` observations as one batch of
    ``n_steps * n_envs`` float32 tensors (a ``Dict`` observation's dict of arrays: per key),
    and ``(n_steps, n_envs)``."""
    if isinstance(value, Mapping):
        parts = {k: rollout_observations(v, device) for k, v in value.items()}
        shape = next(iter(parts.values()))[1]
        return {k: part for k, (part, _) in parts.items()}, shape
    tensor = torch.as_tensor(value, dtype=torch.float32, device=device)
    return tensor.flatten(0, 1), tuple(tensor.shape[:2])


def value_stats(policy, batch) -> dict[str, float]:
    """``stats_fn``: the explained variance of the stored values (Stable-Baselines3 logs it)."""
    return {"explained_variance": explained_variance(batch["value"], batch["returns"])}


def extra_value_and_log_prob(policy, model, dist, obs, actions) -> dict[str, torch.Tensor]:
    """``extra_action_out_fn``: the state's value and the action's log-probability."""
    return {"value": model.value(obs), "log_prob": dist.log_prob(actions)}
