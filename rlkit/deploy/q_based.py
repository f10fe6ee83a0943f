"""Artifacts of ``QBasedPolicy(learner, explorer)``: a tabular learner's action values as a
table (``q_table``; a DQN-family learner's network, ``q_network``, is
:mod:`rlkit.deploy.q_network`'s), and the explorer's
current epsilon (``predict(deterministic=False)`` and ``rlkit enjoy --stochastic`` explore
with it; anything but epsilon-greedy is saved as greedy).

The table is whatever the learner acts on, read state by state through ``learner(env)``
(Q-learning's table, Double Q-learning's sum of two, Dyna's, ...), for ``Discrete``
observation spaces. This module needs no torch: tabular policies save and load without it.

Loading gives a ``QBasedPolicy`` again, around a :class:`TableLearner` (a learner without
learning methods): it acts in ``rk.run``, and
``rk.greedy`` of it acts greedily.

Example:
    >>> import numpy as np, rlkit as rk
    >>> learner = TableLearner(np.array([[0.0, 1.0], [2.0, 0.0]]))
    >>> policy = rk.QBasedPolicy(learner, rk.GreedyExplorer(seed=0))
    >>> policy.predict(np.array([0, 1])).tolist()
    [1, 0]
"""

from __future__ import annotations

import functools
from typing import Any

import gymnasium as gym
import numpy as np

from ..core.interfaces import AbstractLearner
from ..policies.explorers import EpsilonGreedyExplorer, GreedyExplorer
from ..policies.q_based import ObservationView, QBasedPolicy
from ..policies.v_based import VBasedPolicy
from .registry import Artifact, loader, policy_artifact
from .spaces import space_from_json, space_to_json

__all__ = ["TableLearner", "learner_artifact", "q_based_policy"]


class TableLearner(AbstractLearner):
    """Action values from a table ``(n_states, n_actions)``: ``learner(env)`` is
    ``table[env.state]`` (rows for a vector env). Learns nothing.

    Example:
        >>> import numpy as np
        >>> TableLearner(np.eye(2)).table.shape
        (2, 2)
    """

    def __init__(self, table: np.ndarray, state_space: Any = None) -> None:
        self.table = np.asarray(table)
        self.state_space = state_space or gym.spaces.Discrete(self.table.shape[0])

    def __repr__(self) -> str:
        return f"TableLearner(table of shape {self.table.shape})"

    def __call__(self, env: Any) -> np.ndarray:
        start = getattr(self.state_space, "start", 0)
        return self.table[np.asarray(env.state) - start]


# ---- saving: the learner decides what the values are ----
@functools.singledispatch
def learner_artifact(learner: Any, policy: QBasedPolicy) -> tuple[str, dict, dict]:
    """``(kind, meta, tensors)`` of a Q-based policy's learner: by default (tabular learners)
    the table of ``learner(env)`` over every state of a ``Discrete`` observation space."""
    space = _table_space(learner)
    start = int(space.start)
    rows = [np.asarray(learner(ObservationView(np.int64(start + s)))) for s in range(space.n)]
    table = np.stack(rows).astype(np.float64)
    return "q_table", {"observation_space": space_to_json(space)}, {"q": table}


def _table_space(learner: Any) -> gym.spaces.Discrete:
    approximator = getattr(learner, "approximator", None)
    table = getattr(approximator, "table", getattr(learner, "table", None))
    space = getattr(learner, "state_space", None)
    if isinstance(space, gym.spaces.Discrete):
        return space
    if isinstance(table, np.ndarray) and table.ndim == 2:
        return gym.spaces.Discrete(table.shape[0])
    raise TypeError(
        f"rk.save: cannot tabulate the action values of {learner!r}: a tabular learner's "
        f"artifact needs a Discrete observation space (a table of shape (n_states, "
        f"n_actions)); got {table.shape if isinstance(table, np.ndarray) else approximator!r}"
    )


@policy_artifact.register
def _(policy: QBasedPolicy) -> Artifact:
    learner = policy.learner
    kind, meta, tensors = learner_artifact(learner, policy)
    action_space = getattr(learner, "action_space", None) or gym.spaces.Discrete(
        next(iter(tensors.values())).shape[-1] if kind == "q_table" else _n_actions(learner)
    )
    explorer = policy.explorer
    epsilon = float(explorer.epsilon) if isinstance(explorer, EpsilonGreedyExplorer) else None
    algorithm = getattr(learner, "algorithm", None) or _learner_name(learner)
    if kind == "q_table":
        meta["preprocessing"] = {"observation": "integer state index"}
    meta["epsilon"] = epsilon
    state_space = space_from_json(meta.pop("observation_space"))
    return Artifact(kind, algorithm, (state_space, action_space), meta, tensors)


def _n_actions(learner: Any) -> int:
    space = getattr(learner, "action_space", None)
    if space is None:
        raise ValueError(f"rk.save: the action space of {learner!r} is unknown")
    return int(space.n)


def _learner_name(learner: Any) -> str:
    return type(learner).__name__  # e.g. QLearningLearner for TDLearner(q, method="qlearning")


# ---- loading: a QBasedPolicy again ----
def _explorer(meta: dict[str, Any]) -> Any:
    epsilon = meta.get("epsilon")
    return GreedyExplorer(seed=0) if epsilon is None else EpsilonGreedyExplorer(epsilon, seed=0)


def q_based_policy(learner: AbstractLearner, meta: dict[str, Any], spaces: tuple[Any, Any]) -> Any:
    """The loaded ``QBasedPolicy(learner, explorer)``: epsilon-greedy with the saved epsilon
    (greedy when none was saved), knowing its spaces and algorithm.

    Example:
        >>> import gymnasium as gym, numpy as np
        >>> spaces = gym.spaces.Discrete(2), gym.spaces.Discrete(2)
        >>> q_based_policy(TableLearner(np.eye(2)), {"algorithm": "Q", "epsilon": 0.1}, spaces)
        QBasedPolicy(TableLearner(table of shape (2, 2)), EpsilonGreedyExplorer(0.1))
    """
    policy = QBasedPolicy(learner, _explorer(meta))
    policy.state_space, policy.action_space = spaces
    policy.algorithm = meta["algorithm"]
    learner.action_space = spaces[1]
    learner.algorithm = meta["algorithm"]
    return policy


@loader("q_table")
def _(meta: dict[str, Any], tensors: dict[str, Any]) -> Any:
    spaces = space_from_json(meta["observation_space"]), space_from_json(meta["action_space"])
    return q_based_policy(TableLearner(tensors["q"], spaces[0]), meta, spaces)


# ---- refused: a VBasedPolicy acts with its mapper, not with what it learned ----
@policy_artifact.register
def _(policy: VBasedPolicy) -> Artifact:
    raise TypeError(
        f"rk.save: a VBasedPolicy acts with its mapper ({policy.mapper!r}: a fixed policy, or a "
        f"look-ahead that needs the env), not with the state values it learned, so it has no "
        f"inference artifact; save a QBasedPolicy, or the learner's values with its state_dict"
    )
