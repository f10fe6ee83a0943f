"""A :class:`~rlkit.trajectories.dataset.Dataset` as a local Minari dataset (``minari`` and
``h5py``: ``pip install rlkit[offline]``).

The directory is laid out as Minari lays out a dataset it made (``DataCollector`` /
``minari.create_dataset_from_buffers``): ``PATH/data/metadata.json`` and
``PATH/data/main_data.hdf5``, one HDF5 group per episode with ``T + 1`` observations (the first
observation of each step, then the episode's last ``next_observation``), ``T`` actions, rewards,
terminations and truncations. ``minari.MinariDataset(PATH / "data")`` reads it; rlkit's own
metadata (the spaces as JSON, the env spec, the policy's description, the seed) is one more
key, ``"rlkit"``, of ``metadata.json``. :func:`load_minari` also reads a Minari dataset that
another tool made (without that key): the spaces then come from Minari's metadata.

Minari's episodes hold one observation list, so inside an episode each ``next_observation``
must be the following row's ``observation`` (as a recorded run gives); a dataset where they
differ is refused naming the row.

``Dict`` and ``Tuple`` observations (nested too) are stored as Minari stores them (an HDF5
group per key; Minari hands a ``Tuple``'s back as a tuple) and read back as rlkit's dicts of
arrays by key (``rlkit/trajectories/dataset_structured.py``).

Example:
    >>> import gymnasium as gym, numpy as np, tempfile, pathlib
    >>> from rlkit.trajectories.dataset import Dataset
    >>> ds = Dataset.from_arrays(
    ...     observations=np.arange(3.0)[:, None], actions=[0, 1, 0], rewards=[1.0, 1.0, 1.0],
    ...     terminations=[False, True, False], truncations=[False, False, True],
    ...     next_observations=np.array([[1.0], [2.0], [9.0]]),
    ...     observation_space=gym.spaces.Box(-10, 10, (1,)), action_space=gym.spaces.Discrete(2))
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "ds"
    >>> ds.save(path, format="minari")
    >>> Dataset.load(path).next_observations[:, 0].tolist()
    [1.0, 2.0, 9.0]
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from .dataset import _FIELDS, Dataset, DatasetError, from_stored
from .dataset_structured import leaf_items
from .structured import map_leaves

__all__ = ["save_minari", "load_minari", "minari_data_path"]

_INSTALL = "pip install 'rlkit[offline]' (minari and h5py)"


def _minari() -> Any:
    try:
        import h5py  # noqa: F401 - Minari's HDF5 storage
        import minari
    except ImportError as error:
        raise ImportError(
            f"Dataset: the Minari format needs minari and h5py ({error}); {_INSTALL}, or save "
            f"the dataset as .npz"
        ) from error
    return minari


def minari_data_path(path: Path) -> Path:
    """The folder holding ``metadata.json``: ``PATH/data`` (Minari's layout) or ``PATH``."""
    return path / "data" if (path / "data" / "metadata.json").exists() else path


def _episode_buffers(dataset: Dataset) -> list[Any]:
    from minari.data_collector import EpisodeBuffer

    buffers, begin = [], 0
    for episode in dataset.episodes():
        end = begin + len(episode)
        nexts = leaf_items(episode.next_observations)
        for (path, following), (_, current) in zip(
            nexts, leaf_items(episode.observations), strict=True
        ):
            inside = following[:-1] != current[1:]
            if inside.any():
                row = begin + int(np.flatnonzero(inside.reshape(len(episode) - 1, -1).any(1))[0])
                key = "".join(f"[{k!r}]" for k in path)
                raise ValueError(
                    f"Dataset.save(format='minari'): next_observations{key}[{row}] differs from "
                    f"observations{key}[{row + 1}] inside an episode; Minari stores one "
                    f"observation sequence per episode (save this dataset as .npz)"
                )
        observations = _joined(episode.observations, episode.next_observations)
        buffers.append(
            EpisodeBuffer(
                observations=_minari_layout(observations, dataset.observation_space),
                actions=episode.actions,
                rewards=episode.rewards,
                terminations=episode.terminations,
                truncations=episode.truncations,
                infos={},
            )
        )
        begin = end
    return buffers


def _joined(observations: Any, next_observations: Any) -> Any:
    """An episode's ``T + 1`` observations: its rows, then the last ``next_observation``
    (per key for a ``Dict``/``Tuple`` observation)."""
    if isinstance(observations, dict):
        return {k: _joined(v, next_observations[k]) for k, v in observations.items()}
    return np.concatenate([observations, next_observations[-1:]])


def _minari_layout(value: Any, space: Any) -> Any:
    """rlkit's dicts of arrays as Minari takes them: a ``Tuple`` space's as a tuple."""
    import gymnasium as gym

    if isinstance(space, gym.spaces.Dict):
        return {k: _minari_layout(value[k], sub) for k, sub in space.spaces.items()}
    if isinstance(space, gym.spaces.Tuple):
        return tuple(_minari_layout(value[i], sub) for i, sub in enumerate(space.spaces))
    return value


def _rlkit_layout(value: Any) -> Any:
    """Minari's observations as rlkit holds them: dicts of arrays by key, a tuple's by
    position (nested), numpy arrays at the leaves."""
    if isinstance(value, dict):
        return {k: _rlkit_layout(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return {i: _rlkit_layout(v) for i, v in enumerate(value)}
    return np.asarray(value)


def _env_spec(dataset: Dataset) -> Any:
    """Gymnasium's ``EnvSpec`` of the dataset's env spec when it is one (Minari keeps it)."""
    if not dataset.env_spec:
        return None
    from gymnasium.envs.registration import EnvSpec

    try:
        return EnvSpec.from_json(json.dumps(dataset.env_spec))
    except Exception:  # noqa: BLE001 - not a gymnasium spec: rlkit's metadata still has it
        return None


def save_minari(dataset: Dataset, path: Path) -> None:
    """Write ``dataset`` as a Minari dataset directory at ``path``, atomically: built in a
    temporary directory beside it, then renamed into place (an existing dataset there is
    replaced only once the new one is complete)."""
    minari = _minari()
    from minari.dataset.minari_storage import MinariStorage

    buffers = _episode_buffers(dataset)  # refuses before anything is written
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Minari's notes on unset authors and permalinks
            storage = MinariStorage.new(
                tmp / "data",
                observation_space=dataset.observation_space,
                action_space=dataset.action_space,
                env_spec=_env_spec(dataset),
                data_format="hdf5",
                jpeg_encoding=False,
            )
            meta: dict[str, Any] = {
                "dataset_id": f"rlkit/{path.name}-v0",
                "minari_version": minari.__version__,
                "rlkit": dataset.metadata(),
            }
            if dataset.policy_description:
                meta["algorithm_name"] = dataset.policy_description
            storage.update_metadata(meta)
            storage.update_episodes(buffers)
        _replace_dir(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _replace_dir(new: Path, path: Path) -> None:
    if not path.exists():
        os.replace(new, path)
        return
    if not path.is_dir():
        raise FileExistsError(f"Dataset.save: {str(path)!r} exists and is not a directory")
    old = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".old", dir=path.parent))
    os.replace(path, old / "dataset")
    os.replace(new, path)
    shutil.rmtree(old, ignore_errors=True)


def load_minari(path: Path) -> Dataset:
    """The dataset in the Minari directory ``path`` (``PATH`` or ``PATH/data``)."""
    _minari()
    from minari import MinariDataset

    where = f"Dataset.load({str(path)!r})"
    data_path = minari_data_path(path)
    if not (data_path / "metadata.json").exists():
        raise DatasetError(
            f"{where}: a directory, but not a Minari dataset (no data/metadata.json in it)"
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            minari_dataset = MinariDataset(data_path)
            episodes = list(minari_dataset.iterate_episodes())
        raw_meta = json.loads((data_path / "metadata.json").read_text())
    except (OSError, ValueError, KeyError, TypeError, AssertionError) as error:
        raise DatasetError(
            f"{where}: the Minari dataset is truncated or corrupt ({type(error).__name__}: "
            f"{error})"
        ) from error
    if not episodes:
        raise DatasetError(f"{where}: the Minari dataset has no episodes")
    arrays = _flatten(episodes, where)
    meta = raw_meta.get("rlkit") or _foreign_metadata(minari_dataset, raw_meta, where)
    return from_stored(arrays, meta, where)


def _flatten(episodes: list[Any], where: str) -> dict[str, np.ndarray]:
    parts: dict[str, list[Any]] = {name: [] for name in _FIELDS}
    for episode in episodes:
        observations = _rlkit_layout(episode.observations)
        lengths = {len(a) for _, a in leaf_items(observations)}
        if lengths != {len(episode) + 1}:
            raise DatasetError(
                f"{where}: episode {episode.id} has {sorted(lengths)} observations for "
                f"{len(episode)} steps; Minari stores one more observation than steps"
            )
        parts["observations"].append(map_leaves(lambda a: a[:-1], observations))
        parts["next_observations"].append(map_leaves(lambda a: a[1:], observations))
        for name in ("actions", "rewards", "terminations", "truncations"):
            parts[name].append(np.asarray(getattr(episode, name)))
    return {name: _concatenated(values) for name, values in parts.items()}


def _concatenated(values: list[Any]) -> Any:
    """The episodes' arrays one after the other (per key for dicts of arrays)."""
    if isinstance(values[0], dict):
        return {k: _concatenated([v[k] for v in values]) for k in values[0]}
    return np.concatenate(values)


def _foreign_metadata(minari_dataset: Any, raw: dict[str, Any], where: str) -> dict[str, Any]:
    """rlkit's metadata for a Minari dataset another tool made."""
    from .dataset import FORMAT_VERSION
    from .dataset_structured import space_json

    try:
        spaces = {
            "observation_space": space_json(minari_dataset.observation_space, where),
            "action_space": space_json(minari_dataset.action_space, where),
        }
    except TypeError as error:
        raise DatasetError(str(error)) from error
    env_spec = raw.get("env_spec")
    return {
        "format": "rlkit.Dataset",
        "version": FORMAT_VERSION,
        **spaces,
        "env_spec": json.loads(env_spec) if isinstance(env_spec, str) else None,
        "policy_description": raw.get("algorithm_name"),
        "seed": None,
    }
