"""``DiscreteCQL``: conservative Q-learning for discrete actions (Kumar et al. 2020, CQL(H)),
on the DQN learner.

The loss of a batch of dataset transitions is DQN's TD loss plus the conservative term::

    loss = td_loss(Q(s, a), y) + alpha * mean_batch( logsumexp_a' Q(s, a') - Q(s, a) )

``y`` is DQN's target (:func:`~rlkit.learners.value_based.dqn.dqn_target`), with double
DQN by default as d3rlpy's ``DiscreteCQL`` (built on its ``DoubleDQN``); ``alpha`` is d3rlpy's
default 1.0 and the TD loss Huber, as there. The term pushes down the values of every action
(the log-sum-exp, a soft maximum) and up the value of the action in the data, so actions the
dataset never took are not over-estimated. Learning from a dataset is the offline driver's
(``rlkit/learners/drivers/offline.py``), ``update(learner, batch)`` the DQN family's rule; the
target network counts gradient steps by default (an offline run has no environment steps).
Act with ``rk.QBasedPolicy(learner, rk.GreedyExplorer())`` (or ``rk.greedy``) for evaluation.
"""

from __future__ import annotations

from typing import Any

import torch

from ...approximators.neural import NeuralNetworkApproximator, TargetNetwork
from ...core.checks import finite_float
from ...trajectories.controller import InsertSampleRatioController
from ...trajectories.samplers import BatchSampler
from .. import offline as _offline  # noqa: F401 - registers the offline driver
from ..batch import Batch
from ..builder import build_policy
from ..value_based.common import loss_function
from ..value_based.dqn import DQNBase, dqn_target

__all__ = ["DiscreteCQL", "DiscreteCQLBase", "discrete_cql_loss", "conservative_term"]


def conservative_term(q_all: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """CQL(H)'s term: ``mean(logsumexp_a Q(s, a) - Q(s, a_data))`` over the batch.

    Example:
        >>> import torch
        >>> q = torch.tensor([[0.0, 0.0], [1.0, 3.0]])
        >>> round(conservative_term(q, torch.tensor([0, 1])).item(), 4)  # (log 2 + log(1+e^-2))/2
        0.41
    """
    q_data = q_all.gather(1, actions.unsqueeze(1)).squeeze(1)
    return (torch.logsumexp(q_all, dim=1) - q_data).mean()


def discrete_cql_loss(
    policy: Any, model: Any, dist_class: None, batch: Batch
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """DQN's TD loss (``policy.loss_kind``) plus ``policy.alpha`` times
    :func:`conservative_term`; ``info`` holds ``q``, ``target`` and ``conservative``."""
    q_all = model(batch["state"])
    q = q_all.gather(1, batch["action"].unsqueeze(1)).squeeze(1)
    y = dqn_target(policy, model, batch)
    td = loss_function(type(policy).__name__, policy.loss_kind)(q, y)
    conservative = (torch.logsumexp(q_all, dim=1) - q).mean()  # conservative_term, q reused
    loss = td + policy.alpha * conservative
    return loss, {"q": q.detach(), "target": y, "conservative": conservative.detach()}


class DiscreteCQLBase(DQNBase):
    """The constructor of :data:`DiscreteCQL`: DQN's, with ``alpha``, double DQN on, the
    target network counting gradient steps, and a sampler and controller that only matter
    when it learns online from a replay (offline, batches come from the dataset)."""

    def __init__(
        self,
        approximator: NeuralNetworkApproximator,
        *,
        alpha: float = 1.0,
        gamma: float = 0.99,
        target: TargetNetwork | None = None,
        target_update_on: str = "gradient_step",
        double: bool = True,
        loss: str = "huber",
        sampler: Any = None,
        controller: Any = None,
    ) -> None:
        super().__init__(
            approximator,
            sampler=BatchSampler(32, seed=0) if sampler is None else sampler,
            controller=InsertSampleRatioController(0, 1, 1) if controller is None else controller,
            gamma=gamma,
            target=target,
            target_update_on=target_update_on,
            double=double,
            loss=loss,
        )
        self.alpha = finite_float(type(self).__name__, "alpha", alpha, low=0)

    def __repr__(self) -> str:
        return f"{super().__repr__()[:-1]}, alpha={self.alpha})"


_DOC = (
    (__doc__ or "")
    + """
Args:
    approximator: a :class:`~rlkit.NeuralNetworkApproximator` (one output per action).
    alpha: weight of the conservative term (d3rlpy: 1.0).
    gamma: discount factor.
    target: a :class:`~rlkit.TargetNetwork` (d3rlpy: a hard sync every 8000 gradient steps).
    target_update_on: ``"gradient_step"`` (default) or ``"env_step"``.
    double: double DQN targets (default True, as d3rlpy).
    loss: ``"huber"`` (default) or ``"mse"``.

Example:
    >>> import torch, rlkit as rk
    >>> from rlkit.approximators.neural import q_network
    >>> env = rk.GymEnv("CartPole-v1", seed=0)
    >>> approx = rk.NeuralNetworkApproximator(
    ...     q_network(env.state_space, env.action_space, (64, 64), seed=0),
    ...     lambda p: torch.optim.Adam(p, lr=1e-3))
    >>> learner = rk.DiscreteCQL(approx, target=rk.TargetNetwork(approx, sync_every=100))
    >>> learner.alpha, learner.double
    (1.0, True)
"""
)

DiscreteCQL = build_policy("DiscreteCQL", loss_fn=discrete_cql_loss, base=DiscreteCQLBase, doc=_DOC)
