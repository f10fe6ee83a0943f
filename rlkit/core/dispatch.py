"""rlkit's private plum ``Dispatcher`` and its generic functions.

All multiple dispatch in rlkit goes through the one ``Dispatcher`` here, never through the global
``plum.dispatch``. Methods are added with ``@rk.update.dispatch``; the name of a method does not
matter (``_`` is customary). Rules that keep dispatch fast (docs/concepts/dispatch.md):

* annotate only with faithful types (classes, ABCs, ``np.ndarray``, ``Union``/``Optional`` of
  those), never ``Literal``, ``type[X]`` or ``list[int]``;
* no return annotation on a dispatched method;
* dispatched arguments are positional-only (end the parameter list with ``/``).

The run loop never dispatches per step: it resolves every method once when a run starts
(:func:`resolve`) and calls the plain functions afterwards.
"""

from __future__ import annotations

import functools
import inspect
import tokenize
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plum import AmbiguousLookupError, Dispatcher, NotFoundLookupError, Signature

__all__ = [
    "update",
    "run_loop",
    "statistics",
    "greedy",
    "compose",
    "restore",
    "run_arguments",
    "collect_statistics",
    "noop",
    "forward",
    "resolve",
    "learning_methods",
    "PlanStep",
    "DispatchError",
    "where",
]

_dispatch = Dispatcher()


class DispatchError(TypeError):
    """No method, or more than one equally specific method, for the given argument types.

    Example:
        A learner without any ``update`` method for its trajectory is refused before the first
        step:

        >>> import rlkit as rk
        >>> class Lazy(rk.AbstractLearner):
        ...     def __call__(self, env):
        ...         return 0.0
        >>> agent = rk.Agent(rk.VBasedPolicy(Lazy(), rk.RandomPolicy(seed=0)),
        ...                  rk.VectorSARTTrajectory())
        >>> try:
        ...     rk.run(agent, rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(5))
        ... except rk.DispatchError as error:
        ...     print(str(error)[:55])
        Agent: learner Lazy has no update method for trajectory
    """


@_dispatch.abstract
def update(*args):  # pragma: no cover - abstract: methods are added with update.dispatch
    """Let a learner learn, or a trajectory record, at a stage of the run loop.

    Three calling conventions share this generic function:

    * ``update(policy_or_learner, trajectory, env, stage)`` learns from the trajectory (for a
      deep learner, its kind's *driver*: when there is a batch, and where it comes from);
    * ``update(policy_or_learner, batch)``: what a deep learner learns from one batch (the
      algorithm's own rule; the drivers call it);
    * ``update(trajectory, policy, env, stage)`` records into the trajectory, and
      ``update(trajectory, policy, env, PRE_ACT_STAGE, action)`` records the chosen action.

    ``Agent(policy, trajectory)`` calls the recording method first, then the learning method.
    Add a method for your own learner (the page ``docs/concepts/dispatch.md`` says how a
    method is chosen):

    Example:
        >>> import rlkit as rk
        >>> class Counter(rk.AbstractLearner):
        ...     \"\"\"Counts the transitions it learns from.\"\"\"
        ...     def __init__(self):
        ...         self.n = 0
        ...     def __call__(self, env):
        ...         return 0.0
        >>> @rk.update.dispatch
        ... def _(learner: Counter, t: rk.VectorSARTTrajectory, env: rk.AbstractEnv,
        ...       stage: rk.PostActStage, /):
        ...     learner.n += 1
        >>> learner = Counter()
        >>> agent = rk.Agent(rk.VBasedPolicy(learner, rk.RandomPolicy(seed=0)),
        ...                  rk.VectorSARTTrajectory())
        >>> hook = rk.run(agent, rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(20))
        >>> learner.n
        20
    """


@_dispatch.abstract
def run_loop(*args):  # pragma: no cover - abstract: methods are added with run_loop.dispatch
    """``run_loop(policy, env, plan)``: the loop that drives one run, chosen by the env's type.

    ``rk.run`` builds the call plan and hands it here. Single environments get the loop of
    docs/architecture.md; vector and multi-agent environments add their own methods.
    """


