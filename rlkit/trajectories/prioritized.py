"""``PrioritizedCircularArraySARTTrajectory``: a replay ring buffer with proportional prioritized
sampling (Schaul et al. 2016, "Prioritized Experience Replay")."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from ..core.checks import finite_float, positive_int, unit_interval
from .circular import CircularArraySARTTrajectory
from .sum_tree import SumTree

__all__ = ["PrioritizedCircularArraySARTTrajectory"]


class PrioritizedCircularArraySARTTrajectory(CircularArraySARTTrajectory):
    """A :class:`~rlkit.CircularArraySARTTrajectory` that samples transition ``i`` with
    probability ``P(i) = p_i**alpha / sum_k p_k**alpha``.

    A new transition gets the largest priority seen so far (``max_priority``, initially 1), so it
    is sampled at least once soon. A learner reports the TD errors of a sampled batch with
    :meth:`update_priorities`: ``p_i = |delta_i| + epsilon``. Sampling is stratified as in the
    PER paper: the priority mass is cut into ``batch_size`` equal segments and one transition is
    drawn from each. Each sample comes with the importance weight
    ``w_i = (N * P(i))**-beta / max_j w_j`` (``N = len(self)``, the maximum over the batch),
    where ``beta`` grows linearly from ``beta`` to ``beta_end`` over the first ``beta_steps``
    calls of :meth:`sample_indices` (one call per sampled batch) and then stays at ``beta_end``.

    Samplers work unchanged: ``BatchSampler``/``NStepBatchSampler`` on this trajectory return
    ``weights`` (float32) and ``indices`` keys besides the transitions; pass ``batch["indices"]``
    back to :meth:`update_priorities`. Recording is the circular buffer's (one extra O(log n)
    sum-tree update per step). The other arguments are those of ``CircularArraySARTTrajectory``.

    Example:
        >>> import numpy as np, rlkit as rk
        >>> env = rk.GymEnv("CartPole-v1", seed=0)
        >>> t = rk.PrioritizedCircularArraySARTTrajectory(1000, env.state_space, env.action_space)
        >>> _ = rk.run(rk.Agent(rk.RandomPolicy(seed=0), t), env, rk.StopAfterNSteps(100))
        >>> batch = rk.BatchSampler(32, seed=0).sample(t)
        >>> sorted(batch)
        ['action', 'indices', 'n', 'next_state', 'reward', 'state', 'terminal', 'weights']
        >>> t.update_priorities(batch["indices"], np.ones(32))
    """

    def __init__(
        self,
        capacity: int,
        state_space: gym.Space | None = None,
        action_space: gym.Space | None = None,
        *,
        alpha: float = 0.6,
        beta: float = 0.4,
        beta_end: float = 1.0,
        beta_steps: int = 100_000,
        epsilon: float = 1e-6,
        state_shape: tuple[int, ...] | None = None,
        state_dtype: Any = None,
        action_shape: tuple[int, ...] | None = None,
        action_dtype: Any = None,
        legal_action_masks: bool = False,
    ) -> None:
        super().__init__(
            capacity,
            state_space,
            action_space,
            state_shape=state_shape,
            state_dtype=state_dtype,
            action_shape=action_shape,
            action_dtype=action_dtype,
            legal_action_masks=legal_action_masks,
        )
        name = type(self).__name__
        self.alpha = finite_float(name, "alpha", alpha, low=0)
        self.beta_start = unit_interval(name, "beta", beta)
        self.beta_end = unit_interval(name, "beta_end", beta_end)
        epsilon = finite_float(name, "epsilon", epsilon, low=0, low_open=True)
        self.beta_steps = positive_int(name, "beta_steps", beta_steps)
        self.epsilon = float(epsilon)
        self.n_sampled = 0  # calls of sample_indices so far: the position in the beta schedule
        self.tree = SumTree(self.capacity)
        self._set_max_priority(1.0)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(capacity={self.capacity}, alpha={self.alpha}, "
            f"beta={self.beta_start}, beta_end={self.beta_end}, len={len(self)})"
        )

    @property
    def beta(self) -> float:
        """The importance-sampling exponent the next sampled batch gets."""
        fraction = min(self.n_sampled / self.beta_steps, 1.0)
        return self.beta_start + fraction * (self.beta_end - self.beta_start)

    def _set_max_priority(self, priority: float) -> None:
        self.max_priority = float(priority)
        self._max_leaf = self.max_priority**self.alpha  # what a new transition gets in the tree

    def clear(self) -> None:
        """Forget every transition and priority (the beta schedule keeps its position)."""
        super().clear()
        self.tree = SumTree(self.capacity)
        self._set_max_priority(1.0)

    # ---- writing: a completed transition gets the largest priority so far ----
    def end_transition(
        self, reward: float, terminal: bool, truncated: bool, next_state: Any
    ) -> None:
        head = self.head
        super().end_transition(reward, terminal, truncated, next_state)
        self.tree.set(head, self._max_leaf)

    def end_transitions(
        self, rewards: Any, terminals: Any, truncateds: Any, next_states: Any
    ) -> None:
        """A vector env's batch: every new transition gets the largest priority so far."""
        rows = (self.head + np.arange(self.n_pending)) % self.capacity
        super().end_transitions(rewards, terminals, truncateds, next_states)
        self.tree.update(rows, np.full(rows.size, self._max_leaf))

    # ---- sampling ----
    def sample_indices(
        self, batch_size: int, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """``batch_size`` slots drawn proportionally to ``priority**alpha`` (stratified), and
        their importance weights (float32, the largest is 1). Advances the beta schedule."""
        n = len(self)
        if n < batch_size:
            raise ValueError(
                f"{type(self).__name__} holds {n} transitions, fewer than batch_size {batch_size}"
            )
        tree = self.tree
        if self.pending and self.is_full:  # the head slots are being rewritten: not transitions
            if self.n_pending == 1:
                tree.set(self.head, 0.0)
            else:
                rows = (self.head + np.arange(self.n_pending)) % self.capacity
                tree.update(rows, np.zeros(rows.size))
        total = tree.total
        values = (np.arange(batch_size) + rng.random(batch_size)) * (total / batch_size)
        indices = tree.find(values)
        weights = (tree[indices] * (n / total)) ** -self.beta
        weights /= weights.max()
        self.n_sampled += 1
        return indices, weights.astype(np.float32)

    def update_priorities(self, indices: Any, td_errors: Any) -> None:
        """Set the priorities of sampled transitions to ``|td_errors| + epsilon``.

        ``td_errors`` may be a numpy array or a torch tensor (it is detached and moved to the
        CPU); ``indices`` are the ``indices`` of the sampled batch.
        """
        name = type(self).__name__
        if hasattr(td_errors, "detach"):  # a torch tensor
            td_errors = td_errors.detach().cpu().numpy()
        errors = np.asarray(td_errors, np.float64).reshape(-1)
        indices = np.asarray(indices).reshape(-1)
        if errors.shape != indices.shape:
            raise ValueError(
                f"{name}: update_priorities got {indices.size} indices and {errors.size} TD errors"
            )
        if not np.isfinite(errors).all():
            raise ValueError(
                f"{name}: TD errors must be finite, got {errors[~np.isfinite(errors)]}"
            )
        if indices.size == 0:
            return
        priorities = np.abs(errors) + self.epsilon
        self.tree.update(indices, priorities**self.alpha)
        largest = float(priorities.max())
        if largest > self.max_priority:
            self._set_max_priority(largest)

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """The circular buffer's state plus the sum tree, the largest priority and the position
        in the beta schedule."""
        return {
            **super().state_dict(),
            "alpha": self.alpha,
            "beta": self.beta_start,
            "beta_end": self.beta_end,
            "beta_steps": self.beta_steps,
            "epsilon": self.epsilon,
            "n_sampled": self.n_sampled,
            "max_priority": self.max_priority,
            "tree": self.tree.state_dict(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved."""
        expected = {
            "alpha": self.alpha,
            "beta": self.beta_start,
            "beta_end": self.beta_end,
            "beta_steps": self.beta_steps,
            "epsilon": self.epsilon,
        }
        for key, value in expected.items():
            if key not in state:
                raise ValueError(f"{type(self).__name__}: checkpoint has no {key!r}")
            if state[key] != value:
                raise ValueError(
                    f"{type(self).__name__}: checkpoint has {key}={state[key]!r}, this "
                    f"trajectory has {value!r}"
                )
        tree = SumTree(self.capacity)
        tree.load_state_dict(state["tree"])  # checked before anything is overwritten
        super().load_state_dict(state)
        self.tree = tree
        self._set_max_priority(state["max_priority"])
        self.n_sampled = int(state["n_sampled"])
