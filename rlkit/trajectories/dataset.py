"""``Dataset``: a fixed set of transitions for offline RL, one row per transition in episode order.

The fields are those of a Minari dataset, flattened to transitions: ``observations``,
``actions``, ``rewards`` (float32), ``terminations``, ``truncations`` (bool) and
``next_observations`` (the real next observation: the final one at an episode end, never the
first observation of the next episode), with the observation and action spaces, the env spec,
the collecting policy's description and the seed. An episode ends at a transition that
terminated or was truncated (and at the end of the data). Everything is checked when the
dataset is made, so a bad dataset is refused before training, naming the field and the index.

Arrays are stored as a replay buffer stores them (``space_layout`` in
``rlkit/trajectories/circular.py``): ``Box`` observations and actions as float32, ``Discrete``
ones as int64. Observations of a ``Dict`` or ``Tuple`` space are dicts of arrays by key (a
``Tuple``'s by position; nested spaces nest), each key laid out as replay buffers lay it out
(``rlkit/trajectories/dataset_structured.py``); an observation whose keys differ from the
space's is refused naming both. :meth:`Dataset.sample` returns the same dict of numpy arrays
as the replay samplers (``rlkit/trajectories/samplers.py``), which the off-policy learners
turn into their ``rk.Batch``: the ``Batch`` class lives in the learners layer, above this one.

Files: ``save(path)`` writes a ``.npz`` (always available; no pickles, the spaces and the
metadata as JSON) or, with ``format="minari"``, a local Minari dataset directory
(``rlkit/trajectories/minari_format.py``; needs ``pip install rlkit[offline]``). ``load``
reads either; a truncated or corrupt file is refused with :class:`DatasetError`.

Example:
    >>> import gymnasium as gym, numpy as np
    >>> ds = Dataset.from_arrays(
    ...     observations=np.arange(4.0)[:, None], actions=np.array([0, 1, 1, 0]),
    ...     rewards=np.ones(4), terminations=np.array([False, True, False, False]),
    ...     truncations=np.array([False, False, False, True]),
    ...     next_observations=np.arange(1.0, 5.0)[:, None],
    ...     observation_space=gym.spaces.Box(-10, 10, (1,)), action_space=gym.spaces.Discrete(2))
    >>> len(ds), ds.episode_returns().tolist(), [len(e) for e in ds.episodes()]
    (4, [2.0, 2.0], [2, 2])
    >>> batch = ds.sample(3, np.random.default_rng(0))
    >>> sorted(batch), batch["terminal"].dtype
    (['action', 'indices', 'next_state', 'reward', 'state', 'terminal'], dtype('float32'))
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from .circular import space_layout
from .dataset_structured import (
    count_leaves,
    from_leaf_items,
    leaf_items,
    space_from_json,
    space_json,
    structured_rows,
)
from .structured import is_structured_space, leading_length, map_leaves

__all__ = ["Dataset", "DatasetError", "EpisodeView"]

#: the newest format this rlkit reads: 2 (observations of a Dict/Tuple space by key) is written
#: only for such datasets, so a dataset of Box observations stays readable by rlkit of version 1
FORMAT_VERSION = 2
_FIELDS = (
    "observations",
    "actions",
    "rewards",
    "terminations",
    "truncations",
    "next_observations",
)


class DatasetError(ValueError):
    """A dataset file that cannot be read (missing field, truncated, corrupt, from a newer
    rlkit): the message names the file and the reason.

    Example:
        >>> issubclass(DatasetError, ValueError)
        True
    """


@dataclass(frozen=True)
class EpisodeView:
    """One episode's rows of a :class:`Dataset` (views of its arrays, not copies).

    Example:
        >>> import numpy as np
        >>> e = EpisodeView(*(np.zeros(2),) * 2, np.ones(2), *(np.zeros(2, bool),) * 2, np.zeros(2))
        >>> len(e), e.total_reward
        (2, 2.0)
    """

    observations: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    terminations: np.ndarray
    truncations: np.ndarray
    next_observations: np.ndarray

    def __len__(self) -> int:
        return len(self.rewards)

    @property
    def total_reward(self) -> float:
        """The undiscounted return of the episode."""
        return float(self.rewards.sum(dtype=np.float64))


class Dataset:
    """Transitions for offline RL (see the module docstring): made with :meth:`from_arrays`
    (or the constructor, with the same keyword arguments), read with :meth:`load`.

    Example:
        >>> import gymnasium as gym, numpy as np
        >>> ds = Dataset.from_arrays(
        ...     observations=np.zeros((2, 3)), actions=np.zeros((2, 1)), rewards=[1.0, 0.5],
        ...     terminations=[False, True], truncations=[False, False],
        ...     next_observations=np.ones((2, 3)),
        ...     observation_space=gym.spaces.Box(-1, 1, (3,)),
        ...     action_space=gym.spaces.Box(-1, 1, (1,)), seed=0)
        >>> len(ds), ds.rewards.dtype, ds.episode_returns().tolist()
        (2, dtype('float32'), [1.5])
    """

    def __init__(
        self,
        *,
        observations: Any,
        actions: Any,
        rewards: Any,
        terminations: Any,
        truncations: Any,
        next_observations: Any,
        observation_space: gym.Space,
        action_space: gym.Space,
        env_spec: dict[str, Any] | None = None,
        policy_description: str | None = None,
        seed: int | None = None,
    ) -> None:
        _check_space("observation_space", observation_space)
        _check_space("action_space", action_space)
        if is_structured_space(action_space):
            raise TypeError(
                f"Dataset: the action space must be Box, Discrete, MultiDiscrete or "
                f"MultiBinary, got {action_space}"
            )
        self.observation_space, self.action_space = observation_space, action_space
        act_shape, act_dtype = space_layout(action_space)
        raw = {
            "observations": observations,
            "actions": actions,
            "rewards": rewards,
            "terminations": terminations,
            "truncations": truncations,
            "next_observations": next_observations,
        }
        self.observations = _observations("observations", observations, observation_space)
        self.next_observations = _observations(
            "next_observations", next_observations, observation_space
        )
        raw["observations"], raw["next_observations"] = self.observations, self.next_observations
        n = _check_lengths(raw)
        self.actions = _rows("actions", actions, act_shape, act_dtype)
        self.rewards = _rows("rewards", rewards, (), np.float32)
        self.terminations = _flags("terminations", terminations)
        self.truncations = _flags("truncations", truncations)
        for name in ("observations", "next_observations", "rewards", "actions"):
            for path, array in leaf_items(getattr(self, name)):
                _check_finite(name + "".join(f"[{k!r}]" for k in path), array)
        _check_actions(self.actions, action_space)
        self.env_spec = _check_meta("env_spec", env_spec, dict)
        self.policy_description = _check_meta("policy_description", policy_description, str)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer)):
            raise TypeError(f"Dataset: seed must be an int or None, got {seed!r}")
        self.seed = None if seed is None else int(seed)
        self._n = n

    @classmethod
    def from_arrays(
        cls,
        *,
        observations: Any,
        actions: Any,
        rewards: Any,
        terminations: Any,
        truncations: Any,
        next_observations: Any,
        observation_space: gym.Space,
        action_space: gym.Space,
        env_spec: dict[str, Any] | None = None,
        policy_description: str | None = None,
        seed: int | None = None,
    ) -> Dataset:
        """A dataset of these arrays (one row per transition, in episode order), checked: the
        same as the constructor."""
        return cls(
            observations=observations,
            actions=actions,
            rewards=rewards,
            terminations=terminations,
            truncations=truncations,
            next_observations=next_observations,
            observation_space=observation_space,
            action_space=action_space,
            env_spec=env_spec,
            policy_description=policy_description,
            seed=seed,
        )

    # ---- reading ----
    def __len__(self) -> int:
        return self._n

    def __repr__(self) -> str:
        return (
            f"Dataset({self._n} transitions, {self.n_episodes} episodes, observations "
            f"{self.observation_space}, actions {self.action_space})"
        )

    @property
    def n_episodes(self) -> int:
        """Episodes: the transitions that end one, plus an unfinished one at the end."""
        return len(self._bounds())

    def _bounds(self) -> list[tuple[int, int]]:
        ends = np.flatnonzero(self.terminations | self.truncations) + 1
        if len(ends) == 0 or ends[-1] != self._n:
            ends = np.append(ends, self._n)
        starts = np.concatenate([[0], ends[:-1]])
        return [(int(a), int(b)) for a, b in zip(starts, ends, strict=True)]

    def episodes(self) -> Iterator[EpisodeView]:
        """The episodes in order, as :class:`EpisodeView` (views, not copies)."""
        for begin, end in self._bounds():
            yield EpisodeView(*(_rows_of(getattr(self, f), begin, end) for f in _FIELDS))

    def episode_returns(self) -> np.ndarray:
        """The undiscounted return of each episode (float64)."""
        return np.array([e.total_reward for e in self.episodes()], dtype=np.float64)

    def sample(self, batch_size: int, generator: np.random.Generator) -> dict[str, np.ndarray]:
        """``batch_size`` transitions drawn uniformly with replacement by
        ``generator.integers(0, len(self), batch_size)``: ``state``, ``action``, ``reward``,
        ``terminal`` (the terminations as float32), ``next_state`` and ``indices`` (the rows),
        numpy arrays as a replay sampler returns them."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, int | np.integer):
            raise TypeError(f"Dataset.sample: batch_size must be an int, got {batch_size!r}")
        if not 0 < batch_size <= self._n:
            raise ValueError(
                f"Dataset.sample: batch_size must be between 1 and the dataset's {self._n} "
                f"transitions, got {batch_size}"
            )
        indices = generator.integers(0, self._n, batch_size)
        return {
            "state": map_leaves(lambda a: a[indices], self.observations),  # a dict: by key
            "action": self.actions[indices],
            "reward": self.rewards[indices],
            "terminal": self.terminations[indices].astype(np.float32),
            "next_state": map_leaves(lambda a: a[indices], self.next_observations),
            "indices": indices,
        }

    def metadata(self) -> dict[str, Any]:
        """The JSON-ready description stored with the arrays (spaces, env spec, policy, seed)."""
        return {
            "format": "rlkit.Dataset",
            "version": 2 if is_structured_space(self.observation_space) else 1,
            "observation_space": space_json(self.observation_space, "Dataset"),
            "action_space": space_json(self.action_space, "Dataset"),
            "env_spec": self.env_spec,
            "policy_description": self.policy_description,
            "seed": self.seed,
        }

    # ---- files ----
    def save(self, path: str | os.PathLike, format: str = "npz") -> None:
        """Write the dataset to ``path`` atomically (a temporary file or directory, then a
        rename): ``format="npz"`` (a ``.npz`` file, the default) or ``"minari"`` (a local Minari
        dataset directory; needs ``minari`` and ``h5py``)."""
        if format == "npz":
            _save_npz(self, Path(path))
        elif format == "minari":
            from .minari_format import save_minari

            save_minari(self, Path(path))
        else:
            raise ValueError(f"Dataset.save: format must be 'npz' or 'minari', got {format!r}")

    @classmethod
    def load(cls, path: str | os.PathLike) -> Dataset:
        """The dataset at ``path``: a ``.npz`` file or a Minari dataset directory. A missing
        path is a ``FileNotFoundError``; an unreadable one a :class:`DatasetError`."""
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"Dataset.load: no dataset at {str(path)!r}")
        if path.is_dir():
            from .minari_format import load_minari

            return load_minari(path)
        return _load_npz(path)


