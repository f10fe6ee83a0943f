"""``OfflineEnv(dataset, batch_size, seed)``: a fixed dataset as the env of an offline run
(docs/how-to/offline-rl.md).

Each ``sample()`` is one gradient step's batch: ``dataset.sample(batch_size, generator)``,
indices drawn uniformly with replacement by the env's own generator (seeded by ``seed``), so
the same seed gives the same batches. The generator's state and the step count are the env's
checkpoint state: a run resumed from an ``rk.CheckpointHook`` checkpoint draws the batches the
uninterrupted run would have drawn.

The dataset is any object with ``sample(batch_size, generator)``, ``len``,
``observation_space`` and ``action_space``: an ``rk.Dataset``, or a stand-in of the user's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.checks import non_negative_int, positive_int
from ..core.interfaces import AbstractOfflineEnv
from ..core.state import generator_state, require_keys, set_generator_state, state_count

__all__ = ["OfflineEnv"]

_NEEDS = ("sample", "__len__", "observation_space", "action_space")


class OfflineEnv(AbstractOfflineEnv):
    """A dataset as the env of an offline run: ``rk.run(policy, OfflineEnv(dataset, 256,
    seed=0), rk.StopAfterNSteps(n), hook)`` takes ``n`` gradient steps, each on
    :meth:`sample` (see the module docstring). ``state_space`` and ``action_space`` are the
    dataset's: a policy made for other spaces is refused when the run is planned.

    Args:
        dataset: an ``rk.Dataset`` (or any object with ``sample(batch_size, generator)``,
            ``len``, ``observation_space`` and ``action_space``), not empty.
        batch_size: transitions per gradient step, at most ``len(dataset)``.
        seed: seeds the generator that draws the batches (a non-negative int).

    Example:
        >>> import rlkit as rk
        >>> dataset = rk.Dataset.load("cartpole.npz")  # doctest: +SKIP
        >>> env = rk.OfflineEnv(dataset, batch_size=64, seed=0)  # doctest: +SKIP
        >>> policy = rk.BC(env, seed=0)  # doctest: +SKIP
        >>> _ = rk.run(policy, env, rk.StopAfterNSteps(1000))  # doctest: +SKIP
    """

    def __init__(self, dataset: Any, batch_size: int, seed: int = 0) -> None:
        missing = [name for name in _NEEDS if not hasattr(dataset, name)]
        if missing:
            raise TypeError(
                f"OfflineEnv: dataset must be an rk.Dataset (an object with sample(batch_size, "
                f"generator), len, observation_space and action_space), got "
                f"{type(dataset).__name__} without {missing}"
            )
        self.batch_size = positive_int("OfflineEnv", "batch_size", batch_size)
        n = len(dataset)
        if n == 0:
            raise ValueError(f"OfflineEnv: the dataset {dataset!r} is empty (0 transitions)")
        if self.batch_size > n:
            raise ValueError(
                f"OfflineEnv: batch_size {self.batch_size} is larger than the dataset "
                f"{dataset!r}, which has {n} transitions; use batch_size <= {n}"
            )
        self.seed = non_negative_int("OfflineEnv", "seed", seed)
        self.dataset = dataset
        self.n_transitions = n
        self.generator = np.random.default_rng(self.seed)
        self.state_space = dataset.observation_space
        self.action_space = dataset.action_space
        self.steps = 0

    def __repr__(self) -> str:
        return (
            f"OfflineEnv({type(self.dataset).__name__} of {self.n_transitions} transitions, "
            f"batch_size={self.batch_size}, seed={self.seed})"
        )

    def sample(self) -> Any:
        """The next batch: ``dataset.sample(batch_size, generator)`` (counted in ``steps``)."""
        self.steps += 1
        return self.dataset.sample(self.batch_size, self.generator)

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """The generator's state, the step count and the dataset's size (checked on load)."""
        return {
            "generator": generator_state(self.generator),
            "steps": self.steps,
            "n_transitions": self.n_transitions,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`'s state; a state saved with a dataset of another size is
        refused and nothing changes."""
        require_keys("OfflineEnv", state, "generator", "steps", "n_transitions")
        steps = state_count("OfflineEnv", state, "steps")
        if state["n_transitions"] != self.n_transitions:
            raise ValueError(
                f"OfflineEnv.load_state_dict: the state was saved with a dataset of "
                f"{state['n_transitions']} transitions, this env's {self.dataset!r} has "
                f"{self.n_transitions}; resume with the same dataset"
            )
        probe = np.random.default_rng()
        set_generator_state(probe, state["generator"])  # refuses a bad state before changing
        set_generator_state(self.generator, state["generator"])
        self.steps = steps
