"""Policy-gradient learners for teaching (Sutton & Barto chapter 13), numpy only: REINFORCE,
REINFORCE with baseline and one-step actor-critic, for an ``rk.LinearSoftmaxPolicy``.

The learner changes the policy's ``theta`` in place; the policy acts. Put both in an agent with
``rk.VBasedPolicy(learner, policy)``: it acts with the policy and forwards learning to the
learner::

    agent = rk.Agent(rk.VBasedPolicy(rk.ReinforceLearner(policy, step_size=2**-13), policy),
                     rk.VectorSARTTrajectory())
"""

from __future__ import annotations

from typing import Any

from ...approximators.linear import LinearVApproximator
from ...approximators.tabular import TabularVApproximator
from ...core.checks import check_gamma, finite_float, instance_of
from ...core.dispatch import statistics, update
from ...core.interfaces import AbstractEnv, AbstractLearner
from ...core.stages import PostActStage, PreEpisodeStage
from ...policies.softmax import LinearSoftmaxPolicy
from ...trajectories.episodic import VectorSARTTrajectory

__all__ = ["ReinforceLearner", "ActorCriticLearner"]

_CRITICS = (LinearVApproximator, TabularVApproximator)


def _check_policy(owner: str, policy: Any) -> LinearSoftmaxPolicy:
    return instance_of(owner, "policy", policy, LinearSoftmaxPolicy, "an rk.LinearSoftmaxPolicy")


def _check_critic(owner: str, name: str, critic: Any) -> Any:
    instance_of(
        owner, name, critic, _CRITICS, "an rk.LinearVApproximator or rk.TabularVApproximator"
    )
    if critic.step_size is None:
        raise ValueError(f"{owner}: {name} needs a constant step size, got step_size=None")
    return critic


