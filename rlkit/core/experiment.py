"""``Experiment``: a runnable recipe, and the registry of recipes.

Packages register recipes through the ``rlkit.experiments`` entry-point group (rlkit's bundled
recipes too: ``[project.entry-points."rlkit.experiments"]`` in pyproject.toml); the registry
loads every entry point when it is first listed or looked up.

A recipe declares its parameters, with types and defaults, in one of two ways: as keyword
parameters after ``seed`` (``def SARSA_CliffWalking(seed=0, episodes: int = 500)``), or as one
parameter whose default is a dataclass instance (``def DQN_CartPole(seed=0, p: DQNParams =
CARTPOLE)``: the dataclass's fields are the parameters). ``make_experiment(name, seed,
**overrides)`` checks the overrides against them (unknown names, wrong types, and the dataclass's
own ``check(owner)``) before it builds anything. A dataclass may map former parameter names to
current ones in a ``RENAMED`` class variable: the old names still work, with a
``FutureWarning`` (:func:`renamed_parameters`).
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import re
import types
import typing
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from .checks import ArgumentTypeError, is_int, is_real, non_negative_int, positive_int
from .dispatch import run_arguments
from .run import run
from .seeding import check_seeds

__all__ = [
    "Experiment",
    "RecipeParameter",
    "experiment",
    "list_experiments",
    "make_experiment",
    "many_seed_recipes",
    "recipe_parameters",
    "renamed_parameters",
    "UnknownExperimentError",
]

#: ``Method_Environment``, the method optionally after an all-capitals modifier
#: (``HER_DQN_BitFlipping``: DQN with hindsight experience replay on BitFlipping)
_NAME = re.compile(r"^(?:[A-Z][A-Z0-9]*_)?[A-Z][A-Za-z0-9]*_[A-Z][A-Za-z0-9]*$")
_REGISTRY: dict[str, Callable[..., Experiment]] = {}

#: the entry-point group through which installed packages (rlkit itself included) register
#: recipes: each entry point names a module that calls ``@rk.experiment`` when imported
ENTRY_POINT_GROUP = "rlkit.experiments"
_entry_points_loaded = False


class UnknownExperimentError(KeyError):
    """No recipe of that name; the message lists the known names.

    Example:
        >>> import rlkit as rk
        >>> try:
        ...     rk.make_experiment("NoSuchRecipe")
        ... except rk.UnknownExperimentError as error:
        ...     print(type(error).__name__, isinstance(error, KeyError))
        UnknownExperimentError True
    """

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
    #: torch threads the recipe runs best with (``rlkit run`` sets them; None: torch's default)
    threads: int | None = None
    #: every parameter of the recipe it was made from (``make_experiment`` fills it)
    params: dict[str, Any] = field(default_factory=dict)
    #: the seeds of a run of several seeds in one process (``make_experiment(name,
    #: seeds=[...])``; None: one seed, ``seed``)
    seeds: list[int] | None = None

    def run(self) -> Any:
        """Run the experiment; return its hook."""
        return run(self)


@run_arguments.dispatch
def _(experiment: Experiment, /):
    return experiment.policy, experiment.env, experiment.stop_condition, experiment.hook


def experiment(fn: Callable[..., Experiment]) -> Callable[..., Experiment]:
    """Register a recipe: a function of ``seed`` returning an :class:`Experiment`.

    The function's name is the recipe's name, ``Method_Environment`` (e.g.
    ``TabularQLearning_CliffWalking``; an all-capitals modifier may come first, as in
    ``HER_DQN_BitFlipping``); the first paragraph of its docstring is the description
    ``rlkit list`` shows. Its parameters after ``seed`` are the recipe's parameters (typed
    keywords with defaults, or one dataclass instance as the default of a single parameter):
    ``make_experiment`` and ``rlkit run --set`` override them.

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


def _load_entry_points() -> None:
    """Load the recipes of every installed package, once: each entry point of the
    ``rlkit.experiments`` group names a module whose import registers recipes with
    ``@rk.experiment`` (rlkit's own recipes are registered this way too, so core never imports
    the layer above it). An entry point that fails to load is left out with a warning that
    names it and its error; the other recipes are still listed."""
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True  # before loading: a recipe module may list the registry
    found = metadata.entry_points(group=ENTRY_POINT_GROUP)
    if not found:
        warnings.warn(
            f"rlkit: no package declares recipes in the entry-point group "
            f"{ENTRY_POINT_GROUP!r}, not even rlkit's own: rlkit is not installed, or its "
            f"install predates them (from a source checkout: pip install -e . again)",
            RuntimeWarning,
            stacklevel=3,
        )
    for entry_point in found:
        try:
            entry_point.load()
        except Exception as error:  # noqa: BLE001 - one broken package must not hide the rest
            warnings.warn(
                f"rlkit: the recipes of entry point {entry_point.name!r} "
                f"({entry_point.value!r}{_distribution(entry_point)}, group "
                f"{ENTRY_POINT_GROUP!r}) could not be loaded and are left out: "
                f"{type(error).__name__}: {error}",
                RuntimeWarning,
                stacklevel=3,
            )


