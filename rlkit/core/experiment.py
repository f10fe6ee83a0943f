"""``Experiment``: a runnable recipe, and the registry of bundled recipes."""

from __future__ import annotations

import difflib
import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Experiment",
    "experiment",
    "list_experiments",
    "make_experiment",
    "UnknownExperimentError",
]

_NAME = re.compile(r"^[A-Z][A-Za-z0-9]*_[A-Z][A-Za-z0-9]*$")
_REGISTRY: dict[str, Callable[..., Experiment]] = {}


class UnknownExperimentError(KeyError):
    """No recipe of that name; the message lists the known names."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


@dataclass
class Experiment:
    """Everything one run needs: ``rk.run(experiment)`` runs it.

    Example:
        >>> import rlkit as rk
        >>> exp = rk.Experiment(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
        ...                     rk.StopAfterNEpisodes(2), rk.TotalRewardPerEpisode(),
        ...                     "random actions on CartPole")
        >>> len(rk.run(exp).rewards)
        2
    """

    policy: Any
    env: Any
    stop_condition: Any
    hook: Any = None
    description: str = ""
    name: str = ""
    seed: int | None = None

    def run(self) -> Any:
        """Run the experiment; return its hook."""
        from .run import run

        return run(self)


def experiment(fn: Callable[..., Experiment]) -> Callable[..., Experiment]:
    """Register a recipe: a function of ``seed`` returning an :class:`Experiment`.

    The function's name is the recipe's name, ``Method_Environment`` (e.g.
    ``TabularQLearning_CliffWalking``); the first line of its docstring is the description
    ``rlkit list`` shows.

    Example:
        >>> import rlkit as rk
        >>> @rk.experiment
        ... def Random_CartPole(seed: int = 0) -> rk.Experiment:
        ...     '''Uniformly random actions on CartPole-v1.'''
        ...     return rk.Experiment(rk.RandomPolicy(seed=seed), rk.GymEnv("CartPole-v1",
        ...                          seed=seed), rk.StopAfterNEpisodes(1))
    """
    name = fn.__name__
    if not _NAME.match(name):
        raise ValueError(
            f"experiment: recipe name {name!r} must read Method_Environment, "
            f"e.g. 'TabularQLearning_CliffWalking'"
        )
    if not (fn.__doc__ or "").strip():
        raise ValueError(f"experiment: recipe {name!r} needs a docstring (its description)")
    _REGISTRY[name] = fn
    return fn


def _load_bundled() -> None:
    importlib.import_module("rlkit.experiments")


def list_experiments() -> dict[str, str]:
    """Registered recipes (bundled ones included): name -> one-line description."""
    _load_bundled()
    return {name: _describe(fn) for name, fn in sorted(_REGISTRY.items())}


def _describe(fn: Callable[..., Experiment]) -> str:
    return (fn.__doc__ or "").strip().splitlines()[0]


def make_experiment(name: str, seed: int = 0, **kwargs: Any) -> Experiment:
    """Build the registered recipe ``name`` with ``seed``.

    Raises :class:`UnknownExperimentError` listing the known names.
    """
    _load_bundled()
    if name not in _REGISTRY:
        close = difflib.get_close_matches(name, list(_REGISTRY), n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise UnknownExperimentError(
            f"unknown experiment {name!r}.{hint} Known experiments: {', '.join(sorted(_REGISTRY))}"
        )
    exp = _REGISTRY[name](seed=seed, **kwargs)
    if not isinstance(exp, Experiment):
        raise TypeError(f"recipe {name!r} returned {type(exp).__name__}, not an rk.Experiment")
    exp.name, exp.seed = name, seed
    exp.description = exp.description or _describe(_REGISTRY[name])
    return exp
