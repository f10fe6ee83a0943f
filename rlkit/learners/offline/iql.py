"""IQL (Kostrikov et al. 2021, "Offline Reinforcement Learning with Implicit Q-Learning") with
d3rlpy's defaults, as pure functions compiled by ``rk.build_policy`` on the off-policy
actor-critic base (``rlkit/learners/actor_critic/common.py``).

IQL never queries the critics at actions outside the dataset:

* the value ``V(s)`` is the ``expectile`` (0.7) of the target critics' ``min_i Q'_i(s, a)``
  over the dataset's actions: the asymmetric squared loss
  ``|expectile - 1(diff < 0)| * diff^2`` with ``diff = min_i Q'_i(s, a) - V(s)``
  (:func:`expectile_loss`);
* the critics regress on ``r + gamma * (1 - terminal) * V(s')`` (sum of their squared errors);
  one Adam moves the critics and the value on the sum of both losses (:func:`critic_loss`), as
  d3rlpy does;
* the actor is advantage-weighted regression: ``-mean(w * log pi(a|s))`` with
  ``w = min(exp(beta * (min_i Q'_i(s, a) - V(s))), max_weight)`` (:func:`advantage_weights`,
  :func:`actor_loss`), ``beta`` 3.0, ``max_weight`` 100.

The actor is d3rlpy's IQL policy: a Gaussian with mean ``tanh(mu(s))`` (an MLP) and a
state-independent log standard deviation ``-5 + 7 * sigmoid(theta)`` in ``[-5, 2]``
(:class:`IQLActor`); it acts greedily with its mean (``rk.greedy``, ``predict``), and samples
(clipped to ``[-1, 1]``) when exploring. What one batch teaches is
``update(policy: IQL, batch: Batch)``: step the critics and value, then the actor (on the
updated value), then move the target critics by ``tau``. The batch is an off-policy
actor-critic's (``state``, ``action`` scaled to ``[-1, 1]``, ``reward``, ``terminal``,
``next_state``).

Defaults (d3rlpy's ``IQLConfig``): ``lr`` 3e-4 (critics and value), ``actor_lr`` 3e-4,
``expectile`` 0.7, ``beta`` 3.0 (d3rlpy's ``weight_temp``), ``max_weight`` 100.0,
``batch_size`` 256, ``hidden`` (256, 256), ``gamma`` 0.99, ``tau`` 0.005, two critics;
``learning_starts`` 0; ``reward_scale`` 1.0 (the critics learn ``reward_scale * r``: d3rlpy's
``MultiplyRewardScaler``; the paper scales the locomotion tasks' rewards by ``1000 / (max - min
episode return)``, which puts a 1000-step episode's per-step reward range near 1, the scale its
``beta`` is tuned at). Differences from d3rlpy: none in the update; the paper's cosine decay
of the actor's learning rate is not applied (d3rlpy does not apply it either).

Example:
    >>> import torch
    >>> import rlkit as rk
    >>> policy = rk.IQL(rk.GymEnv("Pendulum-v1", seed=0), seed=0, hidden=(16, 16))
    >>> g = torch.Generator().manual_seed(0)
    >>> batch = rk.Batch(state=torch.randn(8, 3, generator=g), action=torch.zeros(8, 1),
    ...                  reward=torch.ones(8), terminal=torch.zeros(8),
    ...                  next_state=torch.randn(8, 3, generator=g))
    >>> sorted(rk.update(policy, batch))
    ['actor_loss', 'adv_weight', 'critic_loss', 'q_loss', 'v_loss', 'value_mean']
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch
from torch import nn

from ...core.checks import finite_float, positive_int
from ...core.dispatch import update
from ...optimizers.gradient import GradientDescent
from ..actor_critic.common import (
    OFF_POLICY_DEFAULTS,
    ActorCriticModel,
    OffPolicyActorCritic,
    mse,
)
from ..actor_critic.models import ContinuousCritic, features, mlp, torch_generator
from ..batch import Batch
from ..builder import build_policy
from ..hyperparameters import hidden_sizes, layers_from_hidden
from ..policy_gradient.models import observation_encoder, observation_size

__all__ = [
    "IQL",
    "IQL_DEFAULTS",
    "IQLActor",
    "IQLModel",
    "expectile_loss",
    "advantage_weights",
    "gaussian_log_prob",
    "critic_loss",
    "actor_loss",
    "iql_model",
    "gaussian_sample",
]

IQL_DEFAULTS = {
    **OFF_POLICY_DEFAULTS,
    "lr": 3e-4,
    "actor_lr": 3e-4,
    "learning_starts": 0,
    "expectile": 0.7,
    "beta": 3.0,
    "max_weight": 100.0,
    "n_critics": 2,
    "reward_scale": 1.0,
}

LOG_STD_RANGE = (-5.0, 2.0)  # d3rlpy's IQL policy: min_logstd, max_logstd
_LOG_2PI = float(np.log(2 * np.pi))


# ---- pure functions ----


def expectile_loss(diff: torch.Tensor, expectile: float) -> torch.Tensor:
    """``mean(|expectile - 1(diff < 0)| * diff^2)``: the expectile regression loss of
    ``diff = target - prediction`` (an expectile above 0.5 weighs underestimates more).

    Example:
        >>> import torch
        >>> expectile_loss(torch.tensor([2.0, -1.0]), 0.7).item()  # (0.7 * 4 + 0.3 * 1) / 2
        1.5499999523162842
    """
    weight = (expectile - (diff < 0.0).to(diff.dtype)).abs()
    return (weight * diff.pow(2)).mean()


def advantage_weights(advantage: torch.Tensor, beta: float, max_weight: float) -> torch.Tensor:
    """``min(exp(beta * advantage), max_weight)``: advantage-weighted regression's weights.

    Example:
        >>> import torch
        >>> advantage_weights(torch.tensor([0.0, 1.0, 5.0]), 1.0, 100.0).tolist()
        [1.0, 2.7182817459106445, 100.0]
    """
    return (beta * advantage).exp().clamp(max=max_weight)


def gaussian_log_prob(mean: torch.Tensor, log_std: torch.Tensor, action: torch.Tensor):
    """``log N(action; mean, exp(log_std))`` summed over the action dimensions.

    Example:
        >>> import torch
        >>> round(gaussian_log_prob(torch.zeros(1, 1), torch.zeros(1, 1),
        ...                         torch.zeros(1, 1)).item(), 4)
        -0.9189
    """
    z = (action - mean) * (-log_std).exp()
    return (-0.5 * z.pow(2) - log_std - 0.5 * _LOG_2PI).sum(-1)


def _advantage(model: Any, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
    """``min_i Q'_i(s, a)`` (target critics, no gradient) and ``V(s)``."""
    with torch.no_grad():
        q = torch.stack(model.critic_target(batch["state"], batch["action"])).min(0).values
    return q, model.value(batch["state"])


