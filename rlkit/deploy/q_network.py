"""Artifacts of ``QBasedPolicy(learner, explorer)`` with a DQN-family learner (``q_network``):
the network described by :mod:`rlkit.deploy.networks` and its parameters; QR-DQN's quantiles
are averaged as the learner does when acting. Loading gives a ``QBasedPolicy`` around a
:class:`NetworkQLearner` (a learner without learning methods).

Example:
    >>> import numpy as np, torch, rlkit as rk
    >>> net = torch.nn.Sequential(torch.nn.Linear(3, 2))
    >>> policy = rk.QBasedPolicy(NetworkQLearner(net), rk.GreedyExplorer(seed=0))
    >>> policy.state_space = rk.GymEnv("Pendulum-v1").state_space
    >>> policy.predict(np.zeros((4, 3))).shape
    (4,)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..approximators.cnn import ImageEncoder
from ..core.interfaces import AbstractLearner
from ..learners.value_based.common import ValueBasedLearner, fast_forward, observation_tensor
from ..policies.q_based import QBasedPolicy
from .networks import load_parameters, module_from_json, module_to_json
from .q_based import learner_artifact, q_based_policy
from .registry import loader
from .spaces import space_from_json, space_to_json

__all__ = ["NetworkQLearner", "network_artifact"]


class NetworkQLearner(AbstractLearner):
    """Action values from a torch network: ``learner(env)`` is ``model(env.state)`` as float32
    (``uint8`` images as they are, for a network with a CNN body that scales them; the mean over
    ``n_quantiles`` quantiles for QR-DQN), as the DQN family acts. Learns nothing.

    Example:
        >>> import torch
        >>> NetworkQLearner(torch.nn.Linear(3, 2)).values(torch.zeros(1, 3)).shape
        torch.Size([1, 2])
    """

    def __init__(self, model: torch.nn.Module, n_quantiles: int | None = None) -> None:
        self.model = model.eval()
        self.n_quantiles = n_quantiles
        self._forward = fast_forward(model)  # as the DQN family acts: no module-call overhead
        # a CNN body scales uint8 images itself: they go in as uint8 (rlkit/approximators/cnn.py)
        self.pixels = any(isinstance(m, ImageEncoder) for m in model.modules())

    def __repr__(self) -> str:
        return f"NetworkQLearner({type(self.model).__name__}, n_quantiles={self.n_quantiles})"

    def values(self, obs: torch.Tensor) -> torch.Tensor:
        """Q-values of a batch of float32 observations."""
        out = self._forward(obs)
        if self.n_quantiles is None:
            return out
        return out.unflatten(-1, (self.n_quantiles, -1)).mean(dim=-2)

    def __call__(self, env: Any) -> np.ndarray:
        with torch.inference_mode():
            obs = observation_tensor(env.state, torch.device("cpu"), self.pixels)
            return self.values(obs).numpy()


# ---- saving ----
@learner_artifact.register
def _(learner: ValueBasedLearner, policy: QBasedPolicy) -> tuple[str, dict, dict]:
    return network_artifact(learner.model, getattr(learner, "n_quantiles", None), learner)


@learner_artifact.register
def _(learner: NetworkQLearner, policy: QBasedPolicy) -> tuple[str, dict, dict]:
    return network_artifact(learner.model, learner.n_quantiles, policy)


def network_artifact(model: torch.nn.Module, n_quantiles: Any, owner: Any) -> tuple:
    """``("q_network", meta, tensors)`` of a Q-network (``n_quantiles``: the loaded learner
    averages that many quantiles per action) acting on ``owner.state_space``; refused when
    ``owner`` is a learner that has not run yet (its observation space is unknown).

    Example:
        >>> import gymnasium as gym, torch
        >>> from types import SimpleNamespace
        >>> owner = SimpleNamespace(state_space=gym.spaces.Box(-1, 1, (3,)))
        >>> kind, meta, tensors = network_artifact(torch.nn.Linear(3, 2), None, owner)
        >>> kind, sorted(tensors)
        ('q_network', ['bias', 'weight'])
    """
    if isinstance(owner, ValueBasedLearner) and owner.state_space is None:
        raise ValueError(
            f"rk.save: {type(owner).__name__} has not run yet, so its observation space is "
            f"unknown; save it after training (rk.run)"
        )
    meta = {
        "network": module_to_json(model, "the Q-network"),
        "n_quantiles": n_quantiles,
        "observation_space": space_to_json(owner.state_space),
        "preprocessing": {"observation": _preprocessing(model)},
    }
    return "q_network", meta, dict(model.state_dict())


def _preprocessing(model: torch.nn.Module) -> str:
    for m in model.modules():
        if isinstance(m, ImageEncoder):
            return f"uint8 images {list(m.input_shape)}, divided by {m.scale} inside the network"
    return "float32 (flattened by the network)"


# ---- loading ----
@loader("q_network")
def _(meta: dict[str, Any], tensors: dict[str, Any]) -> Any:
    spaces = space_from_json(meta["observation_space"]), space_from_json(meta["action_space"])
    model = module_from_json(meta["network"])
    load_parameters(model, tensors)
    learner = NetworkQLearner(model, meta.get("n_quantiles"))
    learner.state_space = spaces[0]
    return q_based_policy(learner, meta, spaces)
