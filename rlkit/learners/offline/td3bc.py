"""TD3+BC (Fujimoto & Gu 2021, "A Minimalist Approach to Offline Reinforcement Learning"): TD3
with a behaviour-cloning term in the actor's loss and observations normalised by the dataset's
mean and standard deviation, compiled by ``rk.build_policy`` on TD3's base.

TD3's pieces are reused as they are (``rlkit/learners/actor_critic/td3.py``): the deterministic
actor, twin critics, target policy smoothing, the delayed actor and target updates
(:func:`~rlkit.learners.actor_critic.td3.td3_step`) and the critic loss. The actor's loss is
``-lambda * mean(Q_1(s, pi(s))) + mean((pi(s) - a)^2)`` with the normalised weight
``lambda = alpha / mean|Q_1(s, pi(s))|`` (no gradient through ``lambda``;
:func:`normalized_q_weight`, :func:`actor_loss`), ``alpha`` 2.5.

Observation normalisation: the model holds ``obs_mean`` and ``obs_std`` (the dataset's standard
deviation plus 1e-3, the paper's and d3rlpy's) as buffers, so they are saved in checkpoints and
artifacts; ``model(obs)`` (``rk.greedy``, ``predict``, saved artifacts) and exploration
normalise raw observations, and ``update(policy: TD3BC, batch)`` normalises the batch's
``state`` and ``next_state`` before TD3's step. ``policy.fit_normalizer(dataset)`` sets them
from a dataset's observations (an ``rk.Dataset`` or an array); an offline run
(``rk.run(policy, rk.OfflineEnv(dataset, ...), ...)``) sets them from its dataset at
PreExperiment unless they are set already (a resumed run keeps its checkpoint's); a gradient
step before that is refused (``normalize_observations=False`` turns normalisation off).
A ``Dict``/``Tuple`` observation is normalised key by key: each float ``Box`` key by its own
columns' mean and standard deviation (what the flattened observation's normaliser does to its
numbers); ``Discrete``, ``MultiBinary``, ``MultiDiscrete`` and ``uint8`` image keys are left
as they are (their encoders one-hot or scale them).

Defaults (the paper's and d3rlpy's ``TD3PlusBCConfig``): ``lr`` 3e-4 (actor and critics),
``alpha`` 2.5, ``hidden`` (256, 256), ``batch_size`` 256, ``gamma`` 0.99, ``tau`` 0.005,
``policy_delay`` 2, ``target_policy_noise`` 0.2, ``target_noise_clip`` 0.5;
``learning_starts`` 0. Differences from d3rlpy: the delayed actor steps on gradient steps 2, 4,
... (TD3's count, Stable-Baselines3's) where d3rlpy's steps on 1, 3, ...; d3rlpy normalises
only when given a ``StandardObservationScaler``, here normalisation is on by default, as in the
paper.

Example:
    >>> import numpy as np
    >>> import torch
    >>> import rlkit as rk
    >>> policy = rk.TD3BC(rk.GymEnv("Pendulum-v1", seed=0), seed=0, hidden=(16, 16))
    >>> policy.fit_normalizer(np.random.default_rng(0).normal(size=(100, 3)))
    >>> batch = rk.Batch(state=torch.zeros(8, 3), action=torch.zeros(8, 1),
    ...                  reward=torch.ones(8), terminal=torch.zeros(8),
    ...                  next_state=torch.zeros(8, 3))
    >>> _ = rk.update(policy, batch)
    >>> sorted(rk.update(policy, batch))  # the actor steps every second gradient step
    ['actor_loss', 'bc_loss', 'critic_loss', 'q_lambda', 'q_mean']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from ...core.checks import finite_float
from ...core.dispatch import update
from ...core.interfaces import AbstractOfflineEnv
from ...core.stages import PreExperimentStage
from ...trajectories.structured import (
    is_structured_space,
    leading_length,
    leaf_layout,
    structured,
)
from ..actor_critic import td3
from ..actor_critic.common import ActorCriticModel, mse
from ..batch import Batch
from ..builder import build_policy
from ..drivers.offline import check_offline
from ..hyperparameters import layers_from_hidden
from ..policy_gradient.models import observation_size

__all__ = [
    "TD3BC",
    "TD3BC_DEFAULTS",
    "NormalizedActorCriticModel",
    "normalized_q_weight",
    "actor_loss",
    "td3bc_model",
    "observation_statistics",
]

TD3BC_DEFAULTS = {
    **td3.TD3_DEFAULTS,
    "lr": 3e-4,
    "hidden": (256, 256),
    "learning_starts": 0,
    "alpha": 2.5,
    "normalize_observations": True,
}

STD_EPS = 1e-3  # added to the dataset's standard deviation (the paper's and d3rlpy's)


# ---- pure functions ----


def normalized_q_weight(q: torch.Tensor, alpha: float) -> torch.Tensor:
    """``lambda = alpha / mean|q|``, detached: the Q term's weight in the actor's loss.

    Example:
        >>> import torch
        >>> normalized_q_weight(torch.tensor([-1.0, 3.0]), 2.5).item()  # 2.5 / 2
        1.25
    """
    return (alpha / q.abs().mean()).detach()


def actor_loss(policy, model, dist_class, batch):
    """``-lambda * mean(Q_1(s, pi(s))) + mse(pi(s), a)`` (:func:`normalized_q_weight`)."""
    pi = model.actor(batch["state"])
    q = model.critic.q1(batch["state"], pi)
    lam = normalized_q_weight(q, policy.config["alpha"])
    bc = mse(pi, batch["action"])
    return -lam * q.mean() + bc, {"bc_loss": float(bc.detach()), "q_lambda": float(lam)}


def observation_statistics(observations: Any, n_obs: int, owner: str) -> tuple[Any, Any]:
    """The mean and the standard deviation plus 1e-3 of ``observations`` (``(N, ...)``, one
    row per transition, flattened to ``n_obs`` numbers), as float32 arrays; an empty, misshapen
    or non-finite array is a ``ValueError`` naming ``owner``.

    Example:
        >>> import numpy as np
        >>> mean, std = observation_statistics(np.array([[0.0], [2.0]]), 1, "TD3BC")
        >>> mean.tolist(), std.tolist()
        ([1.0], [1.0010000467300415])
    """
    array = np.asarray(observations, dtype=np.float64)
    if array.ndim < 1 or len(array) == 0:
        raise ValueError(f"{owner}: no observations to normalise by (got shape {array.shape})")
    array = array.reshape(len(array), -1)
    if array.shape[1] != n_obs:
        raise ValueError(
            f"{owner}: the observations have {array.shape[1]} numbers each, the policy's "
            f"observation space {n_obs}"
        )
    bad = np.argwhere(~np.isfinite(array))
    if len(bad):
        raise ValueError(
            f"{owner}: observation {int(bad[0][0])} is not finite ({array[bad[0][0]]}); the "
            f"normaliser needs finite observations"
        )
    mean, std = array.mean(axis=0), array.std(axis=0) + STD_EPS
    return mean.astype(np.float32), std.astype(np.float32)


# ---- the model ----


class NormalizedActorCriticModel(ActorCriticModel):
    """TD3's model with ``obs_mean``, ``obs_std`` and ``obs_fitted`` buffers: ``forward(obs)``
    (the deterministic action) normalises ``obs`` first; the actor and critics take normalised
    observations.

    Example:
        >>> import torch
        >>> m = NormalizedActorCriticModel(torch.nn.Identity(), torch.nn.Identity(),
        ...                                actor_target=False, critic_target=False, n_obs=2)
        >>> m.obs_mean += 1.0
        >>> m(torch.tensor([[1.0, 3.0]])).tolist()
        [[0.0, 2.0]]
    """

    def __init__(
        self, *args: Any, n_obs: int, leaves: list[tuple[tuple, int]] | None = None,
        **kwargs: Any,
    ) -> None:  # fmt: skip
        super().__init__(*args, **kwargs)
        self.register_buffer("obs_mean", torch.zeros(n_obs))
        self.register_buffer("obs_std", torch.ones(n_obs))
        self.register_buffer("obs_fitted", torch.tensor(False))
        #: a Dict/Tuple observation's normalised keys: (path, numbers), in the buffers' order
        self.leaves = leaves

    def normalize(self, obs: Any) -> Any:
        """``(obs - obs_mean) / obs_std``, flattened to ``(batch, n_obs)``; a ``Dict``
        observation (dicts of tensors by key) has its float keys normalised, each of its own
        shape, the others kept (:func:`normalized_leaves`)."""
        if self.leaves is None:
            return (obs.flatten(1) - self.obs_mean) / self.obs_std
        out, start = _copy_dicts(obs), 0
        for path, size in self.leaves:
            parent = out
            for key in path[:-1]:
                parent = parent[key]
            x = parent[path[-1]]
            mean, std = self.obs_mean[start : start + size], self.obs_std[start : start + size]
            parent[path[-1]] = ((x.flatten(1) - mean) / std).view(x.shape)
            start += size
        return out

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return super().forward(self.normalize(obs))


def _copy_dicts(obs: Any) -> Any:
    """Nested dicts copied (the tensors shared)."""
    return {k: _copy_dicts(v) for k, v in obs.items()} if isinstance(obs, Mapping) else obs


def normalized_leaves(space: Any) -> list[tuple[tuple, int]] | None:
    """The keys of a ``Dict``/``Tuple`` observation space that TD3+BC normalises, as
    ``(path, numbers)`` in the space's key order: its float ``Box`` keys (nested too); None
    for any other space (the whole observation is normalised).

    Example:
        >>> import gymnasium as gym
        >>> normalized_leaves(gym.spaces.Dict({"k": gym.spaces.Discrete(3),
        ...                                    "x": gym.spaces.Box(-1, 1, (2, 2))}))
        [(('x',), 4)]
    """
    if not is_structured_space(space):
        return None
    leaves = []
    for path, sub in space_leaves(space):
        shape, dtype = leaf_layout(sub)
        if isinstance(sub, gym.spaces.Box) and dtype.kind == "f":
            leaves.append((path, int(np.prod(shape))))
    return leaves


def space_leaves(space: Any, prefix: tuple = ()) -> list[tuple[tuple, Any]]:
    """``(path, space)`` of every non-structured space inside a ``Dict``/``Tuple`` space."""
    if not is_structured_space(space):
        return [(prefix, space)]
    items = space.spaces.items() if isinstance(space, gym.spaces.Dict) else enumerate(space)
    return [leaf for key, sub in items for leaf in space_leaves(sub, (*prefix, key))]


def normalized_columns(observations: Any, leaves: list[tuple[tuple, int]]) -> np.ndarray:
    """The numbers of a ``Dict`` observation's normalised keys, ``(N, n_obs)`` in the
    buffers' order (from dicts of arrays by key, one row per observation)."""
    columns = []
    for path, _ in leaves:
        value = observations
        for key in path:
            value = value[key]
        array = np.asarray(value, dtype=np.float64)
        columns.append(array.reshape(len(array), -1))
    if not columns:
        return np.zeros((leading_length(observations), 0))
    return np.concatenate(columns, axis=1)


