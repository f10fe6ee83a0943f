"""``QRDQNLearner``: distributional DQN by quantile regression (Dabney et al. 2018).

Written with ``rk.build_policy``: the loss is :func:`qr_dqn_loss`, a pure function (with
:func:`quantile_huber_loss`); the class is built on :class:`QRDQNBase` (the constructor and
options). What it learns from a batch is the family's rule, ``update(learner, batch)`` in
``common.py``; when it learns is the off-policy driver's
(``rlkit/learners/drivers/off_policy.py``); PreExperiment (the network must fit the
environment) is the family's.
"""

from __future__ import annotations

from typing import Any

import torch

from ...approximators.neural import NeuralNetworkApproximator, TargetNetwork
from ...core.checks import finite_float, positive_int
from ..batch import Batch
from ..builder import build_policy
from .common import ValueBasedLearner, legal_next, n_step_target

__all__ = ["QRDQNLearner", "QRDQNBase", "qr_dqn_loss", "quantile_huber_loss"]


# ---- the loss ----
def qr_dqn_loss(
    policy: Any, model: Any, dist_class: None, batch: Batch
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """The quantile Huber loss (``policy.kappa``, ``policy.fractions``) between the predicted
    quantiles of ``(s, a)`` and ``r + (1 - terminal) * gamma**n * theta_target(s', a*)``, ``a*``
    the action of largest mean target quantile (of the online network when ``policy.double``).
    ``info`` holds the quantiles' means (``q``, ``target``), detached.

    Example:
        >>> import torch
        >>> from types import SimpleNamespace
        >>> from rlkit.learners.batch import Batch
        >>> net = torch.nn.Linear(1, 2, bias=False)  # 2 quantiles x 1 action
        >>> with torch.no_grad():
        ...     _ = net.weight.copy_(torch.tensor([[0.0], [2.0]]))
        >>> policy = SimpleNamespace(n_quantiles=2, kappa=1.0, double=False,
        ...                          fractions=torch.tensor([0.25, 0.75]),
        ...                          target=SimpleNamespace(model=net))
        >>> batch = Batch(state=torch.ones(1, 1), action=torch.tensor([0]),
        ...               reward=torch.tensor([1.0]), terminal=torch.tensor([1.0]),
        ...               next_state=torch.ones(1, 1), discount=0.9)
        >>> loss, info = qr_dqn_loss(policy, net, None, batch)  # quantiles 0, 2; targets 1, 1
        >>> # each (quantile, target) pair: |tau - 1{delta < 0}| * huber(1) = 0.25 * 0.5
        >>> loss.item(), info["q"].tolist(), info["target"].tolist()
        (0.25, [1.0], [1.0])
    """
    quantiles = _quantiles(policy, model(batch["state"]))  # (B, N, A)
    size = (quantiles.shape[0], policy.n_quantiles, 1)
    current = quantiles.gather(2, batch["action"].view(-1, 1, 1).expand(size)).squeeze(2)
    with torch.no_grad():
        next_quantiles = _quantiles(policy, policy.target.model(batch["next_state"]))
        chooser = (
            _quantiles(policy, model(batch["next_state"])) if policy.double else next_quantiles
        )
        best = legal_next(chooser.mean(dim=1), batch).argmax(dim=1)
        next_value = next_quantiles.gather(2, best.view(-1, 1, 1).expand(size)).squeeze(2)
        discount = batch["discount"]
        if isinstance(discount, torch.Tensor):
            discount = discount.unsqueeze(1)
        target = n_step_target(
            batch["reward"].unsqueeze(1), batch["terminal"].unsqueeze(1), discount, next_value
        )
    loss = quantile_huber_loss(current, target, policy.fractions, policy.kappa)
    return loss, {"q": current.detach().mean(1), "target": target.mean(1)}


def _quantiles(policy: Any, outputs: torch.Tensor) -> torch.Tensor:
    """``(..., n_quantiles, n_actions)`` from the flat network outputs."""
    return outputs.unflatten(-1, (policy.n_quantiles, -1))


# ---- the learner ----
class QRDQNBase(ValueBasedLearner):
    """The constructor and options of :class:`QRDQNLearner`."""

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
        compile: bool | str = False,  # noqa: A002 - rlkit/learners/compiled.py
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
            compile=compile,
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

    def _q_values(self, outputs: torch.Tensor) -> torch.Tensor:
        return _quantiles(self, outputs).mean(dim=-2)


_DOC = """QR-DQN: the network outputs ``n_quantiles`` quantiles of the return per action
(``n_quantiles * n_actions`` values, quantile-major: build it with
``rlkit.approximators.neural.q_network(..., n_quantiles=N)``), trained with the quantile
Huber loss against ``r + (1 - terminal) * gamma**n * theta_target(s', a*)``, ``a*`` the action
of largest mean target quantile (of the online network with ``double=True``).

``learner(env)`` returns the Q-values, the mean of the quantiles per action. Learning at
PostAct (the off-policy driver), the controller, sampler and target network work as in
:class:`~rlkit.DQNLearner`.

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


QRDQNLearner = build_policy("QRDQNLearner", loss_fn=qr_dqn_loss, base=QRDQNBase, doc=_DOC)


# ---- the quantile Huber loss ----
def quantile_huber_loss(
    current: torch.Tensor, target: torch.Tensor, fractions: torch.Tensor, kappa: float = 1.0
) -> torch.Tensor:
    """The quantile Huber loss of Dabney et al. (2018), as in QR-DQN.

    ``current``: ``(B, N)`` predicted quantiles at ``fractions`` ``(N,)`` (or ``(B, N)``, one
    set per sample, as IQN samples them); ``target``: ``(B, M)`` target samples. Summed over the
    predicted quantiles, averaged over batch and targets.

    Example:
        >>> import torch
        >>> taus = torch.tensor([0.25, 0.75])
        >>> float(quantile_huber_loss(torch.zeros(1, 2), torch.zeros(1, 3), taus))
        0.0
    """
    delta = target.unsqueeze(1) - current.unsqueeze(2)  # (B, N, M)
    abs_delta = delta.abs()
    huber = torch.where(abs_delta <= kappa, 0.5 * delta.pow(2), kappa * (abs_delta - 0.5 * kappa))
    weight = (fractions.unsqueeze(-1) - (delta.detach() < 0).float()).abs()
    return (weight * huber).sum(dim=1).mean()