def _rows_of(value: Any, begin: int, end: int) -> Any:
    """Rows ``begin:end`` of an array (views), or of every array of nested dicts."""
    return map_leaves(lambda a: a[begin:end], value)


# ---- checks ----
def _show(value: Any) -> str:
    """A row or number of an array as plain Python (``[0.5, nan]``, ``2``), for messages."""
    return repr(value.tolist()) if isinstance(value, np.ndarray | np.generic) else repr(value)


def _check_space(name: str, space: Any) -> None:
    if not isinstance(space, gym.spaces.Space):
        raise TypeError(f"Dataset: {name} must be a gymnasium space, got {space!r}")
    space_json(space, f"Dataset {name}")  # refuses what cannot be stored


def _observations(name: str, value: Any, space: gym.Space) -> Any:
    """Observations as stored: one array, or nested dicts of arrays for a ``Dict``/``Tuple``
    space (``rlkit/trajectories/dataset_structured.py``), checked against ``space``."""
    if is_structured_space(space):
        rows = structured_rows(name, value, space)
        lengths = {path: len(a) for path, a in leaf_items(rows)}
        if len(set(lengths.values())) > 1:
            raise ValueError(
                f"Dataset: the keys of {name} have different numbers of rows "
                f"({ {'/'.join(map(str, p)): n for p, n in lengths.items()} }); every key needs "
                f"one row per transition"
            )
        return rows
    shape, dtype = space_layout(space)
    return _rows(name, value, shape, dtype)


