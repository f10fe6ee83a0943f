"""Tables of state values and action values (numpy), for discrete state spaces.

A state indexes the table directly: an int for a ``Discrete`` state space, a tuple of ints for a
``Tuple`` of ``Discrete`` spaces (Blackjack's ``(player sum, dealer card, usable ace)``), so
``table[state]`` is the value of a state (V) or its row of action values (Q). Learners read and
write ``.table`` directly in their hot loops.

Step sizes: a constant ``step_size`` in (0, 1], or ``step_size=None`` for sample averages (the
step size of the n-th update of an entry is 1/n; the counts are kept in ``.counts``).
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np

from ..core.checks import finite_float, positive_int
from ..core.interfaces import AbstractApproximator

__all__ = ["TabularQApproximator", "TabularVApproximator"]


def _discrete_n(owner: str, what: str, space: gym.spaces.Discrete) -> int:
    if int(space.start) != 0:
        raise ValueError(
            f"{owner}: {what} {space} starts at {int(space.start)}; a table needs a Discrete "
            f"space that starts at 0"
        )
    return int(space.n)


def _state_shape(owner: str, n_states: Any) -> tuple[int, ...]:
    """Table dimensions of a state space: ``(n,)`` or one per element of a Tuple space."""
    if isinstance(n_states, gym.spaces.Discrete):
        return (_discrete_n(owner, "state space", n_states),)
    if isinstance(n_states, gym.spaces.Tuple) and all(
        isinstance(s, gym.spaces.Discrete) for s in n_states.spaces
    ):
        if not n_states.spaces:
            raise ValueError(f"{owner}: the state space {n_states} is an empty Tuple")
        return tuple(_discrete_n(owner, "state space element", s) for s in n_states.spaces)
    if isinstance(n_states, gym.Space):
        raise ValueError(
            f"{owner} needs a Discrete (or Tuple of Discrete) state space, got {n_states}"
        )
    return (positive_int(owner, "n_states", n_states),)


def _action_count(owner: str, n_actions: Any) -> int:
    if isinstance(n_actions, gym.spaces.Discrete):
        return _discrete_n(owner, "action space", n_actions)
    if isinstance(n_actions, gym.Space):
        raise ValueError(f"{owner} needs a Discrete action space, got {n_actions}")
    return positive_int(owner, "n_actions", n_actions)


def _check_step_size(owner: str, step_size: Any) -> float | None:
    if step_size is None:
        return None
    return finite_float(owner, "step_size", step_size, low=0, high=1, low_open=True)


def _fits(space: Any, shape: tuple[int, ...]) -> bool | None:
    """Whether every element of ``space`` indexes a table of ``shape`` (None: not a gymnasium
    space, nothing to check)."""
    if not isinstance(space, gym.Space):
        return None
    if isinstance(space, gym.spaces.Discrete):
        parts: tuple = (space,)
    elif isinstance(space, gym.spaces.Tuple):
        parts = space.spaces
    else:
        return False
    return len(parts) == len(shape) and all(
        isinstance(p, gym.spaces.Discrete) and int(p.start) >= 0 and int(p.start + p.n) <= n
        for p, n in zip(parts, shape, strict=False)
    )


def _describe(shape: tuple[int, ...]) -> str:
    return f"{shape[0]} states" if len(shape) == 1 else f"states of shape {shape}"


def _is_index(value: Any) -> bool:
    """A Python or numpy integer (not a bool), or a 0-d integer array."""
    if type(value) is int or isinstance(value, np.integer):
        return True
    return isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iu"


class _Table(AbstractApproximator):
    """Shared storage, construction checks and checkpoints of the two tables."""

    table: np.ndarray
    counts: np.ndarray | None
    step_size: float | None

    def _setup(self, shape: tuple[int, ...], init: Any, step_size: Any) -> None:
        owner = type(self).__name__
        self.init = finite_float(owner, "init", init)
        self.step_size = _check_step_size(owner, step_size)
        self.table = np.full(shape, self.init, dtype=np.float64)
        self.counts = None if self.step_size is not None else np.zeros(shape, dtype=np.int64)

    def check_state(self, state: Any) -> None:
        """Refuse a state that does not index one entry of the table (``ValueError`` naming the
        state and the valid range): numpy would take ``-1`` as the last row, a float or a
        tuple of the wrong length as something else, and the table would silently be wrong."""
        shape = self.state_shape
        if len(shape) == 1:
            if type(state) is int and 0 <= state < shape[0]:  # the common case, first
                return
            if _is_index(state) and 0 <= state < shape[0]:
                return
            expected = f"an integer in [0, {shape[0]})"
        else:
            if (
                isinstance(state, tuple)
                and len(state) == len(shape)
                and all(_is_index(s) and 0 <= s < n for s, n in zip(state, shape, strict=True))
            ):
                return
            expected = f"a tuple of {len(shape)} integers within {shape}"
        raise ValueError(
            f"{type(self).__name__}: state {state!r} does not index the table; expected "
            f"{expected} (a tabular approximator needs the Discrete state space it was sized "
            f"for)"
        )

    def check_spaces(self, state_space: Any, action_space: Any = None) -> None:
        """Refuse spaces the table cannot index (called when a run is planned): the states of
        ``state_space`` (and, for a Q table, the actions of ``action_space``) must be entries
        of the table. Raises ``ValueError`` naming the table, the space and what fits."""
        owner = type(self).__name__
        rows = self.state_shape
        fits = _fits(state_space, rows)
        if fits is False:
            raise ValueError(
                f"{owner}: a table of {_describe(rows)} cannot index the states of the "
                f"environment's state space {state_space}; expected a Discrete space of at most "
                f"{rows[0] if len(rows) == 1 else rows} states starting at 0 (size the table "
                f"with the space itself: {owner}(env.state_space, ...); for continuous states "
                f"use rk.LinearQApproximator or rk.NeuralNetworkApproximator)"
            )
        n_actions = getattr(self, "n_actions", None)
        if n_actions is not None and _fits(action_space, (n_actions,)) is False:
            raise ValueError(
                f"{owner}: a table of {n_actions} actions cannot index the actions of the "
                f"environment's action space {action_space}; expected a Discrete space of at "
                f"most {n_actions} actions starting at 0"
            )

    def check_target(self, state: Any, target: Any) -> None:
        """Refuse a NaN or infinite update target (``ValueError`` naming it and the state)."""
        if not -math.inf < target < math.inf:  # False for NaN too
            raise ValueError(
                f"{type(self).__name__}: the update target of state {state!r} is {target!r}; "
                f"expected a finite number (a NaN or infinite reward?). The table is unchanged"
            )

    def state_dict(self) -> dict[str, Any]:
        """The table (and the counts of a sample-average table), for checkpoints."""
        return {
            "table": self.table.copy(),
            "counts": None if self.counts is None else self.counts.copy(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a state saved by :meth:`state_dict`, in place (views stay valid)."""
        owner = type(self).__name__
        table = np.asarray(state["table"], dtype=np.float64)
        if table.shape != self.table.shape:
            raise ValueError(
                f"{owner}: checkpoint table has shape {table.shape}, expected {self.table.shape}"
            )
        counts = state.get("counts")
        if (counts is None) != (self.counts is None):
            raise ValueError(
                f"{owner}: checkpoint {'has no' if counts is None else 'has'} visit counts, but "
                f"this table uses step_size={self.step_size!r}"
            )
        if counts is not None:
            counts = np.asarray(counts, dtype=np.int64)
            if counts.shape != self.counts.shape:
                raise ValueError(
                    f"{owner}: checkpoint counts have shape {counts.shape}, expected "
                    f"{self.counts.shape}"
                )
            self.counts[...] = counts
        self.table[...] = table


