"""PPO (Schulman et al. 2017) with Stable-Baselines3's semantics, as pure functions compiled by
``rk.build_policy``.

Each rollout of ``n_steps`` steps of every env: values and log-probabilities stored when acting
(:func:`~rlkit.learners.policy_gradient.functions.extra_value_and_log_prob`); GAE
(``gamma``, ``gae_lambda``) bootstrapped from the final state on truncation and at the rollout's
end (:func:`~rlkit.learners.policy_gradient.functions.add_advantages`); then ``n_epochs`` passes
over shuffled minibatches of ``batch_size``, each one Adam step (eps 1e-5) on
:func:`ppo_loss`, the gradient norm clipped at ``max_grad_norm``: clipped surrogate on
advantages normalised per minibatch, value loss (the prediction clipped around the old value
when ``clip_range_vf`` is set), entropy bonus weighted by ``ent_coef``. With ``target_kl`` an
epoch stops before the step whose approximate KL exceeds ``1.5 * target_kl``. ``lr``,
``clip_range`` and ``ent_coef`` may be ``Schedule`` objects (counted in env transitions).

Defaults are Stable-Baselines3's. Differences: the network is two separate MLPs (SB3's
default ``MlpPolicy`` for PPO too), or, for ``uint8`` image observations ``(C, H, W)``, SB3's
``CnnPolicy`` (a CNN body shared by the policy and the value function: the Nature CNN for
frames of 36x36 or more, MinAtar's below, or the ``cnn`` hyperparameter's;
``rlkit/learners/policy_gradient/cnn_models.py``); the value targets of truncated steps
bootstrap from the value of the final state inside GAE instead of adding ``gamma * V(final)``
to the reward (the same numbers).

Example:
    >>> import rlkit as rk
    >>> agent = rk.PPO.agent(rk.GymEnv("CartPole-v1", seed=0), seed=0, n_steps=64, batch_size=32)
    >>> hook = rk.run(agent, rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(128))
    >>> agent.policy.updates, sorted(rk.statistics(agent.policy))[:3]
    (2, ['approx_kl', 'clip_fraction', 'entropy_loss'])
    >>> breakout = rk.GymEnv(rk.make_minatar_env("MinAtar/Breakout-v1"), seed=0)
    >>> rk.PPO.agent(breakout, seed=0).policy.model.encoder.cnn  # 10x10 frames
    'minatar'
"""

from __future__ import annotations

import torch

from ...optimizers import GradientDescent, OptimizerModule
from ..builder import build_policy, gradient_tree
from ..built import initial_value
from .functions import (
    add_advantages,
    approx_kl,
    clipped_surrogate,
    entropy_term,
    extra_value_and_log_prob,
    normalize,
    value_loss,
    value_stats,
)
from .models import actor_critic_model

__all__ = ["PPO", "ppo_loss", "ppo_objective", "adam_optimizer", "PPO_DEFAULTS"]

PPO_DEFAULTS = {
    "lr": 3e-4,
    "n_steps": 2048,
    "batch_size": 64,
    "n_epochs": 10,
    "gamma": 0.99,
    "gae_lambda": 0.95,
    "clip_range": 0.2,
    "clip_range_vf": None,
    "normalize_advantage": True,
    "ent_coef": 0.0,
    "vf_coef": 0.5,
    "max_grad_norm": 0.5,
    "target_kl": None,
    "hidden": (64, 64),
    "activation": "tanh",
    "log_std_init": 0.0,
    "cnn": None,  # image observations: "nature" or "minatar" (SB3's CnnPolicy); None: by size
}


def ppo_loss(policy, model, dist_class, batch):
    """Clipped surrogate + ``vf_coef`` * value loss + ``ent_coef`` * entropy loss, and the
    diagnostics Stable-Baselines3 logs."""
    obs = batch["state"]
    dist = dist_class.from_inputs(model(obs), policy.action_space, batch.get("legal_action_mask"))
    return ppo_objective(policy, dist, model.value(obs), batch)


def ppo_objective(policy, dist, values, batch):
    """PPO's loss and diagnostics from the action distribution and the values the model gives
    for ``batch``'s rows (what :func:`ppo_loss` computes after the forward pass; a recurrent
    model's loss, rlkit/learners/policy_gradient/recurrent.py, calls it on the real steps of
    its sequences)."""
    log_prob = dist.log_prob(batch["action"])
    advantages = batch["advantages"]
    if policy.hp("normalize_advantage"):
        advantages = normalize(advantages)
    clip = float(policy.hp("clip_range"))
    policy_loss = clipped_surrogate(log_prob, batch["log_prob"], advantages, clip)
    clip_vf = policy.hp("clip_range_vf")
    v_loss = value_loss(values, batch["returns"], batch["value"], clip_vf)
    ent_loss, ent_term = entropy_term(dist, policy.hp("ent_coef"))
    loss = policy_loss + ent_term + policy.hp("vf_coef") * v_loss
    with torch.no_grad():
        ratio = torch.exp(log_prob - batch["log_prob"])
        values = torch.stack(
            [
                policy_loss,
                v_loss,
                ent_loss,
                approx_kl(log_prob, batch["log_prob"]),
                ((ratio - 1).abs() > clip).float().mean(),
            ]
        ).tolist()  # one conversion, not five
    return loss, dict(zip(_DIAGNOSTICS, values, strict=True))


_DIAGNOSTICS = ("policy_loss", "value_loss", "entropy_loss", "approx_kl", "clip_fraction")


def adam_optimizer(config: dict) -> OptimizerModule:
    """Stable-Baselines3's optimizer: Adam (eps 1e-5; fused into one kernel per step where torch
    has one, the same algorithm) with the gradient norm clipped at ``max_grad_norm``, for
    ``n_epochs`` epochs over minibatches of ``batch_size``: ``MultiStep(ClippedStep(
    GradientDescent(Adam), max_grad_norm, on="gradient"), n_epochs, batch_size)``. Its learning
    rate follows ``lr`` (a schedule too)."""
    adam = GradientDescent(
        "adam", lr=initial_value(config["lr"]), eps=1e-5, fused=True,
        keep_deltas=False,
    )  # fmt: skip
    return gradient_tree(adam, config)


PPO = build_policy(
    "PPO",
    loss_fn=ppo_loss,
    postprocess_fn=add_advantages,
    stats_fn=value_stats,
    extra_action_out_fn=extra_value_and_log_prob,
    model_fn=actor_critic_model,
    optimizer=adam_optimizer,
    defaults=PPO_DEFAULTS,
    doc=__doc__,  # the module docstring: the algorithm, its defaults and an example
)
