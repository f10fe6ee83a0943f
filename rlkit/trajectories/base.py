"""The trajectory interface."""

from __future__ import annotations

from abc import ABC, abstractmethod

__all__ = ["AbstractTrajectory"]


class AbstractTrajectory(ABC):
    """Storage of experience, filled by ``update(trajectory, policy, env, stage[, action])``
    methods and read by learners. Traces are named: ``state, action, reward, terminal,
    truncated, next_state``."""

    @abstractmethod
    def __len__(self) -> int:
        """Number of stored transitions."""
