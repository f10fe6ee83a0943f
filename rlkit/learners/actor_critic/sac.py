"""SAC (Haarnoja et al. 2018) with Stable-Baselines3's semantics, as pure functions compiled by
``rk.build_policy`` (three losses, each with its own Adam: ``ent_coef``, ``critic``, ``actor``).

The policy is a tanh-squashed diagonal Gaussian (``log_std`` clamped to ``[-20, 2]``) in the
scaled space ``[-1, 1]``, rescaled to the ``Box`` bounds; twin critics with a Polyak-averaged
target (``tau``); the entropy coefficient is learned (``ent_coef="auto"``, or ``"auto_0.1"`` to
start at 0.1; target entropy ``-dim(A)`` unless ``target_entropy`` is a number) or fixed
(``ent_coef=0.2``).

The off-policy driver (:mod:`rlkit.learners.drivers.off_policy`) decides when to learn (the
base's ``due``) and draws the replay batches; what SAC learns from one batch is
``update(policy: SAC, batch: Batch)``, in SB3's ``SAC.train`` order: draw the noise of the
policy's sample and of the next-state sample from the policy's training generator; the
coefficient ``alpha = exp(log_ent_coef)`` *before* its step is what the other losses use;
step :func:`ent_coef_loss`, then :func:`critic_loss`, then :func:`actor_loss` (on the updated
critics, with the same policy sample as the entropy loss), then the target critics move by
``tau`` every ``target_update_interval`` gradient steps.

Differences from SB3: the policy sample is recomputed by the actor loss from the same noise
instead of reusing the autograd graph (the same numbers); learning-rate schedules are not
supported (a constant ``lr``); ``target_update_interval`` counts gradient steps overall, not
within one ``train`` call (the same with ``gradient_steps=1``).

Example:
    >>> import rlkit as rk
    >>> env = rk.GymEnv("Pendulum-v1", seed=0)
    >>> agent = rk.SAC.agent(env, seed=0, learning_starts=50, batch_size=32, hidden=(16, 16))
    >>> _ = rk.run(agent, env, rk.StopAfterNSteps(60))
    >>> agent.policy.gradient_steps, sorted(rk.statistics(agent.policy))[:3]
    (10, ['actor_loss', 'critic_loss', 'ent_coef'])
"""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
import torch

from ...core.checks import positive_int
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
from .models import ContinuousCritic, GaussianActor, observation_features, torch_generator

__all__ = [
    "SAC",
    "SACBase",
    "SAC_DEFAULTS",
    "squashed_gaussian",
    "policy_sample",
    "critic_loss",
    "actor_loss",
    "ent_coef_loss",
    "sac_model",
    "parse_ent_coef",
    "check_target_entropy",
]

SAC_DEFAULTS = {
    **OFF_POLICY_DEFAULTS,
    "lr": 3e-4,
    "ent_coef": "auto",
    "target_entropy": "auto",
    "target_update_interval": 1,
    "n_critics": 2,
}

_EPS = 1e-6  # SB3's epsilon in log(1 - tanh(u)^2 + eps)
_LOG_2PI = math.log(2 * math.pi)


# ---- pure functions ----


