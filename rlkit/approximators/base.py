"""The approximator interface."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

__all__ = ["AbstractApproximator"]


class AbstractApproximator(ABC):
    """A function approximator: ``approximator(x)`` estimates values for input ``x``; learners
    change it through the approximator's own update methods."""

    @abstractmethod
    def __call__(self, x: Any) -> Any:
        """Estimate for ``x``."""