@layers_from_hidden
def td3bc_model(state_space, action_space, dist_class, config, seed):
    """TD3's model (:func:`~rlkit.learners.actor_critic.td3.td3_model`: the same networks from
    the same seed) with the observation normaliser's buffers."""
    base = td3.td3_model(state_space, action_space, dist_class, config, seed)
    leaves = normalized_leaves(state_space)
    n_obs = (
        observation_size("td3bc_model", state_space)
        if leaves is None
        else sum(size for _, size in leaves)
    )
    model = NormalizedActorCriticModel(
        base.actor, base.critic, actor_target=True, critic_target=True, n_obs=n_obs,
        leaves=leaves,
    )  # fmt: skip
    return model


class TD3BCBase(td3.TD3Base):
    """TD3's base with the observation normaliser (:meth:`fit_normalizer`), applied when
    exploring and to each batch."""

    def check_config(self, owner: str, action_space: Any, env: Any) -> None:
        super().check_config(owner, action_space, env)
        finite_float(owner, "alpha", self.config["alpha"], low=0)
        if not isinstance(self.config["normalize_observations"], bool):
            raise TypeError(
                f"{owner}: normalize_observations must be True or False, got "
                f"{self.config['normalize_observations']!r}"
            )

    def fit_normalizer(self, data: Any) -> None:
        """Set the observation normaliser from ``data``: an ``rk.Dataset`` (its
        ``observations``) or an array of observations, one row each."""
        owner = type(self).name
        observations = getattr(data, "observations", data)
        if self.model.leaves is not None:  # a Dict observation: its normalised keys' numbers
            if not isinstance(observations, Mapping):
                raise TypeError(
                    f"{owner}: the policy's observations are dicts by key "
                    f"({self.state_space}); give the observations as a dict of arrays "
                    f"by key, got {type(observations).__name__}"
                )
            structured(owner, self.state_space, observations)  # the keys, named
            observations = normalized_columns(observations, self.model.leaves)
        n_obs = int(self.model.obs_mean.numel())
        mean, std = observation_statistics(observations, n_obs, owner)
        with torch.no_grad():
            self.model.obs_mean.copy_(torch.as_tensor(mean))
            self.model.obs_std.copy_(torch.as_tensor(std))
            self.model.obs_fitted.fill_(True)

    @property
    def needs_normalizer(self) -> bool:
        """Whether a gradient step must wait for :meth:`fit_normalizer`."""
        return bool(self.config["normalize_observations"]) and not bool(self.model.obs_fitted)

    def normalized(self, batch: Batch) -> Batch:
        """``batch`` with ``state`` and ``next_state`` normalised (a new batch)."""
        if self.needs_normalizer:
            raise ValueError(
                f"{type(self).name}: the observation normaliser is not set; call "
                f"policy.fit_normalizer(dataset) before learning (or make the policy with "
                f"normalize_observations=False)"
            )
        out = Batch(batch)
        out.owner = batch.owner
        out["state"] = self.model.normalize(batch["state"])
        out["next_state"] = self.model.normalize(batch["next_state"])
        return out

    def explore(self, obs: torch.Tensor) -> torch.Tensor:
        return super().explore(self.model.normalize(obs))