def squashed_gaussian(
    mean: torch.Tensor, log_std: torch.Tensor, noise: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The reparameterised sample ``a = tanh(mean + exp(log_std) * noise)`` and its
    log-density ``log N(u; mean, std) - sum log(1 - a^2 + 1e-6)`` (SB3's
    ``SquashedDiagGaussianDistribution``), summed over the action dimensions.

    Example:
        >>> import torch
        >>> a, logp = squashed_gaussian(torch.zeros(1, 1), torch.zeros(1, 1), torch.zeros(1, 1))
        >>> a.item(), round(logp.item(), 4)
        (0.0, -0.9189)
    """
    std = log_std.exp()
    u = mean + std * noise
    action = torch.tanh(u)
    gaussian = (-0.5 * noise.pow(2) - log_std - 0.5 * _LOG_2PI).sum(-1)
    return action, gaussian - torch.log(1.0 - action.pow(2) + _EPS).sum(-1)


def parse_ent_coef(owner: str, value: Any) -> tuple[bool, float]:
    """``(learned, initial value)`` from SB3's ``ent_coef``: ``"auto"`` (learned from 1.0),
    ``"auto_0.1"`` (learned from 0.1) or a positive number (fixed); anything else is a
    ``ValueError`` naming ``owner``."""
    learned, init = False, math.nan
    if isinstance(value, str) and (value == "auto" or value.startswith("auto_")):
        learned, init = True, 1.0
        if value != "auto":
            try:
                init = float(value.split("_", 1)[1])
            except ValueError:
                init = math.nan
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        init = float(value)
    if not (init > 0 and math.isfinite(init)):
        raise ValueError(
            f"{owner}: ent_coef must be 'auto', 'auto_<initial value>' or a positive number, "
            f"got {value!r}"
        )
    return learned, init


def check_target_entropy(owner: str, value: Any) -> None:
    """SB3's ``target_entropy``: ``"auto"`` (``-dim(A)``) or a finite number."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if value != "auto" and not (number and math.isfinite(value)):
        raise ValueError(f"{owner}: target_entropy must be 'auto' or a number, got {value!r}")


def _target_entropy(policy: Any) -> float:
    value = policy.config["target_entropy"]
    return -float(policy.n_actions) if value == "auto" else float(value)


def policy_sample(model, batch) -> tuple[torch.Tensor, torch.Tensor]:
    """The reparameterised sample of the actor at ``batch["state"]`` with noise
    ``batch["pi_noise"]``, and its log-probability: ``batch["pi"]`` when the gradient step
    computed it once for both the entropy-coefficient and the actor loss (as SB3 does; the
    actor does not change in between)."""
    if "pi" in batch:
        return batch["pi"]
    mean, log_std = model.actor(batch["state"])
    return squashed_gaussian(mean, log_std, batch["pi_noise"])


def ent_coef_loss(policy, model, dist_class, batch):
    """``-(log_alpha * (log_prob + target_entropy)).mean()`` on the policy's sample (detached)."""
    log_prob = policy_sample(model, batch)[1].detach()
    loss = -(model.log_ent_coef * (log_prob + _target_entropy(policy))).mean()
    return loss, {"ent_coef": batch["ent_coef"]}


def critic_loss(policy, model, dist_class, batch):
    """``0.5 * sum_i mse(Q_i(s, a), y)`` with the soft target
    ``y = r + (1 - terminal) * gamma * (min_i Q'_i(s', a') - alpha * log pi(a'|s'))``."""
    alpha = batch["ent_coef"]
    with torch.no_grad():
        mean, log_std = model.actor(batch["next_state"])
        next_action, next_log_prob = squashed_gaussian(mean, log_std, batch["next_noise"])
        next_q = torch.stack(model.critic_target(batch["next_state"], next_action)).min(0).values
        next_q = next_q - alpha * next_log_prob
        target = batch["reward"] + (1.0 - batch["terminal"]) * policy.config["gamma"] * next_q
    qs = model.critic(batch["state"], batch["action"])
    loss = 0.5 * sum(mse(q, target) for q in qs)
    return loss, {"q_mean": qs[0].detach().mean()}


def actor_loss(policy, model, dist_class, batch):
    """``(alpha * log pi(a|s) - min_i Q_i(s, a)).mean()`` for the reparameterised sample."""
    action, log_prob = policy_sample(model, batch)
    q = torch.stack(model.critic(batch["state"], action)).min(0).values
    loss = (batch["ent_coef"] * log_prob - q).mean()
    return loss, {"entropy": -log_prob.detach().mean()}


@layers_from_hidden
def sac_model(state_space, action_space, dist_class, config, seed):
    """Gaussian actor, ``n_critics`` critics and their target; ``log_ent_coef`` if learned."""
    generator = torch_generator(seed)
    encoder = observation_features("sac_model", state_space, config, seed)  # images: a CNN
    n_obs = observation_size("sac_model", state_space) if encoder is None else encoder.n_features
    n_actions = int(np.prod(action_space.shape))
    hidden = hidden_sizes("sac_model", config["hidden"])
    learned, init = parse_ent_coef("SAC", config["ent_coef"])
    return ActorCriticModel(
        GaussianActor(n_obs, n_actions, hidden, generator, encoder=encoder),
        ContinuousCritic(
            n_obs, n_actions, hidden, n_critics=config["n_critics"], generator=generator,
            encoder=copy.deepcopy(encoder),  # SB3: the critic's own features extractor
            layer_norm=config.get("critic_layer_norm", False),  # CQL's option
        ),  # fmt: skip
        actor_target=False,
        critic_target=True,
        log_ent_coef=math.log(init) if learned else None,
        deterministic_fn=lambda out: torch.tanh(out[0]),
    )


def squashed_sample(
    model: Any, obs: torch.Tensor, generator: torch.Generator, actor: Any = None
) -> torch.Tensor:
    """SAC's action in ``[-1, 1]``: ``tanh(mean + std * noise)``, the noise drawn with
    ``generator`` (acting, and ``predict(deterministic=False)``); ``actor`` computes the mean and
    log-std (``model.actor`` when None; the compiled actor when acting with ``compile=True``)."""
    mean, log_std = (model.actor if actor is None else actor)(obs)
    noise = torch.randn(mean.shape, generator=generator).to(mean.device)
    return torch.tanh(mean + log_std.exp() * noise)


class SACBase(OffPolicyActorCritic):
    """Acting: a sample of the squashed Gaussian (policy's own generator); the checks of SAC's
    hyperparameters. The base of SAC and of CQL (``rlkit/learners/offline/cql.py``)."""

    def check_config(self, owner: str, action_space: Any, env: Any) -> None:
        super().check_config(owner, action_space, env)
        parse_ent_coef(owner, self.config["ent_coef"])
        positive_int(owner, "target_update_interval", self.config["target_update_interval"])
        positive_int(owner, "n_critics", self.config["n_critics"])
        check_target_entropy(owner, self.config["target_entropy"])

    def make_optimizer(self, owner: str) -> dict[str, Any]:
        made = super().make_optimizer(owner)
        if self.model.log_ent_coef is None:  # a fixed coefficient: nothing to learn
            made.pop("ent_coef")
        return made

    samples_in_predict = True
    sample_fn = staticmethod(squashed_sample)  # what an inference artifact names

    def explore(self, obs: torch.Tensor) -> torch.Tensor:
        return squashed_sample(self.model, obs, self.generator, self.acting_actor)

    def sample_scaled(self, obs: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        return squashed_sample(self.model, obs, generator)


SAC = build_policy(
    "SAC",
    loss_fn={"ent_coef": ent_coef_loss, "critic": critic_loss, "actor": actor_loss},
    model_fn=sac_model,
    optimizer={"ent_coef": adam, "critic": adam, "actor": adam},
    defaults=SAC_DEFAULTS,
    base=SACBase,
    doc=__doc__,  # the module docstring: the algorithm, its defaults and an example
)


# ---- what SAC learns from one batch (the off-policy driver calls it) ----
@update.dispatch
def _(policy: SAC, batch: Batch, /):
    """One SAC gradient step in SB3's order (module docstring); its diagnostics."""
    model = policy.model
    shape = batch["action"].shape
    batch["pi_noise"] = torch.randn(shape, generator=policy.train_generator).to(policy.device)
    batch["next_noise"] = torch.randn(shape, generator=policy.train_generator).to(policy.device)
    if model.log_ent_coef is not None:
        batch["ent_coef"] = model.log_ent_coef.detach().exp().clone()
    else:
        batch["ent_coef"] = torch.tensor(parse_ent_coef("SAC", policy.config["ent_coef"])[1])
    batch["pi"] = policy_sample(model, batch)
    info: dict[str, float] = {}
    if "ent_coef" in policy.optimizer:
        info.update(policy.step_loss("ent_coef", batch))
    else:
        info["ent_coef"] = float(batch["ent_coef"])
    info.update(policy.step_loss("critic", batch))
    info.update(policy.step_loss("actor", batch))
    policy.gradient_steps += 1
    if policy.gradient_steps % policy.config["target_update_interval"] == 0:
        policy.sync_targets()
    return info
