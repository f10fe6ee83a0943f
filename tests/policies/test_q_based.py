import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk
from rlkit.core.dispatch import collect_statistics
from rlkit.core.plan import build_plan
from rlkit.policies.explorers import AbstractExplorer


class TableLearner(rk.AbstractLearner):
    """A tiny Q learner over a table: counts its PostAct updates."""

    def __init__(self, n_states=48, n_actions=4, explorer=None):
        self.table = np.zeros((n_states, n_actions))
        self.updates = 0
        self.explorer = explorer

    def __call__(self, env):
        return self.table[env.state]

    def state_dict(self):
        return {"table": self.table.copy(), "updates": self.updates}

    def load_state_dict(self, state):
        self.table[...] = state["table"]
        self.updates = state["updates"]


@rk.update.dispatch
def _(
    learner: TableLearner,
    trajectory: rk.VectorSARTTrajectory,
    env: rk.AbstractEnv,
    stage: rk.PostActStage,
    /,
):
    learner.updates += 1
    learner.table[trajectory.state[-1], trajectory.action[-1]] -= 1.0


class NoExplorerAttribute(rk.AbstractLearner):
    def __call__(self, env):
        return np.zeros(2)


class MaskedEnv(rk.AbstractEnv):
    """One state, four actions of which only 1 and 3 are legal; episodes of 5 steps."""

    def __init__(self):
        self.action_space = gym.spaces.Discrete(4)
        self.state_space = gym.spaces.Discrete(1)
        self.t = 0

    @property
    def legal_action_mask(self):
        return np.array([False, True, False, True])

    def reset(self, seed=None):
        self.state, self.reward, self.t = 0, 0.0, 0
        self.is_terminated = self.is_truncated = False
        self.needs_reset = False

    def act(self, action):
        assert action in (1, 3)
        self.t += 1
        self.reward = 1.0
        self.is_truncated = self.t >= 5


def cliff():
    env = rk.GymEnv("CliffWalking-v1", seed=0)
    env.reset()
    return env


def test_act_is_explorer_of_learner_values():
    learner = TableLearner()
    learner.table[36] = [0.0, 2.0, 1.0, 0.0]
    policy = rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.0, seed=0))
    env = cliff()
    assert env.state == 36
    assert policy.act(env) == 1 and policy(env) == 1
    np.testing.assert_allclose(policy.prob(env), [0, 1, 0, 0])
    assert rk.QBasedPolicy is not None and isinstance(policy, rk.AbstractPolicy)


def test_act_honours_the_env_mask():
    learner = TableLearner(n_states=1)
    learner.table[0] = [9.0, 1.0, 9.0, 0.0]
    env = MaskedEnv()
    env.reset()
    greedy = rk.QBasedPolicy(learner, rk.GreedyExplorer(seed=0))
    assert {greedy(env) for _ in range(20)} == {1}
    uniform = rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(1.0, seed=0))
    assert {uniform(env) for _ in range(100)} == {1, 3}
    np.testing.assert_allclose(uniform.prob(env), [0, 0.5, 0, 0.5])


def test_learning_is_forwarded_to_the_learner_in_the_plan():
    learner = TableLearner()
    agent = rk.Agent(
        rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.1, seed=0)), rk.VectorSARTTrajectory()
    )
    env = rk.GymEnv("CliffWalking-v1", seed=0)
    plan = build_plan(agent, env)
    names = [step.name for step in plan.stages[rk.POST_ACT_STAGE]]
    assert any(name.startswith("update(TableLearner,") for name in names)
    assert not any(name.startswith("update(QBasedPolicy") for name in names)  # forwarded
    where = [step.where for step in plan.stages[rk.POST_ACT_STAGE] if "TableLearner" in step.name]
    assert where[0].startswith("policies/test_q_based.py:")
    # no learning step at stages the learner has no method for
    assert not any("TableLearner" in s.name for s in plan.stages.get(rk.PRE_EPISODE_STAGE, []))

    rk.run(agent, env, rk.StopAfterNSteps(25))
    assert learner.updates == 25