def _distribution(entry_point: metadata.EntryPoint) -> str:
    dist = getattr(entry_point, "dist", None)
    return f" of {dist.name} {dist.version}" if dist is not None else ""


def list_experiments() -> dict[str, str]:
    """Registered recipes: name -> one-line description. Those of installed packages (rlkit's
    bundled ones included) are registered through the ``rlkit.experiments`` entry-point group,
    loaded on the first call.

    Example:
        >>> import rlkit as rk
        >>> recipes = rk.list_experiments()
        >>> "TabularQLearning_CliffWalking" in recipes, recipes["DQN_CartPole"][:3]
        (True, 'DQN')
    """
    _load_entry_points()
    return {name: _describe(fn) for name, fn in sorted(_REGISTRY.items())}


def _describe(fn: Callable[..., Experiment]) -> str:
    """The docstring's first paragraph on one line (a description may span several lines)."""
    return " ".join((fn.__doc__ or "").strip().split("\n\n")[0].split())


@dataclass(frozen=True)
class RecipeParameter:
    """One parameter of a recipe: its name, type (annotation) and default value."""

    name: str
    type: Any
    default: Any

    @property
    def type_name(self) -> str:
        """The type as written, e.g. ``int``, ``float | None``, ``tuple[int, ...]``."""
        if typing.get_origin(self.type) is None and isinstance(self.type, type):
            return self.type.__name__
        return str(self.type).replace("typing.", "").replace("NoneType", "None")


def recipe_parameters(name: str) -> dict[str, RecipeParameter]:
    """The parameters ``make_experiment(name, seed, **overrides)`` accepts, in order.

    Example:
        >>> params = recipe_parameters("SARSA_CliffWalking")
        >>> params["episodes"].default, params["episodes"].type_name
        (500, 'int')
    """
    fn = _recipe(name)
    container, params = _params_dataclass(fn)
    if container is not None:
        hints = _type_hints(type(params))
        return {
            f.name: RecipeParameter(f.name, hints.get(f.name, Any), getattr(params, f.name))
            for f in dataclasses.fields(params)
        }
    hints = _type_hints(fn)
    return {
        p.name: RecipeParameter(p.name, hints.get(p.name, Any), p.default)
        for p in list(inspect.signature(fn).parameters.values())[1:]
        if p.default is not inspect.Parameter.empty and p.name != "seeds"
    }


def recipe_steps_unit(name: str) -> str | None:
    """What a recipe's ``total_steps`` counts when it is not environment steps (the
    ``STEPS_UNIT`` class variable of its parameters' dataclass, e.g. the offline recipes'
    "gradient steps"); None for environment steps.

    Example:
        >>> recipe_steps_unit("DQN_CartPole") is None
        True
    """
    _, params = _params_dataclass(_recipe(name))
    return getattr(type(params), "STEPS_UNIT", None) if params is not None else None


def _type_hints(obj: Any) -> dict[str, Any]:
    try:
        return typing.get_type_hints(obj)
    except Exception:  # an annotation naming something out of reach: no type check
        return {}


def _params_dataclass(fn: Callable[..., Experiment]) -> tuple[str | None, Any]:
    """``(parameter name, dataclass instance)`` when the recipe's parameters after ``seed`` are
    one dataclass instance (and ``seeds``, for a recipe that runs many seeds at once), else
    ``(None, None)``."""
    rest = [p for p in list(inspect.signature(fn).parameters.values())[1:] if p.name != "seeds"]
    if len(rest) == 1 and dataclasses.is_dataclass(rest[0].default):
        return rest[0].name, rest[0].default
    return None, None