class TabularQApproximator(_Table):
    """A table of action values ``Q[state][action]``, shape ``(*state_shape, n_actions)``.

    Args:
        n_states: number of states, or the state space (``Discrete``, or a ``Tuple`` of
            ``Discrete``; all starting at 0).
        n_actions: number of actions, or a ``Discrete`` action space starting at 0.
        init: initial value of every entry (a high value gives optimistic starts).
        step_size: constant step size in (0, 1], or None for sample averages.

    ``q(state)`` (also ``approximator(state)``) is the row of action values, a view of
    ``table``; ``update(state, action, target)`` moves ``Q[state][action]`` towards ``target``
    and returns the error ``target - Q[state][action]`` from before the update.

    Example:
        >>> import gymnasium as gym
        >>> q = TabularQApproximator(gym.spaces.Discrete(3), 2, init=1.0, step_size=0.5)
        >>> float(q.update(0, 1, 3.0))
        2.0
        >>> q(0).tolist()
        [1.0, 2.0]
        >>> blackjack = gym.spaces.Tuple((gym.spaces.Discrete(32), gym.spaces.Discrete(11),
        ...                               gym.spaces.Discrete(2)))
        >>> TabularQApproximator(blackjack, 2).q((14, 10, 0)).shape
        (2,)
    """

    def __init__(
        self,
        n_states: int | gym.Space,
        n_actions: int | gym.Space,
        *,
        init: float = 0.0,
        step_size: float | None = 0.1,
    ) -> None:
        owner = type(self).__name__
        self.state_shape = _state_shape(owner, n_states)
        self.n_actions = _action_count(owner, n_actions)
        self._setup((*self.state_shape, self.n_actions), init, step_size)

    def __repr__(self) -> str:
        states = self.state_shape[0] if len(self.state_shape) == 1 else self.state_shape
        return (
            f"TabularQApproximator({states}, {self.n_actions}, init={self.init}, "
            f"step_size={self.step_size})"
        )

    def q(self, state: Any) -> np.ndarray:
        """The action values of ``state`` (a view: writing to it changes the table)."""
        try:
            return self.table[state]
        except (IndexError, TypeError, ValueError):
            self.check_state(state)  # a clear message naming the state and the range
            raise

    __call__ = q

    def update(self, state: Any, action: int, target: float) -> float:
        """Move ``Q[state][action]`` towards ``target``; return the error before the update.

        A state outside the table, an action outside ``[0, n_actions)`` or a target that is not
        finite raise ``ValueError`` and change nothing."""
        self.check_state(state)
        if not (_is_index(action) and 0 <= action < self.n_actions):
            raise ValueError(
                f"TabularQApproximator: action {action!r} does not index the table; expected "
                f"an integer in [0, {self.n_actions})"
            )
        self.check_target(state, target)
        row = self.table[state]
        error = target - row[action]
        if self.counts is None:
            row[action] += self.step_size * error
        else:
            counts = self.counts[state]
            counts[action] += 1
            row[action] += error / counts[action]
        return error


