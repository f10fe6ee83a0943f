"""A2C (Mnih et al. 2016, synchronous) with Stable-Baselines3's semantics, as pure functions
compiled by ``rk.build_policy``.

Every ``n_steps`` steps of all envs: returns by GAE with ``gae_lambda`` (1.0: n-step returns
bootstrapped from the value of the last final state, and from the final state on truncation),
then one RMSprop step (alpha 0.99, eps 1e-5) on :func:`a2c_loss` over the whole batch: policy
gradient on the (by default unnormalised) advantages + ``vf_coef`` * value MSE + ``ent_coef`` *
entropy loss, the gradient norm clipped at ``max_grad_norm`` (0.5).

Defaults are Stable-Baselines3's. Difference: torch's RMSprop puts ``eps`` outside the square
root, as Stable-Baselines3 with its default ``RMSprop`` does (not the TF-style variant).

Example:
    >>> import rlkit as rk
    >>> agent = rk.A2C.agent(rk.GymEnv("CartPole-v1", seed=0), seed=0)
    >>> hook = rk.run(agent, rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(20))
    >>> agent.policy.updates, agent.policy.gradient_steps
    (4, 4)
"""

from __future__ import annotations

from ...optimizers import GradientDescent, OptimizerModule
from ..builder import build_policy, gradient_tree
from ..built import initial_value
from .functions import (
    add_advantages,
    entropy_term,
    extra_value_and_log_prob,
    normalize,
    policy_gradient_loss,
    value_loss,
    value_stats,
)
from .models import actor_critic_model

__all__ = ["A2C", "a2c_loss", "rmsprop_optimizer", "A2C_DEFAULTS"]

A2C_DEFAULTS = {
    "lr": 7e-4,
    "n_steps": 5,
    "gamma": 0.99,
    "gae_lambda": 1.0,
    "normalize_advantage": False,
    "ent_coef": 0.0,
    "vf_coef": 0.5,
    "max_grad_norm": 0.5,
    "hidden": (64, 64),
    "activation": "tanh",
    "log_std_init": 0.0,
    "cnn": None,  # image observations: "nature" or "minatar" (SB3's CnnPolicy); None: by size
}


def a2c_loss(policy, model, dist_class, batch):
    """Policy gradient + ``vf_coef`` * value MSE + ``ent_coef`` * entropy loss."""
    obs = batch["state"]
    dist = dist_class.from_inputs(model(obs), policy.action_space, batch.get("legal_action_mask"))
    advantages = batch["advantages"]
    if policy.hp("normalize_advantage"):
        advantages = normalize(advantages)
    policy_loss = policy_gradient_loss(dist.log_prob(batch["action"]), advantages)
    v_loss = value_loss(model.value(obs), batch["returns"])
    ent_loss, ent_term = entropy_term(dist, policy.hp("ent_coef"))
    loss = policy_loss + ent_term + policy.hp("vf_coef") * v_loss
    info = {
        "policy_loss": policy_loss.item(),
        "value_loss": v_loss.item(),
        "entropy_loss": ent_loss.item(),
    }
    return loss, info


def rmsprop_optimizer(config: dict) -> OptimizerModule:
    """RMSprop (alpha 0.99, eps 1e-5, as Stable-Baselines3's A2C), gradient norm clipped at
    ``max_grad_norm``; its learning rate follows ``lr``."""
    rmsprop = GradientDescent(
        "rmsprop", lr=initial_value(config["lr"]), alpha=0.99, eps=1e-5,
        keep_deltas=False,
    )  # fmt: skip
    return gradient_tree(rmsprop, config)


A2C = build_policy(
    "A2C",
    loss_fn=a2c_loss,
    postprocess_fn=add_advantages,
    stats_fn=value_stats,
    extra_action_out_fn=extra_value_and_log_prob,
    model_fn=actor_critic_model,
    optimizer=rmsprop_optimizer,
    defaults=A2C_DEFAULTS,
    doc=__doc__,  # the module docstring: the algorithm, its defaults and an example
)
