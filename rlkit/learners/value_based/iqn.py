"""``IQNLearner``: implicit quantile networks (Dabney et al. 2018, "Implicit Quantile Networks
for Distributional Reinforcement Learning").

Written with ``rk.build_policy``: the loss is :func:`iqn_loss`, a pure function (the quantile
Huber loss is QR-DQN's, :func:`~rlkit.learners.value_based.qr_dqn.quantile_huber_loss`, with
one set of fractions per sample); the class is built on :class:`IQNBase` (the constructor,
options and the generator of the sampled fractions, saved in checkpoints). What it learns from
a batch is the family's rule, ``update(learner, batch)`` in ``common.py``; when it learns is
the off-policy driver's (``rlkit/learners/drivers/off_policy.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ...approximators.distributional import IQNNetwork
from ...approximators.neural import NeuralNetworkApproximator, TargetNetwork, torch_generator
from ...core.checks import finite_float, positive_int
from ..batch import Batch
from ..builder import build_policy
from .common import ValueBasedLearner, legal_next, n_step_target
from .qr_dqn import quantile_huber_loss

__all__ = ["IQNLearner", "IQNBase", "iqn_loss"]


# ---- the loss ----
def iqn_loss(
    policy: Any, model: Any, dist_class: None, batch: Batch
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """IQN's loss: ``policy.n_tau`` fractions ``tau`` and ``policy.n_tau_target`` fractions
    ``tau'`` drawn uniformly per sample from ``policy.generator``; the quantile Huber loss
    (``policy.kappa``) between ``Z_tau(s, a)`` and ``r + (1 - terminal) * gamma**n *
    Z_tau'(s', a*)`` of the target network, ``a*`` the action of largest Q-value (the mean
    over the network's fixed acting fractions) of the target network, or of the online network
    when ``policy.double``. Summed over ``tau``, averaged over ``tau'`` and the batch;
    ``info`` holds the means over the fractions (``q``, ``target``), detached.

    Example:
        >>> import torch
        >>> from types import SimpleNamespace
        >>> from rlkit.approximators.distributional import IQNNetwork
        >>> from rlkit.learners.batch import Batch
        >>> net = IQNNetwork(1, 2, (8,), n_cos=4, n_acting=4)
        >>> policy = SimpleNamespace(n_tau=8, n_tau_target=8, kappa=1.0, double=False,
        ...                          generator=torch.Generator().manual_seed(0),
        ...                          target=SimpleNamespace(model=net))
        >>> batch = Batch(state=torch.ones(3, 1), action=torch.tensor([0, 1, 0]),
        ...               reward=torch.ones(3), terminal=torch.ones(3),
        ...               next_state=torch.ones(3, 1), discount=0.9)
        >>> loss, info = iqn_loss(policy, net, None, batch)  # terminal: every target is 1
        >>> loss.shape, info["target"].tolist()
        (torch.Size([]), [1.0, 1.0, 1.0])
    """
    state, actions = batch["state"], batch["action"]  # a Dict observation: tensors by key
    size = actions.shape[0]
    generator = policy.generator
    taus = torch.rand((size, policy.n_tau), generator=generator, device=generator.device)
    taus_next = torch.rand((size, policy.n_tau_target), generator=generator,
                           device=generator.device)  # fmt: skip
    taus, taus_next = taus.to(actions.device), taus_next.to(actions.device)
    quantiles = model.quantiles(state, taus)  # (B, N, A)
    index = batch["action"].view(-1, 1, 1)
    current = quantiles.gather(2, index.expand(size, policy.n_tau, 1)).squeeze(2)  # (B, N)
    with torch.no_grad():
        next_state = batch["next_state"]
        target_model = policy.target.model
        chooser = model(next_state) if policy.double else target_model(next_state)
        values = chooser.unflatten(-1, (-1, quantiles.shape[2])).mean(1)
        best = legal_next(values, batch).argmax(1)  # (B,)
        next_quantiles = target_model.quantiles(next_state, taus_next)  # (B, N', A)
        next_value = next_quantiles.gather(
            2, best.view(-1, 1, 1).expand(size, policy.n_tau_target, 1)
        ).squeeze(2)
        discount = batch["discount"]
        if isinstance(discount, torch.Tensor):
            discount = discount.unsqueeze(1)
        target = n_step_target(
            batch["reward"].unsqueeze(1), batch["terminal"].unsqueeze(1), discount, next_value
        )
    loss = quantile_huber_loss(current, target, taus, policy.kappa)
    return loss, {"q": current.detach().mean(1), "target": target.mean(1)}


# ---- the learner ----
class IQNBase(ValueBasedLearner):
    """The constructor and options of :class:`IQNLearner`."""

    default_target_sync = 1000

    def __init__(
        self,
        approximator: NeuralNetworkApproximator,
        *,
        sampler: Any,
        controller: Any,
        n_tau: int = 64,
        n_tau_target: int = 64,
        kappa: float = 1.0,
        gamma: float = 0.99,
        target: TargetNetwork | None = None,
        target_update_on: str = "env_step",
        double: bool = False,
        seed: int | np.random.SeedSequence | None = None,
    ) -> None:
        name = type(self).__name__
        model = getattr(approximator, "model", None)
        if not isinstance(model, IQNNetwork):
            raise TypeError(
                f"{name}: the approximator's model must be an IQNNetwork (build it with "
                f"rlkit.approximators.distributional.iqn_network), got {type(model).__name__}"
            )
        self.n_tau = positive_int(name, "n_tau", n_tau)
        self.n_tau_target = positive_int(name, "n_tau_target", n_tau_target)
        self.kappa = float(finite_float(name, "kappa", kappa, low=0, low_open=True))
        super().__init__(
            approximator,
            sampler=sampler,
            controller=controller,
            gamma=gamma,
            target=target,
            target_update_on=target_update_on,
        )
        self.outputs_per_action = model.n_acting
        self.double = bool(double)
        self.generator = torch_generator(seed)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.approximator!r}, n_tau={self.n_tau}, "
            f"n_tau_target={self.n_tau_target}, kappa={self.kappa}, gamma={self.gamma}, "
            f"double={self.double}, target={self.target!r})"
        )

    def _q_values(self, outputs: torch.Tensor) -> torch.Tensor:
        """The mean of the quantiles at the network's acting fractions, per action."""
        return outputs.unflatten(-1, (self.outputs_per_action, -1)).mean(dim=-2)

    def state_dict(self) -> dict[str, Any]:
        """The family's state and the generator of the sampled fractions."""
        return {**super().state_dict(), "generator": self.generator.get_state()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved."""
        super().load_state_dict(state)
        self.generator.set_state(state["generator"])


_DOC = """IQN: the network (``rlkit.approximators.distributional.iqn_network``) maps a state and
a fraction ``tau`` to the ``tau``-quantile of each action's return, through a cosine embedding
of ``tau``. Each gradient step draws ``n_tau`` fractions (for ``Z_tau(s, a)``) and
``n_tau_target`` (for the target ``r + (1 - terminal) * gamma**n * Z_tau'(s', a*)``) per
sample from the learner's own generator (``seed``; saved in checkpoints) and minimises the
quantile Huber loss (``kappa``). ``a*`` is the action of largest Q-value of the target network
(of the online network with ``double=True``).

``learner(env)`` returns the Q-values: the mean of the quantiles at the network's ``n_acting``
fixed fractions ``(2k + 1) / 2K`` (``K = 32``). Acting is therefore deterministic given the
parameters (Dopamine averages ``K`` random fractions; the midpoints estimate the same mean
with less noise, and a saved or exported policy acts as the trained one). Defaults are
Dopamine's and CleanRL-style IQN's: ``N = N' = 64``, ``K = 32``, 64 cosines, ``kappa = 1``.
Learning at PostAct (the off-policy driver), the controller, sampler and target network work
as in :class:`~rlkit.DQNLearner`.

Args:
    approximator: a :class:`~rlkit.NeuralNetworkApproximator` of an ``IQNNetwork``.
    sampler, controller, gamma, target, target_update_on, double: as for ``DQNLearner``.
    n_tau, n_tau_target: fractions sampled per sample for the prediction and the target.
    kappa: Huber threshold of the quantile loss (``kappa > 0``).
    seed: the generator of the sampled fractions.

Example:
    >>> import torch, rlkit as rk
    >>> from rlkit.approximators.distributional import iqn_network
    >>> env = rk.GymEnv("CartPole-v1", seed=0)
    >>> net = iqn_network(env.state_space, env.action_space, (32,), seed=0)
    >>> approx = rk.NeuralNetworkApproximator(net, lambda p: torch.optim.Adam(p, lr=1e-3))
    >>> learner = rk.IQNLearner(approx, sampler=rk.BatchSampler(16, seed=0),
    ...                         controller=rk.InsertSampleRatioController(50, 1, 1), seed=0)
    >>> env.reset(); learner(env).shape
    (2,)
"""


IQNLearner = build_policy("IQNLearner", loss_fn=iqn_loss, base=IQNBase, doc=_DOC)
