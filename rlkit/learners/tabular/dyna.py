"""Planning with a learned model (Sutton & Barto chapter 8): Dyna-Q, Dyna-Q+ and prioritized
sweeping, around any tabular control learner.

``DynaLearner(learner, n_planning=...)`` lets ``learner`` (e.g. ``rk.TDLearner(q)``, one-step
Q-learning) learn from real experience as it would alone (direct RL), and after every real step

1. records the transition in a deterministic model, ``model[(s, a)] = (r, s', terminated)``
   (the last outcome seen; the book's mazes are deterministic);
2. makes ``n_planning`` simulated one-step Q-learning updates of the learner's
   ``TabularQApproximator`` from the model:
   ``Q(s, a) += alpha (r + gamma max_a' Q(s', a') - Q(s, a))`` (no bootstrap after a terminal
   transition), with the learner's ``gamma`` and the approximator's step size.

``planning="random"`` (Dyna-Q, section 8.2) draws the simulated pairs uniformly from the pairs
seen so far. With ``kappa > 0`` (Dyna-Q+, section 8.3) a simulated reward gets the exploration
bonus ``kappa * sqrt(tau)``, ``tau`` the number of real steps since the pair was last tried, and
the actions never tried in a visited state are in the model too, leading back to the same state
with reward 0. ``planning="prioritized"`` (prioritized sweeping, section 8.4) keeps a queue of
pairs by the size of their update ``|r + gamma max Q(s', .) - Q(s, a)|``; a real step enters its
pair when that exceeds ``theta``, and each planning update of ``(s, a)`` enters the pairs
predicted to lead to ``s``. Planning stops early when the queue is empty.

``learner.n_updates`` counts the updates of Q, real and simulated (Example 8.4's measure).
"""

from __future__ import annotations

import heapq
import math
from typing import Any

import numpy as np

from ...approximators.tabular import TabularQApproximator
from ...core.checks import finite_float, non_negative_int
from ...core.dispatch import forward, statistics, update
from ...core.interfaces import AbstractEnv, AbstractLearner
from ...core.stages import AbstractStage, PostActStage
from ...trajectories.episodic import VectorSARTTrajectory

__all__ = ["DynaLearner"]

PLANNING = ("random", "prioritized")


