"""rlkit/policies/agent.py: Agent records (trajectory first), then learns, then runs its policy's
own calls; acting, greedy form and state are the wrapped policy's (and the trajectory's)."""

from __future__ import annotations

import numpy as np
import pytest
from state_helpers import assert_same

import rlkit as rk
from rlkit.core.dispatch import PlanStep
from rlkit.core.state import get_state, set_state
from rlkit.hooks.checkpoint import decode_state, encode_state


class Log(rk.AbstractTrajectory):
    """A trajectory that records the calls it gets into a shared log."""

    def __init__(self, log: list) -> None:
        self.log = log

    def __len__(self) -> int:
        return len(self.log)


class Learning(rk.AbstractPolicy):
    """A policy with a learner attribute that logs its own stage calls."""

    def __init__(self, log: list) -> None:
        self.log = log
        self.learner = object()

    def act(self, env):
        return 0

    def plan(self, env):
        return {rk.POST_ACT_STAGE: [PlanStep(lambda: self.log.append("policy"), "p", "t")]}


class NeverLearns(Learning):
    """Has a learner but no update method for any trajectory."""


# ---- PreAct: recording gets the action, learning does not ----
@rk.update.dispatch
def _(
    trajectory: Log, policy: Learning, env: rk.AbstractEnv, stage: rk.PreActStage, action: object, /
):  # noqa: E501
    trajectory.log.append(("record", "PreAct", action))


@rk.update.dispatch
def _(policy: Learning, trajectory: Log, env: rk.AbstractEnv, stage: rk.PreActStage, /):
    policy.log.append(("learn", "PreAct"))


# ---- PostAct ----
@rk.update.dispatch
def _(trajectory: Log, policy: Learning, env: rk.AbstractEnv, stage: rk.PostActStage, /):
    trajectory.log.append(("record", "PostAct"))


@rk.update.dispatch
def _(policy: Learning, trajectory: Log, env: rk.AbstractEnv, stage: rk.PostActStage, /):
    policy.log.append(("learn", "PostAct"))


def test_arguments_are_checked():
    with pytest.raises(TypeError, match="Agent: policy must be an rk.AbstractPolicy, got str"):
        rk.Agent("random", rk.VectorSARTTrajectory())
    with pytest.raises(TypeError, match="Agent: trajectory must be an rk.AbstractTrajectory"):
        rk.Agent(rk.RandomPolicy(), [])


def test_acting_is_the_wrapped_policys(countdown):
    env = countdown(50)
    env.reset()
    agent = rk.Agent(rk.RandomPolicy(seed=3), rk.VectorSARTTrajectory())
    alone = rk.RandomPolicy(seed=3)
    assert [agent(env) for _ in range(20)] == [alone(env) for _ in range(20)]
    assert len(agent.trajectory) == 0  # acting records nothing


def test_each_step_records_then_learns_then_runs_the_policys_calls(countdown):
    log: list = []
    agent = rk.Agent(Learning(log), Log(log))
    rk.run(agent, countdown(2), rk.StopAfterNSteps(2))
    step = [("record", "PreAct", 0), ("learn", "PreAct"), ("record", "PostAct"),
            ("learn", "PostAct"), "policy"]  # fmt: skip
    assert log == step + step


def test_plan_lists_the_calls_in_that_order(countdown):
    agent = rk.Agent(Learning([]), Log([]))
    plan = agent.plan(countdown())
    assert set(plan) == {rk.PRE_ACT_STAGE, rk.POST_ACT_STAGE}
    assert len(plan[rk.PRE_ACT_STAGE]) == 2 and len(plan[rk.POST_ACT_STAGE]) == 3
    assert plan[rk.POST_ACT_STAGE][2].name == "p"


def test_a_learner_that_never_learns_is_an_error_at_plan_time(countdown):
    agent = rk.Agent(NeverLearns([]), rk.VectorSARTTrajectory())
    with pytest.raises(rk.DispatchError, match="Agent: learner object has no update method"):
        rk.run(agent, countdown(), rk.StopAfterNSteps(1))


def test_a_policy_without_learner_may_only_record(countdown):
    agent = rk.Agent(rk.RandomPolicy(seed=0), rk.VectorSARTTrajectory())
    rk.run(agent, countdown(10), rk.StopAfterNSteps(5))
    assert len(agent.trajectory) == 5
    assert list(agent.trajectory.reward) == [1.0, 2.0, 3.0, 4.0, 5.0]


def test_greedy_form_is_the_policys():
    policy = rk.RandomPolicy(seed=0)
    agent = rk.Agent(policy, rk.VectorSARTTrajectory())
    assert rk.greedy(agent) is policy  # a random policy is its own greedy form
    assert rk.greedy(agent, 5) is policy


def test_repr():
    agent = rk.Agent(rk.RandomPolicy(), rk.VectorSARTTrajectory())
    assert repr(agent) == f"Agent(RandomPolicy(), {agent.trajectory!r})"


def test_agent_state_is_the_policy_and_the_trajectory():
    agent = rk.Agent(rk.RandomPolicy(seed=0), rk.VectorSARTTrajectory())
    rk.run(agent, rk.GymEnv("Blackjack-v1", seed=0), rk.StopAfterNSteps(10))
    state = decode_state(*encode_state(get_state(agent)))
    assert set(state) == {"policy", "trajectory"}
    assert isinstance(state["trajectory"]["state"][0], tuple)  # tuple observations stay tuples
    fresh = rk.Agent(rk.RandomPolicy(seed=1), rk.VectorSARTTrajectory())
    set_state(fresh, state)
    assert_same(get_state(fresh), get_state(agent))


def test_state_round_trip_continues_identically(countdown):
    agent = rk.Agent(rk.RandomPolicy(seed=0), rk.VectorSARTTrajectory())
    rk.run(agent, countdown(3), rk.StopAfterNSteps(4))
    fresh = rk.Agent(rk.RandomPolicy(seed=99), rk.VectorSARTTrajectory())
    set_state(fresh, get_state(agent))
    env_a, env_b = countdown(50), countdown(50)
    env_a.reset()
    env_b.reset()
    assert [agent(env_a) for _ in range(10)] == [fresh(env_b) for _ in range(10)]
    assert np.array_equal(np.asarray(fresh.trajectory.action), np.asarray(agent.trajectory.action))


def test_a_rollout_for_another_number_of_envs_is_refused_at_plan_time():
    # it failed at the first step, inside the trajectory
    env = rk.VectorGymEnv("CartPole-v1", 2, seed=0)
    agent = rk.Agent(rk.RandomPolicy(seed=0), rk.RolloutTrajectory(4, n_envs=1))
    with pytest.raises(ValueError, match=r"Agent: the trajectory .*n_envs=1.* records 1 env\(s\) "
                       r"per step, but the env VectorGymEnv.* has 2"):
        rk.run(agent, env, rk.StopAfterNSteps(4))
    env.close()
    single = rk.GymEnv("CartPole-v1", seed=0)
    with pytest.raises(ValueError, match="records 2 env.* has 1"):
        rk.explain(rk.Agent(rk.RandomPolicy(seed=0), rk.RolloutTrajectory(4, n_envs=2)), single)
