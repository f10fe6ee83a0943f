import numpy as np
import pytest

import rlkit as rk
from rlkit.approximators.tabular import TabularVApproximator
from rlkit.core.plan import build_plan


class TD0Learner(rk.AbstractLearner):
    """A tiny TD(0) prediction learner on CliffWalking (48 states), for the forwarding tests."""

    def __init__(self, gamma=1.0):
        self.approximator = TabularVApproximator(48, step_size=0.5)
        self.gamma = gamma
        self.updates = 0

    def __call__(self, env):
        return self.approximator(env.state)

    def state_dict(self):
        return {"approximator": self.approximator.state_dict(), "updates": self.updates}

    def load_state_dict(self, state):
        self.approximator.load_state_dict(state["approximator"])
        self.updates = state["updates"]


@rk.update.dispatch
def _(
    learner: TD0Learner,
    trajectory: rk.VectorSARTTrajectory,
    env: rk.AbstractEnv,
    stage: rk.PostActStage,
    /,
):
    learner.updates += 1
    s, r, s2 = trajectory.state[-1], trajectory.reward[-1], trajectory.next_state[-1]
    bootstrap = 0.0 if trajectory.terminal[-1] else learner.gamma * learner.approximator(s2)
    learner.approximator.update(s, r + bootstrap)


def look_ahead(env, learner):
    """Greedy on the values of the neighbouring cells (a deterministic grid: up right down left)."""
    row, col = divmod(int(env.state), 12)
    moves = [(row - 1, col), (row, col + 1), (row + 1, col), (row, col - 1)]
    scores = [
        learner.approximator.table[r * 12 + c] if 0 <= r < 4 and 0 <= c < 12 else -np.inf
        for r, c in moves
    ]
    return int(np.argmax(scores))


def cliff(seed=0):
    env = rk.GymEnv("CliffWalking-v1", seed=seed)
    env.reset()
    return env


def test_acts_with_a_policy_mapper():
    policy = rk.VBasedPolicy(TD0Learner(), rk.RandomPolicy(seed=0))
    env = cliff()
    actions = {int(policy(env)) for _ in range(100)}
    assert actions == {0, 1, 2, 3}
    assert isinstance(policy, rk.AbstractPolicy)


def test_acts_with_a_callable_mapper():
    learner = TD0Learner()
    learner.approximator.table[24] = 5.0  # the cell above the start
    policy = rk.VBasedPolicy(learner, look_ahead)
    assert policy(cliff()) == 0
    learner.approximator.table[24] = -5.0
    assert policy.act(cliff()) == 1  # right (the cliff cell, value 0) beats up; no walls


def test_learning_is_forwarded_in_the_plan_and_run():
    learner = TD0Learner()
    agent = rk.Agent(rk.VBasedPolicy(learner, rk.RandomPolicy(seed=0)), rk.VectorSARTTrajectory())
    env = rk.GymEnv("CliffWalking-v1", seed=0)
    names = [s.name for s in build_plan(agent, env).stages[rk.POST_ACT_STAGE]]
    assert "update(TD0Learner, VectorSARTTrajectory, GymEnv, PostActStage)" in names
    assert not any(name.startswith("update(VBasedPolicy") for name in names)
    rk.run(agent, env, rk.StopAfterNSteps(200))
    assert learner.updates == 200
    assert np.all(learner.approximator.table <= 0.0) and learner.approximator.table.min() < 0


def test_explain(capsys):
    agent = rk.Agent(rk.VBasedPolicy(TD0Learner(), look_ahead), rk.VectorSARTTrajectory())
    rk.explain(agent, rk.GymEnv("CliffWalking-v1"))
    assert (
        "update(TD0Learner, VectorSARTTrajectory, GymEnv, PostActStage)" in capsys.readouterr().out
    )


def test_type_errors():
    with pytest.raises(
        TypeError, match="VBasedPolicy: learner must be an rk.AbstractLearner, got int"
    ):
        rk.VBasedPolicy(3, look_ahead)
    with pytest.raises(TypeError, match="VBasedPolicy: mapper must be .* got int: 3"):
        rk.VBasedPolicy(TD0Learner(), 3)


def test_state_dict_round_trip_with_callable_mapper():
    learner = TD0Learner()
    rk.run(
        rk.Agent(rk.VBasedPolicy(learner, rk.RandomPolicy(seed=0)), rk.VectorSARTTrajectory()),
        rk.GymEnv("CliffWalking-v1", seed=0),
        rk.StopAfterNSteps(50),
    )
    policy = rk.VBasedPolicy(learner, look_ahead)
    state = policy.state_dict()
    assert state["mapper"] is None
    restored = rk.VBasedPolicy(TD0Learner(), look_ahead)
    restored.load_state_dict(state)
    np.testing.assert_array_equal(restored.learner.approximator.table, learner.approximator.table)
    assert restored.learner.updates == 50


def test_state_dict_delegates_to_a_mapper_with_state():
    mapper = rk.QBasedPolicy(_Zeros(), rk.EpsilonGreedyExplorer(0.5, seed=0))
    policy = rk.VBasedPolicy(TD0Learner(), mapper)
    env = cliff()
    for _ in range(5):
        policy(env)
    state = policy.state_dict()
    expected = [policy(env) for _ in range(20)]
    other = rk.VBasedPolicy(
        TD0Learner(), rk.QBasedPolicy(_Zeros(), rk.EpsilonGreedyExplorer(0.5, seed=9))
    )
    other.load_state_dict(state)
    assert [other(env) for _ in range(20)] == expected


class _Zeros(rk.AbstractLearner):
    def __call__(self, env):
        return np.zeros(4)

    def state_dict(self):
        return {}

    def load_state_dict(self, state):
        pass