def _check_lengths(raw: dict[str, Any]) -> int:
    lengths = {}
    for name, value in raw.items():
        try:
            lengths[name] = leading_length(value) if isinstance(value, dict) else len(value)
        except TypeError:
            raise TypeError(
                f"Dataset: {name} must be an array with one row per transition, got {value!r:.80}"
            ) from None
    n = lengths["observations"]
    for name, length in lengths.items():
        if length != n:
            raise ValueError(
                f"Dataset: {name} has {length} rows but observations has {n}; every field needs "
                f"one row per transition"
            )
    if n == 0:
        raise ValueError("Dataset: the dataset is empty (0 transitions); it needs at least one")
    return n


def _rows(name: str, value: Any, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"Dataset: {name} must hold numbers, got dtype {array.dtype}")
    if array.shape[1:] != tuple(shape):
        raise ValueError(
            f"Dataset: {name} has rows of shape {array.shape[1:]}, but its space has shape "
            f"{tuple(shape)}"
        )
    if np.dtype(dtype).kind in "iu" and array.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(array) | (array != np.round(array)))
        if len(bad):
            raise ValueError(
                f"Dataset: {name}[{bad[0]}] = {_show(array[bad[0]])} is not a whole "
                f"number, but its space is discrete"
            )
    return np.ascontiguousarray(array, dtype=dtype)


