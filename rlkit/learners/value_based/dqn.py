"""``DQNLearner``: deep Q-learning with a target network, double DQN, n-step returns, Huber or MSE
loss and (through the network) an optional dueling head.

Its stage methods are those of every DQN-family learner, in ``dqn_common.py``: PreExperiment
checks the network against the environment, PostAct calls ``learner.learn(trajectory)``.
"""

from __future__ import annotations

from typing import Any

import torch

from ...approximators.neural import NeuralNetworkApproximator, TargetNetwork
from .common import TensorBatch, ValueBasedLearner, loss_function, n_step_target

__all__ = ["DQNLearner"]


class DQNLearner(ValueBasedLearner):
    """DQN (Mnih et al. 2015) with the usual extensions.

    Target: ``y = r + (1 - terminal) * gamma**n * Q_target(s', a*)`` with
    ``a* = argmax_a Q_target(s', a)``, or ``argmax_a Q(s', a)`` of the online network when
    ``double=True`` (van Hasselt et al. 2016). ``r`` and ``n`` come from the sampler: with
    ``rk.NStepBatchSampler(batch, n, gamma)`` it is the discounted n-step return (cut at episode
    ends, bootstrapping through truncation). A dueling head is a property of the network: build it
    with ``rlkit.approximators.neural.q_network(..., dueling=True)``.

    Learns at PostAct: one target-network update, then ``controller.step()`` gradient steps on
    batches from a ``CircularArraySARTTrajectory``. By default the target network counts
    environment steps, as Stable-Baselines3's ``target_update_interval`` does, and is synced
    before that step's gradient steps, as there (``target_update_on="gradient_step"`` counts
    gradient steps instead, updating after each).

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
    ) -> None:
        super().__init__(
            approximator,
            sampler=sampler,
            controller=controller,
            gamma=gamma,
            target=target,
            target_update_on=target_update_on,
        )
        self.double = bool(double)
        self.loss_kind = loss
        self._loss_fn = loss_function(type(self).__name__, loss)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.approximator!r}, gamma={self.gamma}, "
            f"double={self.double}, loss={self.loss_kind!r}, target={self.target!r})"
        )

    def _current_and_target(self, batch: TensorBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """``Q(s, a)`` (with gradient) and the target ``y`` (without)."""
        q = self.model(batch.state).gather(1, batch.action.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            next_q = self.target.model(batch.next_state)
            if self.double:
                best = self.model(batch.next_state).argmax(dim=1, keepdim=True)
                next_value = next_q.gather(1, best).squeeze(1)
            else:
                next_value = next_q.max(dim=1).values
            y = n_step_target(batch.reward, batch.terminal, batch.discount, next_value)
        self._last_q, self._last_target = q.detach(), y
        return q, y

    def _loss(self, batch: TensorBatch) -> torch.Tensor:
        q, y = self._current_and_target(batch)
        return self._loss_fn(q, y)
