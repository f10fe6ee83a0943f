"""The model replay of MBPO: a first-in-first-out store of model-rollout transitions, as
torch tensors (``state``, ``action`` in ``[-1, 1]``, ``reward``, ``terminal``, ``next_state``),
whose capacity MBPO changes as the rollout length grows (its ``_reallocate``: the newest
transitions are kept)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ...core.state import require_keys

__all__ = ["ModelReplay"]

_KEYS = ("state", "action", "reward", "terminal", "next_state")


class ModelReplay:
    """A FIFO of at most ``capacity`` transitions kept oldest first.

    Example:
        >>> import torch, numpy as np
        >>> replay = ModelReplay(3, n_obs=2, n_actions=1)
        >>> replay.add({"state": torch.zeros(5, 2), "action": torch.zeros(5, 1),
        ...             "reward": torch.arange(5.0), "terminal": torch.zeros(5),
        ...             "next_state": torch.zeros(5, 2)})
        >>> len(replay), replay.data["reward"].tolist()
        (3, [2.0, 3.0, 4.0])
    """

    def __init__(
        self, capacity: int, n_obs: int, n_actions: int, device: str | torch.device = "cpu"
    ) -> None:
        self.capacity = int(capacity)
        self.device = device
        self.data = {
            "state": torch.zeros(0, n_obs, device=device),
            "action": torch.zeros(0, n_actions, device=device),
            "reward": torch.zeros(0, device=device),
            "terminal": torch.zeros(0, device=device),
            "next_state": torch.zeros(0, n_obs, device=device),
        }

    def __len__(self) -> int:
        return len(self.data["reward"])

    def __repr__(self) -> str:
        return f"ModelReplay(capacity={self.capacity}, len={len(self)})"

    def resize(self, capacity: int) -> None:
        """A new capacity; the newest transitions that fit are kept."""
        self.capacity = int(capacity)
        self._trim()

    def add(self, transitions: dict[str, torch.Tensor]) -> None:
        """Append ``transitions`` (a batch by key); the oldest beyond the capacity go."""
        if not len(transitions["reward"]):
            return
        self.data = {k: torch.cat([self.data[k], transitions[k].to(self.data[k])]) for k in _KEYS}
        self._trim()

    def _trim(self) -> None:
        extra = len(self) - self.capacity
        if extra > 0:
            self.data = {k: v[extra:].clone() for k, v in self.data.items()}

    def sample(self, n: int, rng: np.random.Generator) -> dict[str, torch.Tensor]:
        """``n`` transitions drawn uniformly with replacement with ``rng``."""
        idx = torch.as_tensor(rng.integers(len(self), size=n), device=self.device)
        return {k: v[idx] for k, v in self.data.items()}

    def state_dict(self) -> dict[str, Any]:
        """The capacity and the stored transitions."""
        return {"capacity": self.capacity, **{k: v.clone() for k, v in self.data.items()}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved."""
        require_keys("ModelReplay", state, "capacity", *_KEYS)
        self.capacity = int(state["capacity"])
        self.data = {k: torch.as_tensor(state[k]).to(self.device) for k in _KEYS}
