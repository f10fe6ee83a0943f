"""``RandomWarmupEpsilonGreedy``: epsilon-greedy with Stable-Baselines3's random warm-up, the
explorer of the DQN-family one-liners (``rk.DQN.agent``, :mod:`.agents`) and recipes."""

from __future__ import annotations

from typing import Any

from ...core import checks
from ...policies.explorers import EpsilonGreedyExplorer

__all__ = ["RandomWarmupEpsilonGreedy"]


class RandomWarmupEpsilonGreedy(EpsilonGreedyExplorer):
    """Epsilon-greedy whose first ``random_steps`` calls act uniformly at random (epsilon 1),
    while the schedule itself still counts from the first call: Stable-Baselines3's
    ``learning_starts`` warm-up (``OffPolicyAlgorithm._sample_action``), during which actions are
    sampled from the action space whatever the epsilon schedule says.

    Example:
        >>> import rlkit as rk
        >>> e = rk.RandomWarmupEpsilonGreedy(
        ...     0.1, random_steps=5, kind="linear", decay_steps=10, seed=0)
        >>> [round(e.epsilon_at(t), 2) for t in (0, 4, 5, 10)]
        [1.0, 1.0, 0.55, 0.1]
    """

    def __init__(self, epsilon: float = 0.1, *, random_steps: int = 0, **kwargs: Any) -> None:
        super().__init__(epsilon, **kwargs)
        self.random_steps = checks.non_negative_int(
            "RandomWarmupEpsilonGreedy", "random_steps", random_steps
        )

    def __repr__(self) -> str:
        base = super().__repr__().removeprefix("EpsilonGreedyExplorer(")
        return f"{type(self).__name__}({base[:-1]}, random_steps={self.random_steps})"

    def epsilon_at(self, step: int) -> float:
        """Epsilon after ``step`` calls: 1 during the first ``random_steps`` calls."""
        return 1.0 if step < self.random_steps else super().epsilon_at(step)
