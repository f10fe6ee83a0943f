"""``QBasedPolicy`` skips the learner's values on an epsilon-greedy explorer's exploring steps
(rlkit/policies/q_based.py, ``EpsilonGreedyExplorer.act_lazily``): the same actions and the same
generator draws as computing them at every step."""

from __future__ import annotations

import numpy as np

import rlkit as rk


class _Counting(rk.AbstractLearner):
    """Fixed values over 3 actions, counting its calls; ``pure_values`` as the DQN family."""

    pure_values = True

    def __init__(self, pure: bool = True) -> None:
        self.pure_values = pure
        self.action_space = rk.GymEnv("CliffWalking-v1").action_space
        self.calls = 0

    def __call__(self, env):
        self.calls += 1
        return np.array([0.0, 1.0, 1.0, 0.5])


def _actions(learner, n: int = 300) -> tuple[list[int], int]:
    env = rk.GymEnv("CliffWalking-v1", seed=0)
    env.reset()
    explorer = rk.EpsilonGreedyExplorer(0.05, kind="linear", decay_steps=100, seed=1)
    policy = rk.QBasedPolicy(learner, explorer)
    return [policy.act(env) for _ in range(n)], explorer.rng.random()


def test_exploring_steps_skip_the_values_with_the_same_actions_and_draws():
    lazy, eager = _Counting(pure=True), _Counting(pure=False)
    actions, next_draw = _actions(lazy)
    expected, expected_draw = _actions(eager)
    assert actions == expected and next_draw == expected_draw
    assert eager.calls == 300
    assert 100 < lazy.calls < 300  # only the greedy steps (epsilon 1 -> 0.05 over 100 steps)


def test_a_dqn_run_calls_its_network_only_on_greedy_steps():
    env = rk.GymEnv("CartPole-v1", seed=0)
    agent = rk.DQN.agent(env, seed=0, learning_starts=10**6, exploration_fraction=0.5,
                         total_steps=200)  # fmt: skip
    calls = []
    agent.policy.learner.model.register_forward_hook(lambda *args: calls.append(1))
    rk.run(agent, env, rk.StopAfterNSteps(200))
    assert 0 < len(calls) < 200
