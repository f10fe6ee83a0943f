"""What an actor of an actor-learner split does with its copy of the learner's policy, per
kind of learner (:class:`ValueBasedActing`: the DQN family inside ``rk.QBasedPolicy``, Ape-X;
:class:`OnPolicyActing`: the policies of ``rk.build_policy`` that learn from rollouts, IMPALA):
make the acting copy with its own exploration, read and load the weights, say the learner's
version (its count of updates), and hand the learner the actors' actions at PreAct."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from ..core.seeding import int_seed
from ..learners.built import BuiltPolicy
from ..learners.value_based.common import ValueBasedLearner
from ..policies.agent import Agent
from ..policies.explorers import EpsilonGreedyExplorer
from ..policies.q_based import QBasedPolicy
from ..trajectories.prioritized import PrioritizedCircularArraySARTTrajectory
from ..trajectories.rollout import RolloutTrajectory
from .exploration import apex_epsilons

__all__ = ["ValueBasedActing", "OnPolicyActing", "acting_for"]


class ValueBasedActing:
    """Ape-X: actors act epsilon-greedily with their own epsilon (:func:`apex_epsilons`) on
    a copy of the learner's Q-network; with a prioritized replay they also compute the initial
    priorities of their transitions (one-step TD errors with their own copy)."""

    kind = "value-based (Ape-X)"

    def __init__(self, agent: Agent, n_actors: int, epsilon: float, alpha: float) -> None:
        self.epsilons = apex_epsilons(n_actors, epsilon, alpha)
        self.prioritized = isinstance(agent.trajectory, PrioritizedCircularArraySARTTrajectory)

    def actor_policy(self, policy: QBasedPolicy, index: int, seed: np.random.SeedSequence) -> Any:
        learner = acting_copy(policy.learner)
        return QBasedPolicy(learner, EpsilonGreedyExplorer(self.epsilons[index], seed=seed))

    @staticmethod
    def network(policy: Any) -> Any:
        return policy.learner.approximator.model

    @staticmethod
    def version(policy: Any) -> int:
        return int(policy.learner.gradient_steps)

    def chunk_extras(self, policy: Any, chunk: dict[str, np.ndarray]) -> None:
        """Add ``priority`` (|one-step TD error|, Ape-X's actor-side priorities)."""
        if not self.prioritized:
            return
        import torch

        learner = policy.learner
        model = learner.approximator.model
        device = learner.approximator.device
        with torch.no_grad():
            q = model(torch.as_tensor(chunk["state"], dtype=torch.float32, device=device))
            q_next = model(torch.as_tensor(chunk["final_state"], dtype=torch.float32,
                                           device=device))  # fmt: skip
        q = q.cpu().numpy().astype(np.float64)
        best_next = q_next.cpu().numpy().astype(np.float64).max(axis=-1)
        taken = q[np.arange(len(q)), chunk["action"].astype(np.int64)]
        target = chunk["reward"] + learner.gamma * (1.0 - chunk["terminated"]) * best_next
        chunk["priority"] = np.abs(target - taken)

    @staticmethod
    def adopt(policy: Any, step: dict[str, np.ndarray]) -> Any:
        return step["action"]


def acting_copy(learner: ValueBasedLearner) -> ValueBasedLearner:
    """A copy of ``learner`` that acts with its own network: a deep copy (the acting path,
    ``fast_forward(model)``, holds the copied model's parameters, so the weights loaded into the
    copy are the ones it acts with, in this process and in a Ray actor alike)."""
    return copy.deepcopy(learner)


class OnPolicyActing:
    """IMPALA: actors sample from their copy of the policy (its own sampling generator) and
    store the behaviour policy's log-probabilities beside each action; the learner's
    ``update`` corrects for the lag (``rk.IMPALA``'s V-trace)."""

    kind = "on-policy (IMPALA)"
    prioritized = False

    def actor_policy(self, policy: BuiltPolicy, index: int, seed: np.random.SeedSequence) -> Any:
        acting = copy.deepcopy(policy)
        acting.generator.manual_seed(int_seed(seed))
        return acting

    @staticmethod
    def network(policy: Any) -> Any:
        return policy.model

    @staticmethod
    def version(policy: Any) -> int:
        return int(policy.updates)

    def chunk_extras(self, policy: Any, chunk: dict[str, np.ndarray]) -> None:
        """Nothing to add: the behaviour log-probabilities are recorded while acting."""

    @staticmethod
    def adopt(policy: Any, step: dict[str, np.ndarray]) -> Any:
        """The learner records the actor's action and extras (its ``last_action`` and
        ``last_extras``, which the rollout stores at PreAct)."""
        policy.last_action = step["raw_action"]
        policy.last_extras = {k.removeprefix("extra_"): v for k, v in step.items()
                              if k.startswith("extra_")}  # fmt: skip
        return step["action"]


def acting_for(agent: Any, n_actors: int, epsilon: float, alpha: float) -> Any:
    """The acting rules for ``agent`` (an ``rk.Agent``), or ``TypeError`` naming what fits."""
    if not isinstance(agent, Agent):
        raise TypeError(
            f"ActorLearner: policy must be an rk.Agent (the learner's policy and the trajectory "
            f"it learns from), got {type(agent).__name__}: {agent!r:.80}"
        )
    inner, trajectory = agent.policy, agent.trajectory
    if isinstance(inner, QBasedPolicy) and isinstance(inner.learner, ValueBasedLearner):
        return ValueBasedActing(agent, n_actors, epsilon, alpha)
    if isinstance(inner, BuiltPolicy) and isinstance(trajectory, RolloutTrajectory):
        if trajectory.n_envs != n_actors:
            raise ValueError(
                f"ActorLearner: the agent's RolloutTrajectory has n_envs={trajectory.n_envs}; "
                f"with n_actors={n_actors} it needs n_envs={n_actors} (one column per actor)"
            )
        return OnPolicyActing()
    raise TypeError(
        f"ActorLearner: cannot split {type(inner).__name__} with a "
        f"{type(trajectory).__name__} into actors and a learner; expected a DQN-family learner "
        f"in rk.QBasedPolicy with a replay (Ape-X) or a policy of rk.build_policy with an "
        f"rk.RolloutTrajectory (IMPALA: rk.IMPALA)"
    )
