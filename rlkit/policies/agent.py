"""``Agent(policy, trajectory)``: a policy that records experience and learns from it."""

from __future__ import annotations

from typing import Any

from ..core.checks import is_int
from ..core.dispatch import DispatchError, PlanStep, greedy, noop, resolve, update
from ..core.interfaces import AbstractEnv, AbstractPolicy, AbstractTrajectory, AbstractVectorEnv
from ..core.stages import PRE_ACT_STAGE, STAGES, AbstractStage
from ..core.state import get_state, set_state
from ..trajectories.circular import CircularArraySARTTrajectory

__all__ = ["Agent", "replay_batch_size"]


class Agent(AbstractPolicy):
    """Wrap a policy with a trajectory: at every stage the agent first records,
    ``update(trajectory, policy, env, stage[, action])``, then learns,
    ``update(policy, trajectory, env, stage)``. Acting is the wrapped policy's.

    Example:
        >>> import rlkit as rk
        >>> agent = rk.Agent(rk.RandomPolicy(seed=0), rk.VectorSARTTrajectory())
        >>> env = rk.GymEnv("CliffWalking-v1", seed=0)
        >>> hook = rk.run(agent, env, rk.StopAfterNSteps(10))
        >>> len(agent.trajectory)
        10
    """

    def __init__(
        self, policy: AbstractPolicy, trajectory: AbstractTrajectory | None = None
    ) -> None:
        if not isinstance(policy, AbstractPolicy):
            raise TypeError(
                f"Agent: policy must be an rk.AbstractPolicy, got {type(policy).__name__}: "
                f"{policy!r}"
            )
        if trajectory is None:  # the default only to say this (the trajectory is required)
            raise TypeError(
                "Agent(policy, trajectory): the trajectory the policy records into and learns "
                "from is required, e.g. rk.Agent(policy, rk.VectorSARTTrajectory()) for tabular "
                "learners or rk.Agent(policy, rk.CircularArraySARTTrajectory(capacity, "
                "env.state_space, env.action_space)) for DQN"
            )
        if not isinstance(trajectory, AbstractTrajectory):
            raise TypeError(
                f"Agent: trajectory must be an rk.AbstractTrajectory, got "
                f"{type(trajectory).__name__}: {trajectory!r}"
            )
        _check_batch_fits(policy, trajectory)
        self.policy = policy
        self.trajectory = trajectory

    def __repr__(self) -> str:
        return f"Agent({self.policy!r}, {self.trajectory!r})"

    def predict(self, obs: Any, *args: Any, **kwargs: Any) -> Any:
        """The agent's policy's ``predict`` with the same arguments (:mod:`rlkit.policies.predict`:
        ``predict(obs, deterministic=True, action_masks=None)``; a recurrent policy's also takes
        and returns its hidden state, ``predict(obs, state, episode_start, deterministic)``):
        actions for plain numpy observations, e.g. ``experiment.policy.predict(obs)`` after
        ``rk.run``.

        Example:
            >>> import rlkit as rk
            >>> env = rk.GymEnv("CartPole-v1", seed=0)
            >>> rk.PPO.agent(env).predict([0.0, 0.0, 0.0, 0.0]).shape
            ()
        """
        return self.policy.predict(obs, *args, **kwargs)

    def act(self, env: Any) -> Any:
        return self.policy.act(env)

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """The policy's and the trajectory's states (both must implement ``state_dict``)."""
        return {"policy": get_state(self.policy), "trajectory": get_state(self.trajectory)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a state saved by :meth:`state_dict`."""
        set_state(self.policy, state["policy"])
        set_state(self.trajectory, state["trajectory"])

    def plan(self, env: Any) -> dict[AbstractStage, list[PlanStep]]:
        """Per stage: the trajectory's recording method, the policy's (or its learner's)
        update method followed by what a learner with a ``plan(env)`` method says that update
        calls (descriptions for ``rk.explain``, e.g. a DQN learner's ``loss_fn``), then the
        policy's own plan steps."""
        _check_n_envs(self.trajectory, env)
        _check_normalization(self.policy, self.trajectory, env)
        plan: dict[AbstractStage, list[PlanStep]] = {}
        learns = records = False
        inner = self.policy.plan(env)
        learner = getattr(self.policy, "learner", None)
        learner_plan = getattr(learner, "plan", None)  # what its update methods call
        described = learner_plan(env) if callable(learner_plan) else {}
        for stage in STAGES:
            extra = (object,) if stage is PRE_ACT_STAGE else ()
            record = resolve(update, self.trajectory, self.policy, env, stage, extra=extra)
            learn = resolve(update, self.policy, self.trajectory, env, stage)
            if learn is not None and stage is PRE_ACT_STAGE:
                learn = _ignoring_action(learn)
            learns = learns or learn is not None
            records = records or record is not None
            steps = [s for s in (record, learn) if s is not None]
            if learn is not None:
                steps.extend(described.get(stage, ()))
            steps.extend(inner.get(stage, ()))
            if steps:
                plan[stage] = steps
        if isinstance(env, AbstractVectorEnv) and not records:
            raise DispatchError(
                f"Agent: trajectory {type(self.trajectory).__name__} has no recording method "
                f"for the vector env {type(env).__name__}, so it would record nothing. Use one "
                f"that records vector envs (rk.CircularArraySARTTrajectory, the prioritized one) "
                f"or a single env."
            )
        if learner is not None and not learns:
            raise DispatchError(
                f"Agent: learner {type(learner).__name__} has no update method for trajectory "
                f"{type(self.trajectory).__name__} and env {type(env).__name__} at any stage, "
                f"so it would never learn. Add one with @rk.update.dispatch, or use a trajectory "
                f"it supports."
            )
        return plan


def _check_normalization(policy: Any, trajectory: Any, env: Any) -> None:
    """Replay on an env that normalises (``rk.VecNormalize``) stores the raw transitions and
    normalises each sampled batch with the env's current statistics (Stable-Baselines3's
    semantics: rlkit/learners/drivers/off_policy.py). Refused at plan time, naming the learner:
    a learner drawing batches from the replay (the driver's ``batches``) that cannot normalise
    them so (``normalizes_replay`` false: MBPO, the
    many-seeds DQN, a DQN-family learner with a sampler whose ``sample`` takes no
    ``normalizer``)."""
    if not getattr(env, "normalizes", False) or not isinstance(
        trajectory, CircularArraySARTTrajectory
    ):
        return
    learner = getattr(policy, "learner", policy)
    if getattr(learner, "normalizes_replay", False) or not callable(
        getattr(learner, "batches", None)
    ):  # it normalises its batches, or it does not draw batches (a policy only recording)
        return
    owner = getattr(learner, "name", None)
    owner = owner if isinstance(owner, str) else type(learner).__name__
    sampler = getattr(learner, "sampler", None)
    why = (
        f"its sampler {type(sampler).__name__}.sample takes no normalizer"
        if sampler is not None
        else "it does not normalise its replay batches at sample time"
    )
    raise ValueError(
        f"Agent: {owner} learns from replay ({type(trajectory).__name__}) on {env!r}, which "
        f"normalises observations and rewards, but {why}; expected a learner that normalises "
        f"each sampled batch with the env's statistics (DQN family with rlkit's samplers, SAC, "
        f"TD3, DDPG) or an on-policy one (PPO, A2C, VPG, TRPO, RecurrentPPO). Run {owner} "
        f"without rk.VecNormalize"
    )


def _check_n_envs(trajectory: Any, env: Any) -> None:
    """A trajectory made for ``n_envs`` environments (``rk.RolloutTrajectory``) run on another
    number would fail at its first step: refuse it at plan time."""
    n_envs = getattr(trajectory, "n_envs", None)
    env_n_envs = env.n_envs if isinstance(env, AbstractVectorEnv) else 1
    if is_int(n_envs) and n_envs != env_n_envs:
        raise ValueError(
            f"Agent: the trajectory {trajectory!r} records {n_envs} env(s) per step, but the env "
            f"{env!r} has {env_n_envs}; make the agent for the env it runs on, e.g. "
            f"rk.PPO.agent(env)"
        )


def replay_batch_size(policy: Any) -> int | None:
    """How many transitions ``policy`` draws from its trajectory per batch, when it samples
    fixed-size batches from a replay: its ``replay_batch_size`` (the off-policy actor-critics:
    SAC, TD3, DDPG), or its learner's sampler's ``batch_size`` (the DQN family inside a
    ``QBasedPolicy``); None for a policy that does not sample.

    Example:
        >>> import rlkit as rk
        >>> replay_batch_size(rk.SAC(rk.GymEnv("Pendulum-v1"), batch_size=64))
        64
    """
    size = getattr(policy, "replay_batch_size", None)
    if size is None:
        sampler = getattr(getattr(policy, "learner", None), "sampler", None)
        size = getattr(sampler, "batch_size", None)
    return int(size) if is_int(size) else None


def _check_batch_fits(policy: Any, trajectory: Any) -> None:
    """The one check, for every replay-based learner, that its batches fit its replay: a
    learner that samples batches larger than the trajectory can hold would fail only after its
    warm-up (or, sampling with replacement, learn from repeated rows): refuse the pair here."""
    batch_size = replay_batch_size(policy)
    capacity = getattr(trajectory, "capacity", None)
    if batch_size is not None and is_int(capacity) and batch_size > capacity:
        learner = getattr(policy, "learner", None)
        owner = getattr(policy, "name", None) if learner is None else type(learner).__name__
        owner = owner if isinstance(owner, str) else type(policy).__name__
        raise ValueError(
            f"Agent: {owner} draws batches of batch_size={batch_size} transitions, more than "
            f"its replay {type(trajectory).__name__} holds (capacity={capacity}); expected "
            f"batch_size <= capacity (the buffer_size): give a larger buffer_size (trajectory "
            f"capacity) or a smaller batch_size"
        )


def _ignoring_action(step: PlanStep) -> PlanStep:
    call = step.call

    def call_without_action(action: Any) -> Any:
        return call()

    return PlanStep(call_without_action, step.name, step.where)


# ---- any stage: policies and trajectories do nothing unless a method says otherwise ----
@update.dispatch
@noop
def _(
    policy: AbstractPolicy,
    trajectory: AbstractTrajectory,
    env: AbstractEnv | AbstractVectorEnv,
    stage: AbstractStage,
    /,
):
    return None


@update.dispatch
@noop
def _(
    trajectory: AbstractTrajectory,
    policy: AbstractPolicy,
    env: AbstractEnv | AbstractVectorEnv,
    stage: AbstractStage,
    /,
):
    return None


@update.dispatch
@noop
def _(
    trajectory: AbstractTrajectory,
    policy: AbstractPolicy,
    env: AbstractEnv | AbstractVectorEnv,
    stage: AbstractStage,
    action: object,
    /,
):
    return None


# ---- greedy: an Agent's greedy form is its policy's (no trajectory, no learning) ----
@greedy.dispatch
def _(policy: Agent, seed: object = None, /):
    return greedy(policy.policy, seed)
