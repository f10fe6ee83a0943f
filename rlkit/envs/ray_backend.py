"""The Ray backend of ``VectorGymEnv``: groups of sub-envs in Ray actors.

Each actor holds one group (a ``gymnasium.vector.SyncVectorEnv`` of consecutive sub-envs, put in
rlkit's contract inside the actor); a step sends each actor its slice of the actions and gathers
the results in sub-env order, so results equal the other backends' for the same seed.

Ray is an optional dependency (``pip install ray``). ``ray.init`` is called only when Ray is not
initialised yet, with ``num_cpus`` CPUs (default 2); an initialised Ray (a cluster the user
connected to) is used as it is. Actors ask Ray for one CPU each, so ``n_actors`` defaults to
``min(n_envs, CPUs of the cluster)``: more actors than CPUs would wait for resources forever.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.checks import optional_positive_int
from .vector_group import _Group

__all__ = ["RayGroups", "import_ray"]

_READY_TIMEOUT_S = 120.0


def import_ray() -> Any:
    """``import ray``, or an ImportError that names the package to install."""
    try:
        import ray
    except ImportError as error:
        raise ImportError(
            "VectorGymEnv(backend='ray') needs Ray, which is not installed: pip install ray"
        ) from error
    return ray


class RayGroups:
    """The sub-envs of one ``VectorGymEnv`` spread over ``n_actors`` Ray actors (same methods
    as the in-process group: ``spaces``, ``reset``, ``step``, ``get_states``, ``set_states``,
    ``close``)."""

    def __init__(
        self, factories: list, mode: str, n_actors: int | None, num_cpus: int | None
    ) -> None:
        ray = import_ray()
        optional_positive_int("VectorGymEnv", "n_actors", n_actors)
        optional_positive_int("VectorGymEnv", "num_cpus", num_cpus)
        if not ray.is_initialized():
            ray.init(
                num_cpus=2 if num_cpus is None else num_cpus,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
            )
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        n = len(factories)
        self.n_actors = min(n, cpus) if n_actors is None else min(n, n_actors)
        self.ray = ray
        self.bounds = np.linspace(0, n, self.n_actors + 1).round().astype(int)
        remote = ray.remote(num_cpus=1)(_Group)
        self.actors = [
            remote.remote(factories[a:b], "sync", mode)
            for a, b in zip(self.bounds[:-1], self.bounds[1:], strict=True)
        ]
        try:
            ray.get([actor.ready.remote() for actor in self.actors], timeout=_READY_TIMEOUT_S)
        except Exception:
            self.close(terminate=True)
            raise

    def _all(self, method: str, *per_actor: list) -> list:
        refs = [
            getattr(actor, method).remote(*(args[i] for args in per_actor))
            for i, actor in enumerate(self.actors)
        ]
        return self.ray.get(refs)

    def _split(self, values: Any) -> list:
        return [values[a:b] for a, b in zip(self.bounds[:-1], self.bounds[1:], strict=True)]

    def spaces(self) -> tuple:
        return self.ray.get(self.actors[0].spaces.remote())

    def reset(self, seeds: list) -> tuple:
        results = self._all("reset", self._split(list(seeds)))
        states = np.concatenate([r[0] for r in results])
        return states, _masks([r[1] for r in results])

    def step(self, actions: Any) -> tuple:
        results = self._all("step", self._split(actions))
        parts = [np.concatenate([r[k] for r in results]) for k in range(5)]
        masks = (_masks([r[k] for r in results]) for k in (5, 6))
        return (*parts, *masks, parts[2] | parts[3])

    def get_states(self) -> list:
        return [s for states in self._all("get_states") for s in states]

    def set_states(self, states: list) -> None:
        self._all("set_states", self._split(list(states)))

    def close(self, terminate: bool = False) -> None:
        actors, self.actors = self.actors, []
        if not terminate and actors:
            try:
                self.ray.get([a.close.remote() for a in actors], timeout=_READY_TIMEOUT_S)
            except Exception:  # noqa: BLE001 - killed below anyway
                pass
        for actor in actors:
            self.ray.kill(actor)


def _masks(masks: list) -> np.ndarray | None:
    return None if any(m is None for m in masks) else np.concatenate(masks)
