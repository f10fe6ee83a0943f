"""REINFORCE (with and without baseline) and one-step actor-critic on known answers."""

from __future__ import annotations

import numpy as np
import pytest

import rlkit as rk

X = np.array([[0.0, 1.0], [1.0, 0.0]])


def _features(s, a):
    return X[a]


def _agent(learner_fn, run=0, init=(-1.47, 1.47)):
    policy = rk.LinearSoftmaxPolicy(_features, 2, 2, init=list(init), seed=run)
    learner = learner_fn(policy)
    return rk.Agent(rk.VBasedPolicy(learner, policy), rk.VectorSARTTrajectory()), policy, learner


def test_reinforce_update_of_one_episode():
    """One episode by hand: theta changes by alpha sum_t gamma^t G_t grad ln pi(A_t|S_t),
    each gradient at the theta of that moment."""
    agent, policy, learner = _agent(lambda pi: rk.ReinforceLearner(pi, step_size=0.01,
                                                                   gamma=0.9))
    trajectory = agent.trajectory
    rk.run(agent, rk.GymEnv("rlkit/ShortCorridor-v0", seed=0), rk.StopAfterNEpisodes(1))
    replay = rk.LinearSoftmaxPolicy(_features, 2, 2, init=[-1.47, 1.47])
    rewards = trajectory.reward
    for t in range(len(rewards)):
        g = sum(0.9**k * r for k, r in enumerate(rewards[t:]))
        replay.theta += 0.01 * 0.9**t * g * replay.grad_log(0, trajectory.action[t])
    np.testing.assert_allclose(policy.theta, replay.theta, atol=1e-12)
    assert not np.allclose(policy.theta, [-1.47, 1.47])


def test_a_zero_baseline_with_a_tiny_step_is_plain_reinforce_at_first():
    plain_agent, plain, _ = _agent(lambda pi: rk.ReinforceLearner(pi, step_size=2**-10))
    base_agent, based, _ = _agent(lambda pi: rk.ReinforceLearner(
        pi, step_size=2**-10,
        baseline=rk.LinearVApproximator(lambda s: np.ones(1), 1, step_size=1e-12)))
    for agent in (plain_agent, base_agent):
        rk.run(agent, rk.GymEnv("rlkit/ShortCorridor-v0", seed=0), rk.StopAfterNEpisodes(3))
    np.testing.assert_allclose(based.theta, plain.theta, atol=1e-8)


@pytest.mark.parametrize("with_baseline", [False, True])
def test_reinforce_learns_the_short_corridor(with_baseline):
    """From p(right) = 0.05 (value -82) toward the best stochastic policy (value -11.66)."""
    def make(pi):
        if not with_baseline:
            return rk.ReinforceLearner(pi, step_size=2**-12)
        v = rk.LinearVApproximator(lambda s: np.ones(1), 1, step_size=2**-6)
        return rk.ReinforceLearner(pi, step_size=2**-9, baseline=v)

    agent, policy, _ = _agent(make)
    hook = rk.run(agent, rk.GymEnv("rlkit/ShortCorridor-v0", seed=0), rk.StopAfterNEpisodes(300),
                  rk.TotalRewardPerEpisode())
    assert np.mean(hook.rewards[-50:]) > -20
    assert 0.3 < policy.prob(0)[1] < 0.8


def test_actor_critic_step_by_hand():
    critic = rk.TabularVApproximator(4, step_size=0.5)
    agent, policy, learner = _agent(
        lambda pi: rk.ActorCriticLearner(pi, critic, step_size=0.1, gamma=0.9))
    trajectory = agent.trajectory
    rk.run(agent, rk.GymEnv("rlkit/ShortCorridor-v0", seed=0), rk.StopAfterNSteps(2))
    v = np.zeros(4)
    replay = rk.LinearSoftmaxPolicy(_features, 2, 2, init=[-1.47, 1.47])
    discount = 1.0
    for t in range(2):
        s, a, r, s2 = (trajectory.state[t], trajectory.action[t], trajectory.reward[t],
                       trajectory.next_state[t])
        delta = r + 0.9 * v[s2] - v[s]
        v[s] += 0.5 * delta
        replay.theta += 0.1 * discount * delta * replay.grad_log(s, a)
        discount *= 0.9
    np.testing.assert_allclose(critic.table, v, atol=1e-12)
    np.testing.assert_allclose(policy.theta, replay.theta, atol=1e-12)
    assert learner.discount == pytest.approx(0.81)


def test_actor_critic_learns_with_a_tabular_critic():
    """With a critic that sees the states (a table) one-step actor-critic improves on the
    initial policy (the actor's features still cannot tell the states apart)."""
    critic = rk.TabularVApproximator(4, step_size=2**-4)
    agent, policy, _ = _agent(lambda pi: rk.ActorCriticLearner(pi, critic, step_size=2**-8))
    hook = rk.run(agent, rk.GymEnv("rlkit/ShortCorridor-v0", seed=0), rk.StopAfterNEpisodes(300),
                  rk.TotalRewardPerEpisode())
    assert np.mean(hook.rewards[-50:]) > np.mean(hook.rewards[:10]) + 20


def test_bad_input():
    policy = rk.LinearSoftmaxPolicy(_features, 2, 2)
    with pytest.raises(TypeError, match="ReinforceLearner: policy must be an "
                       "rk.LinearSoftmaxPolicy"):
        rk.ReinforceLearner(rk.RandomPolicy(), step_size=0.1)
    with pytest.raises(ValueError, match="step_size must be"):
        rk.ReinforceLearner(policy, step_size=0.0)
    with pytest.raises(TypeError, match="baseline must be an rk.LinearVApproximator"):
        rk.ReinforceLearner(policy, step_size=0.1, baseline=rk.TabularQApproximator(4, 2))
    with pytest.raises(ValueError, match="critic needs a constant step size"):
        rk.ActorCriticLearner(policy, rk.TabularVApproximator(4, step_size=None), step_size=0.1)
    with pytest.raises(ValueError, match="gamma"):
        rk.ActorCriticLearner(policy, rk.TabularVApproximator(4), step_size=0.1, gamma=2.0)