def _recipe(name: str) -> Callable[..., Experiment]:
    _load_entry_points()
    if name not in _REGISTRY:
        close = difflib.get_close_matches(name, list(_REGISTRY), n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise UnknownExperimentError(
            f"unknown experiment {name!r}.{hint} Known experiments: {', '.join(sorted(_REGISTRY))}"
        )
    return _REGISTRY[name]


def make_experiment(
    name: str, seed: int = 0, *, seeds: Sequence[int] | None = None, **overrides: Any
) -> Experiment:
    """Build the registered recipe ``name`` with ``seed``, overriding some of its parameters
    (:func:`recipe_parameters` lists them). ``seeds=[0, 1, 2, 3, 4]`` builds one experiment that
    trains every seed in one process (docs/how-to/speed.md; the recipes whose function takes a
    ``seeds`` argument: ``PPO_CartPole``, ``PPO_Acrobot``), each seed as its single run would
    (``seed`` is then ignored: the experiment's ``seed`` is the first of ``seeds``).

    Raises :class:`UnknownExperimentError` listing the known names, and, before building
    anything, ``TypeError`` for an unknown parameter (listing the accepted ones) or a value of
    the wrong type, ``ValueError`` for a value the recipe refuses; each names the recipe.

    Example:
        >>> import rlkit as rk
        >>> rk.make_experiment("SARSA_CliffWalking", seed=1, episodes=3).stop_condition.n
        3
        >>> rk.make_experiment("SARSA_CliffWalking", episode=3)
        Traceback (most recent call last):
        ...
        TypeError: SARSA_CliffWalking: unknown parameter 'episode'; it accepts seed, episodes, ...
    """
    fn = _recipe(name)
    seed = non_negative_int(name, "seed", seed)
    many: dict[str, Any] = {}
    if seeds is not None:
        if "seeds" not in inspect.signature(fn).parameters:
            raise ValueError(
                f"{name}: seeds=[...] (many seeds in one process) is not supported by this "
                f"recipe; the recipes that support it: {', '.join(many_seed_recipes())}"
            )
        many = {"seeds": check_seeds(name, seeds)}
        seed = many["seeds"][0]
    declared = recipe_parameters(name)
    overrides = renamed_parameters(name, overrides)
    unknown = [key for key in overrides if key not in declared]
    if unknown:
        raise TypeError(
            f"{name}: unknown parameter {unknown[0]!r}; it accepts {', '.join(['seed', *declared])}"
        )
    values = {key: _checked(name, declared[key], value) for key, value in overrides.items()}
    for key in _BUDGETS:  # else a stop condition or a schedule is blamed for the recipe's budget
        if values.get(key) is not None and is_int(values[key]):
            positive_int(name, key, values[key])
    container, params = _params_dataclass(fn)
    if container is not None:
        params = dataclasses.replace(params, **values)
        check = getattr(params, "check", None)
        if check is not None:
            check(name)
        exp = fn(seed=seed, **{container: params}, **many)
    else:
        exp = fn(seed=seed, **values, **many)
    if not isinstance(exp, Experiment):
        raise TypeError(f"recipe {name!r} returned {type(exp).__name__}, not an rk.Experiment")
    exp.name, exp.seed = name, seed
    exp.description = exp.description or _describe(fn)
    exp.params = {key: values.get(key, p.default) for key, p in declared.items()}
    exp.seeds = many.get("seeds")
    return exp


def many_seed_recipes() -> list[str]:
    """The recipes ``make_experiment(name, seeds=[...])`` accepts (their function takes
    ``seeds``).

    Example:
        >>> "PPO_CartPole" in many_seed_recipes()
        True
    """
    _load_entry_points()
    return sorted(n for n, fn in _REGISTRY.items() if "seeds" in inspect.signature(fn).parameters)


def renamed_parameters(name: str, overrides: dict[str, Any]) -> dict[str, Any]:
    """``overrides`` with the recipe's former parameter names replaced by the current ones, each
    with a ``FutureWarning`` (a recipe's dataclass lists them in its ``RENAMED`` class variable,
    old name -> new name), so that old commands and the ``config.json`` of old runs still work.

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     renamed_parameters("DQN_CartPole", {"learning_rate": 1e-3})
        {'lr': 0.001}
    """
    _, params = _params_dataclass(_recipe(name))
    renamed: dict[str, str] = getattr(type(params), "RENAMED", {}) if params is not None else {}
    result: dict[str, Any] = {}
    for key, value in overrides.items():
        new = renamed.get(key)
        if new is None:
            result[key] = value
            continue
        if new in overrides:
            raise TypeError(
                f"{name}: {key!r} and {new!r} are the same parameter; give only {new!r}"
            )
        warnings.warn(
            f"{name}: the parameter {key!r} is now called {new!r}; {key!r} still works but will "
            f"be removed",
            FutureWarning,
            stacklevel=3,
        )
        result[new] = value
    return result


# a recipe's budget parameters: positive whatever the recipe does with them
_BUDGETS = ("total_steps", "episodes", "generations")


def _checked(owner: str, param: RecipeParameter, value: Any) -> Any:
    """``value`` if it fits the parameter's type (tuples from lists), else ``TypeError``."""
    ok, converted = _fits(param.type, value)
    if not ok:
        raise ArgumentTypeError(f"{owner}: {param.name} must be {param.type_name}, got {value!r}")
    return converted


def _fits(tp: Any, value: Any) -> tuple[bool, Any]:
    if tp is Any:
        return True, value
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        for arg in args:
            ok, converted = _fits(arg, value)
            if ok:
                return True, converted
        return False, value
    if tp is type(None):
        return value is None, value
    if tp is bool:
        return isinstance(value, bool), value
    if tp is int:
        return is_int(value), int(value) if is_int(value) else value
    if tp is float:
        return is_real(value), float(value) if is_real(value) else value
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis and _fits(args[0], value)[0]:
        return True, (_fits(args[0], value)[1],)  # hidden=64: one layer, as hidden=(64,)
    if origin is tuple and isinstance(value, (tuple, list)):
        if len(args) == 2 and args[1] is Ellipsis:
            items = [_fits(args[0], v) for v in value]
        elif len(args) == len(value):
            items = [_fits(a, v) for a, v in zip(args, value, strict=True)]
        else:
            return False, value
        return all(ok for ok, _ in items), tuple(v for _, v in items)
    if origin is not None:  # a tuple[...] given a string, a dict given a list, ...
        return isinstance(value, origin), value
    if isinstance(tp, type):
        return isinstance(value, tp), value
    return True, value
