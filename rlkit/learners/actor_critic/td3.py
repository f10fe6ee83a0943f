"""TD3 (Fujimoto et al. 2018) with Stable-Baselines3's semantics, as pure functions compiled by
``rk.build_policy`` (two losses, each with its own Adam: ``critic`` and ``actor``).

A deterministic actor ``tanh(MLP(s))`` in the scaled space ``[-1, 1]``, rescaled to the ``Box``
bounds; exploration adds ``action_noise`` (``rk.GaussianActionNoise`` or
``rk.OrnsteinUhlenbeckActionNoise``, none by default as in SB3) and clips to ``[-1, 1]``; twin
critics; target actor and critics Polyak-averaged with ``tau``.

The off-policy driver (:mod:`rlkit.learners.drivers.off_policy`) decides when to learn (the
base's ``due``) and draws the replay batches; what TD3 (and DDPG, built on the same base
:class:`TD3Base`) learns from one batch is ``update(policy: TD3Base, batch: Batch)``, in SB3's
``TD3.train`` order: count the gradient step; draw the target-policy noise
``N(0, target_policy_noise)`` from the policy's training generator; step :func:`critic_loss`
(the target action smoothed: noise clipped to ``+-target_noise_clip``, the noisy action clipped
to ``[-1, 1]``, :func:`smoothed_target_actions`); every ``policy_delay`` gradient steps (counted
over the whole run) step :func:`actor_loss` and move both targets by ``tau``.

Differences from SB3: learning-rate schedules are not supported (a constant ``lr``).

Example:
    >>> import rlkit as rk
    >>> env = rk.GymEnv("Pendulum-v1", seed=0)
    >>> agent = rk.TD3.agent(env, seed=0, learning_starts=50, batch_size=32, hidden=(16, 16),
    ...                      action_noise=rk.GaussianActionNoise(0.1))
    >>> _ = rk.run(agent, env, rk.StopAfterNSteps(60))
    >>> agent.policy.gradient_steps, sorted(rk.statistics(agent.policy))[:2]
    (10, ['actor_loss', 'critic_loss'])
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch

from ...core.checks import finite_float, positive_int
from ...core.dispatch import update
from ..builder import Batch, build_policy
from ..hyperparameters import hidden_sizes, layers_from_hidden
from ..policy_gradient.models import observation_size
from .common import (
    OFF_POLICY_DEFAULTS,
    ActorCriticModel,
    OffPolicyActorCritic,
    adam,
    mse,
)
from .models import (
    ContinuousCritic,
    DeterministicActor,
    observation_features,
    torch_generator,
)

__all__ = [
    "TD3",
    "TD3_DEFAULTS",
    "TD3Base",
    "smoothed_target_actions",
    "critic_loss",
    "actor_loss",
    "td3_model",
    "td3_step",
    "adam",
]

TD3_DEFAULTS = {
    **OFF_POLICY_DEFAULTS,
    "action_noise": None,
    "policy_delay": 2,
    "target_policy_noise": 0.2,
    "target_noise_clip": 0.5,
    "n_critics": 2,
    "hidden": (400, 300),
}


# ---- pure functions ----


def smoothed_target_actions(
    target_actions: torch.Tensor, noise: torch.Tensor, noise_clip: float
) -> torch.Tensor:
    """Target policy smoothing: ``clip(target_actions + clip(noise, -c, c), -1, 1)``.

    Example:
        >>> import torch
        >>> smoothed_target_actions(torch.tensor([[0.9, 0.0]]), torch.tensor([[0.3, -0.8]]),
        ...                         0.5).tolist()
        [[1.0, -0.5]]
    """
    return (target_actions + noise.clamp(-noise_clip, noise_clip)).clamp(-1.0, 1.0)


def critic_loss(policy, model, dist_class, batch):
    """``sum_i mse(Q_i(s, a), y)`` with ``y = r + (1 - terminal) * gamma * min_i Q'_i(s', a')``
    and ``a'`` the target actor's smoothed action."""
    with torch.no_grad():
        next_action = smoothed_target_actions(
            model.actor_target(batch["next_state"]),
            batch["target_noise"],
            policy.config["target_noise_clip"],
        )
        next_q = torch.stack(model.critic_target(batch["next_state"], next_action)).min(0).values
        target = batch["reward"] + (1.0 - batch["terminal"]) * policy.config["gamma"] * next_q
    qs = model.critic(batch["state"], batch["action"])
    loss = sum(mse(q, target) for q in qs)
    return loss, {"q_mean": qs[0].detach().mean()}


def actor_loss(policy, model, dist_class, batch):
    """``-Q_1(s, actor(s)).mean()``."""
    return -model.critic.q1(batch["state"], model.actor(batch["state"])).mean()


@layers_from_hidden
def td3_model(state_space, action_space, dist_class, config, seed):
    """Deterministic actor, ``n_critics`` critics, and targets of both."""
    generator = torch_generator(seed)
    encoder = observation_features("td3_model", state_space, config, seed)  # images: a CNN
    n_obs = observation_size("td3_model", state_space) if encoder is None else encoder.n_features
    n_actions = int(np.prod(action_space.shape))
    hidden = hidden_sizes("td3_model", config["hidden"])
    return ActorCriticModel(
        DeterministicActor(n_obs, n_actions, hidden, generator, encoder=encoder),
        ContinuousCritic(
            n_obs, n_actions, hidden, n_critics=config["n_critics"], generator=generator,
            encoder=copy.deepcopy(encoder),  # SB3: the critic's own features extractor
        ),  # fmt: skip
        actor_target=True,
        critic_target=True,
    )


class TD3Base(OffPolicyActorCritic):
    """Acting: the actor's action plus the action noise, clipped to ``[-1, 1]``."""

    def check_config(self, owner: str, action_space: Any, env: Any) -> None:
        super().check_config(owner, action_space, env)
        c = self.config
        positive_int(owner, "policy_delay", c["policy_delay"])
        positive_int(owner, "n_critics", c["n_critics"])
        finite_float(owner, "target_policy_noise", c["target_policy_noise"], low=0)
        finite_float(owner, "target_noise_clip", c["target_noise_clip"], low=0)

    def explore(self, obs: torch.Tensor) -> torch.Tensor:
        actions = self.acting_actor(obs)
        if self.noise is None:
            return actions
        noise = self.noise(actions.shape[0], self.n_actions)
        return (actions + torch.as_tensor(noise, dtype=actions.dtype, device=actions.device)).clamp(
            -1.0, 1.0
        )


