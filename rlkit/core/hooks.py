"""Hooks: callables ``hook(stage, policy, env[, action])`` that observe a run.

A hook class overrides the stage methods it needs (``pre_experiment``, ``pre_episode``,
``pre_act`` (with the action), ``post_act``, ``post_episode``, ``post_experiment``); the run loop
resolves them once per run and never calls the ones left at the default. Hooks compose with ``+``
and run in order. Any callable with the signature ``f(stage, policy, env, action=None)`` is
accepted as a hook too (it is then called at every stage).

Bundled: ``TotalRewardPerEpisode``, ``RewardsPerEpisode``, ``StepsPerEpisode`` (finished
episodes only; the episode in progress is ``current``), ``TimePerStep``, ``DoEveryNSteps``,
``DoEveryNEpisodes``, ``DoOnExit``; each has ``state_dict`` / ``load_state_dict``.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from functools import partial
from typing import Any

from .dispatch import PlanStep, where
from .stages import POST_EPISODE_STAGE, PRE_EPISODE_STAGE, STAGES, AbstractStage

__all__ = [
    "AbstractHook",
    "EmptyHook",
    "ComposedHook",
    "find_hook",
    "hook_plan",
    "TotalRewardPerEpisode",
    "RewardsPerEpisode",
    "StepsPerEpisode",
    "TimePerStep",
    "DoEveryNSteps",
    "DoEveryNEpisodes",
    "DoOnExit",
]


class AbstractHook:
    """Base class of hooks: override the stage methods you need.

    Example:
        >>> import rlkit as rk
        >>> class CountSteps(rk.AbstractHook):
        ...     def __init__(self):
        ...         self.steps = 0
        ...     def post_act(self, policy, env):
        ...         self.steps += 1
        >>> hook = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
        ...               rk.StopAfterNSteps(50), CountSteps())
        >>> hook.steps
        50
    """

    def pre_experiment(self, policy: Any, env: Any) -> None:
        """Called once before the first episode."""

    def pre_episode(self, policy: Any, env: Any) -> None:
        """Called after each reset."""

    def pre_act(self, policy: Any, env: Any, action: Any) -> None:
        """Called after the policy chose ``action``, before the env performs it."""

    def post_act(self, policy: Any, env: Any) -> None:
        """Called after the env performed the action."""

    def post_episode(self, policy: Any, env: Any) -> None:
        """Called after the last step of each finished episode."""

    def post_experiment(self, policy: Any, env: Any) -> None:
        """Called once at the end of the run, also when it ends with an exception."""

    def __call__(self, stage: AbstractStage, policy: Any, env: Any, action: Any = None) -> None:
        method = getattr(self, stage.method_name)
        if stage.method_name == "pre_act":
            method(policy, env, action)
        else:
            method(policy, env)

    def __add__(self, other: Any) -> ComposedHook:
        return ComposedHook(self, other)

    def __radd__(self, other: Any) -> ComposedHook:
        return ComposedHook(other, self)

    def plan(self, policy: Any, env: Any) -> dict[AbstractStage, list[PlanStep]]:
        """Resolved calls per stage: the overridden stage methods, bound to policy and env."""
        plan: dict[AbstractStage, list[PlanStep]] = {}
        cls = type(self)
        own = getattr(self, "__dict__", {})  # stage methods set on the instance count too
        for stage in STAGES:
            name = stage.method_name
            if getattr(cls, name) is getattr(AbstractHook, name) and name not in own:
                continue
            method = getattr(self, name)
            plan[stage] = [
                PlanStep(partial(method, policy, env), f"{cls.__name__}.{name}", where(method))
            ]
        return plan


class EmptyHook(AbstractHook):
    """A hook that does nothing (costs nothing: the call plan drops it)."""

    def __repr__(self) -> str:
        return "EmptyHook()"

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        _require("EmptyHook", state)


class ComposedHook(AbstractHook):
    """Hooks called in order at every stage; build it with ``a + b + c``.

    Example:
        >>> import rlkit as rk
        >>> hook = rk.TotalRewardPerEpisode() + rk.StepsPerEpisode()
        >>> [type(h).__name__ for h in hook.hooks]
        ['TotalRewardPerEpisode', 'StepsPerEpisode']
    """

    def __init__(self, *hooks: Any) -> None:
        flat: list[Any] = []
        for h in hooks:
            if not callable(h):
                raise TypeError(
                    f"ComposedHook: expected hooks (callables hook(stage, policy, env[, action])),"
                    f" got {type(h).__name__}: {h!r}"
                )
            flat.extend(h.hooks if isinstance(h, ComposedHook) else (h,))
        self.hooks = tuple(flat)

    def __repr__(self) -> str:
        return " + ".join(repr(h) for h in self.hooks)

    def __getitem__(self, index: int) -> Any:
        return self.hooks[index]

    def __call__(self, stage: AbstractStage, policy: Any, env: Any, action: Any = None) -> None:
        for h in self.hooks:
            h(stage, policy, env, action) if stage.method_name == "pre_act" else h(
                stage, policy, env
            )

    def plan(self, policy: Any, env: Any) -> dict[AbstractStage, list[PlanStep]]:
        plan: dict[AbstractStage, list[PlanStep]] = {}
        for h in self.hooks:
            for stage, steps in hook_plan(h, policy, env).items():
                plan.setdefault(stage, []).extend(steps)
        return plan

    def state_dict(self) -> dict[str, Any]:
        """``{"hooks": [...]}``: each hook's state, None for hooks without ``state_dict``."""
        return {"hooks": [_state_of(h) for h in self.hooks]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        _load_parts("ComposedHook", "hooks", self.hooks, state)


def find_hook(hook: Any, kind: type) -> Any:
    """The first hook of type ``kind`` in ``hook`` (a single hook or ``a + b + ...``), or None.

    Example:
        >>> import rlkit as rk
        >>> hook = rk.TotalRewardPerEpisode() + rk.StepsPerEpisode()
        >>> rk.find_hook(hook, rk.StepsPerEpisode) is hook.hooks[1]
        True
        >>> rk.find_hook(hook, rk.TimePerStep) is None
        True
    """
    parts = hook.hooks if isinstance(hook, ComposedHook) else (hook,)
    return next((h for h in parts if isinstance(h, kind)), None)


def hook_plan(hook: Any, policy: Any, env: Any) -> dict[AbstractStage, list[PlanStep]]:
    """The call plan of any hook: an :class:`AbstractHook`'s own, or every stage for a plain
    callable ``hook(stage, policy, env, action=None)``."""
    if isinstance(hook, AbstractHook):
        return hook.plan(policy, env)
    if not callable(hook):
        raise TypeError(
            f"run: hook must be callable as hook(stage, policy, env[, action]), "
            f"got {type(hook).__name__}: {hook!r}"
        )
    name = getattr(hook, "__qualname__", type(hook).__name__)
    # At PreAct the run loop passes the action as the one remaining argument.
    return {
        stage: [PlanStep(partial(hook, stage, policy, env), name, where(hook))] for stage in STAGES
    }


def _require(owner: str, state: Any, *keys: str) -> None:
    """Reject a state that is not a dict with ``keys`` (a corrupt or foreign checkpoint)."""
    if not isinstance(state, dict):
        raise TypeError(f"{owner}.load_state_dict: expected a dict, got {type(state).__name__}")
    missing = [k for k in keys if k not in state]
    if missing:
        raise ValueError(
            f"{owner}.load_state_dict: state lacks {missing}; got keys {sorted(state)} "
            f"(a checkpoint of another object?)"
        )


def _count(owner: str, state: dict[str, Any], key: str) -> int:
    value = state[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(
            f"{owner}.load_state_dict: {key} must be a non-negative integer, got {value!r}"
        )
    return value


def _state_of(part: Any) -> dict[str, Any] | None:
    method = getattr(part, "state_dict", None)
    return method() if callable(method) else None


def _load_parts(owner: str, key: str, parts: tuple, state: dict[str, Any]) -> None:
    """Restore the parts of a composite (hooks of a ComposedHook, conditions of StopAny/StopAll)."""
    _require(owner, state, key)
    states = state[key]
    if not isinstance(states, list) or len(states) != len(parts):
        raise ValueError(
            f"{owner}.load_state_dict: expected a list of {len(parts)} states under {key!r}, "
            f"got {states!r:.80}"
        )
    for part, part_state in zip(parts, states, strict=True):
        if part_state is not None:
            part.load_state_dict(part_state)


def _check_callable(owner: str, f: Any, signature: str) -> Callable:
    if not callable(f):
        raise TypeError(
            f"{owner}: f must be callable as {signature}, got {type(f).__name__}: {f!r}"
        )
    return f


def _positive_int(owner: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{owner}: {name} must be a positive integer, got {value!r}")
    return value


# ---- per-episode statistics: only finished episodes are reported ----


class TotalRewardPerEpisode(AbstractHook):
    """The total reward of every finished episode.

    ``rewards[i]`` is the return of the ``i``-th finished episode. The running total of the episode
    in progress is ``current``; it joins ``rewards`` only when the episode finishes, so a run that
    stops in the middle of an episode never reports it as finished (``current`` still shows it at
    PostExperiment, and a later run on the same env continues it).

    Example:
        >>> import rlkit as rk
        >>> hook = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
        ...               rk.StopAfterNEpisodes(3), rk.TotalRewardPerEpisode())
        >>> len(hook.rewards), hook.current
        (3, 0.0)
    """

    def __init__(self) -> None:
        self.rewards: list[float] = []
        self.current = 0.0

    def __repr__(self) -> str:
        return "TotalRewardPerEpisode()"

    def post_act(self, policy: Any, env: Any) -> None:
        self.current += float(env.reward)

    def post_episode(self, policy: Any, env: Any) -> None:
        self.rewards.append(self.current)
        self.current = 0.0

    def state_dict(self) -> dict[str, Any]:
        return {"rewards": list(self.rewards), "current": self.current}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        _require("TotalRewardPerEpisode", state, "rewards", "current")
        self.rewards = [float(r) for r in state["rewards"]]
        self.current = float(state["current"])


class RewardsPerEpisode(AbstractHook):
    """The reward of every step, one list per finished episode (``rewards``); the steps of the
    episode in progress are in ``current`` until it finishes.

    Example:
        >>> import rlkit as rk
        >>> hook = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CliffWalking-v1", seed=0),
        ...               rk.StopAfterNSteps(3), rk.RewardsPerEpisode())
        >>> hook.rewards, hook.current
        ([], [-1.0, -1.0, -1.0])
    """

    def __init__(self) -> None:
        self.rewards: list[list[float]] = []
        self.current: list[float] = []

    def __repr__(self) -> str:
        return "RewardsPerEpisode()"

    def post_act(self, policy: Any, env: Any) -> None:
        self.current.append(float(env.reward))

    def post_episode(self, policy: Any, env: Any) -> None:
        self.rewards.append(self.current)
        self.current = []

    def state_dict(self) -> dict[str, Any]:
        return {"rewards": [list(r) for r in self.rewards], "current": list(self.current)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        _require("RewardsPerEpisode", state, "rewards", "current")
        self.rewards = [[float(x) for x in r] for r in state["rewards"]]
        self.current = [float(x) for x in state["current"]]


class StepsPerEpisode(AbstractHook):
    """The number of steps of every finished episode (``steps``); the steps taken so far in the
    episode in progress are ``current``.

    Example:
        >>> import rlkit as rk
        >>> hook = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
        ...               rk.StopAfterNEpisodes(2), rk.StepsPerEpisode())
        >>> len(hook.steps), all(n > 0 for n in hook.steps)
        (2, True)
    """

    def __init__(self) -> None:
        self.steps: list[int] = []
        self.current = 0

    def __repr__(self) -> str:
        return "StepsPerEpisode()"

    def post_act(self, policy: Any, env: Any) -> None:
        self.current += 1

    def post_episode(self, policy: Any, env: Any) -> None:
        self.steps.append(self.current)
        self.current = 0

    def state_dict(self) -> dict[str, Any]:
        return {"steps": list(self.steps), "current": self.current}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        _require("StepsPerEpisode", state, "steps", "current")
        self.steps = [int(n) for n in state["steps"]]
        self.current = _count("StepsPerEpisode", state, "current")


# ---- timing ----


class TimePerStep(AbstractHook):
    """Wall-clock seconds of the most recent ``window`` steps (``times``, measured with
    ``time.perf_counter`` from one PostAct to the next; the first step of a run is timed from
    PreExperiment). ``steps_per_second`` is their mean rate.

    Example:
        >>> import rlkit as rk
        >>> hook = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
        ...               rk.StopAfterNSteps(50), rk.TimePerStep(window=10))
        >>> len(hook.times), hook.steps_per_second > 0
        (10, True)
    """

    def __init__(self, window: int = 100) -> None:
        self.window = _positive_int("TimePerStep", "window", window)
        self.times: deque[float] = deque(maxlen=self.window)
        self._last = time.perf_counter()

    def __repr__(self) -> str:
        return f"TimePerStep(window={self.window})"

    @property
    def steps_per_second(self) -> float:
        """Mean steps per second over ``times`` (0.0 before any step was timed)."""
        total = sum(self.times)
        return len(self.times) / total if total > 0 else 0.0

    def pre_experiment(self, policy: Any, env: Any) -> None:
        self._last = time.perf_counter()  # the time between runs is not a step's

    def post_act(self, policy: Any, env: Any) -> None:
        now = time.perf_counter()
        self.times.append(now - self._last)
        self._last = now

    def state_dict(self) -> dict[str, Any]:
        return {"times": list(self.times)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        _require("TimePerStep", state, "times")
        self.times = deque((float(t) for t in state["times"]), maxlen=self.window)


# ---- callbacks ----


class _EveryN(AbstractHook):
    """Counts calls of ``_tick`` in ``t`` and calls ``f(t, policy, env)`` at every ``n``-th;
    the count is the hook's checkpoint state."""

    def __init__(self, f: Callable[[int, Any, Any], Any], n: int = 1) -> None:
        name = type(self).__name__
        self.f = _check_callable(name, f, "f(t, policy, env)")
        self.n = _positive_int(name, "n", n)
        self.t = 0

    def _tick(self, policy: Any, env: Any) -> None:
        self.t += 1
        if self.t % self.n == 0:
            self.f(self.t, policy, env)

    def state_dict(self) -> dict[str, Any]:
        return {"t": self.t}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        name = type(self).__name__
        _require(name, state, "t")
        self.t = _count(name, state, "t")


class DoEveryNSteps(_EveryN):
    """Call ``f(t, policy, env)`` at PostAct of every ``n``-th environment step, where ``t`` is
    the number of steps this hook has seen (across runs).

    Example:
        >>> import rlkit as rk
        >>> seen = []
        >>> hook = rk.DoEveryNSteps(lambda t, policy, env: seen.append(t), n=4)
        >>> _ = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
        ...            rk.StopAfterNSteps(10), hook)
        >>> seen
        [4, 8]
    """

    post_act = _EveryN._tick

    def __repr__(self) -> str:
        return f"DoEveryNSteps({_name(self.f)}, n={self.n})"


class DoEveryNEpisodes(_EveryN):
    """Call ``f(t, policy, env)`` every ``n`` episodes, at ``stage``.

    At ``rk.POST_EPISODE_STAGE`` (the default) ``t`` counts finished episodes and ``f`` runs after
    episode ``n, 2n, ...`` finished; at ``rk.PRE_EPISODE_STAGE`` ``t`` counts started episodes
    and ``f`` runs after the reset of episode ``n, 2n, ...``. Counts continue across runs.

    Example:
        >>> import rlkit as rk
        >>> seen = []
        >>> hook = rk.DoEveryNEpisodes(lambda t, policy, env: seen.append(t), n=2)
        >>> _ = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
        ...            rk.StopAfterNEpisodes(5), hook)
        >>> seen
        [2, 4]
    """

    def __init__(
        self,
        f: Callable[[int, Any, Any], Any],
        n: int = 1,
        stage: AbstractStage = POST_EPISODE_STAGE,
    ) -> None:
        super().__init__(f, n)
        if stage is not PRE_EPISODE_STAGE and stage is not POST_EPISODE_STAGE:
            raise ValueError(
                f"DoEveryNEpisodes: stage must be rk.POST_EPISODE_STAGE or rk.PRE_EPISODE_STAGE, "
                f"got {stage!r}"
            )
        self.stage = stage
        # Only the chosen stage's method is overridden, so the call plan holds just that one.
        setattr(self, stage.method_name, self._tick)

    def __repr__(self) -> str:
        return f"DoEveryNEpisodes({_name(self.f)}, n={self.n}, stage={self.stage!r})"


class DoOnExit(AbstractHook):
    """Call ``f(policy, env)`` once at PostExperiment (also when the run ends with an exception).

    Example:
        >>> import rlkit as rk
        >>> hook = rk.DoOnExit(lambda policy, env: print("done:", env.done))
        >>> _ = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
        ...            rk.StopAfterNEpisodes(1), hook)
        done: True
    """

    def __init__(self, f: Callable[[Any, Any], Any]) -> None:
        self.f = _check_callable("DoOnExit", f, "f(policy, env)")

    def __repr__(self) -> str:
        return f"DoOnExit({_name(self.f)})"

    def post_experiment(self, policy: Any, env: Any) -> None:
        self.f(policy, env)

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        _require("DoOnExit", state)


def _name(f: Any) -> str:
    return getattr(f, "__qualname__", type(f).__name__)