TD3BC = build_policy(
    "TD3BC",
    loss_fn={"critic": td3.critic_loss, "actor": actor_loss},
    model_fn=td3bc_model,
    optimizer={"critic": td3.adam, "actor": td3.adam},
    defaults=TD3BC_DEFAULTS,
    base=TD3BCBase,
    doc=__doc__,  # the module docstring: the algorithm, its defaults and an example
)


# ---- what TD3+BC learns from one batch ----
@update.dispatch
def _(policy: TD3BC, batch: Batch, /):
    """TD3's gradient step on the normalised batch; its diagnostics."""
    return td3.td3_step(policy, policy.normalized(batch))


# ---- PreExperiment of an offline run: the normaliser from the run's dataset ----
@update.dispatch
def _(policy: TD3BC, env: AbstractOfflineEnv, stage: PreExperimentStage, /):
    """The offline driver's check, then :meth:`~TD3BCBase.fit_normalizer` on the env's
    dataset unless the normaliser is set (the normalisation is TD3+BC's own: its timing is
    here, not in the driver)."""
    check_offline(policy, env)
    if policy.needs_normalizer:
        dataset = getattr(env, "dataset", None)
        if dataset is None:
            raise TypeError(
                f"{type(policy).name}: the offline env {env!r} has no dataset to normalise "
                f"observations by; call policy.fit_normalizer(observations) before the run"
            )
        policy.fit_normalizer(dataset)
