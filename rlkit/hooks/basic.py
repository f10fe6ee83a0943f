"""Hooks: callables ``hook(stage, policy, env[, action])`` that observe a run.

A hook class (``rk.AbstractHook``) overrides the stage methods it needs (``pre_experiment``,
``pre_episode``, ``pre_act`` (with the action), ``post_act``, ``post_episode``,
``post_experiment``); the run loop resolves them once per run and never calls the ones left at
the default. Hooks compose with ``+`` and run in order. Any callable with the signature
``f(stage, policy, env, action=None)`` is accepted as a hook too (it is then called at every
stage).

Here: ``EmptyHook``, composition (``ComposedHook``, ``find_hook``) and the per-episode recorders
``TotalRewardPerEpisode``, ``RewardsPerEpisode``, ``StepsPerEpisode`` (finished episodes only; the
episode in progress is ``current``) and ``TimePerStep``; each has ``state_dict`` /
``load_state_dict``. With a vector env (``rk.VectorGymEnv``) the episode recorders keep one
running value per sub-env in ``current`` (an array, or a list of lists) and record each
sub-env's finished episodes at PostAct, in sub-env order within a step.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

import numpy as np

from ..core.checks import positive_int
from ..core.dispatch import PlanStep, compose
from ..core.interfaces import AbstractHook
from ..core.plan import hook_plan
from ..core.stages import AbstractStage
from ..core.state import load_parts, require_keys, state_count, state_or_none

__all__ = [
    "AbstractHook",
    "EmptyHook",
    "ComposedHook",
    "find_hook",
    "TotalRewardPerEpisode",
    "RewardsPerEpisode",
    "StepsPerEpisode",
    "TimePerStep",
]


class EmptyHook(AbstractHook):
    """A hook that does nothing (costs nothing: the call plan drops it).

    Example:
        >>> import rlkit as rk
        >>> rk.EmptyHook() + rk.TotalRewardPerEpisode()
        EmptyHook() + TotalRewardPerEpisode()
        >>> hook = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
        ...               rk.StopAfterNSteps(5), rk.EmptyHook())
        >>> type(hook).__name__
        'EmptyHook'
    """

    def __repr__(self) -> str:
        return "EmptyHook()"

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        require_keys("EmptyHook", state)


class ComposedHook(AbstractHook):
    """Hooks called in order at every stage; build it with ``a + b + c``.

    ``hook[i]`` is the i-th hook; ``hook[SomeHookType]`` the first hook of that type (a
    ``KeyError`` naming the parts when there is none).

    Example:
        >>> import rlkit as rk
        >>> hook = rk.TotalRewardPerEpisode() + rk.StepsPerEpisode()
        >>> [type(h).__name__ for h in hook.hooks]
        ['TotalRewardPerEpisode', 'StepsPerEpisode']
        >>> hook[rk.StepsPerEpisode] is hook.hooks[1]
        True
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

    def __getitem__(self, key: int | slice | type) -> Any:
        if isinstance(key, type):
            found = find_hook(self, key)
            if found is None:
                raise KeyError(
                    f"ComposedHook: no {key.__name__} among its hooks "
                    f"{[type(h).__name__ for h in self.hooks]}"
                )
            return found
        return self.hooks[key]

    def __getattr__(self, name: str) -> Any:
        # only called for attributes a ComposedHook does not have: point to the part that does
        if name.startswith("__") or name == "hooks":
            raise AttributeError(name)
        owners = [_public(type(h)) for h in self.__dict__.get("hooks", ()) if hasattr(h, name)]
        hint = (
            f"; its part {owners[0]} has it: use hook[{owners[0]}].{name}"
            if owners
            else f"; its parts are {[type(h).__name__ for h in self.__dict__.get('hooks', ())]}"
        )
        raise AttributeError(f"a composed hook (a + b) has no attribute {name!r}{hint}")

    def __call__(self, stage: AbstractStage, policy: Any, env: Any, action: Any = None) -> None:
        for h in self.hooks:
            h(stage, policy, env, action) if stage.method_name == "pre_act" else h(
                stage, policy, env
            )

    def attach(self, policy: Any, env: Any, stop_condition: Any, hook: Any) -> None:
        for h in self.hooks:
            if isinstance(h, AbstractHook):
                h.attach(policy, env, stop_condition, hook)

    def resume_hint(self) -> str | None:
        """The first hint of its parts (see :meth:`AbstractHook.resume_hint`)."""
        hints = (h.resume_hint() for h in self.hooks if isinstance(h, AbstractHook))
        return next((hint for hint in hints if hint is not None), None)

    def plan(self, policy: Any, env: Any) -> dict[AbstractStage | str, list[PlanStep]]:
        plan: dict[AbstractStage | str, list[PlanStep]] = {}
        for h in self.hooks:
            for stage, steps in hook_plan(h, policy, env).items():
                plan.setdefault(stage, []).extend(steps)
        return plan

    def state_dict(self) -> dict[str, Any]:
        """``{"hooks": [...]}``: each hook's state, None for hooks without ``state_dict``."""
        return {"hooks": [state_or_none(h) for h in self.hooks]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        load_parts("ComposedHook", "hooks", self.hooks, state)


def _public(cls: type) -> str:
    """``rk.Name`` for rlkit's classes, else the class name."""
    return f"rk.{cls.__name__}" if cls.__module__.startswith("rlkit.") else cls.__name__


@compose.dispatch
def _(first: object, second: object, /):
    return ComposedHook(first, second)


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


# ---- per-episode statistics: only finished episodes are reported ----


class TotalRewardPerEpisode(AbstractHook):
    """The total reward of every finished episode.

    ``rewards[i]`` is the return of the ``i``-th finished episode (with a multi-agent env,
    ``rk.PettingZooEnv`` or ``rk.PettingZooParallelEnv``: a dict of returns by agent). The
    running total of the episode in progress is ``current``; it joins ``rewards`` only when the
    episode finishes, so a run that stops in the middle of an episode never reports it as
    finished (``current`` still shows it at PostExperiment, and a later run on the same env
    continues it).

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

    # ---- vector envs: per-sub-env running totals (``current`` is an array) ----
    def vector_pre_experiment(self, policy: Any, env: Any) -> None:
        self.current = _per_sub_env("TotalRewardPerEpisode", self.current, env, np.float64)

    def vector_post_act(self, policy: Any, env: Any) -> None:
        self.current += getattr(env, "original_reward", env.reward)  # before VecNormalize
        done = env.done
        if done.any():
            for i in np.flatnonzero(done):
                self.rewards.append(float(self.current[i]))
                self.current[i] = 0.0

    vector_post_episode = None

    # ---- multi-agent envs: per-agent returns (``current`` and each ``rewards[i]``: dicts) ----
    def multiagent_pre_experiment(self, policy: Any, env: Any) -> None:
        if not isinstance(self.current, dict):
            if self.current != 0.0:
                raise ValueError(
                    f"TotalRewardPerEpisode: holds an unfinished single-env episode, cannot "
                    f"record the agents of {env!r}; use a new hook"
                )
            self.current = dict.fromkeys(env.agents, 0.0)

    def multiagent_post_act(self, policy: Any, env: Any) -> None:
        current = self.current
        for agent, reward in env.rewards.items():
            current[agent] = current.get(agent, 0.0) + reward

    def multiagent_post_episode(self, policy: Any, env: Any) -> None:
        self.rewards.append(dict(self.current))
        self.current = dict.fromkeys(self.current, 0.0)

    def state_dict(self) -> dict[str, Any]:
        return {"rewards": [_plain(r) for r in self.rewards], "current": _plain(self.current)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        require_keys("TotalRewardPerEpisode", state, "rewards", "current")
        self.rewards = [_number_or_dict(r) for r in state["rewards"]]
        current = state["current"]
        if isinstance(current, dict):
            self.current = _number_or_dict(current)
        else:
            self.current = (
                float(current) if np.ndim(current) == 0 else np.array(current, dtype=np.float64)
            )


class RewardsPerEpisode(AbstractHook):
    """The reward of every step, one list per finished episode (``rewards``); the steps of the
    episode in progress are in ``current`` until it finishes. With a multi-agent env each
    step's rewards are a dict by agent.

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

    def multiagent_post_act(self, policy: Any, env: Any) -> None:
        self.current.append(dict(env.rewards))  # a multi-agent env: the step's rewards by agent

    def post_episode(self, policy: Any, env: Any) -> None:
        self.rewards.append(self.current)
        self.current = []

    # ---- vector envs: ``current`` is one list per sub-env ----
    def vector_pre_experiment(self, policy: Any, env: Any) -> None:
        if not (self.current and isinstance(self.current[0], list)):
            if self.current:
                raise ValueError(
                    f"RewardsPerEpisode: holds an unfinished single-env episode, cannot record "
                    f"the {env.n_envs} sub-envs of {env!r}; use a new hook"
                )
            self.current = [[] for _ in range(env.n_envs)]
        elif len(self.current) != env.n_envs:
            raise ValueError(
                f"RewardsPerEpisode: holds {len(self.current)} sub-envs' episodes, {env!r} has "
                f"{env.n_envs}; use a new hook"
            )

    def vector_post_act(self, policy: Any, env: Any) -> None:
        current = self.current
        rewards = getattr(env, "original_reward", env.reward)  # before VecNormalize
        for i, reward in enumerate(rewards.tolist()):
            current[i].append(reward)
        done = env.done
        if done.any():
            for i in np.flatnonzero(done):
                self.rewards.append(current[i])
                current[i] = []

    vector_post_episode = None

    def state_dict(self) -> dict[str, Any]:
        current = self.current
        nested = bool(current) and isinstance(current[0], list)
        return {
            "rewards": [list(r) for r in self.rewards],
            "current": [list(c) for c in current] if nested else list(current),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        require_keys("RewardsPerEpisode", state, "rewards", "current")
        self.rewards = [[_number_or_dict(x) for x in r] for r in state["rewards"]]
        current = state["current"]
        if len(current) and isinstance(current[0], (list, tuple, np.ndarray)):
            self.current = [[float(x) for x in c] for c in current]
        else:
            self.current = [_number_or_dict(x) for x in current]


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

    # ---- vector envs: per-sub-env step counts (``current`` is an array) ----
    def vector_pre_experiment(self, policy: Any, env: Any) -> None:
        self.current = _per_sub_env("StepsPerEpisode", self.current, env, np.int64)

    def vector_post_act(self, policy: Any, env: Any) -> None:
        self.current += 1
        done = env.done
        if done.any():
            for i in np.flatnonzero(done):
                self.steps.append(int(self.current[i]))
                self.current[i] = 0

    vector_post_episode = None

    def state_dict(self) -> dict[str, Any]:
        return {"steps": list(self.steps), "current": _plain(self.current)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        require_keys("StepsPerEpisode", state, "steps", "current")
        self.steps = [int(n) for n in state["steps"]]
        if np.ndim(state["current"]) == 0:
            self.current = state_count("StepsPerEpisode", state, "current")
        else:
            self.current = np.array(state["current"], dtype=np.int64)


def _per_sub_env(owner: str, current: Any, env: Any, dtype: Any) -> np.ndarray:
    """The per-sub-env counters a vector run continues (zeros when the hook is fresh)."""
    if isinstance(current, np.ndarray):
        if current.shape != (env.n_envs,):
            raise ValueError(
                f"{owner}: holds the running values of {current.shape[0]} sub-envs, {env!r} "
                f"has {env.n_envs}; use a new hook"
            )
        return current
    if current:
        raise ValueError(
            f"{owner}: holds an unfinished single-env episode (current={current!r}), cannot "
            f"record the sub-envs of {env!r}; use a new hook"
        )
    return np.zeros(env.n_envs, dtype=dtype)


def _plain(current: Any) -> Any:
    if isinstance(current, dict):  # a multi-agent record: by agent
        return dict(current)
    return current.tolist() if isinstance(current, np.ndarray) else current


def _number_or_dict(value: Any) -> Any:
    """A saved return as it was: a float, or a dict of floats by agent."""
    if isinstance(value, dict):
        return {agent: float(v) for agent, v in value.items()}
    return float(value)


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
        self.window = positive_int("TimePerStep", "window", window)
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
        require_keys("TimePerStep", state, "times")
        self.times = deque((float(t) for t in state["times"]), maxlen=self.window)
