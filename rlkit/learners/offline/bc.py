"""``BC``: behaviour cloning, the policy that imitates a dataset's actions (the baseline of
offline RL; d3rlpy's ``BC`` and ``DiscreteBC``).

The loss is the negative log-likelihood of the dataset's actions under the policy's action
distribution::

    loss = -mean(log pi(a_data | s))  (+ beta * mean(logits ** 2) for discrete actions)

Discrete actions: cross-entropy on the logits plus d3rlpy ``DiscreteBC``'s penalty on their
size (``beta = 0.5``). Continuous actions: the Gaussian negative log-likelihood (a diagonal
Gaussian with a learned state-independent log standard deviation); the greedy policy
(``rk.greedy``, ``EvaluationHook``) acts on the Gaussian's mean. Here we differ from d3rlpy:
its default ``BC`` is a deterministic actor trained by a mean squared error, and its
``policy_type="stochastic"`` is a squared error too, between a reparameterised sample of its
Gaussian and the dataset's action, not a likelihood (docs/how-to/offline-rl.md).
The network is the policy-gradient learners' MLP (``actor_critic_model``; its value head is not
trained), ``hidden=(256, 256)`` with ReLU and Adam at ``lr=1e-3`` (d3rlpy's defaults); the
batch size is the ``rk.OfflineEnv``'s (d3rlpy: 100).

Learning from a dataset is the offline driver's (``rlkit/learners/drivers/offline.py``): each
gradient step ``update(policy, policy.offline_batch(env.sample()))``, the built policies'
default update (``loss_fn`` -> one step of the optimizer tree -> statistics).

Example:
    >>> import numpy as np, gymnasium as gym, rlkit as rk
    >>> obs = np.random.default_rng(0).normal(size=(200, 4)).astype(np.float32)
    >>> dataset = rk.Dataset.from_arrays(
    ...     observations=obs, actions=(obs[:, 2] > 0).astype(np.int64),
    ...     rewards=np.ones(200, np.float32), terminations=np.zeros(200, bool),
    ...     truncations=np.arange(200) % 50 == 49, next_observations=obs,
    ...     observation_space=gym.spaces.Box(-np.inf, np.inf, (4,), np.float32),
    ...     action_space=gym.spaces.Discrete(2))
    >>> env = rk.OfflineEnv(dataset, batch_size=100, seed=0)
    >>> policy = rk.BC(env, seed=0)
    >>> _ = rk.run(policy, env, rk.StopAfterNSteps(200))
    >>> float(np.mean(policy.predict(obs) == dataset.actions)) > 0.9
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import torch

from ...optimizers import GradientDescent
from ...trajectories.structured import map_leaves
from .. import offline as _offline  # noqa: F401 - registers the offline driver
from ..batch import Batch
from ..builder import build_policy
from ..built import BuiltPolicy, gradient_tree
from ..policy_gradient.models import actor_critic_model

__all__ = ["BC", "BCBase", "bc_loss", "BC_DEFAULTS"]

BC_DEFAULTS = {
    "lr": 1e-3,
    "hidden": (256, 256),
    "activation": "relu",
    "log_std_init": 0.0,
    "beta": 0.5,  # discrete actions: weight of the logits' size penalty (d3rlpy DiscreteBC)
    "max_grad_norm": None,
}


def bc_loss(
    policy: Any, model: Any, dist_class: type, batch: Batch
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """``-mean(log pi(a | s))``, plus ``beta * mean(logits ** 2)`` for discrete actions.

    Example:
        >>> import torch, gymnasium as gym
        >>> from types import SimpleNamespace
        >>> from rlkit.policies.distributions import Categorical
        >>> from rlkit.learners.batch import Batch
        >>> model = lambda s: torch.log(torch.tensor([[0.25, 0.75]]))  # probabilities 1/4, 3/4
        >>> policy = SimpleNamespace(action_space=gym.spaces.Discrete(2), hp=lambda k: 0.0)
        >>> loss, _ = bc_loss(policy, model, Categorical,
        ...                   Batch(state=torch.zeros(1, 1), action=torch.tensor([1])))
        >>> round(loss.item(), 4)  # -log(3/4)
        0.2877
    """
    inputs = model(batch["state"])
    dist = dist_class.from_inputs(inputs, policy.action_space)
    nll = -dist.log_prob(batch["action"]).mean()
    if isinstance(policy.action_space, gym.spaces.Discrete):
        penalty = (inputs**2).mean()
        return nll + policy.hp("beta") * penalty, {"nll": nll.detach(), "penalty": penalty.detach()}
    return nll, {"nll": nll.detach()}


def adam(config: dict) -> Any:
    """Adam at ``lr`` (one step per batch; clipped at ``max_grad_norm`` when set)."""
    return gradient_tree(GradientDescent("adam", lr=config["lr"], keep_deltas=False), config)


class BCBase(BuiltPolicy):
    """:data:`BC`'s base: a built policy that reads a dataset's sample (the offline driver's
    protocol, ``rlkit/learners/drivers/offline.py``)."""

    def offline_batch(self, sample: Mapping[str, Any]) -> Batch:
        """The sample's states and actions as a rollout of one step of ``batch_size`` envs,
        which the built policies' update flattens into ``(batch_size, ...)`` tensors."""
        state = map_leaves(lambda a: a[None], sample["state"])  # a Dict observation: by key
        return Batch(state=state, action=sample["action"][None])


BC = build_policy(
    "BC",
    loss_fn=bc_loss,
    model_fn=actor_critic_model,
    optimizer=adam,
    defaults=BC_DEFAULTS,
    base=BCBase,
    doc=__doc__,
)
