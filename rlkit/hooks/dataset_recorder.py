"""``DatasetRecorder``: a hook that records a run, single env or vector env, into an
``rk.Dataset`` (``rlkit/trajectories/dataset.py``) written at PostExperiment.

What it keeps of every step: the observation acted on and the action (PreAct); the reward,
``is_terminated`` and ``is_truncated`` apart, and the next observation (PostAct): ``env.state``
of a single env, ``env.final_state`` of a vector env (the real final observation where a
sub-env's episode ended, never the reset observation after it), so no transition crosses a
reset, as the replay buffers record (``rlkit/trajectories/circular.py``). On an
``rk.VecNormalize`` env it records what the wrapped env gave, not what the learner sees: the
raw observations (``original_state``, ``original_final_state``), rewards (``original_reward``)
and observation space (``original_state_space``), as a replay on it does
(docs/how-to/normalization.md). The dataset holds
each episode's rows together: episodes in the order they started (sub-env order within a step).
An episode still running when the run stops, or abandoned by a reset, ends with its last
transition marked truncated (it was cut, not terminated: a learner bootstraps there).

The file is written atomically (``Dataset.save``: a temporary file, then a rename), so a crash
while writing leaves no half dataset; a run that raises writes nothing (the old file, if any,
stays) and the transitions stay available as :meth:`DatasetRecorder.dataset`. With the dataset
go the env's spec (a gymnasium ``EnvSpec`` as a dict, when the env has one), the policy's
description (its ``repr``, or its type name when the repr is long) and the seed given here.

Example:
    >>> import rlkit as rk, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "random.npz"
    >>> env = rk.VectorGymEnv("CartPole-v1", 2, seed=0)
    >>> _ = rk.run(rk.RandomPolicy(seed=0), env, rk.StopAfterNSteps(100),
    ...            rk.DatasetRecorder(path, seed=0))
    >>> ds = rk.Dataset.load(path)
    >>> len(ds), ds.env_spec["id"], ds.seed, ds.policy_description
    (100, 'CartPole-v1', 0, 'RandomPolicy()')
    >>> env.close()
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ..core.interfaces import AbstractHook, AbstractVectorEnv
from ..trajectories.dataset import Dataset
from ..trajectories.dataset_structured import space_json
from ..trajectories.structured import is_structured_space, map_leaves, structured

__all__ = ["DatasetRecorder"]

_TRACES = ("obs", "action", "reward", "terminated", "truncated", "next_obs")
_MAKE_FIELDS = ("max_episode_steps", "disable_env_checker")  # gym.make's, kept in the EnvSpec
_LONG_REPR = 200  # a policy description longer than this is replaced by the type's name


class DatasetRecorder(AbstractHook):
    """Record the run's transitions and write them as a dataset to ``path`` at PostExperiment
    (see the module docstring).

    Args:
        path: the file (``format="npz"``) or directory (``format="minari"``) to write.
        format: ``"npz"`` (default) or ``"minari"`` (needs ``pip install 'rlkit[offline]'``).
        seed: the seed of the run, kept with the dataset (None: not known).
        policy_description: how to describe the collecting policy (default: its repr).

    Example:
        >>> import rlkit as rk, tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "d.npz"
        >>> recorder = rk.DatasetRecorder(path, seed=1)
        >>> _ = rk.run(rk.RandomPolicy(seed=1), rk.GymEnv("CartPole-v1", seed=1),
        ...            rk.StopAfterNEpisodes(3), recorder)
        >>> ds = rk.Dataset.load(path)
        >>> ds.n_episodes, int(ds.terminations.sum()), len(ds) == recorder.n_transitions
        (3, 3, True)
    """

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        format: str = "npz",
        seed: int | None = None,
        policy_description: str | None = None,
    ) -> None:
        if format not in ("npz", "minari"):
            raise ValueError(f"DatasetRecorder: format must be 'npz' or 'minari', got {format!r}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise TypeError(f"DatasetRecorder: seed must be an int or None, got {seed!r}")
        self.path = Path(path)
        self.format = format
        self.seed = seed
        self.policy_description = policy_description
        self.env_spec: dict[str, Any] | None = None
        self.spaces: tuple[Any, Any] | None = None
        self._traces: dict[str, list[np.ndarray]] = {name: [] for name in _TRACES}

    def __repr__(self) -> str:
        return f"DatasetRecorder({str(self.path)!r}, format={self.format!r})"

    @property
    def n_transitions(self) -> int:
        """Transitions recorded so far (all sub-envs)."""
        rewards = self._traces["reward"]
        return len(rewards) * (rewards[0].shape[0] if rewards else 0)

    # ---- stages ----
    def attach(self, policy: Any, env: Any, stop_condition: Any, hook: Any) -> None:
        """Refuse, before the first step, an env whose spaces a dataset cannot hold."""
        for what, space in (("observation", _raw_space(env)), ("action", env.action_space)):
            space_json(space, f"{self!r}: the env's {what} space")

    def pre_experiment(self, policy: Any, env: Any) -> None:
        self.spaces = (_raw_space(env), env.action_space)
        self.env_spec = env_spec_of(env)
        if self.policy_description is None:
            self.policy_description = describe(policy)
        if isinstance(env, AbstractVectorEnv) and getattr(env, "needs_reset", False):
            self._cut()  # a run after an unfinished one resets every sub-env

    def pre_episode(self, policy: Any, env: Any) -> None:
        self._cut()  # after a reset, an episode left unfinished was cut

    vector_pre_episode = None  # the vector loop has no episode stages

    def pre_act(self, policy: Any, env: Any, action: Any) -> None:
        vector = isinstance(env, AbstractVectorEnv)
        state = getattr(env, "original_state", None) if vector else None  # before VecNormalize
        state = env.state if state is None else state
        self._traces["obs"].append(self._observations(state, vector))
        self._traces["action"].append(_rows(action, vector))

    def post_act(self, policy: Any, env: Any) -> None:
        vector = isinstance(env, AbstractVectorEnv)
        traces = self._traces
        reward = getattr(env, "original_reward", env.reward)  # before VecNormalize
        traces["reward"].append(_rows(reward, vector, np.float64))
        traces["terminated"].append(_rows(env.is_terminated, vector, bool))
        traces["truncated"].append(_rows(env.is_truncated, vector, bool))
        if vector:
            final = getattr(env, "original_final_state", None)  # before VecNormalize
            next_state = env.final_state if final is None else final
        else:
            next_state = env.state
        traces["next_obs"].append(self._observations(next_state, vector))

    def _observations(self, state: Any, vector: bool) -> Any:
        """A step's observations as ``(n_envs, ...)`` arrays; a ``Dict``/``Tuple``
        observation's as dicts of them by key (checked against the space: other keys are
        refused naming both)."""
        space = self.spaces[0] if self.spaces is not None else None
        if space is None or not is_structured_space(space):
            return _rows(state, vector)
        rows = structured(repr(self), space, state)
        return map_leaves(lambda a: _rows(a, vector), rows)

    def post_experiment(self, policy: Any, env: Any) -> None:
        if sys.exc_info()[0] is not None:  # the run raised: write nothing
            warnings.warn(
                f"{self!r}: the run raised, so no dataset was written to {str(self.path)!r}; "
                f"the recorded transitions are in recorder.dataset()",
                RuntimeWarning,
                stacklevel=2,
            )
            return
        if self.n_transitions == 0:
            raise ValueError(
                f"{self!r}: the run recorded no transitions; nothing was written to "
                f"{str(self.path)!r}"
            )
        self.dataset().save(self.path, format=self.format)

    # ---- the dataset ----
    def dataset(self) -> Dataset:
        """The transitions recorded so far as a :class:`~rlkit.Dataset`, each episode's rows
        together, an unfinished episode's last transition marked truncated."""
        if self.spaces is None or self.n_transitions == 0:
            raise ValueError(f"{self!r}: no transitions recorded yet")
        n_steps = len(self._traces["reward"])
        arrays = {name: _stack(trace[:n_steps]) for name, trace in self._traces.items()}
        truncated = arrays["truncated"].copy()
        truncated[-1] |= ~arrays["terminated"][-1]  # cut what is still running
        order = _episode_order(arrays["terminated"] | truncated)

        def flat(name: str, source: np.ndarray | None = None) -> np.ndarray:
            values = arrays[name] if source is None else source
            return map_leaves(lambda v: v.reshape(-1, *v.shape[2:])[order], values)

        return Dataset(
            observations=flat("obs"),
            actions=flat("action"),
            rewards=flat("reward"),
            terminations=flat("terminated"),
            truncations=flat("truncated", truncated),
            next_observations=flat("next_obs"),
            observation_space=self.spaces[0],
            action_space=self.spaces[1],
            env_spec=self.env_spec,
            policy_description=self.policy_description,
            seed=self.seed,
        )

    def _cut(self) -> None:
        """Mark the last recorded step's unfinished episodes truncated."""
        traces = self._traces
        if traces["truncated"]:
            traces["truncated"][-1] = traces["truncated"][-1] | ~traces["terminated"][-1]

    # ---- checkpoints: the transitions so far ----
    def state_dict(self) -> dict[str, Any]:
        """The recorded transitions (arrays, one row per step) and the run's description."""
        n_steps = len(self._traces["reward"])
        return {
            "traces": {k: _stack(v[:n_steps]) for k, v in self._traces.items() if n_steps},
            "policy_description": self.policy_description,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved."""
        traces = state["traces"]
        self._traces = {name: _unstack(traces[name]) if traces else [] for name in _TRACES}
        self.policy_description = state["policy_description"]


def _rows(value: Any, vector: bool, dtype: Any = None) -> np.ndarray:
    """A step's values as ``(n_envs, ...)`` (a single env's with one row), copied."""
    array = np.array(value, dtype=dtype)
    return array if vector else array[None]


def _raw_space(env: Any) -> Any:
    """The observation space of what the env's wrapped env gives: ``original_state_space``
    (``rk.VecNormalize``'s, whose own ``state_space`` is the normalised one), else
    ``state_space``."""
    space = getattr(env, "original_state_space", None)
    return env.state_space if space is None else space


def _stack(trace: list[Any]) -> Any:
    """The steps' arrays stacked, ``(n_steps, n_envs, ...)`` (per key for dicts of arrays)."""
    if trace and isinstance(trace[0], dict):
        return {k: _stack([step[k] for step in trace]) for k in trace[0]}
    return np.stack(trace)


def _unstack(value: Any) -> list[Any]:
    """:func:`_stack` undone: one entry per step."""
    if isinstance(value, dict):
        parts = {k: _unstack(v) for k, v in value.items()}
        n = len(next(iter(parts.values()))) if parts else 0
        return [{k: v[i] for k, v in parts.items()} for i in range(n)]
    return list(value)


def _episode_order(ends: np.ndarray) -> np.ndarray:
    """Flat ``step * n_envs + env`` indices of every transition, each episode's rows together,
    episodes in the order they started (``ends``: ``(n_steps, n_envs)``, True where an episode
    ends; the last step ends every episode)."""
    n_steps, n_envs = ends.shape
    episodes = []
    for env in range(n_envs):
        stops = np.flatnonzero(ends[:, env])
        starts = np.concatenate([[0], stops[:-1] + 1])
        episodes += [(int(a), env, int(b)) for a, b in zip(starts, stops, strict=True)]
    episodes.sort()
    return np.concatenate([np.arange(a, b + 1) * n_envs + env for a, env, b in episodes])


def env_spec_of(env: Any) -> dict[str, Any] | None:
    """The gymnasium ``EnvSpec`` of an rlkit env as a JSON dict: a ``GymEnv``'s wrapped env's
    spec, a vector env's id (``env.id``) and keyword arguments; None when there is none."""
    spec = getattr(getattr(env, "env", None), "spec", None)
    env_id = getattr(env, "id", None)
    if spec is None and isinstance(env_id, str):
        import gymnasium as gym

        try:
            spec = gym.spec(env_id)
        except gym.error.Error:
            return {"id": env_id}
        kwargs = dict(getattr(env, "env_kwargs", None) or {})
        fields = {k: kwargs.pop(k) for k in _MAKE_FIELDS if k in kwargs}  # gym.make's own
        spec = dataclasses.replace(spec, kwargs={**spec.kwargs, **kwargs}, **fields)
    if spec is None:
        return None
    try:
        return json.loads(spec.to_json())
    except (ValueError, TypeError, AssertionError):  # e.g. a callable entry point or kwargs
        return {"id": spec.id}


def describe(policy: Any) -> str:
    """The policy's repr, or its type's name when the repr is long or the default one."""
    text = repr(policy)
    if len(text) > _LONG_REPR or text.startswith("<"):
        return type(policy).__name__
    return text
