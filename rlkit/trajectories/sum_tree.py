"""``SumTree``: an array-based binary sum tree for sampling proportional to priorities."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.checks import positive_int

__all__ = ["SumTree"]

_INF = float("inf")


class SumTree:
    """Non-negative priorities of ``capacity`` items with O(log n) updates and prefix-sum search.

    The tree is one float64 array: node 1 is the root, node ``i`` has children ``2i`` and ``2i+1``
    and the leaves (item ``k`` at node ``size + k``, ``size`` the next power of two) hold the
    priorities. Every inner node is recomputed as the sum of its two children, never adjusted by
    differences, so rounding errors do not accumulate.

    ``find(values)`` maps each value in ``[0, total)`` to the item whose prefix-sum interval
    contains it: drawing values uniformly in ``[0, total)`` draws item ``k`` with probability
    ``tree[k] / total``. Items of priority 0 are never found. ``max_priority`` is the largest
    priority ever set (a running maximum: it does not fall when that item is updated again).

    Example:
        >>> tree = SumTree(4)
        >>> tree.update([0, 1, 2, 3], [1.0, 0.0, 2.0, 1.0])
        >>> tree.total, tree[2], tree.max_priority
        (4.0, np.float64(2.0), 2.0)
        >>> tree.find([0.0, 0.99, 1.0, 2.99, 3.0]).tolist()
        [0, 0, 2, 2, 3]
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = positive_int("SumTree", "capacity", capacity)
        self._size = 1 << (self.capacity - 1).bit_length()  # leaves: a power of two >= capacity
        self._depth = self._size.bit_length() - 1
        self._tree = np.zeros(2 * self._size, np.float64)
        self.max_priority = 0.0

    def __repr__(self) -> str:
        return f"SumTree(capacity={self.capacity}, total={self.total})"

    def __len__(self) -> int:
        return self.capacity

    @property
    def total(self) -> float:
        """Sum of all priorities."""
        return float(self._tree[1])

    @property
    def priorities(self) -> np.ndarray:
        """The priorities of all items (a read-only view)."""
        view = self._tree[self._size : self._size + self.capacity]
        view.flags.writeable = False
        return view

    def __getitem__(self, indices: Any) -> Any:
        """Priority of an item (or an array of them)."""
        return self.priorities[indices]

    def set(self, index: int, priority: float) -> None:
        """Set one item's priority (the fast path for one item; no validation of ``index``)."""
        if not 0 <= index < self.capacity:
            raise IndexError(f"SumTree: index must be in [0, {self.capacity}), got {index!r}")
        if not 0.0 <= priority < _INF:
            raise ValueError(f"SumTree: priorities must be finite and >= 0, got {priority!r}")
        tree = self._tree
        node = index + self._size
        tree[node] = priority
        if priority > self.max_priority:
            self.max_priority = float(priority)
        node >>= 1
        while node:
            tree[node] = tree[2 * node] + tree[2 * node + 1]
            node >>= 1

    def update(self, indices: Any, priorities: Any) -> None:
        """Set the priorities of several items at once (vectorised; a repeated index gets its
        last priority)."""
        indices = np.asarray(indices, np.intp).reshape(-1)
        priorities = np.broadcast_to(np.asarray(priorities, np.float64), indices.shape)
        if indices.size == 0:
            return
        if indices.min() < 0 or indices.max() >= self.capacity:
            raise IndexError(
                f"SumTree: indices must be in [0, {self.capacity}), got values from "
                f"{indices.min()} to {indices.max()}"
            )
        bad = ~(np.isfinite(priorities) & (priorities >= 0.0))
        if bad.any():
            raise ValueError(
                f"SumTree: priorities must be finite and >= 0, got {priorities[bad][:5].tolist()}"
            )
        tree = self._tree
        nodes = indices + self._size
        tree[nodes] = priorities
        self.max_priority = max(self.max_priority, float(priorities.max()))
        for _ in range(self._depth):  # a repeated parent gets the same sum each time
            nodes >>= 1
            children = nodes << 1
            tree[nodes] = tree[children] + tree[children + 1]

    def find(self, values: Any) -> np.ndarray:
        """For each value in ``[0, total)``, the item whose prefix-sum interval contains it:
        the smallest ``k`` with ``values < priorities[0] + ... + priorities[k]`` (vectorised).

        Values outside ``[0, total)`` are clipped into it; the result never has priority 0.
        """
        total = self._tree[1]
        if not total > 0.0:
            raise ValueError("SumTree: cannot search a tree whose priorities are all 0")
        values = np.clip(np.asarray(values, np.float64), 0.0, total)
        nodes = self._descend(values.copy(), careful=False)
        wrong = self._tree[nodes] <= 0.0
        if wrong.any():  # rounding led into a zero-priority leaf (rare): search those carefully
            nodes[wrong] = self._descend(values[wrong], careful=True)
        return nodes - self._size

    def _descend(self, values: np.ndarray, careful: bool) -> np.ndarray:
        """Leaf nodes for ``values`` (consumed). Careful: only into subtrees of positive sum."""
        tree = self._tree
        nodes = np.ones(values.shape, np.intp)
        for _ in range(self._depth):
            nodes <<= 1  # the left child
            left = tree[nodes]
            right = values >= left  # past the left subtree: go right
            if careful:
                right &= tree[nodes + 1] > 0.0
            np.subtract(values, left, out=values, where=right)
            nodes += right
        return nodes

    def state_dict(self) -> dict[str, Any]:
        """The priorities (a copy) and the running maximum, for checkpoints."""
        return {
            "capacity": self.capacity,
            "priorities": self.priorities.copy(),
            "max_priority": self.max_priority,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved; the inner sums are rebuilt exactly."""
        if int(state["capacity"]) != self.capacity:
            raise ValueError(
                f"SumTree: checkpoint has capacity {state['capacity']}, this tree has "
                f"{self.capacity}"
            )
        priorities = np.asarray(state["priorities"], np.float64)
        if priorities.shape != (self.capacity,):
            raise ValueError(
                f"SumTree: checkpoint priorities have shape {priorities.shape}, expected "
                f"({self.capacity},)"
            )
        if not np.isfinite(priorities).all() or (priorities < 0).any():
            raise ValueError("SumTree: checkpoint priorities must be finite and >= 0")
        tree = self._tree
        tree[:] = 0.0
        tree[self._size : self._size + self.capacity] = priorities
        for level in range(self._depth - 1, -1, -1):
            start = 1 << level
            tree[start : 2 * start] = (
                tree[2 * start : 4 * start : 2] + tree[2 * start + 1 : 4 * start : 2]
            )
        self.max_priority = float(state["max_priority"])
