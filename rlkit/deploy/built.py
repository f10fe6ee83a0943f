"""Artifacts of the policies ``rk.build_policy`` makes: the network is rebuilt by the policy's
own ``model_fn``, recorded as an import path (``module:function``) with the arguments it needs
(the spaces, the distribution class as an import path, the JSON-representable hyperparameters),
then filled with the saved parameters. A ``model_fn`` that cannot be imported by name (a lambda,
a function defined inside another) is refused at save time. Loading imports the module that
defines ``model_fn`` (rlkit's own for the bundled algorithms).

* ``stochastic`` (PPO, A2C, VPG, TRPO, ES and any ``StochasticPolicy`` with a ``model_fn``):
  loads as a :class:`~rlkit.StochasticPolicy` (it samples when run; ``rk.greedy`` and
  ``predict(deterministic=True)`` take the distribution's mode; ``Box`` actions clipped).
* ``actor`` (SAC, TD3, DDPG): loads as a :class:`LoadedActorPolicy`: the model's deterministic
  action in ``[-1, 1]`` rescaled to the ``Box``; SAC's stochastic form samples its squashed
  Gaussian (``sample_fn``, an import path too).

Example:
    >>> fn_path(fn_path)
    'rlkit.deploy.built:fn_path'
"""

from __future__ import annotations

import importlib
import inspect
import json
from typing import Any

import numpy as np
import torch

from ..core.dispatch import greedy
from ..core.interfaces import AbstractPolicy
from ..learners.actor_critic.common import OffPolicyActorCritic, unscale_action
from ..learners.built import BuiltPolicy
from ..policies.distributions import ActionDistribution
from ..policies.normalized import normalized_batch, normalized_state
from ..policies.observations import observation_tensor, one_row
from ..policies.predict import mask_batch, observation_batch, single_or_batch
from ..policies.stochastic import StochasticPolicy, is_vector_env
from .errors import ArtifactError
from .networks import load_parameters
from .registry import Artifact, loader, policy_artifact
from .spaces import space_from_json

__all__ = [
    "LoadedActorPolicy",
    "fn_path",
    "import_fn",
    "json_config",
    "build_model",
    "remember_artifact",
    "network_description",
    "model_tensors",
    "cls_name",
]


def fn_path(fn: Any) -> str:
    """``module:qualname`` of a module-level function or class, checked to import back."""
    module, name = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if not module or "<" in name or _resolve(module, name) is not fn:
        raise TypeError(
            f"rk.save: {fn!r} cannot be recorded by name (a lambda or a function defined inside "
            f"another); define it at the top level of a module so the artifact can name it"
        )
    return f"{module}:{name}"


def _resolve(module: str, name: str) -> Any:
    try:
        obj: Any = importlib.import_module(module)
        for part in name.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        return None
    return obj


def import_fn(path: Any, what: str) -> Any:
    """The function an artifact names (``module:qualname``); refused when it does not import."""
    if not isinstance(path, str) or path.count(":") != 1:
        raise ArtifactError(f"the artifact's {what} must be 'module:name', got {path!r}")
    module, name = path.split(":")
    fn = _resolve(module, name)
    if fn is None:
        raise ArtifactError(
            f"the artifact's {what} {path!r} cannot be imported here; install the package that "
            f"defines it"
        )
    # only a Python function or class defined where the artifact says (never a builtin such
    # as os.system or exec, nor a name re-exported from elsewhere)
    if not (inspect.isfunction(fn) or inspect.isclass(fn)) or fn.__module__ != module:
        raise ArtifactError(
            f"the artifact's {what} {path!r} is not a function or class defined in {module}; "
            f"refused"
        )
    return fn


def json_config(config: dict[str, Any]) -> dict[str, Any]:
    """The hyperparameters that JSON represents exactly (numbers, strings, booleans, None and
    lists of them); schedules and objects (action noise) are training devices, left out."""
    kept = {}
    for key, value in config.items():
        value = list(value) if isinstance(value, tuple) else value
        try:
            if json.loads(json.dumps(value)) == value:
                kept[key] = value
        except (TypeError, ValueError):
            continue
    return kept