class TabularVApproximator(_Table):
    """A table of state values ``V[state]``, shape ``state_shape``.

    Args:
        n_states: number of states, or the state space (``Discrete``, or a ``Tuple`` of
            ``Discrete``; all starting at 0).
        init: initial value of every entry.
        step_size: constant step size in (0, 1], or None for sample averages.

    Example:
        >>> v = TabularVApproximator(5, step_size=None)  # sample averages
        >>> for g in (1.0, 2.0, 6.0):
        ...     _ = v.update(3, g)
        >>> float(v(3))
        3.0
    """

    def __init__(
        self,
        n_states: int | gym.Space,
        *,
        init: float = 0.0,
        step_size: float | None = 0.1,
    ) -> None:
        self.state_shape = _state_shape(type(self).__name__, n_states)
        self._setup(self.state_shape, init, step_size)

    def __repr__(self) -> str:
        states = self.state_shape[0] if len(self.state_shape) == 1 else self.state_shape
        return f"TabularVApproximator({states}, init={self.init}, step_size={self.step_size})"

    def __call__(self, state: Any) -> float:
        try:
            return self.table[state]
        except (IndexError, TypeError, ValueError):
            self.check_state(state)  # a clear message naming the state and the range
            raise

    def update(self, state: Any, target: float) -> float:
        """Move ``V[state]`` towards ``target``; return the error before the update (a state
        outside the table or a target that is not finite raise ``ValueError``)."""
        self.check_state(state)
        self.check_target(state, target)
        table = self.table
        error = target - table[state]
        if self.counts is None:
            table[state] += self.step_size * error
        else:
            self.counts[state] += 1
            table[state] += error / self.counts[state]
        return error
