"""``BasicDQNLearner``: deep Q-learning from replay without a target network.

Its stage methods are those of every DQN-family learner, in ``dqn_common.py``: PreExperiment
checks the network against the environment, PostAct calls ``learner.learn(trajectory)``.
"""

from __future__ import annotations

from typing import Any

import torch

from ...approximators.neural import NeuralNetworkApproximator
from .common import TensorBatch, ValueBasedLearner, loss_function, n_step_target

__all__ = ["BasicDQNLearner"]


class BasicDQNLearner(ValueBasedLearner):
    """Q-learning with a neural network and experience replay and no target network: the loss
    compares ``Q(s, a)`` with ``y = r + (1 - terminal) * gamma**n * max_a' Q(s', a')``.

    ``residual=True`` (the default, as ReinforcementLearning.jl's ``BasicDQNLearner``) lets the
    gradient flow through the bootstrap term too (residual-gradient Q-learning), which keeps
    learning without a target network stable. ``residual=False`` is the semi-gradient update of
    DQN (``y`` treated as a constant); without a target network it diverges on CartPole-v1 (the
    Q-values grow without bound), so use :class:`~rlkit.DQNLearner` for that.

    Learns at PostAct: the ``controller`` says how many gradient steps to take now (none during
    warm-up); each step draws a batch with ``sampler`` from a ``CircularArraySARTTrajectory``.
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

    def __init__(
        self,
        approximator: NeuralNetworkApproximator,
        *,
        sampler: Any,
        controller: Any,
        gamma: float = 0.99,
        loss: str = "huber",
        residual: bool = True,
    ) -> None:
        super().__init__(approximator, sampler=sampler, controller=controller, gamma=gamma)
        self._loss_fn = loss_function(type(self).__name__, loss)
        self.loss_kind = loss
        self.residual = bool(residual)

    def _loss(self, batch: TensorBatch) -> torch.Tensor:
        q = self.model(batch.state).gather(1, batch.action.unsqueeze(1)).squeeze(1)
        with torch.set_grad_enabled(self.residual):
            next_value = self.model(batch.next_state).max(dim=1).values
            y = n_step_target(batch.reward, batch.terminal, batch.discount, next_value)
        self._last_q, self._last_target = q.detach(), y.detach()
        return self._loss_fn(q, y)
