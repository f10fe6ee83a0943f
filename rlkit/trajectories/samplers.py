"""Samplers: batches of transitions from a replay trajectory (one-step and n-step)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.checks import check_gamma, positive_int
from .circular import CircularArraySARTTrajectory

__all__ = ["BatchSampler", "NStepBatchSampler", "normalize_batch", "normalized_rewards"]


class BatchSampler:
    """Draw ``batch_size`` transitions uniformly with replacement (as Stable-Baselines3 does).

    ``sample(trajectory)`` returns a dict of numpy arrays with leading dimension ``batch_size``:
    ``state, action, reward, terminal, next_state``, ``n`` (steps per sample: all 1 here) and
    ``indices`` (the trajectory slots). ``sample(trajectory, n_batches=k)`` draws k batches one
    after the other and returns them concatenated (``k * batch_size`` rows): the same rows, in
    the same order, as k calls on an unchanged trajectory, gathered from the replay at once.
    A trajectory that keeps legal-action masks adds ``next_legal_action_mask``.
    The target of a one-step learner is
    ``reward + (1 - terminal) * gamma**n * max_a Q(next_state, a)``. On a prioritized trajectory
    the slots are drawn by priority instead and the batch also has ``weights`` (importance
    weights): the trajectory chooses the slots through its ``sample_indices(batch_size, rng)``.

    ``sample(trajectory, normalizer=env)`` with an ``rk.VecNormalize`` env (whose replay holds
    the raw transitions): ``state``, ``next_state`` and ``reward`` are normalised with the env's
    statistics as they are at sampling time (:func:`normalize_batch`, Stable-Baselines3's
    ``ReplayBuffer._get_samples(batch_inds, env)``).

    Args:
        batch_size: transitions per batch; sampling from a trajectory that holds fewer raises
            ``ValueError``.
        seed: seed of the sampler's own generator (int, ``SeedSequence`` or ``Generator``).

    Example:
        >>> import rlkit as rk
        >>> env = rk.GymEnv("CartPole-v1", seed=0)
        >>> t = rk.CircularArraySARTTrajectory(1000, env.state_space, env.action_space)
        >>> _ = rk.run(rk.Agent(rk.RandomPolicy(seed=0), t), env, rk.StopAfterNSteps(100))
        >>> batch = rk.BatchSampler(32, seed=0).sample(t)
        >>> batch["state"].shape, batch["reward"].dtype, int(batch["n"].max())
        ((32, 4), dtype('float32'), 1)
    """

    def __init__(
        self,
        batch_size: int,
        *,
        seed: int | np.random.SeedSequence | np.random.Generator | None = None,
    ) -> None:
        self.batch_size = positive_int(type(self).__name__, "batch_size", batch_size)
        self.rng = np.random.default_rng(seed)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(batch_size={self.batch_size})"

    def sample(
        self, trajectory: CircularArraySARTTrajectory, n_batches: int = 1, normalizer: Any = None
    ) -> dict[str, np.ndarray]:
        """``n_batches`` batches of transitions from ``trajectory``, concatenated (see the class
        docstring for the keys); normalised by ``normalizer`` (an ``rk.VecNormalize``) if given."""
        indices, weights = self._indices(trajectory, n_batches)
        reward, n = trajectory.reward[indices], np.ones(len(indices), np.int64)
        return normalize_batch(_batch(trajectory, indices, weights, indices, reward, n), normalizer)

    def _indices(
        self, trajectory: CircularArraySARTTrajectory, n_batches: int
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """The slots (and importance weights) of ``n_batches`` batches drawn one after the other,
        concatenated."""
        if positive_int(type(self).__name__, "n_batches", n_batches) == 1:
            return trajectory.sample_indices(self.batch_size, self.rng)
        draws = [trajectory.sample_indices(self.batch_size, self.rng) for _ in range(n_batches)]
        indices = np.concatenate([d[0] for d in draws])
        if draws[0][1] is None:
            return indices, None
        return indices, np.concatenate([d[1] for d in draws])

    def state_dict(self) -> dict[str, Any]:
        """The generator's state (and the batch size, checked on loading)."""
        return {"batch_size": self.batch_size, "rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved."""
        _check_same(self, state, batch_size=self.batch_size)
        self.rng.bit_generator.state = state["rng"]


class NStepBatchSampler(BatchSampler):
    """Draw ``batch_size`` n-step transitions: windows of up to ``n`` consecutive transitions.

    For a drawn slot ``i`` the window is ``i, i+1, ..., i+m-1`` (modulo the capacity) where ``m``
    (returned as ``n``, per sample) is ``n`` or less: the window ends early at the first
    transition whose ``terminal`` or ``truncated`` flag is set, and at the most recent stored
    transition (it never reads past the write head into older or unwritten slots). Returned:

    * ``reward``: the discounted return ``sum_{k<m} gamma**k * r_{i+k}`` (float32);
    * ``next_state``, ``terminal``: those of the window's last transition (a truncated window
      bootstraps, a terminated one does not);
    * ``state``, ``action``, ``indices``: those of slot ``i``; ``weights`` on a prioritized
      trajectory.

    The learner's target is ``reward + (1 - terminal) * gamma**n * max_a Q(next_state, a)``.
    With ``n=1`` the batch equals ``BatchSampler``'s for the same seed. With a ``normalizer``
    (an ``rk.VecNormalize``) each step's reward is scaled before the sum (Stable-Baselines3's
    ``NStepReplayBuffer``) and the observations normalised (:func:`normalize_batch`).

    Example:
        >>> import rlkit as rk
        >>> t = rk.CircularArraySARTTrajectory(10, state_shape=())
        >>> for s in range(4):  # episode 0, 1 (terminated), then 2, 3 (going on)
        ...     t.append(s, 0, 1.0, s == 1, False, s + 1)
        >>> batch = rk.NStepBatchSampler(4, n=3, gamma=0.5, seed=8).sample(t)
        >>> keys = ("indices", "reward", "n", "terminal", "next_state")
        >>> for row in sorted(zip(*(batch[key].tolist() for key in keys))):
        ...     print(row)
        (0, 1.5, 2, True, 2.0)
        (1, 1.0, 1, True, 2.0)
        (2, 1.5, 2, False, 4.0)
        (3, 1.0, 1, False, 4.0)
    """

    def __init__(
        self,
        batch_size: int,
        n: int,
        gamma: float,
        *,
        seed: int | np.random.SeedSequence | np.random.Generator | None = None,
    ) -> None:
        super().__init__(batch_size, seed=seed)
        name = type(self).__name__
        self.n = positive_int(name, "n", n)
        self.gamma = check_gamma(name, gamma)
        self._steps = np.arange(self.n)
        self._discounts = self.gamma ** np.arange(self.n, dtype=np.float64)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(batch_size={self.batch_size}, n={self.n}, gamma={self.gamma})"
        )

    def sample(
        self, trajectory: CircularArraySARTTrajectory, n_batches: int = 1, normalizer: Any = None
    ) -> dict[str, np.ndarray]:
        """``n_batches`` batches of n-step transitions from ``trajectory``, concatenated (see
        the class docstring); normalised by ``normalizer`` (an ``rk.VecNormalize``) if given."""
        indices, weights = self._indices(trajectory, n_batches)
        capacity, stored = trajectory.capacity, len(trajectory)
        steps = self._steps
        # a vector env's sub-env records every `stride`-th slot (stride = n_envs)
        stride = getattr(trajectory, "stride", 1)
        # how many slots from slot i to the most recent one, inclusive (>= 1)
        available = stored - (indices - (trajectory.head - stored)) % capacity
        window = indices[:, None] + steps * stride  # (batch, n) slots
        window %= capacity
        ends = trajectory.terminal[window] | trajectory.truncated[window]
        ends |= steps * stride >= (available - stride)[:, None]
        ends[:, -1] = True
        last = ends.argmax(axis=1)  # the position of each window's last transition
        inside = steps <= last[:, None]
        rewards = np.where(inside, normalized_rewards(trajectory.reward[window], normalizer), 0.0)
        returns = rewards @ self._discounts
        final = window[np.arange(len(indices)), last]
        batch = _batch(trajectory, indices, weights, final, returns.astype(np.float32), last + 1)
        return normalize_batch(batch, normalizer, rewards=False)  # scaled per step above

    def state_dict(self) -> dict[str, Any]:
        """The generator's state (and the settings, checked on loading)."""
        return {**super().state_dict(), "n": self.n, "gamma": self.gamma}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved."""
        _check_same(self, state, n=self.n, gamma=self.gamma)
        super().load_state_dict(state)


def _batch(
    trajectory: CircularArraySARTTrajectory,
    indices: np.ndarray,
    weights: np.ndarray | None,
    final: np.ndarray,
    reward: np.ndarray,
    n: np.ndarray,
) -> dict[str, np.ndarray]:
    """State and action of ``indices``, flag and next state of ``final`` (the last slot of each
    window), the (n-step) ``reward`` and ``n``; ``weights`` when the trajectory gave some."""
    batch = {
        "state": trajectory.state[indices],
        "action": trajectory.action[indices],
        "reward": reward,
        "terminal": trajectory.terminal[final],
        "next_state": trajectory.next_state[final],
        "n": n,
        "indices": indices,
    }
    if weights is not None:
        batch["weights"] = weights
    masks = trajectory.next_legal_action_mask
    if masks is not None:  # the next states' legal actions (the DQN family's target max)
        batch["next_legal_action_mask"] = masks[final]
    return batch


def normalized_rewards(rewards: np.ndarray, normalizer: Any) -> np.ndarray:
    """Raw ``rewards`` as ``normalizer.normalize_reward`` scales them (float32; unchanged when
    ``normalizer`` is None).

    Example:
        >>> import numpy as np
        >>> class Halve:
        ...     def normalize_reward(self, r): return r / 2
        >>> normalized_rewards(np.array([1.0, 4.0]), Halve()).tolist()
        [0.5, 2.0]
    """
    if normalizer is None:
        return rewards
    return np.asarray(normalizer.normalize_reward(rewards), dtype=np.float32)


def normalize_batch(
    batch: dict[str, Any], normalizer: Any, *, rewards: bool = True
) -> dict[str, Any]:
    """A sampled ``batch`` of raw transitions normalised by ``normalizer`` (an
    ``rk.VecNormalize``: its ``normalize_obs`` and ``normalize_reward`` with the statistics as
    they are now, not updating them): ``state`` and ``next_state`` (per key of a ``Dict``
    observation), and ``reward`` unless ``rewards=False`` (an n-step sampler scales each step's
    reward before the sum). The batch itself when ``normalizer`` is None; else the same dict
    with those entries replaced (the replay's arrays are never changed).

    Example:
        >>> import numpy as np
        >>> class Centre:
        ...     def normalize_obs(self, obs): return obs - 1.0
        ...     def normalize_reward(self, r): return r * 0.1
        >>> b = normalize_batch({"state": np.ones(2), "next_state": np.zeros(2),
        ...                      "reward": np.array([10.0, 20.0], np.float32)}, Centre())
        >>> b["state"].tolist(), b["next_state"].tolist(), b["reward"].tolist()
        ([0.0, 0.0], [-1.0, -1.0], [1.0, 2.0])
    """
    if normalizer is None:
        return batch
    batch["state"] = normalizer.normalize_obs(batch["state"])
    batch["next_state"] = normalizer.normalize_obs(batch["next_state"])
    if rewards:
        batch["reward"] = normalized_rewards(batch["reward"], normalizer)
    return batch


def _check_same(owner: Any, state: dict[str, Any], **settings: Any) -> None:
    for key, value in settings.items():
        if key not in state:
            raise ValueError(f"{type(owner).__name__}: checkpoint has no {key!r}")
        if state[key] != value:
            raise ValueError(
                f"{type(owner).__name__}: checkpoint has {key}={state[key]!r}, this sampler has "
                f"{value!r}"
            )
