"""``QRDQNLearner``: distributional DQN by quantile regression (Dabney et al. 2018).

Its stage methods are those of every DQN-family learner, in ``dqn_common.py``: PreExperiment
checks the network against the environment, PostAct calls ``learner.learn(trajectory)``.
"""

from __future__ import annotations

from typing import Any

import torch

from ...approximators.neural import NeuralNetworkApproximator, TargetNetwork
from ...core.checks import finite_float, positive_int
from .common import TensorBatch, ValueBasedLearner, n_step_target

__all__ = ["QRDQNLearner", "quantile_huber_loss"]


class QRDQNLearner(ValueBasedLearner):
    """QR-DQN: the network outputs ``n_quantiles`` quantiles of the return per action
    (``n_quantiles * n_actions`` values, quantile-major: build it with
    ``rlkit.approximators.neural.q_network(..., n_quantiles=N)``), trained with the quantile
    Huber loss against ``r + (1 - terminal) * gamma**n * theta_target(s', a*)``, ``a*`` the action
    of largest mean target quantile (of the online network with ``double=True``).

    ``learner(env)`` returns the Q-values, the mean of the quantiles per action. Learning at
    PostAct, the controller, sampler and target network work as in :class:`~rlkit.DQNLearner`.

    Args:
        approximator: a :class:`~rlkit.NeuralNetworkApproximator`.
        n_quantiles: number of quantiles ``N`` (fractions ``(2i + 1) / 2N``).
        sampler, controller, gamma, target, target_update_on, double: as for ``DQNLearner``.
        kappa: Huber threshold of the quantile loss (``kappa > 0``).

    Example:
        >>> import torch, rlkit as rk
        >>> from rlkit.approximators.neural import q_network
        >>> env = rk.GymEnv("CartPole-v1", seed=0)
        >>> net = q_network(env.state_space, env.action_space, (32,), n_quantiles=10, seed=0)
        >>> approx = rk.NeuralNetworkApproximator(net, lambda p: torch.optim.Adam(p, lr=1e-3))
        >>> learner = rk.QRDQNLearner(approx, n_quantiles=10,
        ...                           sampler=rk.BatchSampler(16, seed=0),
        ...                           controller=rk.InsertSampleRatioController(50, 1, 1))
        >>> env.reset(); learner(env).shape
        (2,)
    """

    default_target_sync = 1000

    def __init__(
        self,
        approximator: NeuralNetworkApproximator,
        *,
        n_quantiles: int,
        sampler: Any,
        controller: Any,
        gamma: float = 0.99,
        target: TargetNetwork | None = None,
        target_update_on: str = "env_step",
        double: bool = False,
        kappa: float = 1.0,
    ) -> None:
        name = type(self).__name__
        n_quantiles = positive_int(name, "n_quantiles", n_quantiles)
        kappa = finite_float(name, "kappa", kappa, low=0, low_open=True)
        super().__init__(
            approximator,
            sampler=sampler,
            controller=controller,
            gamma=gamma,
            target=target,
            target_update_on=target_update_on,
        )
        self.n_quantiles = self.outputs_per_action = n_quantiles
        self.kappa = float(kappa)
        self.double = bool(double)
        self.fractions = (
            torch.arange(n_quantiles, dtype=torch.float32, device=self.device) + 0.5
        ) / n_quantiles

    def __repr__(self) -> str:
        return (
            f"QRDQNLearner({self.approximator!r}, n_quantiles={self.n_quantiles}, "
            f"gamma={self.gamma}, target={self.target!r})"
        )

    def _quantiles(self, outputs: torch.Tensor) -> torch.Tensor:
        """``(..., n_quantiles, n_actions)`` from the flat network outputs."""
        return outputs.unflatten(-1, (self.n_quantiles, -1))

    def _q_values(self, outputs: torch.Tensor) -> torch.Tensor:
        return self._quantiles(outputs).mean(dim=-2)

    def _loss(self, batch: TensorBatch) -> torch.Tensor:
        quantiles = self._quantiles(self.model(batch.state))  # (B, N, A)
        size = (quantiles.shape[0], self.n_quantiles, 1)
        current = quantiles.gather(2, batch.action.view(-1, 1, 1).expand(size)).squeeze(2)
        with torch.no_grad():
            next_quantiles = self._quantiles(self.target.model(batch.next_state))
            chooser = (
                self._quantiles(self.model(batch.next_state)) if self.double else (next_quantiles)
            )
            best = chooser.mean(dim=1).argmax(dim=1)
            next_value = next_quantiles.gather(2, best.view(-1, 1, 1).expand(size)).squeeze(2)
            discount = batch.discount
            if isinstance(discount, torch.Tensor):
                discount = discount.unsqueeze(1)
            target = n_step_target(
                batch.reward.unsqueeze(1), batch.terminal.unsqueeze(1), discount, next_value
            )
        self._last_q, self._last_target = current.detach().mean(1), target.mean(1)
        return quantile_huber_loss(current, target, self.fractions, self.kappa)


def quantile_huber_loss(
    current: torch.Tensor, target: torch.Tensor, fractions: torch.Tensor, kappa: float = 1.0
) -> torch.Tensor:
    """The quantile Huber loss of Dabney et al. (2018), as in QR-DQN.

    ``current``: ``(B, N)`` predicted quantiles at ``fractions`` ``(N,)``; ``target``: ``(B, M)``
    target samples. Summed over the predicted quantiles, averaged over batch and targets.

    Example:
        >>> import torch
        >>> taus = torch.tensor([0.25, 0.75])
        >>> float(quantile_huber_loss(torch.zeros(1, 2), torch.zeros(1, 3), taus))
        0.0
    """
    delta = target.unsqueeze(1) - current.unsqueeze(2)  # (B, N, M)
    abs_delta = delta.abs()
    huber = torch.where(abs_delta <= kappa, 0.5 * delta.pow(2), kappa * (abs_delta - 0.5 * kappa))
    weight = (fractions.view(1, -1, 1) - (delta.detach() < 0).float()).abs()
    return (weight * huber).sum(dim=1).mean()
