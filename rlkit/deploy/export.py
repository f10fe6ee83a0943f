"""``rk.export(policy, "policy.onnx")``: the greedy policy as an ONNX graph (opset
:data:`OPSET`), observation preprocessing included, for inference outside Python.

The graph has one input ``obs`` (a batch: ``(n, *observation_shape)``, float32; ``uint8`` for
image observations, the pixels scaled to [0, 1] inside the graph; int64 state indices for
tabular policies) and one output ``action``: int64 for ``Discrete`` (the first
maximal action, ``ArgMax``), the distribution's mode for the other discrete spaces, and for
``Box`` the deterministic action as the trained policy's ``predict`` computes it (SAC/TD3/DDPG:
the tanh-squashed actor output rescaled to the bounds; PPO/A2C/VPG/TRPO: the Gaussian's mean),
clipped to the bounds. rlkit's recipes preprocess observations only by casting to float32 and
flattening, both inside the graph. Legal-action masks are not part of the graph.

A recurrent policy (``rk.RecurrentPPO``, rlkit/deploy/recurrent.py) carries its hidden state
through the graph: inputs ``obs``, ``state`` (float32 ``(n, n_states, layers, hidden)``, zeros
at an episode's start) and ``episode_start`` (bool ``(n,)``, True zeroes the state first),
outputs ``action`` and ``next_state`` (feed it back at the next step), as
``predict(obs, state, episode_start)``. Policies on ``Dict``/``Tuple`` observations are refused
(a graph takes one observation array; ``rk.save`` keeps them). A policy trained on
``rk.VecNormalize`` gets its observation normalisation at the head of the graph (the training
statistics, frozen; computed in float64 as ``predict`` does), so ``obs`` is the raw
observation.

The export uses torch's TorchScript-based exporter (``torch.onnx.export(..., dynamo=False)``),
which needs the ``onnx`` package only (the dynamo-based one also needs ``onnxscript``); the
file's metadata (``metadata_props``) records the opset, the algorithm, the spaces as JSON and
the rlkit version. Install the extra: ``pip install onnx onnxruntime``.

Example:
    >>> import numpy as np, onnxruntime, rlkit as rk, tempfile, os
    >>> policy = rk.PPO(rk.GymEnv("CartPole-v1", seed=0), seed=0)
    >>> path = os.path.join(tempfile.mkdtemp(), "ppo.onnx")
    >>> rk.export(policy, path)
    >>> session = onnxruntime.InferenceSession(path)
    >>> obs = np.zeros((2, 4), np.float32)
    >>> session.run(None, {"obs": obs})[0].tolist() == policy.predict(obs).tolist()
    True
"""

from __future__ import annotations

import functools
import json
import os
import warnings
from typing import Any

import gymnasium as gym
import torch
from torch import nn

from ..policies.q_based import QBasedPolicy
from ..policies.stochastic import StochasticPolicy
from .built import LoadedActorPolicy
from .normalized_graph import normalized_module
from .q_based import TableLearner
from .q_network import NetworkQLearner
from .recurrent import LoadedRecurrentPolicy, greedy_step
from .save_load import inference_form
from .spaces import space_to_json

__all__ = ["export", "greedy_module", "OPSET"]

#: the ONNX opset of exported graphs
OPSET = 17


class _Greedy(nn.Module):
    def __init__(self, fn: Any, **modules: Any) -> None:
        super().__init__()
        self.fn = fn
        for name, value in modules.items():
            if isinstance(value, torch.Tensor):
                self.register_buffer(name, value)
            else:
                setattr(self, name, value)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.fn(self, obs)


@functools.singledispatch
def greedy_module(policy: Any) -> tuple[nn.Module, torch.Tensor]:
    """``(module, example_input)``: a torch module computing the greedy action of a batch of
    observations, for a policy in the loaded form (``rk.load``'s); one method per form."""
    raise TypeError(f"rk.export: no ONNX graph for a {type(policy).__name__}")


@greedy_module.register
def _(policy: QBasedPolicy) -> tuple[nn.Module, torch.Tensor]:
    learner = policy.learner
    if isinstance(learner, TableLearner):
        start = int(getattr(learner.state_space, "start", 0))
        module = _Greedy(
            lambda m, obs: m.table[obs - start].argmax(-1), table=torch.from_numpy(learner.table)
        )
        return module, torch.zeros(2, dtype=torch.int64)
    if isinstance(learner, NetworkQLearner):
        values = NetworkQLearner(learner.model, learner.n_quantiles).values  # registered below
        module = _Greedy(lambda m, obs: values(obs).argmax(-1), model=learner.model)
        return module, _example(policy.state_space)
    raise TypeError(f"rk.export: no ONNX graph for the learner {learner!r}")