def _flags(name: str, value: Any) -> np.ndarray:
    array = np.asarray(value)
    if array.ndim != 1:
        raise ValueError(
            f"Dataset: {name} must be 1-D (one flag per transition), got shape {array.shape}"
        )
    if array.dtype != bool:
        bad = np.flatnonzero((array != 0) & (array != 1)) if array.dtype.kind in "biuf" else [0]
        if len(bad):
            raise ValueError(f"Dataset: {name}[{bad[0]}] = {_show(array[bad[0]])} is not a boolean")
    return np.ascontiguousarray(array, dtype=bool)


def _check_finite(name: str, array: np.ndarray) -> None:
    if array.dtype.kind != "f":
        return
    finite = np.isfinite(array).reshape(len(array), -1).all(axis=1)
    if not finite.all():
        index = int(np.flatnonzero(~finite)[0])
        raise ValueError(
            f"Dataset: {name}[{index}] = {_show(array[index])} is not finite (nan or "
            f"inf); a dataset holds finite numbers only"
        )


def _check_actions(actions: np.ndarray, space: gym.Space) -> None:
    if isinstance(space, gym.spaces.Box):
        low, high = space.low.astype(np.float64), space.high.astype(np.float64)
        outside = ((actions < low) | (actions > high)).reshape(len(actions), -1).any(axis=1)
    elif isinstance(space, gym.spaces.Discrete):
        outside = (actions < space.start) | (actions >= space.start + space.n)
    elif isinstance(space, gym.spaces.MultiDiscrete):
        shifted = actions - space.start
        outside = ((shifted < 0) | (shifted >= space.nvec)).reshape(len(actions), -1).any(axis=1)
    else:  # MultiBinary
        outside = ((actions != 0) & (actions != 1)).reshape(len(actions), -1).any(axis=1)
    if outside.any():
        index = int(np.flatnonzero(outside)[0])
        raise ValueError(
            f"Dataset: actions[{index}] = {_show(actions[index])} is outside the action space "
            f"{space}"
        )


