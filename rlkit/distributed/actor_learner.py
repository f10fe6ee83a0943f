"""``rk.distributed.ActorLearner``: the actor-learner split (TensorForce 0.3's worker and global
models; Ape-X for value-based learners, IMPALA for on-policy ones; docs/how-to/scale-out.md).

``n_actors`` actors each hold their own environment (``env_fn()``) and their own copy of the
learner's policy, with their own exploration, and act ``rollout_length`` steps at a time. The
learner is the ordinary ``rk.Agent``: it sees the actors as the sub-environments of a vector
environment (this class), records their transitions into its trajectory (a replay, or a
rollout of one column per actor) and learns through its driver and ``update(policy, batch)``
as it would on an ``rk.VectorGymEnv``. So hooks, stop conditions, evaluation and checkpoints
work as in any ``rk.run`` on the learner's side, and every actor's episodes are reported (a
hook counting episodes sees each actor's).

The protocol, the same for both backends: when the learner has consumed the chunks of a
round, it collects the chunks of the next round (made while it learned) and asks every actor
for the round after, sending the learner's weights with the request when they are
``sync_every`` or more updates newer than the actor's; each chunk reports the version (the
learner's count of updates) of the weights it was made with. ``backend="local"`` runs the
actors in this process, one after the other (deterministic for a seed); ``backend="ray"`` runs
each in a Ray actor, acting while the learner learns (with one thread each, the chunks are the
local backend's numbers). A failing actor stops the run with an :class:`ActorError` that names
it and carries its traceback (actors are not replaced: resume from a checkpoint).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.checks import finite_float, non_negative_int, positive_int
from ..core.interfaces import AbstractVectorEnv
from ..envs.ray_backend import import_ray
from .acting import acting_for
from .backends import BACKENDS, LocalActors, RayActors

__all__ = ["ActorLearner", "DEFAULT_ROLLOUT_LENGTH"]

#: steps an Ape-X actor acts between two sends to the learner (RLlib's rollout_fragment_length)
DEFAULT_ROLLOUT_LENGTH = 50


class ActorLearner(AbstractVectorEnv):
    """``n_actors`` actors feeding the learner ``policy`` (an ``rk.Agent``): see the module.

    Args:
        policy: the learner, an ``rk.Agent``: a DQN-family learner in ``rk.QBasedPolicy`` with a
            replay (Ape-X; a prioritized replay gets the actors' priorities), or a policy of
            ``rk.build_policy`` (``rk.IMPALA``) with an ``rk.RolloutTrajectory`` of
            ``n_envs=n_actors``.
        env_fn: a picklable function of no arguments returning an ``rk.AbstractEnv``, called
            once in each actor.
        n_actors: the number of actors (at most the Ray cluster's CPUs with ``backend="ray"``).
        backend: ``"local"`` (in-process, lock-step) or ``"ray"``.
        sync_every: the actors receive the learner's weights once it made this many updates
            since they last did; the weights an actor acts with are never older than this
            (``max_staleness``, from the versions the actors report).
        rollout_length: steps per actor per chunk (default: the rollout's ``n_steps``
            on-policy, :data:`DEFAULT_ROLLOUT_LENGTH` for Ape-X).
        seed: seeds each actor's environment and exploration (``SeedSequence`` children).
        epsilon: the base of Ape-X's per-actor epsilons ``epsilon ** (1 + alpha * i / (N - 1))``.
        alpha: their exponent's scale.
        num_cpus: CPUs for ``ray.init`` when Ray is not initialised yet (default 2).

    Example:
        >>> import functools, rlkit as rk
        >>> env_fn = functools.partial(rk.GymEnv, "CartPole-v1")
        >>> agent = rk.Agent(rk.IMPALA(env_fn(), seed=0, n_steps=16), rk.RolloutTrajectory(16, 2))
        >>> al = rk.distributed.ActorLearner(agent, env_fn, n_actors=2, seed=0)
        >>> hook = al.run(rk.StopAfterNSteps(64), rk.TotalRewardPerEpisode())
        >>> agent.policy.updates, al.max_staleness
        (2, 0)
    """

    def __init__(
        self,
        policy: Any,
        env_fn: Callable[[], Any],
        n_actors: int,
        *,
        backend: str = "local",
        sync_every: int = 1,
        rollout_length: int | None = None,
        seed: int | np.random.SeedSequence = 0,
        epsilon: float = 0.4,
        alpha: float = 7.0,
        num_cpus: int | None = None,
    ) -> None:
        name = "ActorLearner"
        self.n_actors = positive_int(name, "n_actors", n_actors)
        if not callable(env_fn):
            raise TypeError(
                f"{name}: env_fn must be a function of no arguments returning an rk.AbstractEnv "
                f"(e.g. functools.partial(rk.GymEnv, 'CartPole-v1')), got {env_fn!r:.80}"
            )
        if backend not in BACKENDS:
            raise ValueError(f"{name}: backend must be one of {BACKENDS}, got {backend!r}")
        self.sync_every = positive_int(name, "sync_every", sync_every)
        finite_float(name, "epsilon", epsilon, low=0.0, high=1.0)
        finite_float(name, "alpha", alpha, low=0.0)
        self.acting = acting_for(policy, self.n_actors, epsilon, alpha)
        if rollout_length is None:
            n_steps = getattr(policy.trajectory, "n_steps", None)
            rollout_length = n_steps if n_steps is not None else DEFAULT_ROLLOUT_LENGTH
        self.rollout_length = positive_int(name, "rollout_length", rollout_length)
        self.policy, self.backend, self.n_envs = policy, backend, self.n_actors
        if not isinstance(seed, np.random.SeedSequence):
            seed = np.random.SeedSequence(non_negative_int(name, "seed", seed))
        seeds = seed.spawn(self.n_actors)
        if backend == "ray":
            check_cluster(self.n_actors, num_cpus)
            self.actors: Any = RayActors(env_fn, policy.policy, self.acting, seeds, num_cpus)
        else:
            self.actors = LocalActors(env_fn, policy.policy, self.acting, seeds)
        self.state_space, self.action_space, self.env_name = self.actors.describe()
        self.sent = [-1] * self.n_actors  # the version last sent to each actor
        self.requested = [0] * self.n_actors  # the learner's version at each open request
        self.ready: dict[int, dict] = {}  # chunks collected ahead (a checkpoint's)
        self.chunk: dict[str, np.ndarray] = {}
        self.t = 0
        self.rounds = 0
        self.max_staleness = 0  # learner's version at a request - the version acted with
        self.max_policy_lag = 0  # learner's version when consumed - the version acted with
        self.priority: np.ndarray | None = None

    def __repr__(self) -> str:
        return (
            f"ActorLearner({type(self.policy.policy).__name__}, n_actors={self.n_actors}, "
            f"backend={self.backend!r}, sync_every={self.sync_every}, "
            f"rollout_length={self.rollout_length})"
        )

    @property
    def name(self) -> str:
        """The actors' environment's name (an ``rk.GymEnv``'s id), as a vector env's."""
        return self.env_name

    def version(self) -> int:
        """The learner's version: its count of updates (gradient steps; rollouts learned)."""
        return self.acting.version(self.policy.policy)

    # ---- the protocol ----
    def _request(self, i: int) -> None:
        version = self.version()
        weights = None
        if self.sent[i] < 0 or version - self.sent[i] >= self.sync_every:
            network = self.acting.network(self.policy.policy)
            weights = {k: v.detach().cpu().clone() for k, v in network.state_dict().items()}
            self.sent[i] = version
        self.requested[i] = version
        self.actors.request(i, self.rollout_length, weights, version)

    def _next_round(self) -> None:
        """Collect the chunks made while the learner learned; ask for the next ones."""
        chunks = []
        for i in range(self.n_actors):
            chunk = self.ready.pop(i) if i in self.ready else self.actors.collect(i)
            self._check_version(i, int(chunk["version"]))
            chunks.append(chunk)
            self._request(i)
        self.chunk = {k: np.stack([c[k] for c in chunks], axis=1) for k in chunks[0]
                      if k not in ("version", "last_state")}  # fmt: skip
        self.chunk["last_state"] = np.stack([c["last_state"] for c in chunks])
        self.chunk["version"] = np.array([int(c["version"]) for c in chunks])
        self.t = 0
        self.rounds += 1

    def _check_version(self, i: int, acted_with: int) -> None:
        staleness = self.requested[i] - acted_with
        if acted_with != self.sent[i] or staleness > self.sync_every:
            raise RuntimeError(
                f"ActorLearner: actor {i} acted with weights of version {acted_with}, "
                f"{staleness} updates older than the learner's when asked (sync_every="
                f"{self.sync_every}); the weights sent were version {self.sent[i]}"
            )
        self.max_staleness = max(self.max_staleness, staleness)

    # ---- AbstractVectorEnv ----
    def reset(self, seed: Any = None) -> None:
        """Start the actors: every actor acts its first chunk (the first round) and is asked
        for the second (``seed`` is ignored: the actors were seeded when made)."""
        for i in range(self.n_actors):
            self._request(i)
        self._next_round()
        self.state = self.chunk["state"][0]
        self.needs_reset = False

    def next_actions(self, policy: Any) -> Any:
        """The actions the actors took in the states the learner sees now (collecting the
        next round first when this one is consumed); the learner's policy adopts them."""
        if self.t == self.rollout_length:
            self._next_round()
        lag = self.version() - int(self.chunk["version"].min())
        self.max_policy_lag = max(self.max_policy_lag, lag)
        step = {k: v[self.t] for k, v in self.chunk.items() if k not in ("version", "last_state")}
        return self.acting.adopt(policy.policy, step)

    def act(self, actions: Any) -> None:
        """Advance to the next transition of every actor (``actions`` are the actors' own,
        already taken)."""
        c, t = self.chunk, self.t
        self.reward = c["reward"][t]
        self.is_terminated = c["terminated"][t]
        self.is_truncated = c["truncated"][t]
        self.final_state = c["final_state"][t]
        self.priority = c["priority"][t] if "priority" in c else None
        self.t = t = t + 1
        self.state = c["state"][t] if t < self.rollout_length else c["last_state"]

    def close(self) -> None:
        """Stop the actors."""
        self.actors.close()

    def info(self) -> dict[str, int]:
        """Counters of the split: rounds, the largest staleness and policy lag seen."""
        return {
            "rounds": self.rounds,
            "max_staleness": self.max_staleness,
            "max_policy_lag": self.max_policy_lag,
            "version": self.version(),
        }

    def run(self, stop_condition: Any, hook: Any = None, **kwargs: Any) -> Any:
        """``rk.run(self.policy, self, stop_condition, hook, **kwargs)``."""
        from ..core.run import run

        return run(self.policy, self, stop_condition, hook, **kwargs)

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """The actors' states (environments, acting copies), the round being consumed and the
        chunks made ahead (collected now), the versions."""
        for i in list(getattr(self.actors, "pending", {})) + list(
            getattr(self.actors, "results", {})
        ):
            self.ready[i] = self.actors.collect(i)
        return {
            "actors": self.actors.get_states(),
            "ready": [self.ready[i] for i in range(self.n_actors)] if self.ready else [],
            "chunk": dict(self.chunk),
            "t": self.t,
            "sent": list(self.sent),
            "requested": list(self.requested),
            "counters": [self.rounds, self.max_staleness, self.max_policy_lag],
            "needs_reset": self.needs_reset,
            "state": self.state,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.actors.set_states(state["actors"])
        self.ready = dict(enumerate(state["ready"]))
        self.chunk = dict(state["chunk"])
        self.t = int(state["t"])
        self.sent = [int(v) for v in state["sent"]]
        self.requested = [int(v) for v in state["requested"]]
        self.rounds, self.max_staleness, self.max_policy_lag = map(int, state["counters"])
        self.needs_reset = bool(state["needs_reset"])
        self.state = state["state"]


def check_cluster(n_actors: int, num_cpus: int | None) -> None:
    """Start Ray (``num_cpus``, default 2) unless it runs; refuse more actors than its CPUs."""
    ray = import_ray()
    if not ray.is_initialized():
        ray.init(num_cpus=2 if num_cpus is None else num_cpus, include_dashboard=False,
                 log_to_driver=False, configure_logging=False)  # fmt: skip
    cpus = int(ray.cluster_resources().get("CPU", 0))
    if n_actors > cpus:
        raise ValueError(
            f"ActorLearner: n_actors={n_actors} is more than the Ray cluster's {cpus} CPUs "
            f"(each actor takes one CPU; more would wait forever); use n_actors <= {cpus} or "
            f"a larger cluster"
        )
