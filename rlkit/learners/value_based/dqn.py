"""``DQNLearner``: deep Q-learning with a target network, double DQN, n-step returns, Huber or MSE
loss and (through the network) an optional dueling head.

Written with ``rk.build_policy``: the loss is :func:`dqn_loss`, a pure function; the class is
built on :class:`DQNBase` (the constructor and options). What it learns from a batch is the
family's rule, ``update(learner, batch)`` in ``common.py`` (the loss, one step of the
approximator's optimizer module tree, the target network); when it learns is the off-policy
driver's (``rlkit/learners/drivers/off_policy.py``); PreExperiment (the network must fit the
environment) is the family's.
"""

from __future__ import annotations

from typing import Any

import torch

from ...approximators.neural import NeuralNetworkApproximator, TargetNetwork
from ..batch import Batch
from ..builder import build_policy
from .common import ValueBasedLearner, legal_next, loss_function, n_step_target

__all__ = ["DQNLearner", "DQNBase", "dqn_loss", "dqn_q_and_target", "dqn_target"]


# ---- the loss ----
def dqn_q_and_target(policy: Any, model: Any, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
    """``Q(s, a)`` (with gradient) and the target ``y`` (without): ``y = r + (1 - terminal) *
    gamma**n * Q_target(s', a*)``, ``a*`` the target network's greedy action, or the online
    network's when ``policy.double``; among the legal actions of ``s'`` when the batch has
    ``next_legal_action_mask`` (a replay that keeps masks)."""
    q = model(batch["state"]).gather(1, batch["action"].unsqueeze(1)).squeeze(1)
    return q, dqn_target(policy, model, batch)


def dqn_target(policy: Any, model: Any, batch: Batch) -> torch.Tensor:
    """The target ``y`` of :func:`dqn_q_and_target`, without gradient."""
    with torch.no_grad():
        next_q = policy.target.model(batch["next_state"])
        if policy.double:
            best = legal_next(model(batch["next_state"]), batch).argmax(dim=1, keepdim=True)
            next_value = next_q.gather(1, best).squeeze(1)
        else:
            next_value = legal_next(next_q, batch).max(dim=1).values
        return n_step_target(batch["reward"], batch["terminal"], batch["discount"], next_value)


def dqn_loss(
    policy: Any, model: Any, dist_class: None, batch: Batch
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """DQN's loss: ``policy``'s regression loss (Huber or MSE, ``policy.loss_kind``) between
    ``Q(s, a)`` and the target of :func:`dqn_q_and_target`; ``info`` holds both, detached.

    Example:
        >>> import torch
        >>> from types import SimpleNamespace
        >>> from rlkit.learners.batch import Batch
        >>> net = torch.nn.Linear(1, 2, bias=False)
        >>> _ = torch.nn.init.ones_(net.weight)
        >>> policy = SimpleNamespace(target=SimpleNamespace(model=net), double=False,
        ...                          loss_kind="mse")
        >>> batch = Batch(state=torch.ones(1, 1), action=torch.tensor([0]),
        ...               reward=torch.tensor([1.0]), terminal=torch.tensor([0.0]),
        ...               next_state=torch.full((1, 1), 2.0), discount=0.5)
        >>> loss, info = dqn_loss(policy, net, None, batch)  # y = 1 + 0.5 * 2 = 2, Q = 1
        >>> loss.item(), info["target"].tolist()
        (1.0, [2.0])
    """
    q, y = dqn_q_and_target(policy, model, batch)
    loss = loss_function(type(policy).__name__, policy.loss_kind)(q, y)
    return loss, {"q": q.detach(), "target": y}


# ---- the learner ----
class DQNBase(ValueBasedLearner):
    """The constructor and options of :class:`DQNLearner` (and of its variants)."""

    default_target_sync = 1000

    def __init__(
        self,
        approximator: NeuralNetworkApproximator,
        *,
        sampler: Any,
        controller: Any,
        gamma: float = 0.99,
        target: TargetNetwork | None = None,
        target_update_on: str = "env_step",
        double: bool = False,
        loss: str = "huber",
        compile: bool | str = False,  # noqa: A002 - rlkit/learners/compiled.py
    ) -> None:
        super().__init__(
            approximator,
            sampler=sampler,
            controller=controller,
            gamma=gamma,
            target=target,
            target_update_on=target_update_on,
            compile=compile,
        )
        self.double = bool(double)
        loss_function(type(self).__name__, loss)  # refuses an unknown name now
        self.loss_kind = loss

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.approximator!r}, gamma={self.gamma}, "
            f"double={self.double}, loss={self.loss_kind!r}, target={self.target!r})"
        )


_DOC = """DQN (Mnih et al. 2015) with the usual extensions.

Target: ``y = r + (1 - terminal) * gamma**n * Q_target(s', a*)`` with
``a* = argmax_a Q_target(s', a)``, or ``argmax_a Q(s', a)`` of the online network when
``double=True`` (van Hasselt et al. 2016). ``r`` and ``n`` come from the sampler: with
``rk.NStepBatchSampler(batch, n, gamma)`` it is the discounted n-step return (cut at episode
ends, bootstrapping through truncation). A dueling head is a property of the network: build it
with ``rlkit.approximators.neural.q_network(..., dueling=True)``.

Learns at PostAct (the off-policy driver): one target-network update, then
``controller.step()`` gradient steps on batches from a ``CircularArraySARTTrajectory``. By
default the target network counts environment steps, as Stable-Baselines3's
``target_update_interval`` does, and is synced before that step's gradient steps, as there
(``target_update_on="gradient_step"`` counts gradient steps instead, updating after each).

Args:
    approximator: a :class:`~rlkit.NeuralNetworkApproximator` (one output per action).
    sampler: ``rk.BatchSampler`` or ``rk.NStepBatchSampler`` (same gamma as the learner).
    controller: ``rk.InsertSampleRatioController`` (warm-up, update every k steps,
        g gradient steps per update).
    gamma: discount factor in [0, 1].
    target: a :class:`~rlkit.TargetNetwork` of ``approximator`` (default: hard sync every
        1000 updates).
    target_update_on: ``"env_step"`` (default) or ``"gradient_step"``.
    double: double DQN (action chosen by the online network).
    loss: ``"huber"`` (default) or ``"mse"``.

Example:
    >>> import torch, rlkit as rk
    >>> from rlkit.approximators.neural import q_network
    >>> env = rk.GymEnv("CartPole-v1", seed=0)
    >>> approx = rk.NeuralNetworkApproximator(
    ...     q_network(env.state_space, env.action_space, (64, 64), dueling=True, seed=0),
    ...     lambda p: torch.optim.Adam(p, lr=1e-3), max_grad_norm=10.0)
    >>> learner = rk.DQNLearner(
    ...     approx, sampler=rk.NStepBatchSampler(32, n=3, gamma=0.99, seed=0),
    ...     controller=rk.InsertSampleRatioController(warmup_steps=100, update_every=4,
    ...                                               n_updates=1),
    ...     gamma=0.99, target=rk.TargetNetwork(approx, sync_every=100), double=True)
    >>> replay = rk.CircularArraySARTTrajectory(1000, env.state_space, env.action_space)
    >>> agent = rk.Agent(rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.1, seed=0)),
    ...                  replay)
    >>> _ = rk.run(agent, env, rk.StopAfterNSteps(200))
    >>> learner.gradient_steps, learner.target.updates
    (25, 200)
"""


DQNLearner = build_policy("DQNLearner", loss_fn=dqn_loss, base=DQNBase, doc=_DOC)
