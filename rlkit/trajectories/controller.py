"""``InsertSampleRatioController``: when, and how much, an off-policy learner trains."""

from __future__ import annotations

from typing import Any

from ..core.checks import int_at_least

__all__ = ["InsertSampleRatioController"]

_NAME = "InsertSampleRatioController"


class InsertSampleRatioController:
    """Count environment steps and say how many gradient steps to take after each.

    ``step()`` is called once per environment step (by a learner at PostAct) and returns 0 while
    the step count is at most ``warmup_steps`` (the buffer fills, nothing is learned), then
    ``n_updates`` at every step whose count is a multiple of ``update_every``, and 0 at the
    others. That is Stable-Baselines3's ``learning_starts``/``train_freq``/``gradient_steps``:
    rl-baselines3-zoo's CartPole DQN (``learning_starts=1000, train_freq=256,
    gradient_steps=128``) is ``InsertSampleRatioController(1000, 256, 128)``, which trains 128
    times at steps 1024, 1280, 1536, ...

    Example:
        >>> c = InsertSampleRatioController(warmup_steps=2, update_every=2, n_updates=3)
        >>> [c.step() for _ in range(7)]
        [0, 0, 0, 3, 0, 3, 0]
        >>> c.n_steps, c.n_gradient_steps
        (7, 6)
    """

    def __init__(self, warmup_steps: int = 1000, update_every: int = 1, n_updates: int = 1) -> None:
        self.warmup_steps = int_at_least(_NAME, "warmup_steps", warmup_steps, 0)
        self.update_every = int_at_least(_NAME, "update_every", update_every, 1)
        self.n_updates = int_at_least(_NAME, "n_updates", n_updates, 1)
        self.n_steps = 0  # environment steps counted so far
        self.n_gradient_steps = 0  # gradient steps granted so far

    def __repr__(self) -> str:
        return (
            f"InsertSampleRatioController(warmup_steps={self.warmup_steps}, "
            f"update_every={self.update_every}, n_updates={self.n_updates})"
        )

    def step(self) -> int:
        """Count one environment step; return how many gradient steps to take now."""
        self.n_steps = n = self.n_steps + 1
        if n <= self.warmup_steps or n % self.update_every:
            return 0
        self.n_gradient_steps += self.n_updates
        return self.n_updates

    def state_dict(self) -> dict[str, Any]:
        """Settings and counters, for checkpoints."""
        return {
            "warmup_steps": self.warmup_steps,
            "update_every": self.update_every,
            "n_updates": self.n_updates,
            "n_steps": self.n_steps,
            "n_gradient_steps": self.n_gradient_steps,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved (the settings must match)."""
        for key in ("warmup_steps", "update_every", "n_updates"):
            if state.get(key) != getattr(self, key):
                raise ValueError(
                    f"InsertSampleRatioController: checkpoint has {key}={state.get(key)!r}, this "
                    f"controller has {getattr(self, key)!r}"
                )
        self.n_steps = int(state["n_steps"])
        self.n_gradient_steps = int(state["n_gradient_steps"])
