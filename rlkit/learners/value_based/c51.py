"""``C51Learner``: categorical distributional DQN (Bellemare et al. 2017, "A Distributional
Perspective on Reinforcement Learning").

Written with ``rk.build_policy``: the loss is :func:`c51_loss`, a pure function (with
:func:`categorical_projection`, the projection of the target distribution onto the support,
vectorised over the batch); the class is built on :class:`C51Base` (the constructor and
options). What it learns from a batch is the family's rule, ``update(learner, batch)`` in
``common.py``; when it learns is the off-policy driver's
(``rlkit/learners/drivers/off_policy.py``); PreExperiment (the network must fit the
environment) is the family's.
"""

from __future__ import annotations

from typing import Any

import torch

from ...approximators.distributional import check_support
from ...approximators.neural import NeuralNetworkApproximator, TargetNetwork
from ..batch import Batch
from ..builder import build_policy
from .common import ValueBasedLearner, legal_next

__all__ = [
    "C51Learner",
    "C51Base",
    "c51_loss",
    "categorical_projection",
    "categorical_cross_entropy",
]


# ---- the projection (Bellemare et al. 2017, Algorithm 1) ----
def categorical_projection(
    probs: torch.Tensor,
    reward: torch.Tensor,
    terminal: torch.Tensor,
    discount: torch.Tensor | float,
    support: torch.Tensor,
) -> torch.Tensor:
    """The distribution of ``r + (1 - terminal) * discount * Z`` (``Z`` with probabilities
    ``probs`` ``(B, n_atoms)`` on ``support`` ``(n_atoms,)``, evenly spaced) projected onto
    ``support``: each shifted atom, clipped to ``[v_min, v_max]``, splits its mass between the
    two nearest atoms in proportion to its distance to each. Mass is conserved; a terminal
    transition puts all its mass at ``r`` (clipped).

    Example:
        >>> import torch
        >>> support = torch.tensor([0.0, 1.0, 2.0])
        >>> probs = torch.tensor([[0.5, 0.5, 0.0]])  # Z is 0 or 1
        >>> categorical_projection(probs, torch.tensor([0.5]), torch.tensor([0.0]), 1.0,
        ...                        support).tolist()  # 0.5 or 1.5: halves to their neighbours
        [[0.25, 0.5, 0.25]]
    """
    n_atoms = support.shape[0]
    v_min, v_max = support[0], support[-1]
    delta = (v_max - v_min) / (n_atoms - 1)
    if isinstance(discount, torch.Tensor):
        discount = discount.unsqueeze(1)
    shifted = reward.unsqueeze(1) + (1.0 - terminal.unsqueeze(1)) * discount * support
    b = (shifted.clamp(v_min, v_max) - v_min) / delta  # (B, n_atoms), in [0, n_atoms - 1]
    lower, upper = b.floor(), b.ceil()
    # an atom landing exactly on a support point (lower == upper) gives it all its mass
    to_lower = probs * (upper - b + (lower == upper).to(probs.dtype))
    to_upper = probs * (b - lower)
    projected = torch.zeros_like(probs)
    projected.scatter_add_(1, lower.long().clamp_(0, n_atoms - 1), to_lower)
    projected.scatter_add_(1, upper.long().clamp_(0, n_atoms - 1), to_upper)
    return projected


