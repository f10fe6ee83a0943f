"""``rk.HER``: hindsight experience replay (Andrychowicz et al. 2017) as a replay sampler that
relabels goals at sample time (the replay stores each transition once)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..core.checks import ArgumentTypeError, is_int, non_negative_int, positive_int
from .circular import CircularArraySARTTrajectory
from .samplers import BatchSampler, _batch, _check_same, normalize_batch

__all__ = ["HER", "STRATEGIES", "goal_reward_function"]

#: the goal-selection strategies (Stable-Baselines3's ``GoalSelectionStrategy``)
STRATEGIES = ("future", "final", "episode")
GOAL_KEYS = ("achieved_goal", "desired_goal")
_REDRAWS = 16  # rounds of redrawing invalid slots before the exact (slower) draw


class HER(BatchSampler):
    """Batches of ``batch_size`` transitions of which ``int(batch_size * k / (k + 1))`` (``k =
    n_sampled_goal``, Stable-Baselines3's ``her_ratio``) have their goal relabelled: the first
    rows of the batch. A relabelled transition's ``desired_goal`` (in ``state`` and
    ``next_state``) becomes the ``achieved_goal`` of a ``next_state`` of the *same episode*:

    * ``"future"``: of a step drawn uniformly from this step (inclusive, as SB3) to the
      episode's last;
    * ``"final"``: of the episode's last step;
    * ``"episode"``: of any step of the episode;

    and its reward becomes ``compute_reward(next_state["achieved_goal"], new_goal, infos)``
    (the env's, one vectorised call per batch; ``infos`` are empty dicts, the same list at
    each call: the replay keeps no infos). ``terminal`` is the stored flag, not recomputed
    (as SB3, whose ``dones`` are the stored ones): a relabelled transition that reaches its
    new goal is not a terminal one unless the episode ended there. The other rows are the
    stored transitions.

    Which transitions are drawn (Stable-Baselines3's ``HerReplayBuffer``): uniformly, with
    replacement, among the transitions of *complete* episodes (ended by ``terminal`` or
    ``truncated``; an episode a run stopped and a reset cut is one too) whose first transition
    is still in the replay: the transitions of episodes still running, and of an episode whose
    start the circular buffer has overwritten, are not drawn. The episode bookkeeping (per
    slot: the episode's first and last transition; per sub-env of a vector env: its running
    episode's start, the transitions of one sub-env being ``n_envs`` slots apart) is brought up
    to date from the trajectory's flags at each :meth:`sample`; it and the generator are saved
    by :meth:`state_dict` (checkpoints resume bit for bit). A prioritized replay is refused.

    ``compute_reward`` comes from ``env`` (``rk.GymEnv``, ``rk.VectorGymEnv`` of a registered
    id, or a gymnasium env: the unwrapped env's ``compute_reward``) or is given. The env's
    observation space must be a ``Dict`` with ``achieved_goal`` and ``desired_goal`` keys
    (gymnasium-robotics' ``GoalEnv`` API). ``rk.DQN.agent(env, her=rk.HER("future", 4))`` and
    ``rk.SAC.agent(env, her=...)`` build it with their ``batch_size`` and seed:
    :meth:`configured`.

    Args:
        strategy: ``"future"``, ``"final"`` or ``"episode"``.
        n_sampled_goal: relabelled transitions per real one (0: none relabelled).
        batch_size: transitions per batch.
        seed: seed of the sampler's generator.
        env: the goal-conditioned env whose ``compute_reward`` relabels rewards.
        compute_reward: the reward function itself (instead of ``env``'s).

    Example:
        >>> import rlkit as rk
        >>> env = rk.GymEnv("rlkit/BitFlipping-v0", seed=0, n_bits=4)
        >>> t = rk.CircularArraySARTTrajectory(100, env.state_space, env.action_space)
        >>> _ = rk.run(rk.Agent(rk.RandomPolicy(seed=0), t), env, rk.StopAfterNSteps(40))
        >>> her = rk.HER("future", n_sampled_goal=4, batch_size=10, seed=0, env=env)
        >>> batch = her.sample(t)
        >>> batch["state"]["desired_goal"].shape, batch["reward"].dtype
        ((10, 4), dtype('float32'))
        >>> her.n_virtual  # rows relabelled: int(10 * 4 / 5), the first ones
        8
        >>> goal_env = env.env.unwrapped
        >>> rewards = goal_env.compute_reward(
        ...     batch["next_state"]["achieved_goal"], batch["state"]["desired_goal"], {})
        >>> bool((rewards == batch["reward"]).all())
        True
    """

    def __init__(
        self,
        strategy: str = "future",
        n_sampled_goal: int = 4,
        *,
        batch_size: int = 256,
        seed: int | np.random.SeedSequence | np.random.Generator | None = None,
        env: Any = None,
        compute_reward: Callable[..., Any] | None = None,
    ) -> None:
        super().__init__(batch_size, seed=seed)
        name = type(self).__name__
        if not isinstance(strategy, str) or strategy not in STRATEGIES:
            raise ValueError(
                f"{name}: strategy must be one of {list(STRATEGIES)}, got {strategy!r}"
            )
        self.strategy = strategy
        self.n_sampled_goal = non_negative_int(name, "n_sampled_goal", n_sampled_goal)
        self.her_ratio = 1.0 - 1.0 / (self.n_sampled_goal + 1)
        self.n_virtual = int(self.her_ratio * self.batch_size)
        if compute_reward is not None and not callable(compute_reward):
            raise ArgumentTypeError(
                f"{name}: compute_reward must be callable (achieved_goal, desired_goal, info) "
                f"-> rewards, got {compute_reward!r}"
            )
        self.compute_reward = compute_reward
        self._infos: list[dict[str, Any]] = []  # compute_reward's infos: n_virtual empty dicts
        if env is not None:
            self.bind(env)
        self._reset_bookkeeping()

    def __repr__(self) -> str:
        return (
            f"HER(strategy={self.strategy!r}, n_sampled_goal={self.n_sampled_goal}, "
            f"batch_size={self.batch_size})"
        )

    def configured(self, *, batch_size: int, seed: Any, env: Any) -> HER:
        """A new sampler with this one's strategy and ``n_sampled_goal`` (and its
        ``compute_reward`` when it was given one), for ``env``: what the one-line agents build
        from the ``her`` they are given."""
        return HER(
            self.strategy,
            self.n_sampled_goal,
            batch_size=batch_size,
            seed=seed,
            env=env if self.compute_reward is None else None,
            compute_reward=self.compute_reward,
        )

    def bind(self, env: Any) -> HER:
        """Take ``env``'s ``compute_reward`` (see the class docstring) after checking that its
        observations are goal dicts; returns ``self``."""
        check_goal_space(type(self).__name__, env)
        if self.compute_reward is None:
            self.compute_reward = goal_reward_function(type(self).__name__, env)
        return self

    # ---- episode bookkeeping ----
    def _reset_bookkeeping(self) -> None:
        self.capacity: int | None = None
        self.stride = 1
        self.synced = 0  # transitions of the trajectory taken into the bookkeeping
        self.open_start = np.zeros(0, np.int64)  # per sub-env: its running episode's start
        self.last = np.zeros(0, np.int64)  # per sub-env: its last transition seen (-1: none)
        self.ep_start = np.zeros(0, np.int64)  # per slot: the episode's first transition
        self.ep_end = np.zeros(0, np.int64)  # per slot: the episode's last one (-1: running)

    def _sync(self, t: CircularArraySARTTrajectory) -> None:
        """Bring the bookkeeping up to the trajectory's ``n_inserted`` transitions (transition
        ``g``, counted from 0, is in slot ``g % capacity``; sub-env ``g % stride``)."""
        name = type(self).__name__
        if self.capacity is None or t.n_inserted < self.synced:  # new, or the replay cleared
            self._reset_bookkeeping()
            self.capacity, self.stride = t.capacity, int(getattr(t, "stride", 1))
            self.ep_start = np.full(t.capacity, -1, np.int64)
            self.ep_end = np.full(t.capacity, -1, np.int64)
            self.open_start = np.arange(self.stride, dtype=np.int64)
            self.last = np.full(self.stride, -1, np.int64)
        if t.capacity != self.capacity or int(getattr(t, "stride", 1)) != self.stride:
            raise ValueError(
                f"{name}: this sampler keeps the episodes of a replay of capacity "
                f"{self.capacity} written {self.stride} transition(s) per step; got one of "
                f"capacity {t.capacity} written {getattr(t, 'stride', 1)} per step (one HER "
                f"sampler per replay)"
            )
        n, cap, stride = t.n_inserted, self.capacity, self.stride
        for c in range(stride):  # a transition seen running, cut since (a reset mid-episode)
            g = int(self.last[c])
            if g >= max(n - cap, 0) and self.ep_end[g % cap] < 0 and _ends(t, g % cap):
                self._close(c, g, n)
        low = max(self.synced, n - cap)
        if low < n <= low + stride:  # at most one new transition per sub-env (each step's)
            for g in range(low, n):
                self._take_one(t, g % stride, g, n)
        elif low < n:
            new = np.arange(low, n, dtype=np.int64)
            for c in range(stride):
                self._take(t, c, new[new % stride == c], n)
        self.synced = n

    def _take(self, t: CircularArraySARTTrajectory, c: int, g: np.ndarray, n: int) -> None:
        """Record sub-env ``c``'s new transitions ``g`` (in order)."""
        if not g.size:
            return
        cap = self.capacity
        slots = g % cap
        ends = g[t.terminal[slots] | t.truncated[slots]]
        k = np.searchsorted(ends, g, side="left")  # the episode (among these) of each
        starts = np.concatenate([[self.open_start[c]], ends + self.stride])
        self.ep_start[slots] = starts[k]
        self.ep_end[slots] = np.concatenate([ends, [-1]])[k]
        if ends.size:  # the running episode's earlier transitions end at the first end
            earlier = _members(int(self.open_start[c]), int(g[0]) - 1, self.stride, n - cap)
            self.ep_end[earlier % cap] = ends[0]
            self.open_start[c] = ends[-1] + self.stride
        self.last[c] = g[-1]

    def _take_one(self, t: CircularArraySARTTrajectory, c: int, g: int, n: int) -> None:
        """Record sub-env ``c``'s one new transition ``g``: what :meth:`_take` does for a
        single transition, without its array bookkeeping (the case of every step)."""
        slot = g % self.capacity
        self.ep_start[slot] = self.open_start[c]
        if t.terminal[slot] or t.truncated[slot]:
            self._close(c, g, n)  # this transition and the episode's earlier ones end here
        else:
            self.ep_end[slot] = -1
        self.last[c] = g

    def _close(self, c: int, g: int, n: int) -> None:
        """Sub-env ``c``'s running episode ends at its transition ``g``."""
        cap = self.capacity
        self.ep_end[_members(int(self.open_start[c]), g, self.stride, n - cap) % cap] = g
        self.open_start[c] = g + self.stride

    def _valid(self, t: CircularArraySARTTrajectory, slots: np.ndarray) -> np.ndarray:
        """Whether the transitions in ``slots`` belong to complete episodes whose first
        transition is still stored."""
        oldest = t.n_inserted - len(t)
        return (self.ep_end[slots] >= 0) & (self.ep_start[slots] >= oldest)

    def _draw(self, t: CircularArraySARTTrajectory, size: int) -> np.ndarray:
        """``size`` slots drawn uniformly among the valid ones (redrawing invalid draws, then
        exactly among the valid slots)."""
        n = len(t)
        first = (t.head - n) % t.capacity
        slots = (self.rng.integers(n, size=size) + first) % t.capacity
        for _ in range(_REDRAWS):
            bad = np.flatnonzero(~self._valid(t, slots))
            if not bad.size:
                return slots
            slots[bad] = (self.rng.integers(n, size=bad.size) + first) % t.capacity
        bad = np.flatnonzero(~self._valid(t, slots))
        if bad.size:
            stored = (first + np.arange(n)) % t.capacity
            valid = stored[self._valid(t, stored)]
            if not valid.size:
                raise RuntimeError(
                    f"{type(self).__name__}: the replay holds no complete episode yet ({n} "
                    f"transitions), so there is nothing to sample; start learning after the "
                    f"first episodes end (learning_starts above the longest episode's length)"
                )
            slots[bad] = valid[self.rng.integers(valid.size, size=bad.size)]
        return slots

    # ---- sampling ----
    def sample(
        self, trajectory: CircularArraySARTTrajectory, n_batches: int = 1, normalizer: Any = None
    ) -> dict[str, np.ndarray]:
        """``n_batches`` batches (the keys of ``BatchSampler``'s), concatenated, each with its
        first ``n_virtual`` rows relabelled (see the class docstring). With ``normalizer`` (an
        ``rk.VecNormalize`` whose replay holds raw transitions) the batch is normalised after
        relabelling: the recomputed rewards are raw, then scaled, and the relabelled goals are
        normalised with the observations (Stable-Baselines3's ``HerReplayBuffer``)."""
        n_batches = positive_int(type(self).__name__, "n_batches", n_batches)
        self._check(trajectory)
        self._sync(trajectory)
        parts = [self._one_batch(trajectory) for _ in range(n_batches)]
        if n_batches == 1:
            return normalize_batch(parts[0], normalizer)
        batch = {key: _concatenate([p[key] for p in parts]) for key in parts[0]}
        return normalize_batch(batch, normalizer)

    def _one_batch(self, t: CircularArraySARTTrajectory) -> dict[str, Any]:
        indices = self._draw(t, self.batch_size)
        batch = _batch(
            t, indices, None, indices, t.reward[indices], np.ones(len(indices), np.int64)
        )
        nv = self.n_virtual
        if nv:
            virtual = indices[:nv]
            goals = _rows(t.next_state.arrays["achieved_goal"], self._goal_slots(virtual))
            batch["state"]["desired_goal"][:nv] = goals
            batch["next_state"]["desired_goal"][:nv] = goals
            if len(self._infos) != nv:
                self._infos = [{} for _ in range(nv)]
            rewards = self.compute_reward(
                batch["next_state"]["achieved_goal"][:nv],
                batch["state"]["desired_goal"][:nv],
                self._infos,
            )
            batch["reward"][:nv] = np.asarray(rewards, np.float32).reshape(nv)
        return batch

    def _goal_slots(self, slots: np.ndarray) -> np.ndarray:
        """The slot whose next achieved goal becomes each transition's goal (the strategy)."""
        start, end = self.ep_start[slots], self.ep_end[slots]
        cap, stride = self.capacity, self.stride
        g = self.synced - 1 - ((self.synced - 1 - slots) % cap)  # the transitions' numbers
        position, length = (g - start) // stride, (end - start) // stride + 1
        if self.strategy == "final":
            chosen = length - 1
        elif self.strategy == "future":
            chosen = self.rng.integers(position, length)
        else:
            chosen = self.rng.integers(0, length)
        return (start + chosen * stride) % cap

    def _check(self, t: Any) -> None:
        name = type(self).__name__
        if self.compute_reward is None:
            raise ValueError(
                f"{name}: no compute_reward: give env= (a goal-conditioned env) or "
                f"compute_reward= when building it, or call her.bind(env)"
            )
        if not isinstance(t, CircularArraySARTTrajectory):
            raise TypeError(
                f"{name}: samples from an rk.CircularArraySARTTrajectory, got {type(t).__name__}"
            )
        if type(t).sample_indices is not CircularArraySARTTrajectory.sample_indices:
            raise TypeError(
                f"{name}: cannot sample from {type(t).__name__} (it draws its own slots, e.g. "
                f"by priority); use an rk.CircularArraySARTTrajectory"
            )
        state = t.state
        keys = list(getattr(state, "arrays", {}))
        if not all(k in keys for k in GOAL_KEYS):
            raise ValueError(
                f"{name}: the replay's observations must be dicts with keys {list(GOAL_KEYS)} "
                f"(a goal-conditioned env's Dict space), found keys {keys or 'none'}"
            )

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """The generator, the settings and the episode bookkeeping (written slots only)."""
        filled = 0 if self.capacity is None else min(self.capacity, self.synced)
        return {
            **super().state_dict(),
            "strategy": self.strategy,
            "n_sampled_goal": self.n_sampled_goal,
            "capacity": self.capacity,
            "stride": self.stride,
            "synced": self.synced,
            "open_start": self.open_start.copy(),
            "last": self.last.copy(),
            "ep_start": self.ep_start[:filled].copy(),
            "ep_end": self.ep_end[:filled].copy(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved."""
        name = type(self).__name__
        _check_same(self, state, strategy=self.strategy, n_sampled_goal=self.n_sampled_goal)
        for key in ("capacity", "stride", "synced", "open_start", "last", "ep_start", "ep_end"):
            if key not in state:
                raise ValueError(f"{name}: checkpoint has no {key!r}")
        capacity = state["capacity"]
        if capacity is not None and not (is_int(capacity) and capacity > 0):
            raise ValueError(f"{name}: checkpoint has capacity={capacity!r}")
        super().load_state_dict(state)
        self._reset_bookkeeping()
        if capacity is None:
            return
        self.capacity, self.stride, self.synced = (
            int(capacity),
            int(state["stride"]),
            int(state["synced"]),
        )
        self.open_start = np.array(state["open_start"], np.int64)
        self.last = np.array(state["last"], np.int64)
        self.ep_start = np.full(self.capacity, -1, np.int64)
        self.ep_end = np.full(self.capacity, -1, np.int64)
        filled = len(state["ep_start"])
        self.ep_start[:filled] = state["ep_start"]
        self.ep_end[:filled] = state["ep_end"]


def _members(start: int, last: int, stride: int, oldest: int) -> np.ndarray:
    """The transitions ``start, start + stride, ..., <= last`` (one sub-env's) that are at
    least ``oldest`` (still stored)."""
    if start < oldest:
        start += -(-(oldest - start) // stride) * stride
    return np.arange(start, last + 1, stride, dtype=np.int64)


def _rows(array: Any, slots: np.ndarray) -> Any:
    """``array[slots]`` (``take`` for a plain array: the same rows, faster)."""
    return array.take(slots, axis=0) if type(array) is np.ndarray else array[slots]


def _ends(t: CircularArraySARTTrajectory, slot: int) -> bool:
    return bool(t.terminal[slot] or t.truncated[slot])


def _concatenate(parts: list[Any]) -> Any:
    if isinstance(parts[0], Mapping):
        return {k: _concatenate([p[k] for p in parts]) for k in parts[0]}
    return np.concatenate(parts)


def check_goal_space(owner: str, env: Any) -> None:
    """Refuse an env whose observation space is not a ``Dict`` with ``achieved_goal`` and
    ``desired_goal`` keys of the same shape, naming the keys it has.

    Example:
        >>> import rlkit as rk
        >>> check_goal_space("HER", rk.GymEnv("CartPole-v1"))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: HER: needs a goal-conditioned env, ... with keys none (space Box(...))
    """
    space = getattr(env, "state_space", None)
    if space is None:
        space = getattr(env, "observation_space", None)
    spaces = getattr(space, "spaces", None)
    keys = list(spaces) if isinstance(spaces, Mapping) else []
    if not all(k in keys for k in GOAL_KEYS):
        raise ValueError(
            f"{owner}: needs a goal-conditioned env, whose observations are dicts with keys "
            f"'observation', 'achieved_goal' and 'desired_goal' (gymnasium-robotics' API); "
            f"{_name(env)} has observations with keys {keys or 'none'} (space {space})"
        )
    achieved, desired = spaces["achieved_goal"], spaces["desired_goal"]
    if achieved.shape != desired.shape:
        raise ValueError(
            f"{owner}: {_name(env)}'s achieved_goal {achieved} and desired_goal {desired} must "
            f"have the same shape (a relabelled goal is an achieved one)"
        )


def goal_reward_function(owner: str, env: Any) -> Callable[..., Any]:
    """``env``'s ``compute_reward(achieved_goal, desired_goal, info)``: the env's own, the
    unwrapped gymnasium env's (inside an ``rk.GymEnv``), or for an ``rk.VectorGymEnv`` of a
    registered id that of one such env made here. Refused, naming the env, if none.

    Example:
        >>> import rlkit as rk
        >>> fn = goal_reward_function("HER", rk.GymEnv("rlkit/BitFlipping-v0", n_bits=2))
        >>> fn([1, 1], [1, 1], {}), fn([[1, 1], [0, 1]], [[1, 1], [1, 1]], {}).tolist()
        (array(0., dtype=float32), [0.0, -1.0])
    """
    candidates = [env, getattr(env, "unwrapped", None)]
    inner = getattr(env, "env", None)
    candidates.append(getattr(inner, "unwrapped", None))
    for candidate in candidates:
        fn = getattr(candidate, "compute_reward", None)
        if callable(fn):
            return fn
    env_id = getattr(env, "id", None)
    if isinstance(env_id, str) and hasattr(env, "n_envs"):  # a vector env of a registered id
        import gymnasium

        made = gymnasium.make(env_id, **dict(getattr(env, "env_kwargs", {}) or {})).unwrapped
        fn = getattr(made, "compute_reward", None)
        if callable(fn):
            return fn
    raise ValueError(
        f"{owner}: {_name(env)} has no compute_reward(achieved_goal, desired_goal, info), which "
        f"HER calls to recompute relabelled rewards (gymnasium-robotics' GoalEnv API); give "
        f"compute_reward= explicitly"
    )


def _name(env: Any) -> str:
    name = getattr(env, "name", None)
    return f"the env {name!r}" if isinstance(name, str) else f"the env {type(env).__name__}"