def test_explain_shows_the_learner(capsys):
    agent = rk.Agent(
        rk.QBasedPolicy(TableLearner(), rk.GreedyExplorer()), rk.VectorSARTTrajectory()
    )
    rk.explain(agent, rk.GymEnv("CliffWalking-v1"))
    out = capsys.readouterr().out
    assert "update(TableLearner, VectorSARTTrajectory, GymEnv, PostActStage)" in out


def test_a_learner_without_methods_is_an_error_in_an_agent():
    agent = rk.Agent(
        rk.QBasedPolicy(NoExplorerAttribute(), rk.GreedyExplorer()), rk.VectorSARTTrajectory()
    )
    with pytest.raises(rk.DispatchError, match="NoExplorerAttribute has no update method"):
        build_plan(agent, rk.GymEnv("CliffWalking-v1"))


def test_runs_with_masks():
    learner = TableLearner(n_states=1)
    agent = rk.Agent(
        rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.5, seed=1)), rk.VectorSARTTrajectory()
    )
    rk.run(agent, MaskedEnv(), rk.StopAfterNEpisodes(3))
    assert learner.updates == 15
    assert set(agent.trajectory.action) <= {1, 3}


def test_learner_explorer_is_filled_in_only_when_none():
    explorer = rk.EpsilonGreedyExplorer(0.1)
    learner = TableLearner()
    rk.QBasedPolicy(learner, explorer)
    assert learner.explorer is explorer
    own = rk.GreedyExplorer()
    learner = TableLearner(explorer=own)
    rk.QBasedPolicy(learner, explorer)
    assert learner.explorer is own
    plain = NoExplorerAttribute()
    rk.QBasedPolicy(plain, explorer)
    assert not hasattr(plain, "explorer")


def test_type_errors():
    with pytest.raises(
        TypeError, match="QBasedPolicy: learner must be an rk.AbstractLearner, got str"
    ):
        rk.QBasedPolicy("learner", rk.GreedyExplorer())
    with pytest.raises(TypeError, match="QBasedPolicy: explorer must be .* got float: 0.1"):
        rk.QBasedPolicy(TableLearner(), 0.1)


def test_statistics_reach_the_explorer():
    policy = rk.QBasedPolicy(TableLearner(), rk.EpsilonGreedyExplorer(0.25))
    assert collect_statistics(rk.Agent(policy, rk.VectorSARTTrajectory())) == {
        "explorer/epsilon": 0.25
    }


def test_state_dict_round_trip():
    def make():
        return rk.Agent(
            rk.QBasedPolicy(
                TableLearner(),
                rk.EpsilonGreedyExplorer(0.1, kind="linear", decay_steps=100, seed=3),
            ),
            rk.VectorSARTTrajectory(),
        )

    agent = make()
    env = rk.GymEnv("CliffWalking-v1", seed=0)
    rk.run(agent, env, rk.StopAfterNSteps(30))
    state = agent.policy.state_dict()
    assert state["explorer"]["step"] == 30

    def actions(a):
        e = rk.GymEnv("CliffWalking-v1", seed=1)
        rk.run(a, e, rk.StopAfterNSteps(40))
        return list(a.trajectory.action)

    expected = actions(agent)
    resumed = make()
    resumed.policy.load_state_dict(state)
    assert resumed.policy.learner.updates == 30
    assert actions(resumed) == expected


def test_state_dict_needs_a_learner_with_state_dict():
    with pytest.raises(TypeError, match="NoExplorerAttribute has no state_dict"):
        rk.QBasedPolicy(NoExplorerAttribute(), rk.GreedyExplorer()).state_dict()


def test_custom_explorer():
    class First(AbstractExplorer):
        rng = np.random.default_rng(0)

        def __call__(self, values, mask=None):
            return 0

        def prob(self, values, mask=None):
            return np.eye(len(values))[0]

    assert rk.QBasedPolicy(TableLearner(), First())(cliff()) == 0