class DynaLearner(AbstractLearner):
    """Dyna-Q / Dyna-Q+ / prioritized sweeping around a tabular control learner.

    Args:
        learner: a learner with a ``TabularQApproximator`` in ``learner.approximator`` and a
            ``gamma`` (``rk.TDLearner(q)`` for the book's Dyna-Q); it learns from real steps as
            it would alone.
        n_planning: simulated updates after each real step (0: no planning).
        planning: ``"random"`` (Dyna-Q / Dyna-Q+) or ``"prioritized"`` (prioritized sweeping).
        kappa: the exploration bonus of Dyna-Q+ (``"random"`` only; 0: plain Dyna-Q).
        theta: the priority threshold of prioritized sweeping.
        seed: seed of the draws of simulated pairs.

    ``learner(env)`` is the wrapped learner's action values.

    Example:
        >>> import rlkit as rk
        >>> env = rk.GymEnv("rlkit/DynaMaze-v0", seed=0)
        >>> q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.1)
        >>> dyna = rk.DynaLearner(rk.TDLearner(q, gamma=0.95), n_planning=50, seed=0)
        >>> agent = rk.Agent(rk.QBasedPolicy(dyna, rk.EpsilonGreedyExplorer(0.1, seed=0)),
        ...                  rk.VectorSARTTrajectory())
        >>> hook = rk.run(agent, env, rk.StopAfterNEpisodes(3), rk.StepsPerEpisode())
        >>> hook.steps[2] < hook.steps[0]
        True
    """

    def __init__(
        self,
        learner: AbstractLearner,
        *,
        n_planning: int = 5,
        planning: str = "random",
        kappa: float = 0.0,
        theta: float = 1e-4,
        seed: int | np.random.SeedSequence | np.random.Generator | None = None,
    ) -> None:
        name = "DynaLearner"
        if not isinstance(learner, AbstractLearner):
            raise TypeError(
                f"{name}: learner must be an rk.AbstractLearner, got {type(learner).__name__}: "
                f"{learner!r}"
            )
        q = getattr(learner, "approximator", None)
        if not isinstance(q, TabularQApproximator) or q.step_size is None:
            raise TypeError(
                f"{name}: learner must have a TabularQApproximator with a constant step size in "
                f"learner.approximator (e.g. rk.TDLearner(q)), got {q!r}"
            )
        if not hasattr(learner, "gamma"):
            raise TypeError(f"{name}: learner must have a discount factor learner.gamma")
        if planning not in PLANNING:
            raise ValueError(f"{name}: planning must be one of {list(PLANNING)}, got {planning!r}")
        self.learner = learner
        self.n_planning = non_negative_int(name, "n_planning", n_planning)
        self.planning = planning
        self.kappa = finite_float(name, "kappa", kappa, low=0.0)
        if self.kappa > 0.0 and planning != "random":
            raise ValueError(f"{name}: kappa (Dyna-Q+) needs planning='random', got {planning!r}")
        self.theta = finite_float(name, "theta", theta, low=0.0)
        self.rng = np.random.default_rng(seed)
        self.model: dict[tuple[Any, int], tuple[float, Any, bool]] = {}
        self.pairs: list[tuple[Any, int]] = []  # the keys of model, in order (for draws)
        self.last_tried: dict[tuple[Any, int], int] = {}
        self.predecessors: dict[Any, set[tuple[Any, int]]] = {}
        self.queue: list[tuple[float, int, tuple[Any, int]]] = []
        self.priority: dict[tuple[Any, int], float] = {}
        self.time = 0
        self.n_updates = 0
        self._pushes = 0

    def __repr__(self) -> str:
        return (
            f"DynaLearner({self.learner!r}, n_planning={self.n_planning}, "
            f"planning={self.planning!r}, kappa={self.kappa})"
        )

    def __call__(self, env: AbstractEnv) -> Any:
        return self.learner(env)

    @property
    def approximator(self) -> TabularQApproximator:
        """The wrapped learner's action-value table."""
        return self.learner.approximator

    @property
    def explorer(self) -> Any:
        """The wrapped learner's explorer (``rk.QBasedPolicy`` fills it in when None)."""
        return getattr(self.learner, "explorer", None)

    @explorer.setter
    def explorer(self, explorer: Any) -> None:
        if hasattr(self.learner, "explorer"):
            self.learner.explorer = explorer

    # ---- the model ----
    def _record(self, s: Any, a: int, r: float, s2: Any, terminated: bool) -> None:
        key = (s, a)
        if key not in self.model:
            self.pairs.append(key)
            if self.kappa > 0.0:  # Dyna-Q+: untried actions of a new state lead back to it
                for b in range(self.approximator.n_actions):
                    if b != a and (s, b) not in self.model:
                        self.model[(s, b)] = (0.0, s, False)
                        self.pairs.append((s, b))
                        self.last_tried[(s, b)] = 0
        old = self.model.get(key)
        if old is not None and old[1] != s2:
            self.predecessors.get(old[1], set()).discard(key)
        self.model[key] = (r, s2, terminated)
        self.last_tried[key] = self.time
        self.predecessors.setdefault(s2, set()).add(key)

    def _target(self, r: float, s2: Any, terminated: bool) -> float:
        if terminated:
            return r
        return r + self.learner.gamma * float(self.approximator.table[s2].max())

    def _error(self, key: tuple[Any, int]) -> float:
        r, s2, terminated = self.model[key]
        s, a = key
        return self._target(r, s2, terminated) - float(self.approximator.table[s][a])

    # ---- planning ----
    def _plan_random(self) -> None:
        q, pairs, model = self.approximator, self.pairs, self.model
        for i in self.rng.integers(len(pairs), size=self.n_planning):
            s, a = key = pairs[i]
            r, s2, terminated = model[key]
            if self.kappa > 0.0:
                r += self.kappa * math.sqrt(self.time - self.last_tried[key])
            q.update(s, a, self._target(r, s2, terminated))
        self.n_updates += self.n_planning

    def _push(self, key: tuple[Any, int], p: float) -> None:
        if p > self.theta and p > self.priority.get(key, 0.0):
            self.priority[key] = p
            self._pushes += 1
            heapq.heappush(self.queue, (-p, self._pushes, key))

    def _plan_prioritized(self) -> None:
        q = self.approximator
        for _ in range(self.n_planning):
            key = self._pop()
            if key is None:
                return
            s, a = key
            q.update(s, a, self._target(*self.model[key]))
            self.n_updates += 1
            for pred in self.predecessors.get(s, ()):
                self._push(pred, abs(self._error(pred)))

    def _pop(self) -> tuple[Any, int] | None:
        while self.queue:
            neg_p, _, key = heapq.heappop(self.queue)
            if self.priority.get(key) == -neg_p:  # not a stale entry
                del self.priority[key]
                return key
        return None

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """The wrapped learner's state, the model, the queue and the generator."""
        return {
            "learner": self.learner.state_dict(),
            "model": dict(self.model),
            "pairs": list(self.pairs),
            "last_tried": dict(self.last_tried),
            "predecessors": {k: set(v) for k, v in self.predecessors.items()},
            "queue": list(self.queue),
            "priority": dict(self.priority),
            "time": self.time,
            "n_updates": self.n_updates,
            "pushes": self._pushes,
            "rng": self.rng.bit_generator.state,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a state saved by :meth:`state_dict`."""
        self.learner.load_state_dict(state["learner"])
        self.model = dict(state["model"])
        self.pairs = list(state["pairs"])
        self.last_tried = dict(state["last_tried"])
        self.predecessors = {k: set(v) for k, v in state["predecessors"].items()}
        self.queue = list(state["queue"])
        self.priority = dict(state["priority"])
        self.time = int(state["time"])
        self.n_updates = int(state["n_updates"])
        self._pushes = int(state["pushes"])
        self.rng.bit_generator.state = state["rng"]


# ---- every stage: direct RL is the wrapped learner's ----
@update.dispatch
@forward("learner")
def _(
    learner: DynaLearner,
    trajectory: VectorSARTTrajectory,
    env: AbstractEnv,
    stage: AbstractStage,
    /,
):
    return update(learner.learner, trajectory, env, stage)


# ---- PostAct: direct RL, then model learning, then planning ----
@update.dispatch
def _(
    learner: DynaLearner,
    trajectory: VectorSARTTrajectory,
    env: AbstractEnv,
    stage: PostActStage,
    /,
):
    s, a = trajectory.state[-1], int(trajectory.action[-1])
    r, s2, terminated = float(trajectory.reward[-1]), trajectory.next_state[-1], bool(
        trajectory.terminal[-1]
    )
    prioritized = learner.planning == "prioritized"
    if prioritized:
        p = abs(learner._target(r, s2, terminated) - float(learner.approximator.table[s][a]))
    update(learner.learner, trajectory, env, stage)  # direct RL
    learner.n_updates += 1
    learner.time += 1
    learner._record(s, a, r, s2, terminated)
    if learner.n_planning == 0:
        return
    if prioritized:
        learner._push((s, a), p)
        learner._plan_prioritized()
    else:
        learner._plan_random()


# ---- statistics: the size of the model and the number of updates ----
@statistics.dispatch
def _(learner: DynaLearner, /):
    return {"model_size": len(learner.model), "n_updates": learner.n_updates}
