"""``rk.ExploitabilityCurve``: a hook that records a solver's exploitability every ``n``
iterations of a run on an ``rk.GameTreeEnv`` (docs/how-to/game-solvers.md)."""

from __future__ import annotations

import os
from typing import Any

from ..core.checks import positive_int
from ..core.interfaces import AbstractHook
from .exploitability import exploitability

__all__ = ["ExploitabilityCurve"]


class ExploitabilityCurve(AbstractHook):
    """Every ``n`` iterations (PostAct steps), the exploitability of the solver's average
    policy (``rk.exploitability``), appended to ``curve`` as ``(iteration, exploitability)``
    and, with ``path``, to a CSV file (``iteration,exploitability``). Saved in checkpoints.

    Example:
        >>> import rlkit as rk
        >>> curve = rk.ExploitabilityCurve(n=50)
        >>> _ = rk.run(rk.CFR("rlkit/KuhnPoker-v0"), rk.GameTreeEnv("rlkit/KuhnPoker-v0"),
        ...            rk.StopAfterNSteps(100), curve)
        >>> [(i, round(e, 3)) for i, e in curve.curve]
        [(50, 0.015), (100, 0.008)]
    """

    def __init__(self, n: int = 10, path: str | os.PathLike | None = None) -> None:
        self.n = positive_int("ExploitabilityCurve", "n", n)
        self.path = None if path is None else os.fspath(path)
        self.steps = 0
        self.curve: list[tuple[int, float]] = []

    def __repr__(self) -> str:
        return f"ExploitabilityCurve(n={self.n})"

    def post_act(self, policy: Any, env: Any) -> None:
        self.steps += 1
        if self.steps % self.n:
            return
        solver = getattr(policy, "policy", policy)
        tree = getattr(env, "tree", None) or getattr(solver, "tree", None)
        if tree is None:
            raise TypeError(
                f"ExploitabilityCurve: the run's env {env!r} is not an rk.GameTreeEnv and the "
                f"policy {solver!r} has no game tree; it measures solvers such as rk.CFR"
            )
        value = exploitability(solver, tree)
        self.curve.append((self.steps, value))
        if self.path is not None:
            new = not os.path.exists(self.path)
            with open(self.path, "a", encoding="utf-8") as file:
                if new:
                    file.write("iteration,exploitability\n")
                file.write(f"{self.steps},{value!r}\n")

    def state_dict(self) -> dict[str, Any]:
        """The step counter and the curve so far."""
        return {"steps": self.steps, "curve": [[i, e] for i, e in self.curve]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a state saved by :meth:`state_dict`."""
        self.steps = int(state["steps"])
        self.curve = [(int(i), float(e)) for i, e in state["curve"]]
