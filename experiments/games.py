"""Game-solving recipes: CFR on the bundled poker games (docs/how-to/game-solvers.md).

* ``CFR_KuhnPoker``: vanilla CFR on Kuhn poker (OpenSpiel's ``CFRSolver``).
* ``CFR_LeducPoker``: CFR+ on Leduc poker (OpenSpiel's ``CFRPlusSolver``), which converges much
  faster there.

A run's env is the game's tree (``rk.GameTreeEnv``) and each step one CFR iteration:
``total_steps`` (``rlkit run NAME --steps N``) counts iterations. ``plus`` switches between
CFR and CFR+; ``log_every`` is how often the exploitability of the average policy is recorded
(``rk.ExploitabilityCurve``; with ``--tensorboard`` the solver's statistics, exploitability
included, are logged too). CFR is deterministic: ``seed`` only seeds the generator that
samples actions when the solved policy plays. Needs pettingzoo (``pip install
'rlkit-toolkit[multiagent]'``).

Example:
    >>> import rlkit as rk
    >>> exp = rk.make_experiment("CFR_KuhnPoker", seed=0, total_steps=20)
    >>> exp.policy, exp.stop_condition
    (CFR(rlkit/KuhnPoker-v0, CFR, iteration 0), StopAfterNSteps(20))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import rlkit as rk
from rlkit.core.checks import positive_int
from rlkit.core.seeding import spawn_seeds

__all__ = ["CFRParams", "CFR_KuhnPoker", "CFR_LeducPoker"]


@dataclass(frozen=True)
class CFRParams:
    """The parameters of a CFR recipe (``rlkit run NAME --set plus=True``)."""

    total_steps: int = 1000
    plus: bool = False
    log_every: int = 10

    #: what ``total_steps`` counts (``rlkit run NAME --help`` says it)
    STEPS_UNIT: ClassVar[str] = "CFR iterations (sweeps of the game tree), not env steps"

    def check(self, owner: str) -> None:
        """Refuse values no run can use, naming ``owner`` (the recipe) and the parameter."""
        positive_int(owner, "total_steps", self.total_steps)
        positive_int(owner, "log_every", self.log_every)
        if not isinstance(self.plus, bool):
            raise TypeError(f"{owner}: plus must be True or False, got {self.plus!r}")


def _cfr(recipe: str, game: str, seed: int, p: CFRParams) -> rk.Experiment:
    p.check(recipe)
    (policy_seed,) = spawn_seeds(seed, 1)
    return rk.Experiment(
        rk.CFR(game, plus=p.plus, seed=policy_seed),
        rk.GameTreeEnv(game),
        rk.StopAfterNSteps(p.total_steps),
        rk.ExploitabilityCurve(n=p.log_every),
    )


@rk.experiment
def CFR_KuhnPoker(seed: int = 0, p: CFRParams = CFRParams()) -> rk.Experiment:
    """Vanilla CFR on Kuhn poker (1,000 iterations): exploitability under 0.001."""
    return _cfr("CFR_KuhnPoker", "rlkit/KuhnPoker-v0", seed, p)


@rk.experiment
def CFR_LeducPoker(seed: int = 0, p: CFRParams = CFRParams(plus=True)) -> rk.Experiment:
    """CFR+ on Leduc poker (1,000 iterations): exploitability about 0.0003."""
    return _cfr("CFR_LeducPoker", "rlkit/LeducPoker-v0", seed, p)
