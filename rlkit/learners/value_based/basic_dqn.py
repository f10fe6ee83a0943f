"""``BasicDQNLearner``: deep Q-learning from replay without a target network.

Written with ``rk.build_policy``: the loss is :func:`basic_dqn_loss`, a pure function; the class
is built on :class:`BasicDQNBase` (the constructor and options). What it learns from a batch
is the family's rule, ``update(learner, batch)`` in ``common.py``; when it learns is the
off-policy driver's (``rlkit/learners/drivers/off_policy.py``); PreExperiment (the network must
fit the environment) is the family's.
"""

from __future__ import annotations

from typing import Any

import torch

from ...approximators.neural import NeuralNetworkApproximator
from ..batch import Batch
from ..builder import build_policy
from .common import ValueBasedLearner, legal_next, loss_function, n_step_target

__all__ = ["BasicDQNLearner", "BasicDQNBase", "basic_dqn_loss"]


# ---- the loss ----
def basic_dqn_loss(
    policy: Any, model: Any, dist_class: None, batch: Batch
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """The regression loss (``policy.loss_kind``) between ``Q(s, a)`` and ``y = r + (1 -
    terminal) * gamma**n * max_a' Q(s', a')`` of the same network; the gradient flows through
    ``y`` too when ``policy.residual``. ``info`` holds both, detached.

    Example:
        >>> import torch
        >>> from types import SimpleNamespace
        >>> from rlkit.learners.batch import Batch
        >>> net = torch.nn.Linear(1, 2, bias=False)
        >>> _ = torch.nn.init.ones_(net.weight)
        >>> policy = SimpleNamespace(residual=True, loss_kind="mse")
        >>> batch = Batch(state=torch.ones(1, 1), action=torch.tensor([1]),
        ...               reward=torch.tensor([0.0]), terminal=torch.tensor([0.0]),
        ...               next_state=torch.full((1, 1), 4.0), discount=0.5)
        >>> loss, info = basic_dqn_loss(policy, net, None, batch)  # (1 - 0.5 * 4) ** 2
        >>> loss.item(), loss.requires_grad
        (1.0, True)
    """
    q = model(batch["state"]).gather(1, batch["action"].unsqueeze(1)).squeeze(1)
    with torch.set_grad_enabled(policy.residual):
        next_value = legal_next(model(batch["next_state"]), batch).max(dim=1).values
        y = n_step_target(batch["reward"], batch["terminal"], batch["discount"], next_value)
    loss = loss_function(type(policy).__name__, policy.loss_kind)(q, y)
    return loss, {"q": q.detach(), "target": y.detach()}


# ---- the learner ----
class BasicDQNBase(ValueBasedLearner):
    """The constructor and options of :class:`BasicDQNLearner`."""

    def __init__(
        self,
        approximator: NeuralNetworkApproximator,
        *,
        sampler: Any,
        controller: Any,
        gamma: float = 0.99,
        loss: str = "huber",
        residual: bool = True,
        compile: bool | str = False,  # noqa: A002 - rlkit/learners/compiled.py
    ) -> None:
        super().__init__(
            approximator, sampler=sampler, controller=controller, gamma=gamma, compile=compile
        )
        loss_function(type(self).__name__, loss)  # refuses an unknown name now
        self.loss_kind = loss
        self.residual = bool(residual)


_DOC = """Q-learning with a neural network and experience replay and no target network: the loss
compares ``Q(s, a)`` with ``y = r + (1 - terminal) * gamma**n * max_a' Q(s', a')``.

``residual=True`` (the default, as ReinforcementLearning.jl's ``BasicDQNLearner``) lets the
gradient flow through the bootstrap term too (residual-gradient Q-learning), which keeps
learning without a target network stable. ``residual=False`` is the semi-gradient update of
DQN (``y`` treated as a constant); without a target network it diverges on CartPole-v1 (the
Q-values grow without bound), so use :class:`~rlkit.DQNLearner` for that.

Learns at PostAct (the off-policy driver): the ``controller`` says how many gradient steps to
take now (none during warm-up); each step draws a batch with ``sampler`` from a
``CircularArraySARTTrajectory``.
``learner(env)`` returns ``Q(env.state, .)`` as a numpy array (one forward pass).

Args:
    approximator: a :class:`~rlkit.NeuralNetworkApproximator` whose model maps a batch of
        observations to one value per action (see ``rlkit.approximators.neural.q_network``).
    sampler: e.g. ``rk.BatchSampler(32, seed=...)`` or ``rk.NStepBatchSampler(...)``.
    controller: e.g. ``rk.InsertSampleRatioController(warmup_steps=1000, update_every=1,
        n_updates=1)``.
    gamma: discount factor in [0, 1] (must equal an n-step sampler's gamma).
    loss: ``"huber"`` (smooth L1, default) or ``"mse"``.
    residual: differentiate through the bootstrap term as well (see above).

Example:
    >>> import torch, rlkit as rk
    >>> from rlkit.approximators.neural import q_network
    >>> env = rk.GymEnv("CartPole-v1", seed=0)
    >>> net = q_network(env.state_space, env.action_space, (32,), seed=0)
    >>> learner = rk.BasicDQNLearner(
    ...     rk.NeuralNetworkApproximator(net, lambda p: torch.optim.Adam(p, lr=1e-3)),
    ...     sampler=rk.BatchSampler(32, seed=0),
    ...     controller=rk.InsertSampleRatioController(warmup_steps=100, update_every=1,
    ...                                               n_updates=1))
    >>> replay = rk.CircularArraySARTTrajectory(1000, env.state_space, env.action_space)
    >>> agent = rk.Agent(rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.1, seed=0)),
    ...                  replay)
    >>> _ = rk.run(agent, env, rk.StopAfterNSteps(200))
    >>> learner.gradient_steps
    100
"""


BasicDQNLearner = build_policy(
    "BasicDQNLearner", loss_fn=basic_dqn_loss, base=BasicDQNBase, doc=_DOC
)