@_dispatch.abstract
def statistics(*args):  # pragma: no cover - abstract: methods are added with .dispatch
    """``statistics(obj) -> dict[str, float]``: the scalars ``obj`` reports to logging hooks.

    Learners, explorers and approximators add methods (loss, epsilon, TD error, Q mean, learning
    rate, ...) so hooks need not know their types; anything else reports nothing. Use
    :func:`collect_statistics` to gather a whole policy's.

    Example:
        >>> import rlkit as rk
        >>> rk.statistics(rk.EpsilonGreedyExplorer(0.1))
        {'epsilon': 0.1}
        >>> rk.statistics(object())
        {}
    """


@statistics.dispatch
def _(obj: object, /):
    return {}


@_dispatch.abstract
def greedy(*args):  # pragma: no cover - abstract: methods are added with .dispatch
    """``greedy(policy[, seed])``: the greedy form of ``policy``, for evaluation.

    Policies with a separate greedy form add a method beside their class (an ``Agent`` is
    unwrapped, a ``QBasedPolicy`` acts with a ``GreedyExplorer``); any other policy is its own
    greedy form. ``seed`` seeds the generator the greedy form breaks ties with (0 when None).

    Example:
        >>> import rlkit as rk
        >>> class Zero(rk.AbstractLearner):
        ...     def __call__(self, env):
        ...         return [0.0, 1.0]
        >>> agent = rk.Agent(rk.QBasedPolicy(Zero(), rk.EpsilonGreedyExplorer(0.5)),
        ...                  rk.VectorSARTTrajectory())
        >>> policy = rk.greedy(agent)
        >>> policy.explorer, policy.learner is agent.policy.learner
        (GreedyExplorer(), True)
    """


@greedy.dispatch
def _(policy: object, seed: object = None, /):
    return policy


@_dispatch.abstract
def compose(*args):  # pragma: no cover - abstract: the method is in rlkit.hooks.basic
    """``compose(hook_a, hook_b)``: the hook that calls ``hook_a`` then ``hook_b`` (``a + b``)."""


@_dispatch.abstract
def restore(*args):  # pragma: no cover - abstract: the method is in rlkit.hooks.checkpoint
    """``restore(source, policy, env, stop_condition, hook)``: load a saved run's state into its
    objects before ``rk.run`` continues it (``rk.run(..., resume_from=source)``). Returns True
    when the saved run had already finished and there is nothing left to run (``rk.run`` then
    returns at once)."""


@_dispatch.abstract
def run_arguments(*args):  # pragma: no cover - abstract: methods are added with .dispatch
    """``run_arguments(obj)``: ``(policy, env, stop_condition, hook)`` when ``rk.run(obj)`` runs
    ``obj`` as a whole (an ``rk.Experiment``: its method is beside the class), None when ``obj``
    is a policy, run with the other arguments of ``rk.run``."""


@run_arguments.dispatch
def _(obj: object, /):
    return None


def collect_statistics(policy: Any) -> dict[str, float]:
    """Statistics of a policy and its parts (agent -> policy -> learner/explorer/approximator),
    keyed ``"<part>/<name>"``, e.g. ``"learner/loss"``, ``"explorer/epsilon"``."""
    found: dict[str, float] = {}
    for prefix, part in _parts(policy):
        for key, value in statistics(part).items():
            found[f"{prefix}/{key}"] = float(value)
    return found


def _parts(policy: Any):
    inner = getattr(policy, "policy", policy)  # an Agent's policy
    yield "policy", inner
    for name in ("learner", "explorer"):
        part = getattr(inner, name, None)
        if part is not None:
            yield name, part
            approximator = getattr(part, "approximator", None)
            if approximator is not None:
                yield "approximator", approximator


def noop(method: Callable) -> Callable:
    """Mark a dispatched method as doing nothing: the call plan drops it.

    Apply it under ``@update.dispatch`` (it must see the plain function).
    """
    method.__rlkit_noop__ = True
    return method


