"""A user's own algorithm, written outside rlkit with rk.build_policy (used by test_builder)."""

import torch

import rlkit as rk
from rlkit.learners.policy_gradient.models import actor_critic_model


def returns_to_go(policy, batch):
    from rlkit.learners.policy_gradient.functions import gae

    zeros = batch["reward"] * 0.0
    _, returns = gae(batch["reward"], zeros, zeros, batch["terminated"], batch["truncated"],
                     gamma=policy.hp("gamma"), lam=1.0)
    return {**batch, "returns": returns}


def reinforce_loss(policy, model, dist_class, batch):
    dist = dist_class.from_inputs(model(batch["state"]), policy.action_space)
    return -(dist.log_prob(batch["action"]) * batch["returns"]).mean()


def adam(config):
    from rlkit.learners.builder import GradientStep

    return GradientStep(torch.optim.Adam, max_grad_norm=None)


MyReinforce = rk.build_policy(
    "MyReinforce",
    loss_fn=reinforce_loss,
    postprocess_fn=returns_to_go,
    model_fn=actor_critic_model,
    optimizer=adam,
    defaults={"lr": 1e-2, "gamma": 0.99, "n_steps": 16},
)