class ReinforceLearner(AbstractLearner):
    """REINFORCE (S&B 13.3) and REINFORCE with baseline (13.4): Monte Carlo policy gradient.

    At the end of every episode, for ``t = 0, 1, ..., T - 1`` in order, with the return ``G_t``:
    ``delta = G_t - b(S_t)`` (``b = 0`` without a baseline); the baseline moves toward ``G_t``
    (``baseline.update(S_t, G_t)``, its own step size ``alpha_w``); and
    ``theta += step_size * gamma^t * delta * grad ln pi(A_t | S_t)``.

    Args:
        policy: the ``rk.LinearSoftmaxPolicy`` whose ``theta`` is learned.
        step_size: alpha (alpha_theta) > 0.
        gamma: discount factor in [0, 1].
        baseline: None, or a state-value approximator (``rk.LinearVApproximator`` or
            ``rk.TabularVApproximator``) learned as the baseline.

    Example:
        >>> import numpy as np
        >>> import rlkit as rk
        >>> policy = rk.LinearSoftmaxPolicy(lambda s, a: np.eye(2)[a], 2, 2, seed=0)
        >>> learner = rk.ReinforceLearner(policy, step_size=2**-9,
        ...     baseline=rk.LinearVApproximator(lambda s: np.ones(1), 1, step_size=2**-6))
        >>> agent = rk.Agent(rk.VBasedPolicy(learner, policy), rk.VectorSARTTrajectory())
        >>> _ = rk.run(agent, rk.GymEnv("rlkit/ShortCorridor-v0", seed=0), rk.StopAfterNEpisodes(3))
    """

    def __init__(
        self,
        policy: LinearSoftmaxPolicy,
        *,
        step_size: float,
        gamma: float = 1.0,
        baseline: LinearVApproximator | TabularVApproximator | None = None,
    ) -> None:
        owner = type(self).__name__
        self.policy = _check_policy(owner, policy)
        self.step_size = finite_float(owner, "step_size", step_size, low=0.0, low_open=True)
        self.gamma = check_gamma(owner, gamma)
        self.baseline = None if baseline is None else _check_critic(owner, "baseline", baseline)
        self.last_return = 0.0

    def __repr__(self) -> str:
        return (
            f"ReinforceLearner({self.policy!r}, step_size={self.step_size}, gamma={self.gamma}, "
            f"baseline={self.baseline!r})"
        )

    def __call__(self, env: AbstractEnv) -> Any:
        return self.policy.prob(env.state)

    def _learn_episode(self, trajectory: VectorSARTTrajectory) -> None:
        start, end = trajectory.episode_start, len(trajectory.reward)
        returns = [0.0] * (end - start)
        g = 0.0
        for i in range(end - start - 1, -1, -1):
            g = trajectory.reward[start + i] + self.gamma * g
            returns[i] = g
        theta, discount = self.policy.theta, 1.0
        for i, g in enumerate(returns):
            s, a = trajectory.state[start + i], trajectory.action[start + i]
            delta = g
            if self.baseline is not None:
                delta = self.baseline.update(s, g)  # = G_t - b(S_t) before the update
            theta += self.step_size * discount * delta * self.policy.grad_log(s, a)
            discount *= self.gamma
        self.last_return = returns[0] if returns else 0.0

    def state_dict(self) -> dict[str, Any]:
        """The policy's and the baseline's states."""
        return {
            "policy": self.policy.state_dict(),
            "baseline": None if self.baseline is None else self.baseline.state_dict(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.policy.load_state_dict(state["policy"])
        if self.baseline is not None:
            self.baseline.load_state_dict(state["baseline"])


class ActorCriticLearner(AbstractLearner):
    """One-step actor-critic (S&B 13.5), episodic.

    After every step: ``delta = R + gamma v(S') - v(S)`` (``v(S') = 0`` at a terminal state);
    the critic moves toward ``R + gamma v(S')`` (its own step size); ``theta += step_size * I *
    delta * grad ln pi(A | S)``; ``I *= gamma`` (``I = 1`` at the start of an episode).

    Args:
        policy: the ``rk.LinearSoftmaxPolicy`` (the actor).
        critic: ``rk.LinearVApproximator`` or ``rk.TabularVApproximator``.
        step_size: alpha_theta > 0.
        gamma: discount factor in [0, 1].

    Example:
        >>> import numpy as np
        >>> import rlkit as rk
        >>> policy = rk.LinearSoftmaxPolicy(lambda s, a: np.eye(2)[a], 2, 2, seed=0)
        >>> critic = rk.TabularVApproximator(4, step_size=2**-4)
        >>> learner = rk.ActorCriticLearner(policy, critic, step_size=2**-9)
        >>> agent = rk.Agent(rk.VBasedPolicy(learner, policy), rk.VectorSARTTrajectory())
        >>> _ = rk.run(agent, rk.GymEnv("rlkit/ShortCorridor-v0", seed=0), rk.StopAfterNEpisodes(3))
    """

    def __init__(
        self,
        policy: LinearSoftmaxPolicy,
        critic: LinearVApproximator | TabularVApproximator,
        *,
        step_size: float,
        gamma: float = 1.0,
    ) -> None:
        owner = type(self).__name__
        self.policy = _check_policy(owner, policy)
        self.critic = _check_critic(owner, "critic", critic)
        self.step_size = finite_float(owner, "step_size", step_size, low=0.0, low_open=True)
        self.gamma = check_gamma(owner, gamma)
        self.discount = 1.0
        self.td_error = 0.0

    def __repr__(self) -> str:
        return (
            f"ActorCriticLearner({self.policy!r}, {self.critic!r}, step_size={self.step_size}, "
            f"gamma={self.gamma})"
        )

    def __call__(self, env: AbstractEnv) -> Any:
        return self.policy.prob(env.state)

    def state_dict(self) -> dict[str, Any]:
        """The actor's and the critic's states and the running discount ``I``."""
        return {
            "policy": self.policy.state_dict(),
            "critic": self.critic.state_dict(),
            "discount": self.discount,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.policy.load_state_dict(state["policy"])
        self.critic.load_state_dict(state["critic"])
        self.discount = float(state["discount"])


# ---- PostAct: REINFORCE learns when the episode ends ----
@update.dispatch
def _(
    learner: ReinforceLearner,
    trajectory: VectorSARTTrajectory,
    env: AbstractEnv,
    stage: PostActStage,
    /,
):
    if trajectory.terminal[-1] or trajectory.truncated[-1]:
        learner._learn_episode(trajectory)


# ---- PreEpisode: the actor-critic's discount I starts at 1 ----
@update.dispatch
def _(
    learner: ActorCriticLearner,
    trajectory: VectorSARTTrajectory,
    env: AbstractEnv,
    stage: PreEpisodeStage,
    /,
):
    learner.discount = 1.0


# ---- PostAct: one actor-critic step ----
@update.dispatch
def _(
    learner: ActorCriticLearner,
    trajectory: VectorSARTTrajectory,
    env: AbstractEnv,
    stage: PostActStage,
    /,
):
    s, a, r = trajectory.state[-1], trajectory.action[-1], trajectory.reward[-1]
    target = r
    if not trajectory.terminal[-1]:
        target += learner.gamma * float(learner.critic(trajectory.next_state[-1]))
    delta = learner.critic.update(s, target)  # = target - v(S) before the update
    learner.policy.theta += (
        learner.step_size * learner.discount * delta * learner.policy.grad_log(s, a)
    )
    learner.discount *= learner.gamma
    learner.td_error = float(delta)


# ---- statistics ----
@statistics.dispatch
def _(learner: ReinforceLearner, /):
    return {"return": float(learner.last_return)}


@statistics.dispatch
def _(learner: ActorCriticLearner, /):
    return {"td_error": float(learner.td_error)}
