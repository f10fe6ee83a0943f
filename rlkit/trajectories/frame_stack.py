"""``FrameStackReplay``: a replay of frame-stacked image observations that stores each frame
once (DQN's replay memory, Mnih et al. 2015; Dopamine's and Stable-Baselines3's
``optimize_memory_usage`` in spirit).

A frame-stacked observation ``(k, H, W)`` (gymnasium's ``FrameStackObservation``) shares
``k - 1`` frames with the previous one, and ``state`` and ``next_state`` of a transition share
``k - 1`` more; storing both stacks per transition (``CircularArraySARTTrajectory``) costs
``2k`` frames per transition, this costs one. Each frame is written once into a ring of frames
with the absolute index of the frame before it in its episode (an episode's first frame points
to itself); a stack is rebuilt by following ``k - 1`` of those links, so an episode's first
stacks repeat its first frame, as ``FrameStackObservation(padding_type="reset")`` does at reset,
and a stack never holds frames of two episodes.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from ..core.checks import is_int, positive_int
from .circular import CircularArraySARTTrajectory, _layout

__all__ = ["FrameStackReplay", "StackedFrames"]

_SMALL = ("action", "reward", "terminal", "truncated", "next_frame", "base")


class StackedFrames:
    """The ``state`` (or ``next_state``) trace of a :class:`FrameStackReplay`, read like an
    array of stacks: ``view[slots]`` rebuilds the stacks of those slots, shape
    ``(*slots.shape, k, H, W)``, ``uint8``.

    Example:
        >>> import numpy as np
        >>> t = FrameStackReplay(4, state_shape=(2, 1, 1))
        >>> t.append(np.zeros((2, 1, 1), np.uint8), 0, 0.0, False, False,
        ...          np.array([0, 7], np.uint8).reshape(2, 1, 1))
        >>> t.next_state[np.array([0])].ravel().tolist(), t.state.shape
        ([0, 7], (4, 2, 1, 1))
    """

    def __init__(self, replay: FrameStackReplay, next_state: bool) -> None:
        self.replay = replay
        self.next = next_state

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.replay.capacity, *self.replay.state_shape)

    @property
    def dtype(self) -> np.dtype:
        return self.replay.state_dtype

    def __len__(self) -> int:
        return self.replay.capacity

    def __getitem__(self, slots: Any) -> np.ndarray:
        r = self.replay
        newest = r.next_frame[slots]
        if not self.next:
            newest = r.frame_prev[newest % r.frame_capacity]
        return r.stack(newest)


class FrameStackReplay(CircularArraySARTTrajectory):
    """Replay for frame-stacked ``uint8`` image observations ``(k, H, W)`` that stores each
    frame once: memory per transition is one frame (plus about 40 bytes of action, reward,
    flags and links), not the ``2k`` frames of a ``CircularArraySARTTrajectory``.

    It records, samples and checkpoints like ``CircularArraySARTTrajectory`` (the same
    ``BatchSampler``/``NStepBatchSampler``, single and vector envs, ``state_dict``): ``state``
    and ``next_state`` are :class:`StackedFrames` views that rebuild stacks from the frame
    ring. Recording checks what it relies on and says so when an env breaks it: an episode's
    first observation must be ``k`` copies of one frame (gymnasium's ``FrameStackObservation``
    with its default ``padding_type="reset"``), and each next observation must be the previous
    one shifted by one frame. Stacks of sampled transitions equal the observations the env gave,
    bit for bit, including the real final observation of a truncated episode.

    The frame ring holds ``frame_capacity`` frames (default: ``capacity`` plus 1/32 of it, for
    the first frames of episodes and the ``k - 1`` frames older transitions still need); it
    grows when short episodes need more. ``nbytes`` is the memory of all its arrays.

    Args:
        capacity: transitions kept (the oldest overwritten first).
        state_space: the env's observation space, a ``uint8`` ``Box`` of shape ``(k, H, W)``
            (or give ``state_shape``).
        action_space: as for ``CircularArraySARTTrajectory``.
        frame_capacity: frames in the ring at first (at least ``capacity + k``).

    Example:
        >>> import gymnasium as gym, numpy as np, rlkit as rk
        >>> space = gym.spaces.Box(0, 255, (4, 84, 84), np.uint8)
        >>> t = rk.FrameStackReplay(1000, space, gym.spaces.Discrete(6))
        >>> round(t.nbytes / t.capacity / (84 * 84), 2)  # bytes per transition, in frames
        1.04
    """

    def __init__(
        self,
        capacity: int,
        state_space: gym.Space | None = None,
        action_space: gym.Space | None = None,
        *,
        state_shape: tuple[int, ...] | None = None,
        action_shape: tuple[int, ...] | None = None,
        action_dtype: Any = None,
        frame_capacity: int | None = None,
    ) -> None:
        name = type(self).__name__
        capacity = positive_int(name, "capacity", capacity)
        if state_space is None and state_shape is None:
            raise ValueError(f"{name}: give state_space (e.g. env.state_space) or state_shape")
        if state_space is not None and not (
            isinstance(state_space, gym.spaces.Box) and state_space.dtype == np.uint8
        ):
            raise TypeError(
                f"{name}: needs frame-stacked uint8 image observations (a uint8 Box of shape "
                f"(k, H, W)), got state_space {state_space}; use CircularArraySARTTrajectory "
                f"for other observations"
            )
        shape = tuple(state_space.shape) if state_shape is None else state_shape
        self.state_shape, self.state_dtype = _layout(
            name, "state", None, shape, np.uint8, np.uint8
        )
        if len(self.state_shape) < 2:
            raise ValueError(
                f"{name}: observations must be stacks of frames (k, H, ...), got shape "
                f"{self.state_shape}"
            )
        self.action_shape, self.action_dtype = _layout(
            name, "action", action_space, action_shape, action_dtype, np.int64
        )
        self.capacity = int(capacity)
        self.k = self.state_shape[0]
        self.frame_shape = self.state_shape[1:]
        if frame_capacity is None:
            frame_capacity = self.capacity + self.capacity // 32 + 2 * self.k
        frame_capacity = positive_int(name, "frame_capacity", frame_capacity)
        if frame_capacity < self.capacity + self.k:
            raise ValueError(
                f"{name}: frame_capacity must be at least capacity + k = "
                f"{self.capacity + self.k}, got {frame_capacity}"
            )
        n = self.capacity
        self.action = np.zeros((n, *self.action_shape), self.action_dtype)
        self.reward = np.zeros(n, np.float32)
        self.terminal = np.zeros(n, bool)
        self.truncated = np.zeros(n, bool)
        self.next_frame = np.zeros(n, np.int64)  # absolute index of next_state's newest frame
        self.base = np.zeros(n, np.int64)  # absolute index of state's oldest frame
        self._allocate_frames(frame_capacity)
        self.state = StackedFrames(self, next_state=False)
        self.next_state = StackedFrames(self, next_state=True)
        self._reset_counters()

    def _allocate_frames(self, frame_capacity: int) -> None:
        self.frame_capacity = int(frame_capacity)
        self.frames = np.zeros((self.frame_capacity, *self.frame_shape), np.uint8)
        self.frame_prev = np.zeros(self.frame_capacity, np.int64)

    def _reset_counters(self) -> None:
        self.head = 0
        self.n_inserted = 0
        self.pending = False
        self.n_pending = 1
        self.stride = 1
        self.n_frames = 0  # frames written since construction (the next frame's index)
        self.last = np.full(1, -1, np.int64)  # per (sub-)env: newest frame, -1: episode starts
        self.pending_frame = np.full(1, -1, np.int64)  # per pending slot: state's newest frame

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(capacity={self.capacity}, state_shape={self.state_shape}, "
            f"len={len(self)}, frames={self.frame_capacity})"
        )

    @property
    def nbytes(self) -> int:
        """Bytes of every array the replay holds (frames, links, actions, rewards, flags)."""
        arrays = [self.frames, self.frame_prev, *(getattr(self, name) for name in _SMALL)]
        return int(sum(a.nbytes for a in arrays))

    def clear(self) -> None:
        """Forget every stored transition and frame."""
        for name in _SMALL:
            getattr(self, name).fill(0)
        self.frames.fill(0)
        self.frame_prev.fill(0)
        self._reset_counters()

    # ---- rebuilding stacks ----
    def stack(self, newest: Any) -> np.ndarray:
        """The stacks whose newest frames have absolute indices ``newest`` (any shape):
        ``(*newest.shape, k, H, W)``."""
        newest = np.asarray(newest, np.int64)
        out = np.empty((*newest.shape, *self.state_shape), np.uint8)
        trailing = (slice(None),) * len(self.frame_shape)
        f = newest
        for j in range(self.k - 1, -1, -1):
            ring = f % self.frame_capacity
            out[(Ellipsis, j, *trailing)] = self.frames[ring]
            if j:
                f = self.frame_prev[ring]
        return out

    def _bottom(self, newest: int) -> int:
        """The oldest frame of the stack whose newest frame is ``newest``."""
        f = newest
        for _ in range(self.k - 1):
            f = int(self.frame_prev[f % self.frame_capacity])
        return f

    # ---- writing frames ----
    def _write_frame(self, frame: np.ndarray, prev: int) -> int:
        """Write ``frame`` as the next absolute frame, linked to ``prev`` (-1: itself, an
        episode's first frame); grow the ring first if that would overwrite a needed frame."""
        w = self.n_frames
        if w >= self.frame_capacity and w - self.frame_capacity >= self._needed():
            self._grow(w)
        ring = w % self.frame_capacity
        self.frames[ring] = frame
        self.frame_prev[ring] = w if prev < 0 else prev
        self.n_frames = w + 1
        return w

    def _needed(self) -> int:
        """The oldest frame that a stored or pending transition, or a running episode's next
        stacks, still need (stored transitions are oldest first within each (sub-)env, so the
        ``stride`` oldest slots hold the oldest needs)."""
        n = len(self)
        candidates = [self.base[(self.oldest + np.arange(min(n, self.stride))) % self.capacity]]
        if self.pending:
            candidates.append(self.base[self._rows_array(self.n_pending)])
        candidates.append(np.array([self._bottom(int(f)) for f in self.last if f >= 0], np.int64))
        values = np.concatenate(candidates)
        return int(values.min()) if values.size else self.n_frames

    def _grow(self, w: int) -> None:
        """Enlarge the frame ring by halves until writing frame ``w`` overwrites no needed
        frame; the live frames keep their absolute indices."""
        needed = self._needed()
        size = self.frame_capacity
        while w - size >= needed:
            size += max(size // 2, 1)
        live = np.arange(needed, w)
        frames = self.frames[live % self.frame_capacity]
        prev = self.frame_prev[live % self.frame_capacity]
        self._allocate_frames(size)
        self.frames[live % size] = frames
        self.frame_prev[live % size] = prev

    def _rows_array(self, n: int) -> np.ndarray:
        return (self.head + np.arange(n)) % self.capacity

    # ---- recording ----
    def begin_transition(self, state: Any, action: Any) -> None:
        """Record the state (a new episode's first frame, or a check that it continues the
        episode) and the action into the slot at the head (PreAct)."""
        self.pending, self.n_pending = True, 1
        self.base[self.head] = self.n_frames  # not needed yet (it is overwritten)
        self._begin(0, self.head, state)
        self.action[self.head] = action

    def end_transition(
        self, reward: float, terminal: bool, truncated: bool, next_state: Any
    ) -> None:
        """Complete the transition at the head with the next state's newest frame (PostAct)."""
        head = self.head
        self.reward[head] = reward
        self.terminal[head] = terminal
        self.truncated[head] = truncated
        self._end(0, head, next_state, bool(terminal or truncated))
        self.head = head + 1 if head + 1 < self.capacity else 0
        self.n_inserted += 1
        self.pending = False

    def begin_transitions(self, states: Any, actions: Any) -> None:
        """A vector env's batch of states and actions (PreAct), sub-env ``i`` in slot
        ``(head + i) % capacity``."""
        n = len(states)
        if n > self.capacity:
            raise ValueError(
                f"{type(self).__name__}: capacity {self.capacity} is smaller than the batch of "
                f"{n} transitions a step of the vector env makes"
            )
        if len(self.last) != n:
            if self.n_inserted or self.pending:
                raise ValueError(
                    f"{type(self).__name__}: recorded {len(self.last)} env(s) at a time, now "
                    f"{n}; use one replay per env"
                )
            self.last = np.full(n, -1, np.int64)
            self.pending_frame = np.full(n, -1, np.int64)
        self.stride = n
        self.pending = True
        self.n_pending = n
        rows = self._rows_array(n)
        self.base[rows] = self.n_frames  # not needed yet (they are overwritten)
        for i in range(n):
            self._begin(i, int(rows[i]), states[i])
        self.action[rows] = actions

    def end_transitions(
        self, rewards: Any, terminals: Any, truncateds: Any, next_states: Any
    ) -> None:
        """Complete the batch begun by :meth:`begin_transitions` (PostAct)."""
        n = self.n_pending
        rows = self._rows_array(n)
        self.reward[rows] = rewards
        self.terminal[rows] = terminals
        self.truncated[rows] = truncateds
        ends = np.asarray(terminals, bool) | np.asarray(truncateds, bool)
        for i in range(n):
            self._end(i, int(rows[i]), next_states[i], bool(ends[i]))
        self.head = (self.head + n) % self.capacity
        self.n_inserted += n
        self.pending = False
        self.n_pending = 1

    def _begin(self, env: int, slot: int, state: Any) -> None:
        state = self._checked(state, "state")
        last = int(self.last[env])
        if last >= 0:
            if not np.array_equal(self.stack(last), state):
                raise ValueError(
                    f"{type(self).__name__}: the state to record is not the next state recorded "
                    f"last for this env, so stacks cannot be rebuilt from stored frames; "
                    f"record every step of an episode (an Agent does), and reset the env "
                    f"between episodes"
                )
            newest, base = last, self._bottom(last)
        else:  # an episode's first observation: k copies of its first frame
            first = state[-1]
            if not (state == first).all():
                raise ValueError(
                    f"{type(self).__name__}: an episode's first observation must be {self.k} "
                    f"copies of its first frame (gymnasium's FrameStackObservation with "
                    f"padding_type='reset', its default); got a stack of different frames"
                )
            newest = base = self._write_frame(first, -1)
        self.base[slot] = base
        self.pending_frame[env] = newest
        self.last[env] = newest

    def _end(self, env: int, slot: int, next_state: Any, ended: bool) -> None:
        next_state = self._checked(next_state, "next state")
        newest = int(self.pending_frame[env])
        if self.k > 1 and not np.array_equal(self.stack(newest)[1:], next_state[:-1]):
            raise ValueError(
                f"{type(self).__name__}: the next state is not the state shifted by one frame; "
                f"observations must be frame stacks (gymnasium's FrameStackObservation)"
            )
        w = self._write_frame(next_state[-1], newest)
        self.next_frame[slot] = w
        self.last[env] = -1 if ended else w

    def _checked(self, state: Any, what: str) -> np.ndarray:
        array = np.asarray(state)
        if array.shape != self.state_shape:
            raise ValueError(
                f"{type(self).__name__}: the {what} to record has shape {array.shape}, "
                f"expected {self.state_shape} (the state space it was built for)"
            )
        return array

    def cut_episode(self) -> None:
        """Mark the last transition ``truncated`` unless it already ends an episode, and start
        new stacks (PreEpisode)."""
        super().cut_episode()
        self.last.fill(-1)

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """The written rows of the small arrays, the live part of the frame ring and the
        counters (bit-exact on loading)."""
        filled = self.n_written
        frames = min(self.n_frames, self.frame_capacity)
        return {
            "filled": filled,
            "capacity": self.capacity,
            "state_shape": list(self.state_shape),
            "action_shape": list(self.action_shape),
            "action_dtype": np.dtype(self.action_dtype).str,
            "frame_capacity": self.frame_capacity,
            "n_frames": self.n_frames,
            "head": self.head,
            "n_inserted": self.n_inserted,
            "pending": self.pending,
            "n_pending": self.n_pending,
            "stride": self.stride,
            "last": self.last.copy(),
            "pending_frame": self.pending_frame.copy(),
            "frames": self.frames[:frames].copy(),
            "frame_prev": self.frame_prev[:frames].copy(),
            **{name: getattr(self, name)[:filled].copy() for name in _SMALL},
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved."""
        name = type(self).__name__
        expected = {
            "capacity": self.capacity,
            "state_shape": list(self.state_shape),
            "action_shape": list(self.action_shape),
            "action_dtype": np.dtype(self.action_dtype).str,
        }
        for key, value in expected.items():
            got = state.get(key)
            got = list(got) if isinstance(value, list) and got is not None else got
            if got != value:
                raise ValueError(
                    f"{name}: checkpoint has {key}={state.get(key)!r}, this replay has {value!r}"
                )
        filled, n_frames = state["filled"], state["n_frames"]
        frame_capacity = state["frame_capacity"]
        for key, value, high in (
            ("filled", filled, self.capacity),
            ("frame_capacity", frame_capacity, None),
        ):
            if not is_int(value) or value < 0 or (high is not None and value > high):
                raise ValueError(f"{name}: checkpoint has {key}={value!r}")
        self._allocate_frames(int(frame_capacity))
        frames = min(int(n_frames), self.frame_capacity)
        self.frames[:frames] = np.asarray(state["frames"])
        self.frame_prev[:frames] = np.asarray(state["frame_prev"])
        for trace in _SMALL:
            target = getattr(self, trace)
            target[:filled] = np.asarray(state[trace])
            target[filled:] = 0
        self.n_frames = int(n_frames)
        self.head = int(state["head"])
        self.n_inserted = int(state["n_inserted"])
        self.pending = bool(state["pending"])
        self.n_pending = int(state["n_pending"])
        self.stride = int(state["stride"])
        self.last = np.asarray(state["last"], np.int64).copy()
        self.pending_frame = np.asarray(state["pending_frame"], np.int64).copy()
