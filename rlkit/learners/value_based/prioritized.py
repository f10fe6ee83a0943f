"""``PrioritizedDQNLearner``: DQN on prioritized replay (Schaul et al. 2016).

Written with ``rk.build_policy``: the loss is :func:`prioritized_dqn_loss`, a pure function; the
class is built on :class:`PrioritizedDQNBase` (``DQNLearner``'s constructor). What it learns
from a batch, below, is the family's rule plus the new priorities, which it puts in
``batch["priorities"]`` for the off-policy driver to hand to the replay; PreExperiment checks
that the replay is prioritized.
"""

from __future__ import annotations

from typing import Any

import torch

from ...core.dispatch import update
from ...core.interfaces import AbstractEnv, AbstractVectorEnv
from ...core.stages import PreExperimentStage
from ...trajectories.circular import CircularArraySARTTrajectory
from ...trajectories.prioritized import PrioritizedCircularArraySARTTrajectory
from ..batch import Batch
from ..builder import build_policy
from .common import gradient_step, loss_function
from .dqn import DQNLearner, dqn_q_and_target

__all__ = ["PrioritizedDQNLearner", "PrioritizedDQNBase", "prioritized_dqn_loss"]


# ---- the loss ----
def prioritized_dqn_loss(
    policy: Any, model: Any, dist_class: None, batch: Batch
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """DQN's loss with each sample's regression loss scaled by its importance weight
    (``batch["weights"]``), then averaged; ``info`` holds ``Q(s, a)`` and the targets, detached
    (their difference is the new priority).

    Example:
        >>> import torch
        >>> from types import SimpleNamespace
        >>> from rlkit.learners.batch import Batch
        >>> net = torch.nn.Linear(1, 2, bias=False)
        >>> _ = torch.nn.init.ones_(net.weight)
        >>> policy = SimpleNamespace(target=SimpleNamespace(model=net), double=False,
        ...                          loss_kind="mse")
        >>> batch = Batch(state=torch.ones(2, 1), action=torch.tensor([0, 1]),
        ...               reward=torch.tensor([1.0, 2.0]), terminal=torch.tensor([0.0, 1.0]),
        ...               next_state=torch.full((2, 1), 2.0), discount=0.5,
        ...               weights=torch.tensor([1.0, 0.5]))
        >>> loss, info = prioritized_dqn_loss(policy, net, None, batch)  # errors 1 and 1
        >>> loss.item(), (info["target"] - info["q"]).tolist()
        (0.75, [1.0, 1.0])
    """
    weights = batch.get("weights")
    if weights is None:
        raise TypeError(
            f"{type(policy).__name__}: the sampled batch has no importance weights; sample "
            f"from an rk.PrioritizedCircularArraySARTTrajectory"
        )
    q, y = dqn_q_and_target(policy, model, batch)
    per_sample = loss_function(type(policy).__name__, policy.loss_kind)(q, y, reduction="none")
    return (weights * per_sample).mean(), {"q": q.detach(), "target": y}


# ---- the learner ----
class PrioritizedDQNBase(DQNLearner):
    """``DQNLearner``'s constructor; after each gradient step the sampled transitions get the
    priorities ``|y - Q(s, a)| + epsilon`` (see ``update`` below)."""

    samples_ahead = False  # each gradient step changes the priorities the next one samples by


_DOC = """:class:`~rlkit.DQNLearner` on a :class:`~rlkit.PrioritizedCircularArraySARTTrajectory`.

Each sample's loss is scaled by its importance weight (``batch["weights"]``: the trajectory's
``beta`` schedule), and after every gradient step the sampled transitions get new priorities
``|y - Q(s, a)| + epsilon``: its ``update`` puts ``y - Q(s, a)`` in ``batch["priorities"]``
and the off-policy driver gives them to ``trajectory.update_priorities``. Everything else (target
network, double DQN, n-step, loss) is ``DQNLearner``'s and takes the same arguments.
Running it with a trajectory that is not prioritized is an error when the run starts.

Example:
    >>> import torch, rlkit as rk
    >>> from rlkit.approximators.neural import q_network
    >>> env = rk.GymEnv("CartPole-v1", seed=0)
    >>> approx = rk.NeuralNetworkApproximator(
    ...     q_network(env.state_space, env.action_space, (32,), seed=0),
    ...     lambda p: torch.optim.Adam(p, lr=1e-3))
    >>> learner = rk.PrioritizedDQNLearner(
    ...     approx, sampler=rk.BatchSampler(16, seed=0),
    ...     controller=rk.InsertSampleRatioController(50, 1, 1),
    ...     target=rk.TargetNetwork(approx, tau=0.01))
    >>> trajectory = rk.PrioritizedCircularArraySARTTrajectory(
    ...     500, env.state_space, env.action_space, alpha=0.6, beta=0.4, beta_steps=1000)
    >>> agent = rk.Agent(rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.1, seed=0)),
    ...                  trajectory)
    >>> _ = rk.run(agent, env, rk.StopAfterNSteps(100))
    >>> trajectory.n_sampled
    50
"""


PrioritizedDQNLearner = build_policy(
    "PrioritizedDQNLearner", loss_fn=prioritized_dqn_loss, base=PrioritizedDQNBase, doc=_DOC
)


# ---- learning from one batch: DQN's rule, then the new priorities for the driver ----
@update.dispatch
def _(learner: PrioritizedDQNLearner, batch: Batch, /):
    info = gradient_step(learner, batch)
    # the off-policy driver gives them to trajectory.update_priorities(batch["indices"], ...)
    batch["priorities"] = info["target"] - info["q"]


# ---- PreExperiment: the network must fit the environment; replay must be prioritized ----
@update.dispatch
def _(
    learner: PrioritizedDQNLearner,
    trajectory: PrioritizedCircularArraySARTTrajectory,
    env: AbstractEnv | AbstractVectorEnv,
    stage: PreExperimentStage,
    /,
):
    learner.check(env)


@update.dispatch
def _(
    learner: PrioritizedDQNLearner,
    trajectory: CircularArraySARTTrajectory,
    env: AbstractEnv | AbstractVectorEnv,
    stage: PreExperimentStage,
    /,
):
    raise TypeError(
        f"{type(learner).__name__}: needs an rk.PrioritizedCircularArraySARTTrajectory (it "
        f"updates priorities), got {type(trajectory).__name__}"
    )
