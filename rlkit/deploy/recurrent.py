"""Inference artifacts of recurrent policies (``rk.RecurrentPPO``): kind ``recurrent``.

The artifact is the ``stochastic`` one of rlkit/deploy/built.py (the ``model_fn`` by import
path, its JSON hyperparameters, the parameters) under its own kind, so that loading gives a
:class:`LoadedRecurrentPolicy`: a policy that carries the LSTM's hidden state as the trained one
does. No hidden state is saved: an artifact is a policy, not a run (a checkpoint keeps the act
state); a loaded policy starts every episode from zeros, as the trained one does.

* ``loaded.predict(obs, state=None, episode_start=None, deterministic=True)`` returns
  ``(actions, next_state)`` (sb3-contrib's ``predict``; the state is carried by the caller:
  :meth:`~rlkit.learners.policy_gradient.recurrent_policy.RecurrentActing.predict`).
* ``rk.run(loaded, env, ...)`` samples with a hidden state per sub-env, zeroed at episode
  starts; ``rk.greedy(loaded)`` takes the mode with a hidden state of its own.

Example:
    >>> import numpy as np, rlkit as rk, tempfile, os
    >>> policy = rk.RecurrentPPO(rk.GymEnv("rlkit/CartPoleNoVel-v1"), lstm_hidden_size=8)
    >>> path = os.path.join(tempfile.mkdtemp(), "rppo.rlkit")
    >>> rk.save(policy, path)
    >>> loaded = rk.load(path)
    >>> obs = np.array([0.01, -0.02], np.float32)
    >>> a, state = loaded.predict(obs, episode_start=True)
    >>> b, same = policy.predict(obs, episode_start=True)
    >>> type(loaded).__name__, a.item() == b.item(), np.array_equal(state, same)
    ('LoadedRecurrentPolicy', True, True)
"""

from __future__ import annotations

from typing import Any

import torch

from ..core.dispatch import PlanStep, greedy
from ..core.stages import AbstractStage
from ..learners.policy_gradient.recurrent_policy import (
    ActState,
    RecurrentActing,
    RecurrentGreedyPolicy,
    RecurrentPolicy,
)
from ..policies.spaces import check_env_fits
from ..policies.stochastic import StochasticPolicy
from .built import build_model, cls_name, model_tensors, network_description, remember_artifact
from .errors import ArtifactError
from .registry import Artifact, loader, policy_artifact
from .spaces import space_from_json

__all__ = ["LoadedRecurrentPolicy"]

KIND = "recurrent"


class LoadedRecurrentPolicy(RecurrentActing, StochasticPolicy):
    """A recurrent policy ``rk.load`` returned: the trained policy's model, acting with a hidden
    state carried per sub-env (see the module docstring); ``algorithm``, ``state_space``,
    ``action_space``, ``predict``, ``initial_state`` and ``act_state`` as the trained one's.

    Example:
        >>> import rlkit as rk, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "rppo.rlkit")
        >>> env = rk.GymEnv("rlkit/CartPoleNoVel-v1", seed=0)
        >>> rk.save(rk.RecurrentPPO(env, lstm_hidden_size=8), path)
        >>> loaded = rk.load(path, env=env)
        >>> hook = rk.run(rk.greedy(loaded), env, rk.StopAfterNEpisodes(1))
        >>> loaded.algorithm, loaded.initial_state().shape
        ('RecurrentPPO', (4, 1, 8))
    """

    def __init__(self, model: torch.nn.Module, spaces: tuple[Any, Any], dist_class: Any) -> None:
        super().__init__(model, spaces[1], dist_class=dist_class, seed=0)
        self.state_space = spaces[0]
        self.act_state = ActState()

    def __repr__(self) -> str:
        return f"LoadedRecurrentPolicy({getattr(self, 'algorithm', '?')})"

    def plan(self, env: Any) -> dict[AbstractStage, list[PlanStep]]:
        check_env_fits(repr(self), self.state_space, self.action_space, env)
        return self.act_state.plan(env)