def network_description(policy: Any) -> dict[str, Any]:
    """What rebuilds a built policy's network: ``model_fn`` and ``dist_class`` by import path,
    the JSON hyperparameters (a loaded policy's recorded description as it is)."""
    recorded = getattr(policy, "artifact_network", None)  # a loaded policy saved again
    if recorded is not None:
        return recorded
    cls = type(policy)
    dist_class = getattr(policy, "dist_class", None)
    return {
        "model_fn": fn_path(cls.model_fn),
        "dist_class": None if dist_class is None else fn_path(dist_class),
        "config": json_config(policy.config),
    }


def model_tensors(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """``model``'s parameters and buffers, detached, on the CPU."""
    return {k: v.detach().cpu() for k, v in model.state_dict().items()}


@policy_artifact.register
def _(policy: BuiltPolicy) -> Artifact:
    meta = {
        "network": network_description(policy),
        "preprocessing": {"observation": "float32 (flattened by the network)"},
    }
    return Artifact(
        "stochastic", cls_name(policy), (policy.state_space, policy.action_space), meta,
        model_tensors(policy.model),
    )  # fmt: skip


@policy_artifact.register
def _(policy: StochasticPolicy) -> Artifact:  # a loaded one, saved again
    if getattr(policy, "artifact_network", None) is None:
        raise TypeError(
            "rk.save: a StochasticPolicy made by hand has no model_fn to rebuild its network; "
            "save the policy rk.build_policy made (e.g. rk.PPO) or one rk.load returned"
        )
    meta = {"network": policy.artifact_network, "preprocessing": policy.artifact_preprocessing}
    return Artifact(
        "stochastic", policy.algorithm, (policy.state_space, policy.action_space), meta,
        model_tensors(policy.model),
    )  # fmt: skip


@policy_artifact.register
def _(policy: OffPolicyActorCritic) -> Artifact:
    network = network_description(policy)
    sample = getattr(type(policy), "sample_fn", None)
    network["sample_fn"] = fn_path(sample) if policy.samples_in_predict and sample else None
    meta = {
        "network": network,
        "preprocessing": {"observation": "float32 (flattened by the network)"},
    }
    return Artifact(
        "actor", cls_name(policy), (policy.state_space, policy.action_space), meta,
        model_tensors(policy.model),
    )  # fmt: skip


def cls_name(policy: Any) -> str:
    """The algorithm's name of a built policy (``PPO``), else its class's."""
    return getattr(type(policy), "name", type(policy).__name__)


def build_model(meta: dict[str, Any], spaces: tuple[Any, Any], tensors: dict) -> Any:
    """``(model, dist_class)`` rebuilt from an artifact's network description and filled with
    its tensors (in eval mode)."""
    network = meta["network"]
    model_fn = import_fn(network["model_fn"], "model_fn")
    dist_path = network.get("dist_class")
    dist_class = None if dist_path is None else import_fn(dist_path, "dist_class")
    if dist_class is not None and not (
        isinstance(dist_class, type) and issubclass(dist_class, ActionDistribution)
    ):
        raise ArtifactError(
            f"the artifact's dist_class {dist_path!r} is not an action distribution"
        )
    # a seed as BuiltPolicy gives one (the initial weights are overwritten next)
    seed = np.random.SeedSequence(0)
    model = model_fn(spaces[0], spaces[1], dist_class, dict(network["config"]), seed)
    load_parameters(model, tensors)
    return model.eval(), dist_class


def remember_artifact(policy: Any, meta: dict[str, Any], spaces: tuple[Any, Any]) -> Any:
    """``policy`` with the artifact's spaces, algorithm and descriptions recorded on it (so it
    saves again as it was loaded)."""
    policy.state_space, policy.action_space = spaces
    policy.algorithm = meta["algorithm"]
    policy.artifact_network = meta["network"]
    policy.artifact_preprocessing = meta.get("preprocessing")
    return policy


@loader("stochastic")
def _(meta: dict[str, Any], tensors: dict[str, Any]) -> Any:
    spaces = space_from_json(meta["observation_space"]), space_from_json(meta["action_space"])
    model, dist_class = build_model(meta, spaces, tensors)
    policy = StochasticPolicy(model, spaces[1], dist_class=dist_class, seed=0)
    return remember_artifact(policy, meta, spaces)


@loader("actor")
def _(meta: dict[str, Any], tensors: dict[str, Any]) -> Any:
    spaces = space_from_json(meta["observation_space"]), space_from_json(meta["action_space"])
    model, _ = build_model(meta, spaces, tensors)
    sample_path = meta["network"].get("sample_fn")
    sample_fn = None if sample_path is None else import_fn(sample_path, "sample_fn")
    return remember_artifact(LoadedActorPolicy(model, spaces, sample_fn), meta, spaces)


class LoadedActorPolicy(AbstractPolicy):
    """A loaded SAC, TD3 or DDPG policy: ``model(obs)`` in ``[-1, 1]`` rescaled to the ``Box``
    and clipped (as ``rk.greedy`` of the trained policy acts). When run, SAC's samples its
    squashed Gaussian (``sample_fn(model, obs, generator)``, seeded 0); ``rk.greedy`` of it,
    and DDPG's and TD3's, act deterministically.

    Example:
        >>> import rlkit as rk, tempfile, os
        >>> env = rk.GymEnv("Pendulum-v1", seed=0)
        >>> path = os.path.join(tempfile.mkdtemp(), "td3.rlkit")
        >>> rk.save(rk.TD3(env, seed=0), path)
        >>> loaded = rk.load(path)
        >>> type(loaded).__name__, loaded.predict([1.0, 0.0, 0.0]).shape
        ('LoadedActorPolicy', (1,))
    """

    #: the saved rk.VecNormalize statistics (rk.load sets them), frozen: predict and acting
    #: on a raw env normalise with them (rlkit/policies/normalized.py)
    observation_normalizer: Any = None

    def __init__(self, model: torch.nn.Module, spaces: tuple[Any, Any], sample_fn: Any) -> None:
        self.model = model
        self.state_space, self.action_space = spaces
        self.sample_fn = sample_fn
        self.generator = torch.Generator().manual_seed(0)
        self.deterministic = sample_fn is None

    def __repr__(self) -> str:
        return f"LoadedActorPolicy({getattr(self, 'algorithm', '?')})"

    def predict(
        self, obs: Any, deterministic: bool = True, action_masks: Any = None
    ) -> np.ndarray:
        """As the trained policy's ``predict`` (:meth:`OffPolicyActorCritic.predict`)."""
        owner = getattr(self, "algorithm", "LoadedActorPolicy")
        batch, single = observation_batch(owner, obs, self.state_space)
        mask_batch(owner, action_masks, len(batch), None)
        batch = normalized_batch(self, batch)  # saved rk.VecNormalize statistics, if any
        return single_or_batch(self._actions(batch, deterministic), single)

    def _actions(self, batch: Any, deterministic: bool) -> np.ndarray:
        owner = getattr(self, "algorithm", "LoadedActorPolicy")
        obs = observation_tensor(owner, batch, torch.device("cpu"), self.state_space)
        with torch.no_grad():
            if deterministic or self.sample_fn is None:
                scaled = self.model(obs)
            else:
                scaled = self.sample_fn(self.model, obs, self.generator)
        space = self.action_space
        scaled = scaled.numpy().astype(np.float64).reshape(-1, *space.shape)
        return np.clip(unscale_action(space, scaled).astype(space.dtype), space.low, space.high)

    def act(self, env: Any) -> Any:
        vector = is_vector_env(env)
        state = normalized_state(self, env, env.state)  # raw obs, normalised
        actions = self._actions(state if vector else one_row(state, self.state_space),
                                self.deterministic)
        return actions if vector else actions[0]


class _GreedyActor(LoadedActorPolicy):
    def __init__(self, policy: LoadedActorPolicy) -> None:
        self.__dict__.update(policy.__dict__)
        self.deterministic = True


@greedy.dispatch
def _(policy: LoadedActorPolicy, seed: object = None, /):
    return _GreedyActor(policy)


@policy_artifact.register
def _(policy: LoadedActorPolicy) -> Artifact:  # a loaded one, saved again
    meta = {"network": policy.artifact_network, "preprocessing": policy.artifact_preprocessing}
    return Artifact(
        "actor", policy.algorithm, (policy.state_space, policy.action_space), meta,
        model_tensors(policy.model),
    )  # fmt: skip
