"""Where the actors of an actor-learner split live: in this process, stepped in lock-step
(:class:`LocalActors`, deterministic for a seed), or in Ray actors acting while the learner
learns (:class:`RayActors`). Both have the same methods: ``describe()``, ``request(i, n_steps,
weights, version)`` (actor ``i`` starts a chunk), ``collect(i)`` (the chunk it made),
``get_states()``, ``set_states(states)`` and ``close()``. An actor's failure reaches the user as
an :class:`ActorError` that names the actor and carries its traceback."""

from __future__ import annotations

import copy
from typing import Any

from ..envs.ray_backend import import_ray
from .actor import Actor

__all__ = ["ActorError", "LocalActors", "RayActors", "BACKENDS"]

BACKENDS = ("local", "ray")
_READY_TIMEOUT_S = 120.0


class ActorError(RuntimeError):
    """An actor of an ``rk.distributed.ActorLearner`` failed (its environment or its policy
    raised, or its process died); the message names the actor and holds its traceback.

    Example:
        >>> import functools, rlkit as rk
        >>> agent = rk.Agent(rk.IMPALA(rk.GymEnv("CartPole-v1")), rk.RolloutTrajectory(8, 1))
        >>> try:
        ...     rk.distributed.ActorLearner(agent, functools.partial(rk.GymEnv, "Nope-v0"), 1)
        ... except rk.distributed.ActorError as error:
        ...     print(str(error)[:48])
        ActorLearner: actor 0 of 1 failed to start: Name
    """


class LocalActors:
    """The actors in this process; ``request`` acts at once (lock-step)."""

    def __init__(self, env_fn: Any, agent_policy: Any, acting: Any, seeds: list) -> None:
        self.actors = []
        for i, seed in enumerate(seeds):
            try:
                self.actors.append(Actor(env_fn, agent_policy, acting, i, seed))
            except Exception as error:
                raise ActorError(
                    f"ActorLearner: actor {i} of {len(seeds)} failed to start: "
                    f"{type(error).__name__}: {error}"
                ) from error
        self.results: dict[int, dict] = {}

    def describe(self) -> tuple[Any, Any, str]:
        # copies, as Ray's: the learner must not share (and advance) actor 0's spaces' generators
        return copy.deepcopy(self.actors[0].describe())

    def request(self, i: int, n_steps: int, weights: Any, version: int) -> None:
        try:
            self.results[i] = self.actors[i].run(n_steps, weights, version)
        except Exception as error:
            raise ActorError(
                f"ActorLearner: actor {i} of {len(self.actors)} failed while acting: "
                f"{type(error).__name__}: {error}"
            ) from error

    def collect(self, i: int) -> dict:
        return self.results.pop(i)

    def get_states(self) -> list:
        return [actor.state_dict() for actor in self.actors]

    def set_states(self, states: list) -> None:
        for actor, state in zip(self.actors, states, strict=True):
            actor.load_state_dict(state)

    def close(self) -> None:
        self.actors = []


class RayActors:
    """The actors as Ray actors (one CPU each); ``request`` returns at once and the actor acts
    while the learner learns; ``collect`` waits for the chunk. Ray is initialised with
    ``num_cpus`` CPUs (default 2) when it is not yet."""

    def __init__(
        self, env_fn: Any, agent_policy: Any, acting: Any, seeds: list, num_cpus: int | None
    ) -> None:
        ray = import_ray()
        self.ray = ray
        remote = ray.remote(num_cpus=1, max_restarts=0)(Actor)
        self.n = len(seeds)
        self.actors = [remote.remote(env_fn, agent_policy, acting, i, s)
                       for i, s in enumerate(seeds)]  # fmt: skip
        self.pending: dict[int, Any] = {}
        for i, actor in enumerate(self.actors):
            self._get(i, actor.ping.remote(), "failed to start")

    def _get(self, i: int, ref: Any, doing: str, timeout: float | None = None) -> Any:
        ray = self.ray
        try:
            return ray.get(ref, timeout=timeout)
        except ray.exceptions.GetTimeoutError:
            self.close()
            raise ActorError(
                f"ActorLearner: actor {i} of {self.n} did not answer within {timeout:.0f} s "
                f"({doing})"
            ) from None
        except ray.exceptions.RayError as error:
            self.close()
            raise ActorError(
                f"ActorLearner: actor {i} of {self.n} {doing}; the run stops (actors are not "
                f"replaced: resume from a checkpoint). Ray says:\n{error}"
            ) from None

    def describe(self) -> tuple[Any, Any, str]:
        return self._get(0, self.actors[0].describe.remote(), "failed to start")

    def request(self, i: int, n_steps: int, weights: Any, version: int) -> None:
        self.pending[i] = self.actors[i].run.remote(n_steps, weights, version)

    def collect(self, i: int) -> dict:
        return self._get(i, self.pending.pop(i), "failed while acting")

    def get_states(self) -> list:
        return [self._get(i, a.state_dict.remote(), "failed to save its state")
                for i, a in enumerate(self.actors)]  # fmt: skip

    def set_states(self, states: list) -> None:
        refs = [a.load_state_dict.remote(s) for a, s in zip(self.actors, states, strict=True)]
        for i, ref in enumerate(refs):
            self._get(i, ref, "failed to load its state")

    def close(self) -> None:
        actors, self.actors = self.actors, []
        self.pending = {}
        for actor in actors:
            self.ray.kill(actor)