def categorical_cross_entropy(
    policy: Any, model: Any, batch: Batch
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per sample, the cross-entropy ``-sum_i m_i log p_i(s, a)`` between the projected target
    ``m`` (:func:`categorical_projection` of the next state's distribution under ``a*``, the
    action of largest expected value of the target network, or of the online network when
    ``policy.double``) and the predicted distribution of ``(s, a)``; also ``Q(s, a)`` and the
    target's expectation (detached). ``policy`` has ``n_atoms``, ``support``, ``double`` and
    ``target``."""
    logits = _logits(policy, model(batch["state"]))  # (B, Z, A)
    index = batch["action"].view(-1, 1, 1).expand(logits.shape[0], policy.n_atoms, 1)
    log_p = torch.log_softmax(logits.gather(2, index).squeeze(2), dim=1)  # (B, Z)
    support = policy.support
    with torch.no_grad():
        next_probs = torch.softmax(_logits(policy, policy.target.model(batch["next_state"])), 1)
        if policy.double:
            chooser = torch.softmax(_logits(policy, model(batch["next_state"])), dim=1)
        else:
            chooser = next_probs
        best = legal_next((chooser * support.view(1, -1, 1)).sum(1), batch).argmax(1)  # (B,)
        chosen = next_probs.gather(2, best.view(-1, 1, 1).expand(index.shape)).squeeze(2)
        target = categorical_projection(
            chosen, batch["reward"], batch["terminal"], batch["discount"], support
        )
        q = (log_p.detach().exp() * support).sum(1)
    return -(target * log_p).sum(1), q, (target * support).sum(1)


def c51_loss(
    policy: Any, model: Any, dist_class: None, batch: Batch
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """C51's loss: the mean over the batch of :func:`categorical_cross_entropy`; ``info``
    holds ``Q(s, a)`` and the expected targets, detached.

    Example:
        >>> import torch
        >>> from types import SimpleNamespace
        >>> from rlkit.learners.batch import Batch
        >>> net = torch.nn.Linear(1, 2, bias=False)  # 2 atoms x 1 action, logits 0, 0
        >>> _ = torch.nn.init.zeros_(net.weight)
        >>> policy = SimpleNamespace(n_atoms=2, support=torch.tensor([0.0, 1.0]), double=False,
        ...                          target=SimpleNamespace(model=net))
        >>> batch = Batch(state=torch.ones(1, 1), action=torch.tensor([0]),
        ...               reward=torch.tensor([1.0]), terminal=torch.tensor([1.0]),
        ...               next_state=torch.ones(1, 1), discount=0.9)
        >>> loss, info = c51_loss(policy, net, None, batch)  # target: all mass at 1
        >>> round(loss.item(), 4), info["q"].tolist(), info["target"].tolist()  # -log 0.5
        (0.6931, [0.5], [1.0])
    """
    per_sample, q, target = categorical_cross_entropy(policy, model, batch)
    return per_sample.mean(), {"q": q, "target": target}


def _logits(policy: Any, outputs: torch.Tensor) -> torch.Tensor:
    """``(..., n_atoms, n_actions)`` from the flat network outputs (atom-major)."""
    return outputs.unflatten(-1, (policy.n_atoms, -1))


# ---- the learner ----
class C51Base(ValueBasedLearner):
    """The constructor and options of :class:`C51Learner` (and of ``RainbowLearner``)."""

    default_target_sync = 1000

    def __init__(
        self,
        approximator: NeuralNetworkApproximator,
        *,
        sampler: Any,
        controller: Any,
        n_atoms: int = 51,
        v_min: float = -10.0,
        v_max: float = 10.0,
        gamma: float = 0.99,
        target: TargetNetwork | None = None,
        target_update_on: str = "env_step",
        double: bool = False,
    ) -> None:
        n_atoms, v_min, v_max = check_support(type(self).__name__, n_atoms, v_min, v_max)
        super().__init__(
            approximator,
            sampler=sampler,
            controller=controller,
            gamma=gamma,
            target=target,
            target_update_on=target_update_on,
        )
        self.n_atoms = self.outputs_per_action = n_atoms
        self.v_min, self.v_max = v_min, v_max
        self.double = bool(double)
        self.support = torch.linspace(v_min, v_max, n_atoms, device=self.device)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.approximator!r}, n_atoms={self.n_atoms}, "
            f"v_min={self.v_min}, v_max={self.v_max}, gamma={self.gamma}, "
            f"double={self.double}, target={self.target!r})"
        )

    def _q_values(self, outputs: torch.Tensor) -> torch.Tensor:
        """The expectation of each action's distribution: ``sum_i p_i(s, a) z_i``."""
        probs = torch.softmax(_logits(self, outputs), dim=-2)
        return (probs * self.support.unsqueeze(-1)).sum(dim=-2)


_DOC = """C51: the network outputs the logits of a categorical distribution of the return over
``n_atoms`` evenly spaced atoms from ``v_min`` to ``v_max``, per action (``n_atoms *
n_actions`` values, atom-major: build it with
``rlkit.approximators.distributional.categorical_network``). The loss is the cross-entropy
between the predicted distribution of ``(s, a)`` and the target distribution of
``r + (1 - terminal) * gamma**n * Z_target(s', a*)`` projected onto the support
(:func:`categorical_projection`), ``a*`` the action of largest expected target value (of the
online network with ``double=True``).

``learner(env)`` returns the Q-values, the expectation of each action's distribution, so any
explorer acts on them in :class:`~rlkit.QBasedPolicy`. Defaults are Dopamine's and CleanRL's:
51 atoms; the support ``[-10, 10]`` is Dopamine's (CleanRL's CartPole script uses
``[-100, 100]`` with 101 atoms: pass them). Learning at PostAct (the off-policy driver), the
controller, sampler and target network work as in :class:`~rlkit.DQNLearner`.

Args:
    approximator: a :class:`~rlkit.NeuralNetworkApproximator` (``n_atoms`` logits per action).
    sampler, controller, gamma, target, target_update_on, double: as for ``DQNLearner``.
    n_atoms: atoms of the support (at least 2).
    v_min, v_max: the support's ends (``v_min < v_max``); target atoms beyond are clipped.

Example:
    >>> import torch, rlkit as rk
    >>> from rlkit.approximators.distributional import categorical_network
    >>> env = rk.GymEnv("CartPole-v1", seed=0)
    >>> net = categorical_network(env.state_space, env.action_space, (32,), n_atoms=51, seed=0)
    >>> approx = rk.NeuralNetworkApproximator(net, lambda p: torch.optim.Adam(p, lr=1e-3))
    >>> learner = rk.C51Learner(approx, n_atoms=51, v_min=0.0, v_max=100.0,
    ...                         sampler=rk.BatchSampler(16, seed=0),
    ...                         controller=rk.InsertSampleRatioController(50, 1, 1))
    >>> env.reset(); learner(env).shape
    (2,)
"""


C51Learner = build_policy("C51Learner", loss_fn=c51_loss, base=C51Base, doc=_DOC)
