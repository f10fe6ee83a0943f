"""``GameTreeEnv``: a small game's tree as the env of a solver's run (``rk.CFR``).

A solver does not act: like a dataset in offline RL, the game tree is fixed data that it sweeps.
So the env is an :class:`~rlkit.AbstractOfflineEnv` and runs in the offline loop
(rlkit/core/offline_run.py): PreExperiment, one PostAct per solver iteration, PostExperiment;
``rk.StopAfterNSteps(n)`` counts iterations, and checkpoints, hooks and the ``rlkit`` command
work as in any run.
"""

from __future__ import annotations

from typing import Any

from ...core.interfaces import AbstractOfflineEnv
from .tree import GameTree, game_tree

__all__ = ["GameTreeEnv"]


class GameTreeEnv(AbstractOfflineEnv):
    """The tree of ``game`` (an id such as ``"rlkit/KuhnPoker-v0"``, a PettingZoo AEC env or
    an ``rk.GameTree``) for a solver's run; ``sample()`` returns the tree and counts one
    iteration in ``steps``.

    Example:
        >>> import rlkit as rk
        >>> cfr = rk.CFR("rlkit/KuhnPoker-v0")
        >>> _ = rk.run(cfr, rk.GameTreeEnv("rlkit/KuhnPoker-v0"), rk.StopAfterNSteps(10))
        >>> cfr.iteration
        10
    """

    def __init__(self, game: Any) -> None:
        self.tree: GameTree = game_tree(game)
        self.steps = 0

    def __repr__(self) -> str:
        return f"GameTreeEnv({self.tree.name})"

    def sample(self) -> GameTree:
        """The game tree (the same every time); counts one solver iteration."""
        self.steps += 1
        return self.tree

    def state_dict(self) -> dict[str, Any]:
        """The number of iterations run on this env."""
        return {"steps": self.steps}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore the iteration count saved by :meth:`state_dict`."""
        self.steps = int(state["steps"])
