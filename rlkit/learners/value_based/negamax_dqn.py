"""``NegamaxDQNLearner``: DQN for two-player zero-sum games whose players alternate, one network
for both seats, with the negamax target (docs/how-to/multi-agent.md).

The deep counterpart of :class:`~rlkit.learners.tabular.negamax.NegamaxQLearner`: each player
sees the board from its own side, so one network ``Q(s, a)`` serves both, and the target of a
move bootstraps from the position the opponent faces right after it (its *afterstate*, from
the game's own rule for one move), not from the mover's next turn::

    y = r                                                  if the step ended the game
        r - gamma * max_{a' legal} Q_target(s_opp, a')     otherwise, (s_opp, legal) =
                                                           afterstate(s, a)

(with ``double=True`` the online network picks ``a'``). The values learned are the game's
minimax values as the network estimates them, whatever the opponents play in training: a
move that leaves the opponent a winning reply is learned as lost from the opponent's side of
the network, even when the opponent did not take it. Rewards must come when the game ends
(board games); the sampler must be one-step (``rk.BatchSampler``: the target is one move deep).
Everything else (the driver, the replay, the target network, the optimizer) is DQN's.

``afterstate(states, actions) -> (opponent_states, opponent_legal_masks)`` works on batches of
torch tensors (``(n, *state_shape)`` and ``(n,)``), e.g.
``rlkit.experiments.multiagent.connect_four_afterstate``.

Example:
    >>> import torch, rlkit as rk
    >>> from types import SimpleNamespace
    >>> from rlkit.learners.batch import Batch
    >>> net = torch.nn.Linear(1, 2, bias=False)
    >>> _ = torch.nn.init.ones_(net.weight)
    >>> def afterstate(s, a):  # take-away: s stones, take a + 1
    ...     left = s - (a.unsqueeze(1) + 1)
    ...     return left, torch.cat([left >= 1, left >= 2], dim=1)
    >>> policy = SimpleNamespace(target=SimpleNamespace(model=net), double=False, gamma=1.0,
    ...                          loss_kind="mse", afterstate=afterstate)
    >>> batch = Batch(state=torch.tensor([[3.0], [1.0]]), action=torch.tensor([1, 0]),
    ...               reward=torch.tensor([0.0, 1.0]), terminal=torch.tensor([0.0, 1.0]))
    >>> negamax_target(policy, net, batch).tolist()  # 1 stone left: Q = 1 for the opponent
    [-1.0, 1.0]
"""

from __future__ import annotations

from typing import Any

import torch

from ...core.checks import check_callable
from ..batch import Batch
from ..builder import build_policy
from .common import loss_function
from .dqn import DQNBase

__all__ = ["NegamaxDQNLearner", "NegamaxDQNBase", "negamax_dqn_loss", "negamax_target"]


# ---- the loss ----
def negamax_target(policy: Any, model: Any, batch: Batch) -> torch.Tensor:
    """The negamax target ``y`` of the module docstring, without gradient."""
    with torch.no_grad():
        opponent, legal = policy.afterstate(batch["state"], batch["action"])
        legal = torch.as_tensor(legal, dtype=torch.bool, device=opponent.device)
        values = policy.target.model(opponent)
        lowest = torch.finfo(values.dtype).min
        if policy.double:
            chooser = model(opponent).masked_fill(~legal, lowest)
            best = values.gather(1, chooser.argmax(dim=1, keepdim=True)).squeeze(1)
        else:
            best = values.masked_fill(~legal, lowest).max(dim=1).values
        best = torch.where(legal.any(dim=1), best, torch.zeros_like(best))  # no move: game over
        terminal = batch["terminal"].to(values.dtype)
        return batch["reward"] - (1.0 - terminal) * policy.gamma * best


def negamax_dqn_loss(
    policy: Any, model: Any, dist_class: None, batch: Batch
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """DQN's regression loss (Huber or MSE) between ``Q(s, a)`` and :func:`negamax_target`;
    ``info`` holds both, detached."""
    q = model(batch["state"]).gather(1, batch["action"].unsqueeze(1)).squeeze(1)
    y = negamax_target(policy, model, batch)
    loss = loss_function(type(policy).__name__, policy.loss_kind)(q, y)
    return loss, {"q": q.detach(), "target": y}


# ---- the learner ----
class NegamaxDQNBase(DQNBase):
    """:class:`~rlkit.DQNLearner`'s constructor with the game's ``afterstate`` rule, and a
    one-step sampler."""

    def __init__(self, approximator: Any, *, afterstate: Any, **kwargs: Any) -> None:
        super().__init__(approximator, **kwargs)
        name = type(self).__name__
        self.afterstate = check_callable(
            name, "afterstate", afterstate, "(states, actions) -> (states, legal masks)"
        )
        n = getattr(self.sampler, "n", 1)
        if n != 1:
            raise ValueError(
                f"{name}: the negamax target is one move deep; give a one-step sampler "
                f"(rk.BatchSampler), got {self.sampler!r} with n={n}"
            )


_DOC = """DQN for alternating two-player zero-sum games with the negamax target: one network
for both seats, each move's target bootstrapping from the opponent's position after it
(``rlkit/learners/value_based/negamax_dqn.py``).

Args: those of :class:`~rlkit.DQNLearner` (a one-step ``sampler``), and ``afterstate``, the
game's rule for one move on batches of tensors: ``afterstate(states, actions) ->
(opponent_states, opponent_legal_masks)``.

Example:
    >>> import torch, rlkit as rk
    >>> from rlkit.approximators.neural import q_network
    >>> from rlkit.experiments.multiagent import connect_four_afterstate, connect_four_env
    >>> view = connect_four_env(0).view("player_0")
    >>> approx = rk.NeuralNetworkApproximator(
    ...     q_network(view.state_space, view.action_space, (32,), seed=0),
    ...     lambda p: torch.optim.Adam(p, lr=1e-3))
    >>> learner = rk.NegamaxDQNLearner(
    ...     approx, afterstate=connect_four_afterstate, sampler=rk.BatchSampler(8, seed=0),
    ...     controller=rk.InsertSampleRatioController(20, 1, 1), gamma=1.0)
    >>> type(learner).__name__, learner.gamma
    ('NegamaxDQNLearner', 1.0)
"""

NegamaxDQNLearner = build_policy(
    "NegamaxDQNLearner", loss_fn=negamax_dqn_loss, base=NegamaxDQNBase, doc=_DOC
)
