"""The contracts everything else implements: environments, policies, learners, trajectories,
approximators, hooks and stop conditions.

These are the bottom layer of rlkit (docs/architecture.md, "The layers"): every other package
builds on them, and this module imports nothing above ``rlkit.core``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from .checks import not_a_class
from .dispatch import PlanStep, compose, noop, update, where
from .stages import STAGES, AbstractStage
from .state import load_parts, state_or_none

# The two moments after the stop checks at which hooks may act besides the stages (see
# AbstractHook.after_step_check): plan keys next to the stages.
CHECK_MOMENTS = ("after_step_check", "after_episode_check")

__all__ = [
    "AbstractEnv",
    "AbstractVectorEnv",
    "AbstractOfflineEnv",
    "InvalidActionError",
    "AbstractPolicy",
    "AbstractLearner",
    "AbstractTrajectory",
    "AbstractApproximator",
    "AbstractHook",
    "AbstractStopCondition",
    "step_takes_action",
    "CHECK_MOMENTS",
    "StopAny",
    "StopAll",
    "stop_plan",
    "bind_check",
    "stop_answer",
]


# ---- environments ----
class InvalidActionError(ValueError):
    """An action outside the environment's action space.

    Example:
        >>> import rlkit as rk
        >>> env = rk.GymEnv("CartPole-v1", seed=0)
        >>> env.reset()
        >>> try:
        ...     env.act(5)
        ... except rk.InvalidActionError as error:
        ...     print(type(error).__name__, isinstance(error, ValueError))
        InvalidActionError True
    """


class AbstractEnv(ABC):
    """An environment as the run loop sees it.

    Attributes a subclass keeps current: ``state`` (the observation), ``reward`` (of the last
    action), ``is_terminated`` (a terminal state was reached: never bootstrap), ``is_truncated``
    (the episode was cut, e.g. by a time limit: bootstrap), ``action_space`` and ``state_space``
    (gymnasium spaces). ``done`` is ``is_terminated or is_truncated``. After the last action of an
    episode ``state`` is the real final observation, never the one after a reset.

    ``needs_reset`` is True until the first ``reset`` and a subclass sets it to False in
    ``reset``; the run loop starts a new episode when ``env.done or env.needs_reset`` and
    otherwise continues the unfinished episode a previous run stopped in.

    Example:
        >>> import rlkit as rk
        >>> env = rk.GymEnv("CliffWalking-v1", seed=0)
        >>> env.reset(); env.act(0); env.state, env.reward, env.done
        (24, -1, False)
    """

    is_vector = False  # a vector env says True (a class attribute: cheaper than isinstance)
    state: Any = None
    reward: float = 0.0
    is_terminated: bool = False
    is_truncated: bool = False
    needs_reset: bool = True
    action_space: Any = None
    state_space: Any = None

    @property
    def done(self) -> bool:
        """``is_terminated or is_truncated``."""
        return self.is_terminated or self.is_truncated

    @property
    def legal_action_mask(self) -> np.ndarray | None:
        """Boolean mask of the legal actions in the current state, or None when all are legal."""
        return None

    @abstractmethod
    def reset(self, seed: int | None = None) -> None:
        """Start a new episode (seeding the environment's generator when ``seed`` is given)."""

    @abstractmethod
    def act(self, action: Any) -> None:
        """Perform ``action``, updating ``state``, ``reward`` and the done flags."""

    def __call__(self, action: Any) -> None:
        self.act(action)

    def close(self) -> None:  # noqa: B027 - optional to override
        """Release resources (windows, files). The default does nothing."""


class AbstractVectorEnv(ABC):
    """``n_envs`` copies of an environment stepped together (docs/how-to/vector-envs.md).

    It is not an :class:`AbstractEnv`: the run loop of a vector env is its own (``run_loop``
    dispatches on the env type; no episode stages for the batch), and methods written for single
    environments do not silently match it. After ``act(actions)`` (``actions`` of shape
    ``(n_envs, ...)``):

    * ``state``: batched observations, shape ``(n_envs, *obs_shape)``: what the policy acts on
      next (the reset observation for sub-envs whose episode just ended);
    * ``final_state``: same shape, the next observation of the transition just made: for
      sub-envs whose episode ended at this step the real final observation, for the others equal
      to ``state`` (a learner may always bootstrap from ``final_state``);
    * ``reward`` (float array), ``is_terminated``, ``is_truncated`` (bool arrays), all of shape
      ``(n_envs,)``; ``done`` is their element-wise OR;
    * ``action_space`` and ``state_space``: the spaces of ONE sub-env;
    * ``legal_action_mask``: ``(n_envs, n)`` bools for the current states, or None.

    No transition ever crosses a reset: ``(state_before, action, reward, final_state)`` is a
    transition of one sub-env's episode. ``needs_reset`` is True until the first ``reset``.

    Example:
        >>> import rlkit as rk
        >>> env = rk.VectorGymEnv("CartPole-v1", 3, seed=0)
        >>> env.reset(); env.act([0, 1, 0])
        >>> env.state.shape, env.reward.shape, env.done.dtype
        ((3, 4), (3,), dtype('bool'))
        >>> env.close()
    """

    is_vector = True  # see AbstractEnv.is_vector
    n_envs: int = 1
    state: Any = None
    final_state: Any = None
    reward: Any = None
    is_terminated: Any = None
    is_truncated: Any = None
    needs_reset: bool = True
    action_space: Any = None
    state_space: Any = None

    @property
    def done(self) -> np.ndarray:
        """``is_terminated | is_truncated``, element-wise (shape ``(n_envs,)``)."""
        return np.logical_or(self.is_terminated, self.is_truncated)

    @property
    def legal_action_mask(self) -> np.ndarray | None:
        """``(n_envs, n)`` boolean masks of the legal actions, or None when all are legal."""
        return None

    @property
    def original_reward(self) -> Any:
        """The rewards of the last step before any normalisation (``rk.VecNormalize`` scales
        ``reward`` for the learner): what hooks that report returns add up. Here ``reward``."""
        return self.reward

    @abstractmethod
    def reset(self, seed: Any = None) -> None:
        """Reset every sub-env (seeding them from ``seed`` when given)."""

    @abstractmethod
    def act(self, actions: Any) -> None:
        """Perform one action per sub-env (shape ``(n_envs, ...)``)."""

    def __call__(self, actions: Any) -> None:
        self.act(actions)

    def close(self) -> None:  # noqa: B027 - optional to override
        """Release the sub-environments and their workers. The default does nothing."""


class AbstractOfflineEnv(ABC):
    """A fixed dataset seen as an environment (docs/how-to/offline-rl.md): offline learning has
    no acting, so it is not an :class:`AbstractEnv`; ``run_loop`` dispatches on this type to
    the offline loop (PreExperiment, then one PostAct per gradient step, then PostExperiment).

    ``sample()`` draws the next batch (a dict of numpy arrays by key: ``state``, ``action``,
    ``reward``, ``terminal``, ``next_state``) with the env's own generator and counts it in
    ``steps``; ``state_space`` and ``action_space`` are the dataset's. The attributes the
    hooks read of any env (``reward``, ``done``, ``is_terminated``, ``is_truncated``) stay
    ``0.0`` and False: there are no episodes.

    Example:
        >>> import rlkit as rk
        >>> issubclass(rk.OfflineEnv, rk.AbstractOfflineEnv), issubclass(rk.OfflineEnv, rk.AbstractEnv)
        (True, False)
    """  # noqa: E501

    is_vector = False
    n_envs = 1
    state: Any = None
    reward: float = 0.0
    is_terminated: bool = False
    is_truncated: bool = False
    done: bool = False
    needs_reset: bool = False
    legal_action_mask: Any = None
    action_space: Any = None
    state_space: Any = None
    steps: int = 0

    @abstractmethod
    def sample(self) -> Any:
        """The next batch of transitions (counted in ``steps``)."""

    def close(self) -> None:  # noqa: B027 - optional to override
        """Release resources. The default does nothing."""


# ---- policies ----


class AbstractPolicy(ABC):
    """A policy maps an environment to an action: ``policy(env) -> action``.

    It may also react to stages: ``policy(stage, env[, action])``. The run loop does not call
    that per step; it asks :meth:`plan` once for the resolved calls of every stage. A plain
    policy does nothing at any stage; :class:`~rlkit.Agent` adds recording and learning.

    Example:
        >>> import rlkit as rk
        >>> class AlwaysLeft(rk.AbstractPolicy):
        ...     def act(self, env):
        ...         return 0
        >>> hook = rk.run(AlwaysLeft(), rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNEpisodes(3),
        ...               rk.TotalRewardPerEpisode())
        >>> len(hook.rewards)
        3
    """

    @abstractmethod
    def act(self, env: Any) -> Any:
        """The action to take in ``env``'s current state (never called on a done env)."""

    def plan(self, env: Any) -> dict[AbstractStage, list[PlanStep]]:
        """Resolved calls per stage for this policy in ``env`` (empty: nothing to do)."""
        return {}

    def __call__(self, env_or_stage: Any, env: Any = None, action: Any = None) -> Any:
        if not isinstance(env_or_stage, AbstractStage):
            return self.act(env_or_stage)
        for step in self.plan(env).get(env_or_stage, ()):
            step.call(action) if step_takes_action(env_or_stage) else step.call()
        return None


def step_takes_action(stage: AbstractStage) -> bool:
    """Whether plan steps of ``stage`` are called with the action (only at PreAct)."""
    return stage.method_name == "pre_act"


# ---- learners ----


class AbstractLearner:
    """A learner estimates values (``learner(env)``: the estimate for the current state) and
    learns in ``update(learner, trajectory, env, stage)`` methods added with
    ``@rk.update.dispatch``. Stages a learner has no method for do nothing.

    Example:
        >>> import numpy as np
        >>> import rlkit as rk
        >>> class Visits(rk.AbstractLearner):
        ...     \"\"\"Counts the visits of each state.\"\"\"
        ...     def __init__(self, n_states):
        ...         self.counts = np.zeros(n_states)
        ...     def __call__(self, env):
        ...         return self.counts[env.state]
        >>> @rk.update.dispatch
        ... def _(learner: Visits, t: rk.VectorSARTTrajectory, env: rk.AbstractEnv,
        ...       stage: rk.PostActStage, /):
        ...     learner.counts[t.state[-1]] += 1
        >>> env = rk.GymEnv("rlkit/RandomWalk1D-v0", seed=0)
        >>> learner = Visits(env.state_space.n)
        >>> agent = rk.Agent(rk.VBasedPolicy(learner, rk.RandomPolicy(seed=0)),
        ...                  rk.VectorSARTTrajectory())
        >>> hook = rk.run(agent, env, rk.StopAfterNSteps(100))
        >>> int(learner.counts.sum())
        100
    """

    def __call__(self, env: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not estimate values of a state")


# ---- any stage: a learner does nothing unless it has a method for the stage ----
@update.dispatch
@noop
def _(
    learner: AbstractLearner,
    trajectory: AbstractTrajectory,
    env: AbstractEnv | AbstractVectorEnv,
    stage: AbstractStage,
    /,
):
    return None


# ---- trajectories ----


class AbstractTrajectory(ABC):
    """Storage of experience, filled by ``update(trajectory, policy, env, stage[, action])``
    methods and read by learners. Traces are named: ``state, action, reward, terminal,
    truncated, next_state``.

    Example:
        >>> import rlkit as rk
        >>> trajectory = rk.VectorSARTTrajectory()
        >>> hook = rk.run(rk.Agent(rk.RandomPolicy(seed=0), trajectory),
        ...               rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(10))
        >>> isinstance(trajectory, rk.AbstractTrajectory), len(trajectory)
        (True, 10)
    """

    @abstractmethod
    def __len__(self) -> int:
        """Number of stored transitions."""


# ---- approximators ----


class AbstractApproximator(ABC):
    """A function approximator: ``approximator(x)`` estimates values for input ``x``; learners
    change it through the approximator's own update methods.

    Example:
        >>> import rlkit as rk
        >>> env = rk.GymEnv("CliffWalking-v1")
        >>> q = rk.TabularQApproximator(env.state_space, env.action_space)
        >>> isinstance(q, rk.AbstractApproximator), q(36)
        (True, array([0., 0., 0., 0.]))
    """

    @abstractmethod
    def __call__(self, x: Any) -> Any:
        """Estimate for ``x``."""


# ---- hooks ----


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

    def attach(self, policy: Any, env: Any, stop_condition: Any, hook: Any) -> None:
        """Called when a run is planned, before PreExperiment, with all of the run's objects
        (``hook`` is the run's whole hook, of which this one may be a part). Hooks that save or
        inspect the whole run (``CheckpointHook``) keep what they need; the default does
        nothing."""

    def after_step_check(self, policy: Any, env: Any, stop: bool) -> None:
        """Called after the stop condition was checked at the end of every step (``stop``: its
        answer): the step boundary, where everything of the step has happened."""

    def after_episode_check(self, policy: Any, env: Any, stop: bool) -> None:
        """Called after the stop condition was checked at the end of every finished episode
        (after PostEpisode): the episode boundary."""

    def resume_hint(self) -> str | None:
        """After a run stopped early (Ctrl-C): how to continue it, e.g. ``rk.CheckpointHook``'s
        "continue with rk.run(..., resume_from=...)"; None (the default) when this hook has
        nothing to say. ``rk.run`` prints it."""
        return None

    def __add__(self, other: Any) -> AbstractHook:
        return compose(self, other)

    def __radd__(self, other: Any) -> AbstractHook:
        return compose(other, self)

    def plan(self, policy: Any, env: Any) -> dict[AbstractStage | str, list[PlanStep]]:
        """Resolved calls per stage (and per check moment, ``"after_step_check"`` and
        ``"after_episode_check"``): the overridden methods, bound to policy and env.

        With an :class:`AbstractVectorEnv` a hook class may give a vector form of any of them,
        ``vector_<name>`` (e.g. ``vector_post_act``, handling each sub-env's episode ends), used
        instead of ``<name>``; ``vector_<name> = None`` drops ``<name>`` in vector runs. A hook
        with PreEpisode/PostEpisode methods and no vector form is refused by the vector loop
        (it has no episode stages); ``after_episode_check`` is called once per finished sub-env
        episode. Likewise with a multi-agent env (``rk.PettingZooEnv``,
        ``rk.PettingZooParallelEnv``) a ``multiagent_<name>`` form is used when the class has
        one (e.g. per-agent returns), ``multiagent_<name> = None`` dropping ``<name>``."""
        plan: dict[AbstractStage | str, list[PlanStep]] = {}
        cls = type(self)
        own = getattr(self, "__dict__", {})  # stage methods set on the instance count too
        vector = isinstance(env, AbstractVectorEnv)
        # the form of a stage method for this kind of env, when the hook class has one
        prefix = "vector_" if vector else "multiagent_" if _is_multiagent(env) else None
        for stage in (*STAGES, *CHECK_MOMENTS):
            name = getattr(stage, "method_name", stage)
            if prefix is not None and hasattr(cls, prefix + name):
                name = prefix + name  # this hook's form of the stage for this kind of env
                if getattr(cls, name) is None:
                    continue  # nothing to do there with this kind of env
            elif getattr(cls, name) is getattr(AbstractHook, name) and name not in own:
                continue
            method = getattr(self, name)
            plan[stage] = [
                PlanStep(partial(method, policy, env), f"{cls.__name__}.{name}", where(method))
            ]
        return plan


def _is_multiagent(env: Any) -> bool:
    """A multi-agent env (``rlkit.core.multiagent``'s classes say so with a class attribute)."""
    return getattr(type(env), "is_multiagent", False) is True


# ---- stop conditions ----


class AbstractStopCondition:
    """Base class: override ``step`` (checked after every step) and/or ``episode`` (checked
    after every finished episode). Both return True to stop the run. Counters keep counting
    across runs, so ``run(..., StopAfterNSteps(n))`` twice on the same condition stops at once
    the second time; build a new one per run.

    Example:
        >>> import rlkit as rk
        >>> class StopAtReturn(rk.AbstractStopCondition):
        ...     \"\"\"Stops after the first episode whose return reaches ``target``.\"\"\"
        ...     def __init__(self, target):
        ...         self.target, self.total = target, 0.0
        ...     def step(self, policy, env):
        ...         self.total += env.reward
        ...         return False
        ...     def episode(self, policy, env):
        ...         reached, self.total = self.total >= self.target, 0.0
        ...         return reached
        >>> hook = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
        ...               StopAtReturn(30), rk.TotalRewardPerEpisode())
        >>> hook.rewards[-1] >= 30, all(r < 30 for r in hook.rewards[:-1])
        (True, True)
    """

    def step(self, policy: Any, env: Any) -> bool:
        """Called after every step; True stops the run at once."""
        return False

    def episode(self, policy: Any, env: Any) -> bool:
        """Called after every finished episode (after PostEpisode); True stops the run."""
        return False

    def __call__(self, policy: Any, env: Any) -> bool:
        return self.step(policy, env)

    def __or__(self, other: Any) -> AbstractStopCondition:
        return StopAny(self, other)

    def __and__(self, other: Any) -> AbstractStopCondition:
        return StopAll(self, other)

    def __ror__(self, other: Any) -> AbstractStopCondition:
        return StopAny(other, self)

    def __rand__(self, other: Any) -> AbstractStopCondition:
        return StopAll(other, self)

    def progress(self) -> tuple[float, float, str] | None:
        """``(done, total, unit)`` for a progress bar, or None when the end is unknown."""
        return None

    def plan(self, policy: Any, env: Any) -> tuple[PlanStep | None, PlanStep | None]:
        """The resolved step-level and episode-level checks (None where not overridden).

        Called once when a run starts (and by ``rk.explain``); a subclass may override it to
        note the start, calling ``super().plan(policy, env)`` for the result.
        """
        cls = type(self)
        return tuple(
            None
            if getattr(cls, name) is getattr(AbstractStopCondition, name)
            else PlanStep(
                bind_check(getattr(self, name), policy, env),
                f"{cls.__name__}.{name}",
                where(getattr(self, name)),
            )
            for name in ("step", "episode")
        )


def bind_check(method: Callable[[Any, Any], bool], policy: Any, env: Any) -> Callable[[], bool]:
    def check() -> bool:
        answer = method(policy, env)
        if answer is True or answer is False:
            return answer
        return stop_answer(method, answer)

    return check


def stop_answer(check: Any, answer: Any) -> bool:
    """A stop check's answer as a bool: ``True``/``False`` or a numpy bool; anything else (an
    array, None, a number) raises ``TypeError`` naming the check and what it returned."""
    if answer is True or answer is False or isinstance(answer, np.bool_):
        return bool(answer)
    name = getattr(check, "__qualname__", None) or type(check).__name__
    raise TypeError(
        f"stop condition {name} returned {type(answer).__name__} {answer!r:.80}; expected a "
        f"bool (True to stop), e.g. bool((x > 0).all()) for an array"
    )


# ---- composition of stop conditions: a | b, a & b ----


def stop_plan(stop: Any, policy: Any, env: Any) -> tuple[PlanStep | None, PlanStep | None]:
    """The plan of any stop condition; a plain callable is a step-level check."""
    if isinstance(stop, AbstractStopCondition):
        return stop.plan(policy, env)
    not_a_class("run", "stop_condition", stop)
    if not callable(stop):
        raise TypeError(
            f"run: stop_condition must be an rk.AbstractStopCondition or a callable "
            f"f(policy, env) -> bool, got {type(stop).__name__}: {stop!r}"
        )
    return PlanStep(
        bind_check(stop, policy, env), getattr(stop, "__qualname__", "stop"), where(stop)
    ), None


class _Composite(AbstractStopCondition):
    """Conditions checked together; ``op`` joins their repr, nested composites of the same kind
    are flattened. A level (step, episode) is checked when any part checks it, and every part
    is updated at every check (so counters keep counting)."""

    op = ""

    def __init__(self, *conditions: Any) -> None:
        flat: list[Any] = []
        for c in conditions:
            if not (isinstance(c, AbstractStopCondition) or callable(c)):
                raise TypeError(
                    f"{type(self).__name__}: expected stop conditions (rk.AbstractStopCondition"
                    f" or callables f(policy, env) -> bool), got {type(c).__name__}: {c!r}"
                )
            flat.extend(c.conditions if type(c) is type(self) else (c,))
        if not flat:
            raise ValueError(f"{type(self).__name__}: needs at least one condition")
        self.conditions = tuple(flat)

    def __repr__(self) -> str:
        return f" {self.op} ".join(
            f"({c!r})" if isinstance(c, _Composite) else repr(c) for c in self.conditions
        )

    def plan(self, policy: Any, env: Any) -> tuple[PlanStep | None, PlanStep | None]:
        parts = [stop_plan(c, policy, env) for c in self.conditions]  # lets each part start
        step, episode = super().plan(policy, env)
        return (
            step if any(p[0] is not None for p in parts) else None,
            episode if any(p[1] is not None for p in parts) else None,
        )

    def state_dict(self) -> dict[str, Any]:
        """``{"conditions": [...]}``: each part's state, None for parts without one."""
        return {"conditions": [state_or_none(c) for c in self.conditions]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        load_parts(type(self).__name__, "conditions", self.conditions, state)


class StopAny(_Composite):
    """Stop when any of the conditions says so (``a | b``); every condition is updated.

    Example:
        >>> import rlkit as rk
        >>> stop = rk.StopAfterNSteps(10_000) | rk.StopAfterNEpisodes(2)
        >>> _ = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), stop)
        >>> stop.conditions[1].episodes
        2
    """

    op = "|"

    def step(self, policy: Any, env: Any) -> bool:
        return any([_check(c, "step", policy, env) for c in self.conditions])

    def episode(self, policy: Any, env: Any) -> bool:
        return any([_check(c, "episode", policy, env) for c in self.conditions])

    def progress(self) -> tuple[float, float, str] | None:
        known = [p for c in self.conditions if (p := _progress(c)) is not None]
        return max(known, key=lambda p: p[0] / p[1]) if known else None


class StopAll(_Composite):
    """Stop when all conditions say so (``a & b``); every condition is updated. A plain callable
    or a condition with only an episode-level check counts as False at the other level, so
    ``rk.StopAfterNSteps(1000) & rk.StopWhenDone()`` stops at the first episode end after 1000
    steps.

    Example:
        >>> import rlkit as rk
        >>> stop = rk.StopAfterNSteps(100) & rk.StopWhenDone()
        >>> _ = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), stop)
        >>> stop.conditions[0].steps >= 100
        True
    """

    op = "&"

    def step(self, policy: Any, env: Any) -> bool:
        return all([_check(c, "step", policy, env) for c in self.conditions])

    def episode(self, policy: Any, env: Any) -> bool:
        return all([_check(c, "episode", policy, env) for c in self.conditions])

    def progress(self) -> tuple[float, float, str] | None:
        known = [p for c in self.conditions if (p := _progress(c)) is not None]
        return min(known, key=lambda p: p[0] / p[1]) if known else None


def _check(condition: Any, level: str, policy: Any, env: Any) -> bool:
    if isinstance(condition, AbstractStopCondition):
        method = getattr(condition, level)
        return stop_answer(method, method(policy, env))
    return stop_answer(condition, condition(policy, env)) if level == "step" else False


def _progress(condition: Any) -> tuple[float, float, str] | None:
    return condition.progress() if isinstance(condition, AbstractStopCondition) else None