def forward(attribute: str) -> Callable[[Callable], Callable]:
    """Mark a dispatched method as forwarding to ``getattr(first_argument, attribute)``.

    The method body must do exactly that, e.g. ``update(policy.learner, trajectory, env, stage)``;
    the call plan then resolves the target once instead of calling through the forwarder.
    """

    def mark(method: Callable) -> Callable:
        method.__rlkit_forward__ = attribute
        return method

    return mark


@dataclass(frozen=True)
class PlanStep:
    """One resolved call of a run's call plan: ``call`` takes no argument (or the action)."""

    call: Callable[..., Any]
    name: str
    where: str

    def __str__(self) -> str:
        return f"{self.name}  [{self.where}]"


def where(fn: Callable) -> str:
    """``file:line`` of a function's definition (best effort)."""
    fn = inspect.unwrap(getattr(fn, "__func__", fn))
    try:
        file = inspect.getsourcefile(fn) or "?"
        line = inspect.getsourcelines(fn)[1]
    except (OSError, TypeError, SyntaxError, tokenize.TokenError):  # e.g. exec'd from Markdown
        return "?"
    return f"{_short_path(file)}:{line}"


_PACKAGE = Path(__file__).resolve().parents[1]


def _short_path(file: str) -> str:
    """``rlkit/...`` for a file of this package, else the file's folder and name (the whole
    path when that folder is named ``rlkit``, e.g. a script in a clone named ``rlkit``, so it is
    never taken for one of the package's files)."""
    path = Path(file).resolve()
    if path.is_relative_to(_PACKAGE):
        return "rlkit/" + path.relative_to(_PACKAGE).as_posix()
    short = "/".join(path.parts[-2:])
    return path.as_posix() if short.startswith("rlkit/") else short


def _type_names(types: tuple[type, ...]) -> str:
    return ", ".join(getattr(t, "__name__", repr(t)) for t in types)


def learning_methods(learner: Any) -> list[str]:
    """The ``update(learner, trajectory, env, stage)`` methods that apply to ``learner``, other
    than the do-nothing default (:func:`noop`) and forwarders, as readable signatures."""
    found = []
    for method in update.methods:
        types = method.signature.types
        impl = method.implementation
        if len(types) != 4 or getattr(impl, "__rlkit_noop__", False):
            continue
        if getattr(impl, "__rlkit_forward__", None) is not None:
            continue
        try:
            applies = isinstance(learner, types[0])
        except TypeError:  # a type isinstance cannot check
            continue
        if applies:
            found.append(f"update({_type_names(types)})")
    return found


def resolve(function: Any, *args: Any, extra: tuple[type, ...] = ()) -> PlanStep | None:
    """Resolve ``function(*args, *extra_arguments)`` once for the types of ``args``.

    ``extra`` gives the types of trailing arguments that are supplied at call time (the action at
    PreAct). Forwarding methods (:func:`forward`) are followed; no-op methods (:func:`noop`) give
    ``None``. Raises :class:`DispatchError` naming the types when no method (or no unique
    method) matches.
    """
    types = tuple(type(a) for a in args) + extra
    name = getattr(function, "__name__", "function")
    try:
        impl, _ = function.resolve_method(Signature(*types))
    except NotFoundLookupError:
        raise DispatchError(
            f"no method of rlkit's `{name}` for argument types ({_type_names(types)}). "
            f"Add one with @rk.{name}.dispatch (for a learner, subclass rk.AbstractLearner to "
            f"inherit the do-nothing default for stages it does not handle)."
        ) from None
    except AmbiguousLookupError:
        raise DispatchError(
            f"more than one equally specific method of rlkit's `{name}` matches argument types "
            f"({_type_names(types)}); add a method for exactly these types to settle it."
        ) from None
    attribute = getattr(impl, "__rlkit_forward__", None)
    if attribute is not None:
        return resolve(function, getattr(args[0], attribute), *args[1:], extra=extra)
    if getattr(impl, "__rlkit_noop__", False):
        return None
    label = f"{name}({_type_names(types)})"
    return PlanStep(functools.partial(impl, *args), label, where(impl))