TD3 = build_policy(
    "TD3",
    loss_fn={"critic": critic_loss, "actor": actor_loss},
    model_fn=td3_model,
    optimizer={"critic": adam, "actor": adam},
    defaults=TD3_DEFAULTS,
    base=TD3Base,
    doc=__doc__,  # the module docstring: the algorithm, its defaults and an example
)


# ---- what TD3 and DDPG learn from one batch (the off-policy driver calls it) ----
@update.dispatch
def _(policy: TD3Base, batch: Batch, /):
    """One TD3 (or DDPG) gradient step in SB3's order (module docstring); its diagnostics."""
    return td3_step(policy, batch)


def td3_step(policy: TD3Base, batch: Batch) -> dict[str, float]:
    """One TD3 gradient step on ``batch`` (what ``update(policy: TD3Base, batch)`` does; TD3+BC,
    ``rlkit/learners/offline/td3bc.py``, calls it on its normalised batch)."""
    policy.gradient_steps += 1
    noise = torch.randn(batch["action"].shape, generator=policy.train_generator)
    batch["target_noise"] = (noise * policy.config["target_policy_noise"]).to(policy.device)
    info = policy.step_loss("critic", batch)
    if policy.gradient_steps % policy.config["policy_delay"] == 0:
        info.update(policy.step_loss("actor", batch))
        policy.sync_targets()
    return info
