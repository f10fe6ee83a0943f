"""IMPALA's learner (Espeholt et al. 2018): A2C's loss on V-trace targets, for rollouts that
actors collected with an older copy of the policy (``rk.distributed.ActorLearner``).

Each rollout (``n_steps`` steps of every actor): the stored ``log_prob`` is the behaviour
policy's (the actor's, at acting time); the learner recomputes the values and the current
policy's log-probabilities with its model, then
:func:`~rlkit.learners.policy_gradient.vtrace.vtrace` with ``rho_bar`` and ``c_bar`` (1 and 1,
the paper's) gives the value targets (``returns``) and the policy-gradient advantages; one
RMSprop step (A2C's optimizer) on :func:`impala_loss` (A2C's): policy gradient + ``vf_coef`` *
value MSE + ``ent_coef`` * entropy loss, the gradient norm clipped at ``max_grad_norm``.

Differences from the paper: the value loss is a mean, not a sum (its scale is ``vf_coef``'s);
episode ends cut the traces as in GAE; the learner takes one step per rollout batch (no
separate replay). Run in a single process (no policy lag, ``pi == mu``) it is A2C with
``gae_lambda=1``.

Example:
    >>> import rlkit as rk
    >>> agent = rk.IMPALA.agent(rk.GymEnv("CartPole-v1", seed=0), seed=0, n_steps=8)
    >>> hook = rk.run(agent, rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(16))
    >>> agent.policy.updates
    2
"""

from __future__ import annotations

import numpy as np
import torch

from ..builder import build_policy
from .a2c import A2C_DEFAULTS, a2c_loss, rmsprop_optimizer
from .functions import extra_value_and_log_prob, value_stats
from .models import actor_critic_model
from .vtrace import vtrace

__all__ = ["IMPALA", "IMPALA_DEFAULTS", "add_vtrace", "impala_loss"]

IMPALA_DEFAULTS = {
    **{k: v for k, v in A2C_DEFAULTS.items() if k != "gae_lambda"},
    "n_steps": 32,
    "rho_bar": 1.0,
    "c_bar": 1.0,
}


def add_vtrace(policy, batch):
    """``postprocess_fn``: the current model's values (of the states and of the final states)
    and log-probabilities of the stored actions, then V-trace against the stored behaviour
    ``log_prob``; adds ``returns`` (the targets ``vs``) and ``advantages``."""
    device = policy.device
    state = torch.as_tensor(batch["state"], dtype=torch.float32, device=device)
    final = torch.as_tensor(batch["final_state"], dtype=torch.float32, device=device)
    shape = state.shape[:2]
    mask = batch.get("legal_action_mask")
    if mask is not None:
        mask = torch.as_tensor(np.asarray(mask).reshape(-1, *np.shape(mask)[2:]), device=device)
    with torch.no_grad():
        obs = state.flatten(0, 1)
        values = policy.model.value(obs).reshape(shape)
        next_values = policy.model.value(final.flatten(0, 1)).reshape(shape)
        dist = policy.distribution(obs, mask)
        action = torch.as_tensor(batch["action"], device=device).flatten(0, 1)
        log_prob = dist.log_prob(action).reshape(shape)
    vs, advantages = vtrace(
        batch["log_prob"],
        log_prob.cpu().numpy(),
        batch["reward"],
        values.cpu().numpy(),
        next_values.cpu().numpy().astype(np.float64),
        batch["terminated"],
        batch["truncated"],
        gamma=float(policy.hp("gamma")),
        rho_bar=float(policy.hp("rho_bar")),
        c_bar=float(policy.hp("c_bar")),
    )
    return {**batch, "advantages": advantages, "returns": vs, "value": values.cpu().numpy()}


def impala_loss(policy, model, dist_class, batch):
    """A2C's loss (:func:`~rlkit.learners.policy_gradient.a2c.a2c_loss`) on the V-trace
    ``advantages`` and ``returns`` of :func:`add_vtrace`."""
    return a2c_loss(policy, model, dist_class, batch)


IMPALA = build_policy(
    "IMPALA",
    loss_fn=impala_loss,
    postprocess_fn=add_vtrace,
    stats_fn=value_stats,
    extra_action_out_fn=extra_value_and_log_prob,
    model_fn=actor_critic_model,
    optimizer=rmsprop_optimizer,
    defaults=IMPALA_DEFAULTS,
    doc=__doc__,
)
