"""``CircularArraySARTTrajectory``: a preallocated numpy ring buffer of transitions (replay)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from ..core.checks import is_int, positive_int
from ..core.dispatch import update
from ..core.interfaces import AbstractEnv, AbstractPolicy, AbstractTrajectory, AbstractVectorEnv
from ..core.stages import PostActStage, PreActStage, PreEpisodeStage
from .structured import StructuredArray, is_structured_space, leading_length

__all__ = ["CircularArraySARTTrajectory", "space_layout"]

TRACES = ("state", "action", "reward", "terminal", "truncated", "next_state")


class CircularArraySARTTrajectory(AbstractTrajectory):
    """The last ``capacity`` transitions ``(state, action, reward, terminal, truncated,
    next_state)`` in preallocated numpy arrays, the oldest overwritten first.

    Recording (``Agent(policy, trajectory)``): at PreAct the state and the chosen action are copied
    into the slot at the write head ``head``; at PostAct the reward, the ``terminal``/``truncated``
    flags and ``next_state`` (the real final observation at the end of an episode) complete it and
    the head advances. At PreEpisode, a last transition that ended neither in termination nor in
    truncation (a run stopped mid-episode and the env was reset or replaced) is marked
    ``truncated``, so n-step windows never run from one episode into the next.

    Indexing: the traces are the full arrays, ``t.state.shape == (capacity, *state_shape)``, and
    ``t.state[i]`` is *slot* ``i``. Until the buffer is full the stored transitions are slots
    ``0 .. len(t) - 1`` in the order they were recorded; afterwards the oldest is at
    ``t.oldest`` and transition ``k`` (0 = oldest) is slot ``(t.oldest + k) % capacity``;
    :meth:`ordered_indices` gives all of them in order. Between PreAct and PostAct the slot at the
    head is being rewritten and does not count: ``len(t)`` is the number of complete transitions.

    Shapes and dtypes come from gymnasium spaces (``Box``: its shape, float32; ``Discrete``: ``()``,
    int64; ``MultiDiscrete``: its shape, int64; ``MultiBinary``: its shape, int8) or are given
    explicitly (``state_shape``/``state_dtype``/``action_shape``/``action_dtype`` override what
    the spaces say, e.g. ``state_dtype=np.uint8`` for image observations). ``reward`` is float32,
    ``terminal`` and ``truncated`` are bool. For a ``Dict`` or ``Tuple`` observation space the
    states are a :class:`~rlkit.trajectories.structured.StructuredArray`: one array per key
    (``uint8`` image keys stay ``uint8``), and ``t.state[i]`` is a dict of rows by key.

    Legal-action masks (``legal_action_masks=True``, a ``Discrete`` action space): the mask of
    every transition's next state is kept too, ``next_legal_action_mask`` (``(capacity, n)``
    bools; all True where the env reported none), from the env's ``legal_action_mask`` after
    the step (a vector env's ``final_legal_action_mask``: the real final states' masks where
    episodes ended). Samplers hand it to the DQN family, whose target max and argmax then range
    over the next state's legal actions only (docs/how-to/action-masks.md).

    With a vector env (``rk.VectorGymEnv``) every step records one transition per sub-env, in
    sub-env order (slots ``head .. head + n_envs - 1``), ``next_state`` being the env's
    ``final_state``: consecutive transitions of one sub-env are ``n_envs`` slots apart, and no
    transition crosses a reset (truncated ones bootstrap from the real final observation).
    On an ``rk.VecNormalize`` env it records the raw transitions (the wrapped env's
    observations and rewards; rlkit/envs/vec_normalize_replay.py), which the off-policy
    learners normalise when they sample them (docs/how-to/normalization.md).

    Example:
        >>> import rlkit as rk
        >>> env = rk.GymEnv("CartPole-v1", seed=0)
        >>> t = rk.CircularArraySARTTrajectory(100, env.state_space, env.action_space)
        >>> _ = rk.run(rk.Agent(rk.RandomPolicy(seed=0), t), env, rk.StopAfterNSteps(150))
        >>> len(t), t.head, t.n_inserted, t.state.shape, t.action.dtype
        (100, 50, 150, (100, 4), dtype('int64'))
    """

    traces = TRACES
    #: the next states' legal-action masks (``legal_action_masks=True``), else None
    next_legal_action_mask: np.ndarray | None = None

    def __init__(
        self,
        capacity: int,
        state_space: gym.Space | None = None,
        action_space: gym.Space | None = None,
        *,
        state_shape: tuple[int, ...] | None = None,
        state_dtype: Any = None,
        action_shape: tuple[int, ...] | None = None,
        action_dtype: Any = None,
        legal_action_masks: bool = False,
    ) -> None:
        name = type(self).__name__
        capacity = positive_int(name, "capacity", capacity)
        if state_space is None and state_shape is None:
            raise ValueError(
                f"{name}: give state_space (a gymnasium space, e.g. env.state_space) or state_shape"
            )
        if legal_action_masks and not isinstance(action_space, gym.spaces.Discrete):
            raise ValueError(
                f"{name}: legal_action_masks=True needs the Discrete action space of the env "
                f"(action_space=env.action_space), got action_space={action_space!r}"
            )
        self.capacity = int(capacity)
        # a Dict/Tuple observation space: the states are a dict of arrays by key
        self.structured = is_structured_space(state_space) and state_shape is None
        if self.structured:
            self.state_shape, self.state_dtype = (), np.dtype(np.float32)  # per key: the space's
        else:
            self.state_shape, self.state_dtype = _layout(
                name, "state", state_space, state_shape, state_dtype, np.float32
            )
        self.action_shape, self.action_dtype = _layout(
            name, "action", action_space, action_shape, action_dtype, np.int64
        )
        n = self.capacity
        self.state = self._states(state_space, name)
        self.action = np.zeros((n, *self.action_shape), self.action_dtype)
        self.reward = np.zeros(n, np.float32)
        self.terminal = np.zeros(n, bool)
        self.truncated = np.zeros(n, bool)
        self.next_state = self._states(state_space, name)
        if legal_action_masks:
            self.next_legal_action_mask = np.ones((n, int(action_space.n)), bool)
        self.head = 0  # the slot the next transition is written to
        self.n_inserted = 0  # complete transitions recorded since construction (or clear)
        self.pending = False  # PreAct wrote the head slot, PostAct has not completed it yet
        self.n_pending = 1  # slots PreAct wrote (n_envs for a vector env's batch)
        self.stride = 1  # slots between one (sub-)env's consecutive transitions: n_envs

    def _states(self, space: Any, owner: str) -> Any:
        """Zero states: one array, or a :class:`StructuredArray` for a Dict/Tuple space."""
        if self.structured:
            return StructuredArray.zeros(space, (self.capacity,), owner)
        return np.zeros((self.capacity, *self.state_shape), self.state_dtype)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(capacity={self.capacity}, state_shape={self.state_shape}, "
            f"action_shape={self.action_shape}, len={len(self)})"
        )

    def __len__(self) -> int:
        n = self.n_inserted
        if n < self.capacity:
            return n
        return self.capacity - self.n_pending if self.pending else self.capacity

    @property
    def is_full(self) -> bool:
        """Whether the next transition overwrites the oldest one."""
        return self.n_inserted >= self.capacity

    @property
    def oldest(self) -> int:
        """Slot of the oldest stored transition."""
        return (self.head - len(self)) % self.capacity

    def ordered_indices(self) -> np.ndarray:
        """Slots of the stored transitions, oldest first."""
        return (self.oldest + np.arange(len(self))) % self.capacity

    def clear(self) -> None:
        """Forget every stored transition (the arrays are zeroed, not reallocated)."""
        for name in TRACES:
            getattr(self, name).fill(0)
        if self.next_legal_action_mask is not None:
            self.next_legal_action_mask.fill(True)
        self.head = 0
        self.n_inserted = 0
        self.pending = False
        self.n_pending = 1

    # ---- writing: what the recording methods below call ----
    def begin_transition(self, state: Any, action: Any) -> None:
        """Copy ``state`` and ``action`` into the slot at the head (PreAct)."""
        if not self.structured and getattr(state, "shape", None) != self.state_shape:
            self._check_shape("state", state)
        head = self.head
        self.state[head] = state
        self.action[head] = action
        self.pending = True

    def end_transition(
        self, reward: float, terminal: bool, truncated: bool, next_state: Any
    ) -> None:
        """Complete the transition at the head and advance the head (PostAct)."""
        if not self.structured and getattr(next_state, "shape", None) != self.state_shape:
            self._check_shape("next state", next_state)
        head = self.head
        self.reward[head] = reward
        self.terminal[head] = terminal
        self.truncated[head] = truncated
        self.next_state[head] = next_state
        self.head = head + 1 if head + 1 < self.capacity else 0
        self.n_inserted += 1
        self.pending = False

    def write_next_masks(self, masks: Any, batch: bool = False) -> None:
        """Put the legal-action masks of the next states of the transitions being completed
        (the head slot; with ``batch``, a vector env's batch begun by :meth:`begin_transitions`,
        one row per sub-env) into ``next_legal_action_mask``, before :meth:`end_transition` /
        :meth:`end_transitions` (PostAct). ``None``: every action legal (an env that reports no
        mask). Does nothing on a trajectory that keeps no masks."""
        store = self.next_legal_action_mask
        if store is None:
            return
        rows = self._rows(self.n_pending) if batch else self.head
        if masks is None:
            store[rows] = True
            return
        masks = np.asarray(masks, dtype=bool)
        expected = store[rows].shape
        if masks.shape != expected:
            raise ValueError(
                f"{type(self).__name__}: the legal-action mask(s) to record have shape "
                f"{masks.shape}, expected {expected} (one entry per action of the action space)"
            )
        store[rows] = masks

    def _check_shape(self, what: str, state: Any) -> None:
        """Refuse an observation whose shape is not the buffer's (numpy would broadcast a
        scalar or a length-1 array into every slot entry, or fail with a bare message)."""
        shape = np.shape(state)
        if shape != self.state_shape:
            raise ValueError(
                f"{type(self).__name__}: the {what} to record has shape {shape}, expected "
                f"{self.state_shape} (the state space it was built for); got {state!r:.80}"
            )

    def begin_transitions(self, states: Any, actions: Any) -> None:
        """Copy a vector env's batch of states and actions into the ``len(states)`` slots from
        the head on (PreAct); sub-env ``i``'s row goes to slot ``(head + i) % capacity``."""
        n = leading_length(states) if self.structured else len(states)
        if n > self.capacity:
            raise ValueError(
                f"{type(self).__name__}: capacity {self.capacity} is smaller than the batch of "
                f"{n} transitions a step of the vector env makes"
            )
        rows = self._rows(n)
        self.state[rows] = states
        self.action[rows] = actions
        self.pending = True
        self.n_pending = n
        self.stride = n

    def end_transitions(
        self, rewards: Any, terminals: Any, truncateds: Any, next_states: Any
    ) -> None:
        """Complete the batch begun by :meth:`begin_transitions` (PostAct) and advance the head
        past it. ``next_states`` are the vector env's ``final_state``: the real final
        observations where an episode ended, so no transition crosses a reset."""
        n = self.n_pending
        rows = self._rows(n)
        self.reward[rows] = rewards
        self.terminal[rows] = terminals
        self.truncated[rows] = truncateds
        self.next_state[rows] = next_states
        self.head = (self.head + n) % self.capacity
        self.n_inserted += n
        self.pending = False
        self.n_pending = 1

    def _rows(self, n: int) -> Any:
        head = self.head
        if head + n <= self.capacity:
            return slice(head, head + n)
        return (head + np.arange(n)) % self.capacity

    def append(
        self,
        state: Any,
        action: Any,
        reward: float,
        terminal: bool,
        truncated: bool,
        next_state: Any,
        next_mask: Any = None,
    ) -> None:
        """Record one whole transition (for filling a buffer by hand); ``next_mask``: the next
        state's legal actions, kept when the trajectory keeps masks."""
        self.begin_transition(state, action)
        self.write_next_masks(next_mask)
        self.end_transition(reward, terminal, truncated, next_state)

    def cut_episode(self) -> None:
        """Mark the last transition ``truncated`` unless it already ends an episode (PreEpisode)."""
        if self.n_inserted:
            last = self.head - 1 if self.head else self.capacity - 1
            if not (self.terminal[last] or self.truncated[last]):
                self.truncated[last] = True

    # ---- sampling ----
    def sample_indices(
        self, batch_size: int, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """``batch_size`` slots drawn uniformly with replacement, and ``None`` for the weights
        (a prioritized trajectory returns importance weights there). Samplers call this."""
        n = len(self)
        if n < batch_size:
            raise ValueError(
                f"{type(self).__name__} holds {n} transitions, fewer than batch_size {batch_size}"
            )
        indices = rng.integers(n, size=batch_size)
        oldest = self.head - n
        if oldest:  # the buffer has wrapped around (or the head slot is being rewritten)
            indices += oldest
            indices %= self.capacity
        return indices, None

    # ---- checkpoints ----
    @property
    def n_written(self) -> int:
        """Slots written since construction (or :meth:`clear`), from slot 0 on: the rows
        beyond hold zeros until the buffer wraps (then every slot is written)."""
        written = self.n_inserted + (self.n_pending if self.pending else 0)
        return min(self.capacity, written)

    def state_dict(self) -> dict[str, Any]:
        """Arrays (copies of the written rows only: ``filled`` of them) and counters, for
        checkpoints; the unwritten rows are zeros and are not saved (a 1M-transition replay
        after 500 steps saves 500 rows)."""
        filled = self.n_written
        if any(_any(getattr(self, name)[filled:]) for name in TRACES):
            filled = self.capacity  # rows written past the counters (by hand): keep them all
        masks = self.next_legal_action_mask
        if masks is not None and not masks[filled:].all():
            filled = self.capacity
        extra = {} if masks is None else {"next_legal_action_mask": masks[:filled].copy()}
        return {
            "filled": filled,
            "capacity": self.capacity,
            "state_shape": list(self.state_shape),
            "state_dtype": np.dtype(self.state_dtype).str,
            "action_shape": list(self.action_shape),
            "action_dtype": np.dtype(self.action_dtype).str,
            "head": self.head,
            "n_inserted": self.n_inserted,
            "pending": self.pending,
            "n_pending": self.n_pending,
            "stride": self.stride,
            **{name: _copy(getattr(self, name)[:filled]) for name in TRACES},
            **extra,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved (into the existing arrays)."""
        name = type(self).__name__
        expected = {
            "capacity": self.capacity,
            "state_shape": list(self.state_shape),
            "state_dtype": np.dtype(self.state_dtype).str,
            "action_shape": list(self.action_shape),
            "action_dtype": np.dtype(self.action_dtype).str,
        }
        for key, value in expected.items():
            if key not in state:
                raise ValueError(f"{name}: checkpoint has no {key!r}")
            got = list(state[key]) if isinstance(value, list) else state[key]
            if got != value:
                raise ValueError(
                    f"{name}: checkpoint has {key}={state[key]!r}, this trajectory has {value!r}"
                )
        filled = state.get("filled", self.capacity)  # absent: the whole arrays (older saves)
        if not is_int(filled) or not 0 <= filled <= self.capacity:
            raise ValueError(
                f"{name}: checkpoint has filled={filled!r}, expected an integer in "
                f"[0, {self.capacity}]"
            )
        pending = int(state.get("n_pending", 1)) if state.get("pending") else 0
        written = min(self.capacity, int(state["n_inserted"]) + pending)
        if filled < written:
            raise ValueError(
                f"{name}: checkpoint has filled={filled} rows, fewer than the {written} its "
                f"counters say were written (n_inserted={state['n_inserted']})"
            )
        structured = {t: getattr(self, t) for t in TRACES if self.structured and "state" in t}
        for trace, store in structured.items():  # check everything before writing anything
            store.check_saved(filled, state[trace])
        arrays = {trace: np.asarray(state[trace]) for trace in TRACES if trace not in structured}
        masks = self.next_legal_action_mask
        if (masks is None) != ("next_legal_action_mask" not in state):
            raise ValueError(
                f"{name}: the checkpoint "
                f"{'keeps no' if masks is not None else 'keeps'} legal-action masks, this "
                f"trajectory {'does' if masks is not None else 'does not'} "
                f"(legal_action_masks={masks is not None}); build it as the saved one was built"
            )
        if masks is not None:
            arrays["next_legal_action_mask"] = np.asarray(state["next_legal_action_mask"])
        for trace, array in arrays.items():
            expected_shape = (filled, *getattr(self, trace).shape[1:])
            if array.shape != expected_shape:
                raise ValueError(
                    f"{name}: checkpoint trace {trace!r} has shape {array.shape}, expected "
                    f"{expected_shape}"
                )
        for trace, array in arrays.items():
            target = getattr(self, trace)
            target[:filled] = array
            target[filled:] = trace == "next_legal_action_mask"  # unwritten: zeros, masks True
        for trace, store in structured.items():
            store.load(filled, state[trace])
        self.head = int(state["head"])
        self.n_inserted = int(state["n_inserted"])
        self.pending = bool(state["pending"])
        self.n_pending = int(state.get("n_pending", 1))  # absent before vector envs
        self.stride = int(state.get("stride", 1))


def _any(rows: Any) -> bool:
    """Whether any number of some rows (an array, or a dict of them) is nonzero."""
    if isinstance(rows, dict):
        return any(_any(v) for v in rows.values())
    return bool(rows.any())


def _copy(rows: Any) -> Any:
    """A copy of some rows (an array, or a dict of them: a Dict observation's)."""
    if isinstance(rows, dict):
        return {k: _copy(v) for k, v in rows.items()}
    return rows.copy()


def space_layout(space: gym.Space) -> tuple[tuple[int, ...], np.dtype]:
    """``(shape, dtype)`` of one element of ``space`` in a replay buffer.

    Example:
        >>> import gymnasium as gym
        >>> space_layout(gym.spaces.Discrete(3))
        ((), dtype('int64'))
    """
    if isinstance(space, gym.spaces.Box):
        return tuple(space.shape), np.dtype(np.float32)
    if isinstance(space, gym.spaces.Discrete):
        return (), np.dtype(np.int64)
    if isinstance(space, gym.spaces.MultiDiscrete):
        return tuple(space.shape), np.dtype(np.int64)
    if isinstance(space, gym.spaces.MultiBinary):
        return tuple(space.shape), np.dtype(np.int8)
    raise TypeError(f"no array layout for space {space}")


def _layout(
    owner: str,
    trace: str,
    space: gym.Space | None,
    shape: tuple[int, ...] | None,
    dtype: Any,
    default_dtype: Any,
) -> tuple[tuple[int, ...], np.dtype]:
    if space is not None:
        if not isinstance(space, gym.Space):
            raise TypeError(
                f"{owner}: {trace}_space must be a gymnasium space, got "
                f"{type(space).__name__}: {space!r}"
            )
        try:
            space_shape, space_dtype = space_layout(space)
        except TypeError:
            if shape is None or dtype is None:
                raise TypeError(
                    f"{owner}: cannot store {trace}s of space {space} in arrays; expected a Box, "
                    f"Discrete, MultiDiscrete or MultiBinary space, or give {trace}_shape and "
                    f"{trace}_dtype"
                ) from None
            space_shape, space_dtype = shape, dtype
    else:
        space_shape, space_dtype = (), default_dtype
    shape = space_shape if shape is None else shape
    try:
        shape = tuple(int(s) for s in ((shape,) if isinstance(shape, int) else shape))
    except (TypeError, ValueError):
        raise ValueError(f"{owner}: {trace}_shape must be a tuple of ints, got {shape!r}") from None
    if any(s < 0 for s in shape):
        raise ValueError(f"{owner}: {trace}_shape must not be negative, got {shape!r}")
    try:
        dtype = np.dtype(space_dtype if dtype is None else dtype)
    except TypeError:
        raise ValueError(f"{owner}: {trace}_dtype must be a numpy dtype, got {dtype!r}") from None
    return shape, dtype


# ---- PreEpisode: an episode left unfinished in the buffer is cut there ----
@update.dispatch
def _(
    trajectory: CircularArraySARTTrajectory,
    policy: AbstractPolicy,
    env: AbstractEnv,
    stage: PreEpisodeStage,
    /,
):
    trajectory.cut_episode()


# ---- PreAct: the state and the chosen action, into the slot at the head ----
@update.dispatch
def _(
    trajectory: CircularArraySARTTrajectory,
    policy: AbstractPolicy,
    env: AbstractEnv,
    stage: PreActStage,
    action: object,
    /,
):
    trajectory.begin_transition(env.state, action)


# ---- PostAct: what the action led to; the head advances ----
@update.dispatch
def _(
    trajectory: CircularArraySARTTrajectory,
    policy: AbstractPolicy,
    env: AbstractEnv,
    stage: PostActStage,
    /,
):
    if trajectory.next_legal_action_mask is not None:
        trajectory.write_next_masks(env.legal_action_mask)
    trajectory.end_transition(env.reward, env.is_terminated, env.is_truncated, env.state)


# ---- vector envs: each step records one transition per sub-env (slots head .. head+n-1) ----
# ---- PreAct: the batch of states and actions ----
@update.dispatch
def _(
    trajectory: CircularArraySARTTrajectory,
    policy: AbstractPolicy,
    env: AbstractVectorEnv,
    stage: PreActStage,
    actions: object,
    /,
):
    trajectory.begin_transitions(env.state, actions)


# ---- PostAct: rewards, flags and the next states (the real final ones where episodes ended) ----
@update.dispatch
def _(
    trajectory: CircularArraySARTTrajectory,
    policy: AbstractPolicy,
    env: AbstractVectorEnv,
    stage: PostActStage,
    /,
):
    if trajectory.next_legal_action_mask is not None:
        trajectory.write_next_masks(_final_masks(env), batch=True)
    trajectory.end_transitions(env.reward, env.is_terminated, env.is_truncated, env.final_state)


def _final_masks(env: AbstractVectorEnv) -> Any:
    """The legal-action masks of a vector env's next states: its ``final_legal_action_mask``
    (the real final states' where episodes ended), else its ``legal_action_mask``."""
    final = getattr(env, "final_legal_action_mask", None)
    return env.legal_action_mask if final is None else final