@greedy.dispatch
def _(policy: LoadedRecurrentPolicy, seed: object = None, /):
    return RecurrentGreedyPolicy(policy)


def _artifact(policy: Any, algorithm: str, network: dict[str, Any]) -> Artifact:
    meta = {
        "network": network,
        "preprocessing": {"observation": "float32 (flattened by the network)"},
        "hidden_state": (
            "not saved: (n_states, layers, hidden) zeros at every episode start; predict takes "
            "and returns it"
        ),
    }
    return Artifact(
        KIND, algorithm, (policy.state_space, policy.action_space), meta,
        model_tensors(policy.model),
    )  # fmt: skip


@policy_artifact.register
def _(policy: RecurrentPolicy) -> Artifact:
    return _artifact(policy, cls_name(policy), network_description(policy))


@policy_artifact.register
def _(policy: LoadedRecurrentPolicy) -> Artifact:  # a loaded one, saved again
    return _artifact(policy, policy.algorithm, policy.artifact_network)


@loader(KIND)
def _(meta: dict[str, Any], tensors: dict[str, Any]) -> Any:
    spaces = space_from_json(meta["observation_space"]), space_from_json(meta["action_space"])
    model, dist_class = build_model(meta, spaces, tensors)
    missing = [n for n in ("initial_state", "step") if not callable(getattr(model, n, None))]
    shape = [getattr(model, name, None) for name in ("n_states", "n_layers", "hidden_size")]
    if missing or not all(isinstance(n, int) for n in shape):
        raise ArtifactError(
            f"the recurrent artifact's model_fn {meta['network']['model_fn']!r} made a "
            f"{type(model).__name__} without the recurrent model's API (initial_state, step, "
            f"n_states, n_layers, hidden_size)"
        )
    return remember_artifact(LoadedRecurrentPolicy(model, spaces, dist_class), meta, spaces)


def greedy_step(policy: LoadedRecurrentPolicy) -> tuple[torch.nn.Module, tuple]:
    """``(module, example inputs)`` for ``rk.export``: ``(obs, state, episode_start) ->
    (action, next_state)``, the greedy step of :meth:`RecurrentActing.predict`."""
    import gymnasium as gym

    space = policy.action_space
    box = isinstance(space, gym.spaces.Box)
    low = torch.as_tensor(space.low, dtype=torch.float32) if box else None
    high = torch.as_tensor(space.high, dtype=torch.float32) if box else None
    module = _GreedyStep(policy.model, policy.dist_class, space, low, high)
    example = (
        torch.zeros(2, *policy.state_space.shape),
        torch.zeros(2, *policy.initial_state().shape),
        torch.ones(2, dtype=torch.bool),
    )
    return module, example


class _GreedyStep(torch.nn.Module):
    input_names = ["obs", "state", "episode_start"]
    output_names = ["action", "next_state"]
    dynamic_axes = {name: {0: "batch"} for name in (*input_names, *output_names)}
    description = {
        "input": (
            "obs: a batch of observations (float32); state: their hidden states (float32, "
            "(batch, n_states, layers, hidden): h and c of the actor's LSTM, then of the "
            "critic's; zeros at an episode's start); episode_start: bool (batch,), True where "
            "an episode starts (the state is zeroed first)"
        ),
        "output": "action: the greedy action of each observation; next_state: the state after it",
    }

    def __init__(self, model: Any, dist_class: Any, space: Any, low: Any, high: Any) -> None:
        super().__init__()
        self.model, self.dist_class, self.space = model, dist_class, space
        if low is not None:
            self.register_buffer("low", low)
            self.register_buffer("high", high)
        self.box = low is not None

    def forward(self, obs: torch.Tensor, state: torch.Tensor, episode_start: torch.Tensor) -> Any:
        inputs, _, after = self.model.step(obs, state, episode_start)
        action = self.dist_class.from_inputs(inputs, self.space, None).mode()
        if self.box:
            action = torch.clamp(action, self.low, self.high)
        return action, after
