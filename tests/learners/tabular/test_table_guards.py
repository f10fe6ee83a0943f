"""Issue 10: tabular learners refuse what would silently corrupt their tables: a NaN reward, a
state outside the table (-1 would update the last row) or a state that is not an integer
(rlkit/approximators/tabular.py, rlkit/learners/tabular/td.py and monte_carlo.py)."""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk


class Emits(gym.Env):
    """Three states; the first step goes to ``state`` with ``reward`` and ends the episode
    after ``length`` steps."""

    observation_space = gym.spaces.Discrete(3)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, state: Any = 1, reward: float = 0.0, length: int = 1) -> None:
        self.next_state, self.next_reward, self.length = state, reward, length

    def reset(self, *, seed: int | None = None, options: Any = None):
        super().reset(seed=seed)
        self.t = 0
        return 0, {}

    def step(self, action: Any):
        self.t += 1
        return self.next_state, self.next_reward, self.t >= self.length, False, {}


def agent_for(method: str, env: rk.GymEnv, **kwargs: Any) -> tuple[rk.Agent, Any]:
    explorer = rk.EpsilonGreedyExplorer(0.1, seed=0)
    if method == "td0":
        approximator = rk.TabularVApproximator(env.state_space, step_size=0.5)
        learner = rk.TDLearner(approximator, method="td0", **kwargs)
        policy = rk.VBasedPolicy(learner, rk.RandomPolicy(seed=0))
    elif method == "mc":
        approximator = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.5)
        learner = rk.MonteCarloLearner(approximator, **kwargs)
        policy = rk.QBasedPolicy(learner, explorer)
    else:
        approximator = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.5)
        learner = rk.TDLearner(approximator, method=method, **kwargs)
        policy = rk.QBasedPolicy(learner, explorer)
    return rk.Agent(policy, rk.VectorSARTTrajectory()), approximator


CASES = [
    ("qlearning", {}),
    ("qlearning", {"n": 2}),
    ("sarsa", {}),
    ("expected_sarsa", {}),
    ("double_qlearning", {}),
    ("td0", {}),
    ("mc", {}),
]


@pytest.mark.parametrize("method, kwargs", CASES)
@pytest.mark.parametrize(
    "state, reward, match",
    [
        (1, math.nan, r"nan.*finite"),
        (1, math.inf, r"inf.*finite"),
        (-1, 0.0, r"state -1 does not index the table; expected an integer in \[0, 3\)"),
        (3, 0.0, r"state 3 does not index"),
        (1.0, 0.0, r"state 1.0 does not index"),
    ],
)
def test_a_bad_reward_or_state_raises_and_leaves_the_table(method, kwargs, state, reward, match):
    env = rk.GymEnv(Emits(state, reward, length=2), seed=0, check_actions=False)
    agent, approximator = agent_for(method, env, **kwargs)
    before = approximator.table.copy()
    with pytest.raises(ValueError, match=match):
        rk.run(agent, env, rk.StopAfterNEpisodes(3))
    assert np.array_equal(approximator.table, before)


def test_tuple_states_are_checked_per_element():
    space = gym.spaces.Tuple((gym.spaces.Discrete(4), gym.spaces.Discrete(2)))
    q = rk.TabularQApproximator(space, 2)
    q.update((3, 1), 0, 1.0)
    for bad in ((4, 0), (0, -1), (1,), 1, (1.0, 0)):
        with pytest.raises(ValueError, match=r"a tuple of 2 integers within \(4, 2\)"):
            q.update(bad, 0, 1.0)
    with pytest.raises(ValueError, match=r"action 2 does not index the table"):
        q.update((0, 0), 2, 1.0)
    with pytest.raises(ValueError, match=r"action True does not index"):
        q.update((0, 0), True, 1.0)