def critic_loss(policy, model, dist_class, batch):
    """``sum_i mse(Q_i(s, a), reward_scale * r + gamma * (1 - terminal) * V(s'))`` plus the
    value's :func:`expectile_loss` of ``min_i Q'_i(s, a) - V(s)``; one optimizer moves both."""
    c = policy.config
    with torch.no_grad():
        next_v = model.value(batch["next_state"])
        reward = c["reward_scale"] * batch["reward"]  # x 1.0 (the default): bit-identical
        target = reward + (1.0 - batch["terminal"]) * c["gamma"] * next_v
    qs = model.critic(batch["state"], batch["action"])
    q_loss = sum(mse(q, target) for q in qs)
    q_target, v = _advantage(model, batch)
    v_loss = expectile_loss(q_target - v, c["expectile"])
    info = {"q_loss": float(q_loss.detach()), "v_loss": float(v_loss.detach()),
            "value_mean": float(v.detach().mean())}  # fmt: skip
    return q_loss + v_loss, info


def actor_loss(policy, model, dist_class, batch):
    """``-mean(w * log pi(a|s))`` with :func:`advantage_weights` of
    ``min_i Q'_i(s, a) - V(s)`` (no gradient through the weights)."""
    c = policy.config
    q_target, v = _advantage(model, batch)
    weights = advantage_weights(q_target - v.detach(), c["beta"], c["max_weight"])
    mean, log_std = model.actor(batch["state"])
    log_prob = gaussian_log_prob(mean, log_std, batch["action"])
    return -(weights * log_prob).mean(), {"adv_weight": float(weights.mean())}


# ---- the model ----


