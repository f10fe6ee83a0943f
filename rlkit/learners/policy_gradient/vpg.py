"""VPG: REINFORCE with a learned baseline (Williams 1992; Sutton & Barto section 13.4), as pure
functions compiled by ``rk.build_policy``.

Every ``n_steps`` steps of all envs: Monte-Carlo returns (``gae_lambda`` 1.0; an episode cut by
the time limit or by the rollout's end is completed by the value of its final state), advantages
``G - V(s)`` normalised over the batch, then one Adam step on :func:`vpg_loss`:
``-mean(log_prob * A)`` + ``vf_coef`` * value MSE (the baseline learns from the same step),
gradient norm clipped at ``max_grad_norm``.

Any ``rk.optimizers`` module tree may replace Adam
(``VPG.with_updates(optimizer=rk.optimizers.make(spec))``, as for every built policy): it then
gets the loss and the KL divergence from the rollout's policy as closures
(:mod:`rlkit.learners.update`), so ``NaturalGradient``, ``OptimizedStep`` and
``Evolutionary`` can evaluate them as often as they need.

Stable-Baselines3 has no VPG. Spinning Up's VPG fits the value function with 80 separate steps
per rollout and uses GAE (lambda 0.97); this one keeps REINFORCE's Monte-Carlo returns and one
joint step (A2C's loss with normalised advantages, long rollouts and Adam).

Example:
    >>> import rlkit as rk
    >>> agent = rk.VPG.agent(rk.GymEnv("CartPole-v1", seed=0), seed=0, n_steps=50)
    >>> hook = rk.run(agent, rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(100))
    >>> agent.policy.updates
    2
"""

from __future__ import annotations

from ..builder import build_policy
from .a2c import a2c_loss
from .functions import add_advantages, extra_value_and_log_prob, value_stats
from .models import actor_critic_model
from .ppo import adam_optimizer

__all__ = ["VPG", "vpg_loss", "VPG_DEFAULTS"]

VPG_DEFAULTS = {
    "lr": 1e-3,
    "n_steps": 1000,
    "gamma": 0.99,
    "gae_lambda": 1.0,
    "normalize_advantage": True,
    "ent_coef": 0.0,
    "vf_coef": 0.5,
    "max_grad_norm": 0.5,
    "hidden": (64, 64),
    "activation": "tanh",
    "log_std_init": 0.0,
}


def vpg_loss(policy, model, dist_class, batch):
    """REINFORCE with a baseline: A2C's loss (:func:`~.a2c.a2c_loss`) on Monte-Carlo returns."""
    return a2c_loss(policy, model, dist_class, batch)


VPG = build_policy(
    "VPG",
    loss_fn=vpg_loss,
    postprocess_fn=add_advantages,
    stats_fn=value_stats,
    extra_action_out_fn=extra_value_and_log_prob,
    model_fn=actor_critic_model,
    optimizer=adam_optimizer,
    defaults=VPG_DEFAULTS,
    doc=__doc__,  # the module docstring: the algorithm, its defaults and an example
)