def _clamp(policy: Any) -> dict[str, torch.Tensor]:
    space = policy.action_space
    return {
        "low": torch.as_tensor(space.low, dtype=torch.float32),
        "high": torch.as_tensor(space.high, dtype=torch.float32),
    }


@greedy_module.register
def _(policy: StochasticPolicy) -> tuple[nn.Module, torch.Tensor]:
    dist_class, space = policy.dist_class, policy.action_space

    def forward(m: nn.Module, obs: torch.Tensor) -> torch.Tensor:
        action = dist_class.from_inputs(m.model(obs), space, None).mode()
        return torch.clamp(action, m.low, m.high) if isinstance(space, gym.spaces.Box) else action

    extra = _clamp(policy) if isinstance(space, gym.spaces.Box) else {}
    return _Greedy(forward, model=policy.model, **extra), _example(policy.state_space)


@greedy_module.register
def _(policy: LoadedRecurrentPolicy) -> tuple[nn.Module, tuple]:
    _refuse_structured(policy.state_space)
    return greedy_step(policy)


@greedy_module.register
def _(policy: LoadedActorPolicy) -> tuple[nn.Module, torch.Tensor]:
    def forward(m: nn.Module, obs: torch.Tensor) -> torch.Tensor:
        scaled = m.model(obs)
        return torch.clamp(m.low + 0.5 * (scaled + 1.0) * (m.high - m.low), m.low, m.high)

    return _Greedy(forward, model=policy.model, **_clamp(policy)), _example(policy.state_space)


def _refuse_structured(space: Any) -> None:
    """Refuse a ``Dict``/``Tuple`` observation space: a graph here takes one array."""
    from ..trajectories.structured import is_structured_space

    if is_structured_space(space):
        raise TypeError(
            f"rk.export: the policy's observations are a {type(space).__name__} space "
            f"({space}); an ONNX graph here takes one observation array: export a policy "
            f"trained on the flattened env (gymnasium.wrappers.FlattenObservation), or use "
            f"rk.save / rk.load, which keep {type(space).__name__} observations"
        )


def _example(space: Any) -> torch.Tensor:
    from ..approximators.cnn import is_image_space

    _refuse_structured(space)
    dtype = torch.uint8 if is_image_space(space) else torch.float32  # images: scaled inside
    return torch.zeros((2, *space.shape), dtype=dtype)


def export(policy: Any, path: str | os.PathLike) -> None:
    """Write ``policy``'s greedy form as ONNX (opset :data:`OPSET`) to ``path``; any policy
    ``rk.save`` takes (a trained one, or one ``rk.load`` returned). See the module docstring
    for the graph's input, output and metadata.

    Example:
        >>> import numpy as np, onnxruntime, rlkit as rk, tempfile, os
        >>> policy = rk.SAC(rk.GymEnv("Pendulum-v1", seed=0), seed=0)
        >>> path = os.path.join(tempfile.mkdtemp(), "sac.onnx")
        >>> rk.export(policy, path)
        >>> obs = np.ones((3, 3), np.float32)
        >>> out = onnxruntime.InferenceSession(path).run(None, {"obs": obs})[0]
        >>> bool(np.allclose(out, policy.predict(obs), atol=1e-5))
        True
    """
    try:
        import onnx
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            "rk.export needs the onnx package (and onnxruntime to run the file): "
            "pip install onnx onnxruntime",
            name="onnx",
        ) from error
    loaded = inference_form(policy)
    module, example = greedy_module(loaded)
    module = normalized_module(module, loaded)  # rk.VecNormalize's statistics, in the graph
    module.eval()
    inputs = example if isinstance(example, tuple) else (example,)
    input_names = list(getattr(module, "input_names", ["obs"]))
    output_names = list(getattr(module, "output_names", ["action"]))
    dynamic_axes = getattr(module, "dynamic_axes", {"obs": {0: "batch"}, "action": {0: "batch"}})
    description = getattr(module, "description", {
        "input": (
            "obs: a batch of observations (float32; uint8 for images; int64 state indices for "
            "tables)"
        ),
        "output": "action: the greedy action of each observation",
    })  # fmt: skip
    with torch.no_grad(), warnings.catch_warnings():
        # the TorchScript-based exporter is chosen on purpose (see the module docstring)
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", FutureWarning)
        torch.onnx.export(
            module,
            inputs,
            os.fspath(path),
            input_names=input_names,
            output_names=output_names,
            dynamic_axes=dynamic_axes,
            opset_version=OPSET,
            dynamo=False,
        )
    model = onnx.load(os.fspath(path))
    from ..core.version import __version__

    for key, value in {
        "rlkit_version": __version__,
        "opset": str(OPSET),
        "algorithm": str(loaded.algorithm),
        "observation_space": json.dumps(space_to_json(loaded.state_space)),
        "action_space": json.dumps(space_to_json(loaded.action_space)),
        **description,
    }.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.save(model, os.fspath(path))