class IQLActor(nn.Module):
    """``obs -> (tanh(mu(obs)), log_std)``: a ReLU MLP to the mean, squashed to ``[-1, 1]``,
    and a state-independent log standard deviation ``-5 + 7 * sigmoid(theta)`` (``theta``
    starts at 0), as d3rlpy's IQL policy."""

    def __init__(
        self, n_obs: int, n_actions: int, hidden: tuple[int, ...], generator: torch.Generator,
        encoder: nn.Module | None = None,
    ) -> None:  # fmt: skip
        super().__init__()
        self.latent = mlp([n_obs, *hidden], generator, last_activation=True)
        self.mu = mlp([hidden[-1] if hidden else n_obs, n_actions], generator)
        self.log_std_logit = nn.Parameter(torch.zeros(1, n_actions))
        self.encoder = encoder

    def forward(self, obs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        mean = torch.tanh(self.mu(self.latent(features(self.encoder, obs))))
        low, high = LOG_STD_RANGE
        log_std = low + (high - low) * torch.sigmoid(self.log_std_logit)
        return mean, log_std.expand_as(mean)


class IQLModel(ActorCriticModel):
    """The actor, the critics and their target, and the state value ``value`` (an MLP
    ``obs -> V``, after ``value_encoder``, its own encoder of a ``Dict``/``Tuple``/``Discrete``
    observation, when given), which the loss ``critic`` moves with the critics."""

    def __init__(
        self, *args: Any, value: nn.Module, value_encoder: nn.Module | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.value_net = value
        self.value_encoder = value_encoder

    def value(self, obs: Any) -> torch.Tensor:
        """``V(obs)``, one number per row."""
        return self.value_net(features(self.value_encoder, obs)).squeeze(-1)

    def params_for(self, loss_name: str) -> list[nn.Parameter]:
        if loss_name == "critic":
            return [*self.critic.parameters(), *self.value_net.parameters()]
        return super().params_for(loss_name)


def _mean_action(out: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    return out[0]


@layers_from_hidden
def iql_model(state_space, action_space, dist_class, config, seed):
    """:class:`IQLActor`, ``n_critics`` critics and their target, a value MLP; each with its
    own encoder of a ``Dict``/``Tuple``/``Discrete``/... observation space (SAC's rule:
    ``observation_encoder``; a ``Box`` is flattened, as always)."""
    generator = torch_generator(seed)
    encoder = observation_encoder("iql_model", state_space, config, seed)
    n_obs = observation_size("iql_model", state_space) if encoder is None else encoder.n_features
    n_actions = int(np.prod(action_space.shape))
    hidden = hidden_sizes("iql_model", config["hidden"])
    return IQLModel(
        IQLActor(n_obs, n_actions, hidden, generator, encoder=encoder),
        ContinuousCritic(
            n_obs, n_actions, hidden, n_critics=config["n_critics"], generator=generator,
            encoder=copy.deepcopy(encoder),
        ),  # fmt: skip
        actor_target=False,
        critic_target=True,
        deterministic_fn=_mean_action,
        value=mlp([n_obs, *hidden, 1], generator),
        value_encoder=copy.deepcopy(encoder),
    )


def gaussian_sample(model: Any, obs: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """An action of IQL's Gaussian in ``[-1, 1]``: ``clip(mean + std * noise, -1, 1)``, the
    noise drawn with ``generator``."""
    mean, log_std = model.actor(obs)
    noise = torch.randn(mean.shape, generator=generator).to(mean.device)
    return (mean + log_std.exp() * noise).clamp(-1.0, 1.0)


def critic_adam(config: dict[str, Any]) -> GradientDescent:
    """Adam at ``lr`` (the critics and the value)."""
    return GradientDescent("adam", lr=config["lr"], fused=True, keep_deltas=False)


def actor_adam(config: dict[str, Any]) -> GradientDescent:
    """Adam at ``actor_lr``."""
    return GradientDescent("adam", lr=config["actor_lr"], fused=True, keep_deltas=False)


class IQLBase(OffPolicyActorCritic):
    """Acting: a sample of the Gaussian (the policy's generator); IQL's hyperparameter
    checks."""

    samples_in_predict = True
    sample_fn = staticmethod(gaussian_sample)  # what an inference artifact names

    def check_config(self, owner: str, action_space: Any, env: Any) -> None:
        super().check_config(owner, action_space, env)
        c = self.config
        finite_float(owner, "actor_lr", c["actor_lr"], low=0, low_open=True)
        finite_float(owner, "expectile", c["expectile"], low=0, high=1, low_open=True)
        finite_float(owner, "beta", c["beta"], low=0)
        finite_float(owner, "max_weight", c["max_weight"], low=0, low_open=True)
        positive_int(owner, "n_critics", c["n_critics"])
        finite_float(owner, "reward_scale", c["reward_scale"], low=0, low_open=True)

    def explore(self, obs: torch.Tensor) -> torch.Tensor:
        return gaussian_sample(self.model, obs, self.generator)

    def sample_scaled(self, obs: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        return gaussian_sample(self.model, obs, generator)


IQL = build_policy(
    "IQL",
    loss_fn={"critic": critic_loss, "actor": actor_loss},
    model_fn=iql_model,
    optimizer={"critic": critic_adam, "actor": actor_adam},
    defaults=IQL_DEFAULTS,
    base=IQLBase,
    doc=__doc__,  # the module docstring: the algorithm, its defaults and an example
)


# ---- what IQL learns from one batch ----
@update.dispatch
def _(policy: IQL, batch: Batch, /):
    """One IQL gradient step: critics and value, actor, target critics; its diagnostics."""
    info = policy.step_loss("critic", batch)
    info.update(policy.step_loss("actor", batch))
    policy.gradient_steps += 1
    policy.sync_targets()
    return info
