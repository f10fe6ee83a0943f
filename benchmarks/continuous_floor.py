"""The compute floor of TD3: its gradient steps in the plainest torch, with no environment.

The same work per step as TD3 with Stable-Baselines3's defaults (and rlkit's recipe): a batch
of 256, twin critics and a deterministic actor (MLPs of ``hidden``, ReLU), their target copies,
target policy smoothing, the actor and the targets (Polyak, ``tau``) updated every
``policy_delay`` steps, fused Adam. Written as a reader of the TD3 paper would write it: plain
``nn.Sequential`` networks, ``torch.optim.Adam``, no replay (one random batch, reused), no
logging, no checks. The critics are frozen during the actor's step (no gradient for their
weights; SB3 computes and discards it). Any implementation of TD3 in eager torch does at least
this much arithmetic per gradient step, so its time is a floor for rlkit's and SB3's training
time with the same number of gradient steps.

Example:
    >>> seconds = td3_floor(2, hidden=(8, 8))
    >>> seconds > 0
    True
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn


def _mlp(sizes: Sequence[int], squash: bool = False) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        layers += [nn.Linear(a, b), nn.ReLU()]
    layers[-1] = nn.Tanh() if squash else nn.Identity()
    return nn.Sequential(*layers)


def td3_floor(
    gradient_steps: int,
    *,
    n_obs: int = 3,
    n_actions: int = 1,
    hidden: Sequence[int] = (400, 300),
    batch_size: int = 256,
    gamma: float = 0.98,
    tau: float = 0.005,
    policy_delay: int = 2,
    lr: float = 1e-3,
) -> float:
    """Seconds taken by ``gradient_steps`` TD3 gradient steps (see the module docstring)."""
    g = torch.Generator().manual_seed(0)
    actor, actor_target = (_mlp([n_obs, *hidden, n_actions], squash=True) for _ in range(2))
    critics = [_mlp([n_obs + n_actions, *hidden, 1]) for _ in range(2)]
    critic_targets = [_mlp([n_obs + n_actions, *hidden, 1]) for _ in range(2)]
    sources, targets = [actor, *critics], [actor_target, *critic_targets]
    for source, target in zip(sources, targets, strict=True):
        target.load_state_dict(source.state_dict())
    critic_params = [p for c in critics for p in c.parameters()]
    source_params = [p for m in sources for p in m.parameters()]
    target_params = [p for m in targets for p in m.parameters()]
    actor_opt = torch.optim.Adam(actor.parameters(), lr=lr, fused=True)
    critic_opt = torch.optim.Adam(critic_params, lr=lr, fused=True)
    obs, next_obs = (torch.randn(batch_size, n_obs, generator=g) for _ in range(2))
    actions = torch.rand(batch_size, n_actions, generator=g) * 2 - 1
    rewards = torch.randn(batch_size, 1, generator=g)
    not_done = torch.ones(batch_size, 1)
    start = time.perf_counter()
    for step in range(1, gradient_steps + 1):
        with torch.no_grad():
            noise = (torch.randn(batch_size, n_actions, generator=g) * 0.2).clamp(-0.5, 0.5)
            next_actions = (actor_target(next_obs) + noise).clamp(-1.0, 1.0)
            next_x = torch.cat([next_obs, next_actions], 1)
            next_q = torch.min(critic_targets[0](next_x), critic_targets[1](next_x))
            y = rewards + not_done * gamma * next_q
        x = torch.cat([obs, actions], 1)
        critic_loss = sum(F.mse_loss(critic(x), y) for critic in critics)
        critic_opt.zero_grad(set_to_none=True)
        critic_loss.backward()
        critic_opt.step()
        if step % policy_delay == 0:
            for p in critic_params:
                p.requires_grad_(False)
            actor_loss = -critics[0](torch.cat([obs, actor(obs)], 1)).mean()
            actor_opt.zero_grad(set_to_none=True)
            actor_loss.backward()
            actor_opt.step()
            for p in critic_params:
                p.requires_grad_(True)
            with torch.no_grad():
                torch._foreach_lerp_(target_params, source_params, tau)
    return time.perf_counter() - start