def _check_meta(name: str, value: Any, kind: type) -> Any:
    if value is None:
        return None
    if not isinstance(value, kind):
        raise TypeError(f"Dataset: {name} must be a {kind.__name__} or None, got {value!r:.80}")
    if kind is dict:
        try:
            json.dumps(value)
        except (TypeError, ValueError) as error:
            raise TypeError(f"Dataset: env_spec must be JSON-serialisable: {error}") from error
    return value


# ---- .npz ----
def _save_npz(dataset: Dataset, path: Path) -> None:
    """Write to a temporary file beside ``path``, then rename it over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {name: getattr(dataset, name) for name in _FIELDS}
    for name in ("observations", "next_observations"):
        if isinstance(arrays[name], dict):  # by key: name/0, name/1, ... in the space's order
            leaves = arrays.pop(name)
            arrays.update({f"{name}/{i}": a for i, (_, a) in enumerate(leaf_items(leaves))})
    arrays["metadata"] = np.array(json.dumps(dataset.metadata()))
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as file:
            np.savez(file, **arrays)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _load_npz(path: Path) -> Dataset:
    where = f"Dataset.load({str(path)!r})"
    try:
        with np.load(path, allow_pickle=False) as data:
            if "metadata" not in data.files:
                raise DatasetError(f"{where}: not an rlkit dataset file: no ['metadata'] in it")
            meta = json.loads(str(data["metadata"]))
            arrays = _npz_arrays(data, _stored_observation_space(meta, where), where)
    except DatasetError:
        raise
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError) as error:
        raise DatasetError(
            f"{where}: the file is truncated or corrupt, or not a .npz dataset ({error})"
        ) from error
    return from_stored(arrays, meta, where)


def _stored_observation_space(meta: Any, where: str) -> Any:
    """The observation space a file's metadata names (None when it names none: the metadata
    check of :func:`from_stored` then refuses the file)."""
    if not isinstance(meta, dict) or "observation_space" not in meta:
        return None
    return space_from_json(meta["observation_space"], f"{where} observation_space", DatasetError)


def _npz_arrays(data: Any, space: Any, where: str) -> dict[str, Any]:
    """The fields of an ``.npz`` dataset; a ``Dict``/``Tuple`` space's observations from its
    ``observations/0``, ``observations/1``, ... arrays (the space's key order)."""
    structured = space is not None and is_structured_space(space)
    arrays: dict[str, Any] = {}
    missing = []
    for name in _FIELDS:
        if structured and name in ("observations", "next_observations"):
            keys = [f"{name}/{i}" for i in range(count_leaves(space))]
            missing += [k for k in keys if k not in data.files]
            if all(k in data.files for k in keys):
                arrays[name] = from_leaf_items(space, [data[k] for k in keys])
        elif name in data.files:
            arrays[name] = data[name]
        else:
            missing.append(name)
    if missing:
        raise DatasetError(f"{where}: not an rlkit dataset file: no {missing} in it")
    return arrays


def from_stored(arrays: dict[str, np.ndarray], meta: Any, where: str) -> Dataset:
    """A :class:`Dataset` from stored arrays and :meth:`Dataset.metadata`, errors naming
    ``where`` (the npz and Minari readers share it)."""
    if not isinstance(meta, dict) or meta.get("format") != "rlkit.Dataset":
        raise DatasetError(f"{where}: the metadata does not describe an rlkit dataset")
    if not isinstance(meta.get("version"), int) or meta["version"] > FORMAT_VERSION:
        raise DatasetError(
            f"{where}: dataset format version {meta.get('version')!r}; this rlkit reads "
            f"versions up to {FORMAT_VERSION} (upgrade rlkit)"
        )
    spaces = {
        key: space_from_json(meta.get(key), f"{where} {key}", DatasetError)
        for key in ("observation_space", "action_space")
    }
    try:
        return Dataset(
            **arrays,
            **spaces,
            env_spec=meta.get("env_spec"),
            policy_description=meta.get("policy_description"),
            seed=meta.get("seed"),
        )
    except (ValueError, TypeError) as error:
        raise DatasetError(f"{where}: {error}") from error
