"""Explorers: turn a vector of action values into an action (and into action probabilities).

An explorer is called as ``explorer(values, mask=None) -> int`` (the index of the chosen action)
and ``explorer.prob(values, mask=None) -> np.ndarray`` (the probability of every action under the
explorer's current state, exactly 0 on the actions that ``mask`` marks illegal). ``mask`` is a
boolean array of the same length as ``values`` (None: every action is legal). Each explorer owns
its random generator (``seed=``) and never reads global random state.

``prob`` never changes the explorer; ``__call__`` may (the epsilon schedule's step counter, the
UCB action counts).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.checks import finite_float, non_negative_int, positive_int, unit_interval
from ..core.dispatch import statistics

__all__ = [
    "AbstractExplorer",
    "EpsilonGreedyExplorer",
    "GreedyExplorer",
    "UCBExplorer",
    "SoftmaxExplorer",
]

Seed = int | np.random.SeedSequence | np.random.Generator | None

# Up to this many actions, the greedy choice works on a Python list (faster than numpy calls on
# tiny arrays); above it, on the array.
_SMALL = 64


class AbstractExplorer(ABC):
    """Chooses an action from action values: ``explorer(values, mask=None) -> int``;
    ``explorer.batch(values, masks)`` chooses one per row for a vector env's batch.

    Subclasses implement ``__call__`` and ``prob``; the default :meth:`state_dict` saves the
    generator ``self.rng``.

    Example:
        >>> import numpy as np
        >>> import rlkit as rk
        >>> class Greedy(rk.AbstractExplorer):
        ...     \"\"\"Always the first of the largest values.\"\"\"
        ...     def __call__(self, values, mask=None):
        ...         return int(np.argmax(values))
        ...     def prob(self, values, mask=None):
        ...         return np.eye(len(values))[np.argmax(values)]
        >>> Greedy()([0.1, 0.5, 0.2]), Greedy().batch(np.array([[1.0, 0.0], [0.0, 1.0]])).tolist()
        (1, [0, 1])
    """

    rng: np.random.Generator

    @abstractmethod
    def __call__(self, values: np.ndarray, mask: np.ndarray | None = None) -> int:
        """The index of the chosen action (never one that ``mask`` marks illegal)."""

    @abstractmethod
    def prob(self, values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Probability of choosing each action in the explorer's current state (sums to 1)."""

    def batch(self, values: np.ndarray, masks: np.ndarray | None = None) -> np.ndarray:
        """One action per row of ``values`` (shape ``(n_envs, n_actions)``, a vector env's
        batch; ``masks`` of the same shape or None): row ``i``'s action is exactly what calling
        the explorer on row ``i`` would give, the rows taken in order (schedules such as
        epsilon's advance once per row, i.e. per transition). Returns an int64 array."""
        values = np.asarray(values)
        if values.ndim != 2:
            raise ValueError(
                f"{type(self).__name__}.batch: values must have shape (n_envs, n_actions), got "
                f"shape {values.shape}"
            )
        if masks is None:
            return np.array([self(row) for row in values], dtype=np.int64)
        return np.array([self(row, mask) for row, mask in zip(values, masks, strict=True)],
                        dtype=np.int64)

    def state_dict(self) -> dict[str, Any]:
        """The explorer's changing state, for checkpoints."""
        return {"rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a state saved by :meth:`state_dict`."""
        self.rng.bit_generator.state = state["rng"]


# ---------------------------------------------------------------------------------------------
# helpers


def _as_values(values: Any) -> np.ndarray:
    if type(values) is not np.ndarray:
        values = np.asarray(values, dtype=np.float64)
    return values


def _legal(owner: str, values: np.ndarray, mask: Any) -> np.ndarray:
    """Indices of the legal actions (a check of the mask's shape and that one is legal)."""
    mask = np.asarray(mask)
    if mask.dtype != np.bool_:
        raise ValueError(f"{owner}: mask must be a boolean array, got dtype {mask.dtype}")
    if mask.shape != values.shape:
        raise ValueError(
            f"{owner}: mask shape {mask.shape} does not match the values' shape {values.shape}"
        )
    legal = np.flatnonzero(mask)
    if legal.size == 0:
        raise ValueError(f"{owner}: the mask marks no action legal")
    return legal


def _random_argmax(values: np.ndarray, rng: np.random.Generator) -> int:
    """Index of a maximal entry of a 1-D array, ties broken uniformly at random."""
    if values.shape[0] <= _SMALL:
        vals = values.tolist()
        best = max(vals)
        if vals.count(best) == 1:
            return vals.index(best)
        ties = [i for i, v in enumerate(vals) if v == best]
        return ties[int(rng.random() * len(ties))]
    ties = np.flatnonzero(values == values.max())
    if ties.size == 1:
        return int(ties[0])
    return int(ties[int(rng.random() * ties.size)])


def _greedy_prob(values: np.ndarray) -> np.ndarray:
    """Uniform over the maximal entries of ``values``."""
    best = values == values.max()
    return best / np.count_nonzero(best)


def _embed(n: int, legal: np.ndarray | None, p: np.ndarray) -> np.ndarray:
    if legal is None:
        return p
    out = np.zeros(n)
    out[legal] = p
    return out


# ---------------------------------------------------------------------------------------------


class EpsilonGreedyExplorer(AbstractExplorer):
    """Epsilon-greedy: with probability epsilon a uniformly random legal action, otherwise a
    greedy one (ties broken uniformly at random among the maximal legal actions).

    Schedules (``kind``), with ``t`` the number of calls made so far:

    * ``"constant"``: epsilon is always ``epsilon``;
    * ``"linear"``: ``epsilon_start`` during the first ``warmup_steps`` calls, then a straight
      line down to ``epsilon_end``, reached after ``decay_steps`` more calls, and constant after;
    * ``"exp"``: ``epsilon_start`` during warm-up, then
      ``epsilon_end + (epsilon_start - epsilon_end) * exp(-(t - warmup_steps) / decay_steps)``.

    ``epsilon_end`` defaults to ``epsilon``, so ``EpsilonGreedyExplorer(0.01, kind="linear",
    decay_steps=1000)`` decays from 1 to 0.01 over 1000 calls. The counter advances once per
    ``__call__`` (never in :meth:`prob`); ``explorer.epsilon`` is the value the next call uses.

    Args:
        epsilon: the constant epsilon, or the final one of a decaying schedule.
        kind: ``"constant"``, ``"linear"`` or ``"exp"``.
        epsilon_start: epsilon during warm-up and at the start of the decay.
        epsilon_end: final epsilon of a decay (None: ``epsilon``).
        decay_steps: length of a linear decay, time constant of an exponential one (calls).
        warmup_steps: calls at ``epsilon_start`` before the decay begins.
        seed: seed of the explorer's generator (int, ``SeedSequence`` or ``Generator``).

    Example:
        >>> import numpy as np
        >>> explorer = EpsilonGreedyExplorer(0.0, seed=0)
        >>> explorer(np.array([0.0, 2.0, 1.0]))
        1
        >>> explorer.prob(np.array([0.0, 2.0, 2.0])).tolist()
        [0.0, 0.5, 0.5]
        >>> decaying = EpsilonGreedyExplorer(0.1, kind="linear", decay_steps=10, seed=0)
        >>> decaying.epsilon, decaying.epsilon_at(5), decaying.epsilon_at(100)
        (1.0, 0.55, 0.1)
    """

    _KINDS = ("constant", "linear", "exp")

    def __init__(
        self,
        epsilon: float = 0.1,
        *,
        kind: str = "constant",
        epsilon_start: float = 1.0,
        epsilon_end: float | None = None,
        decay_steps: int | None = None,
        warmup_steps: int = 0,
        seed: Seed = None,
    ) -> None:
        name = type(self).__name__
        if kind not in self._KINDS:
            raise ValueError(f"{name}: kind must be one of {self._KINDS}, got {kind!r}")
        self.kind = kind
        epsilon = unit_interval(name, "epsilon", epsilon)
        self.epsilon_start = unit_interval(name, "epsilon_start", epsilon_start)
        self.epsilon_end = (
            epsilon if epsilon_end is None else unit_interval(name, "epsilon_end", epsilon_end)
        )
        self.warmup_steps = non_negative_int(name, "warmup_steps", warmup_steps)
        if kind == "constant":
            if decay_steps is not None:
                raise ValueError(
                    f"{name}: decay_steps={decay_steps!r} needs kind='linear' or kind='exp' "
                    f"(kind is 'constant')"
                )
            self.decay_steps = None
        else:
            self.decay_steps = positive_int(name, "decay_steps", decay_steps)
        self._constant = kind == "constant"
        self._epsilon = epsilon
        self.step = 0
        self.rng = np.random.default_rng(seed)

    def __repr__(self) -> str:
        if self._constant:
            return f"EpsilonGreedyExplorer({self._epsilon})"
        return (
            f"EpsilonGreedyExplorer({self.epsilon_end}, kind={self.kind!r}, "
            f"epsilon_start={self.epsilon_start}, decay_steps={self.decay_steps}, "
            f"warmup_steps={self.warmup_steps})"
        )

    def epsilon_at(self, step: int) -> float:
        """Epsilon after ``step`` calls."""
        if self._constant:
            return self._epsilon
        n = step - self.warmup_steps
        if n <= 0:
            return self.epsilon_start
        start, end = self.epsilon_start, self.epsilon_end
        if self.kind == "linear":
            if n >= self.decay_steps:
                return end
            return end + (start - end) * (1.0 - n / self.decay_steps)
        return end + (start - end) * math.exp(-n / self.decay_steps)

    @property
    def epsilon(self) -> float:
        """The epsilon the next call uses."""
        return self._epsilon if self._constant else self.epsilon_at(self.step)

    def __call__(self, values: np.ndarray, mask: np.ndarray | None = None) -> int:
        step = self.step
        self.step = step + 1
        epsilon = self._epsilon if self._constant else self.epsilon_at(step)
        if type(values) is not np.ndarray:
            values = _as_values(values)
        rng = self.rng
        if mask is None:
            if rng.random() < epsilon:
                return int(rng.random() * values.shape[0])
            return _random_argmax(values, rng)
        legal = _legal(type(self).__name__, values, mask)
        if rng.random() < epsilon:
            return int(legal[int(rng.random() * legal.size)])
        return int(legal[_random_argmax(values[legal], rng)])

    def act_lazily(self, values: Callable[[], Any], n_actions: int) -> int:
        """``self(values())`` (no mask) with ``values`` called only for a greedy action: the
        same action and the same draws of the generator (an exploring action depends on the
        number of actions ``n_actions`` alone), without the action values an exploring step
        does not read (``QBasedPolicy`` acts so when its learner's values are a pure
        function of the state).

        Example:
            >>> import numpy as np
            >>> lazy, eager = (EpsilonGreedyExplorer(0.5, seed=3) for _ in range(2))
            >>> values = np.array([0.0, 2.0, 1.0])
            >>> [lazy.act_lazily(lambda: values, 3) for _ in range(6)] == [
            ...     eager(values) for _ in range(6)]
            True
        """
        step = self.step
        self.step = step + 1
        epsilon = self._epsilon if self._constant else self.epsilon_at(step)
        rng = self.rng
        if rng.random() < epsilon:
            return int(rng.random() * n_actions)
        chosen = values()
        if type(chosen) is not np.ndarray:
            chosen = _as_values(chosen)
        return _random_argmax(chosen, rng)

    def prob(self, values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        values = _as_values(values)
        epsilon = self.epsilon
        if mask is None and values.shape[0] <= _SMALL:  # the common case, kept cheap
            vals = values.tolist()
            best = max(vals)
            explore = epsilon / len(vals)
            greedy = (1.0 - epsilon) / vals.count(best) + explore
            return np.array([greedy if v == best else explore for v in vals])
        legal = None if mask is None else _legal(type(self).__name__, values, mask)
        sub = values if legal is None else values[legal]
        p = (1.0 - epsilon) * _greedy_prob(sub) + epsilon / sub.shape[0]
        return _embed(values.shape[0], legal, p)

    def state_dict(self) -> dict[str, Any]:
        return {"rng": self.rng.bit_generator.state, "step": self.step}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.rng.bit_generator.state = state["rng"]
        self.step = int(state["step"])


@statistics.dispatch
def _(explorer: EpsilonGreedyExplorer, /):
    return {"epsilon": explorer.epsilon}


class GreedyExplorer(AbstractExplorer):
    """Always a maximal legal action, ties broken uniformly at random.

    Example:
        >>> import numpy as np
        >>> explorer = GreedyExplorer(seed=0)
        >>> explorer(np.array([3.0, 1.0, 2.0]))
        0
        >>> explorer.prob(np.array([3.0, 1.0, 3.0]), mask=np.array([True, True, False])).tolist()
        [1.0, 0.0, 0.0]
    """

    def __init__(self, seed: Seed = None) -> None:
        self.rng = np.random.default_rng(seed)

    def __repr__(self) -> str:
        return "GreedyExplorer()"

    def __call__(self, values: np.ndarray, mask: np.ndarray | None = None) -> int:
        values = _as_values(values)
        if mask is None:
            return _random_argmax(values, self.rng)
        legal = _legal(type(self).__name__, values, mask)
        return int(legal[_random_argmax(values[legal], self.rng)])

    def prob(self, values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        values = _as_values(values)
        if mask is None:
            return _greedy_prob(values)
        legal = _legal(type(self).__name__, values, mask)
        return _embed(values.shape[0], legal, _greedy_prob(values[legal]))


class UCBExplorer(AbstractExplorer):
    """Upper confidence bound (UCB1) action selection, for bandits (a single state).

    Chooses ``argmax_a values[a] + c * sqrt(ln t / N(a))`` where ``N(a)`` counts how often this
    explorer chose ``a`` and ``t`` is the number of choices so far plus one (Sutton & Barto, eq.
    2.10). Legal actions never tried come first (uniformly at random among them); remaining ties
    are broken uniformly at random. ``prob`` is one-hot on the action the next call chooses
    (split evenly when several tie).

    Args:
        c: exploration strength, ``c >= 0``.
        n_actions: number of actions (None: taken from the first call's values).
        seed: seed of the explorer's generator (for tie-breaking).

    Example:
        >>> import numpy as np
        >>> explorer = UCBExplorer(c=2.0, seed=0)
        >>> sorted(explorer(np.zeros(3)) for _ in range(3))  # every arm once first
        [0, 1, 2]
        >>> explorer.counts.tolist()
        [1, 1, 1]
    """

    def __init__(self, c: float = 2.0, *, n_actions: int | None = None, seed: Seed = None):
        name = type(self).__name__
        self.c = finite_float(name, "c", c, low=0)
        self.counts: np.ndarray | None = None
        if n_actions is not None:
            n_actions = positive_int(name, "n_actions", n_actions)
            self.counts = np.zeros(n_actions, dtype=np.int64)
        self.t = 0
        self.rng = np.random.default_rng(seed)

    def __repr__(self) -> str:
        return f"UCBExplorer(c={self.c})"

    def _scores(self, values: np.ndarray, legal: np.ndarray | None) -> np.ndarray:
        n = values.shape[0]
        if self.counts is None:
            self.counts = np.zeros(n, dtype=np.int64)
        elif self.counts.shape[0] != n:
            raise ValueError(
                f"UCBExplorer: got {n} action values, but the explorer counts "
                f"{self.counts.shape[0]} actions"
            )
        counts = self.counts if legal is None else self.counts[legal]
        sub = values if legal is None else values[legal]
        with np.errstate(divide="ignore", invalid="ignore"):  # untried: inf below
            bonus = self.c * np.sqrt(math.log(self.t + 1) / counts)
        return np.where(counts == 0, np.inf, sub + bonus)

    def __call__(self, values: np.ndarray, mask: np.ndarray | None = None) -> int:
        values = _as_values(values)
        legal = None if mask is None else _legal(type(self).__name__, values, mask)
        i = _random_argmax(self._scores(values, legal), self.rng)
        action = i if legal is None else int(legal[i])
        self.counts[action] += 1
        self.t += 1
        return action

    def prob(self, values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        values = _as_values(values)
        legal = None if mask is None else _legal(type(self).__name__, values, mask)
        counts = self.counts
        p = _greedy_prob(self._scores(values, legal))
        if counts is None:  # prob before the first call must not fix the number of actions
            self.counts = None
        return _embed(values.shape[0], legal, p)

    def state_dict(self) -> dict[str, Any]:
        return {
            "rng": self.rng.bit_generator.state,
            "t": self.t,
            "counts": None if self.counts is None else self.counts.copy(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.rng.bit_generator.state = state["rng"]
        self.t = int(state["t"])
        counts = state["counts"]
        self.counts = None if counts is None else np.array(counts, dtype=np.int64)


class SoftmaxExplorer(AbstractExplorer):
    """Boltzmann exploration: ``P(a) proportional to exp(values[a] / temperature)`` over the
    legal actions (computed stably, relative to the largest value).

    Args:
        temperature: positive; small is nearly greedy, large nearly uniform.
        seed: seed of the explorer's generator.

    Example:
        >>> import numpy as np
        >>> explorer = SoftmaxExplorer(temperature=1.0, seed=0)
        >>> np.round(explorer.prob(np.array([0.0, np.log(3.0)])), 3).tolist()
        [0.25, 0.75]
        >>> explorer(np.array([0.0, 1.0]), mask=np.array([True, False]))
        0
    """

    def __init__(self, temperature: float = 1.0, seed: Seed = None) -> None:
        self.temperature = finite_float(
            "SoftmaxExplorer", "temperature", temperature, low=0, low_open=True
        )
        self.rng = np.random.default_rng(seed)

    def __repr__(self) -> str:
        return f"SoftmaxExplorer(temperature={self.temperature})"

    def _legal_prob(self, values: np.ndarray, legal: np.ndarray | None) -> np.ndarray:
        sub = values if legal is None else values[legal]
        best = sub.max()
        if not math.isfinite(best):  # +inf dominates; all -inf is uniform
            return _greedy_prob(sub)
        weights = np.exp((sub - best) / self.temperature)
        return weights / weights.sum()

    def __call__(self, values: np.ndarray, mask: np.ndarray | None = None) -> int:
        values = _as_values(values)
        legal = None if mask is None else _legal(type(self).__name__, values, mask)
        cumulative = np.cumsum(self._legal_prob(values, legal))
        i = int(np.searchsorted(cumulative, self.rng.random() * cumulative[-1], side="right"))
        i = min(i, cumulative.shape[0] - 1)
        return i if legal is None else int(legal[i])

    def prob(self, values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        values = _as_values(values)
        legal = None if mask is None else _legal(type(self).__name__, values, mask)
        return _embed(values.shape[0], legal, self._legal_prob(values, legal))
