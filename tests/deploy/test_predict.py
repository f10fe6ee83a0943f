"""policy.predict(obs, deterministic=True, action_masks=None) on plain numpy observations:
SB3's shapes (one observation -> one action, a batch -> a batch), legal-action masks, the
stochastic form without touching the training streams, and clear refusals."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.deploy.q_based import TableLearner


@pytest.fixture(scope="module")
def ppo():
    return rk.PPO(rk.GymEnv("CartPole-v1", seed=0), seed=0)


def table_policy():
    table = np.array([[0.0, 2.0, 2.0, 1.0], [3.0, 0.0, 0.0, 0.0]])
    return rk.QBasedPolicy(TableLearner(table), rk.EpsilonGreedyExplorer(0.5, seed=0))


def test_shapes_follow_sb3(ppo):
    assert ppo.predict(np.zeros(4, np.float32)).shape == ()
    assert ppo.predict(np.zeros((7, 4), np.float32)).shape == (7,)
    sac = rk.SAC(rk.GymEnv("Pendulum-v1", seed=0), seed=0)
    assert sac.predict(np.zeros(3)).shape == (1,)
    assert sac.predict(np.zeros((5, 3))).shape == (5, 1)
    pg = rk.PPO(rk.GymEnv("Pendulum-v1", seed=0), seed=0)
    assert pg.predict(np.zeros((5, 3))).dtype == np.float32
    assert table_policy().predict(1).shape == () and table_policy().predict([0, 1]).shape == (2,)


def test_a_wrong_shape_is_refused_naming_both(ppo):
    with pytest.raises(ValueError, match=r"PPO.predict: observations must have shape \(4,\).*"
                       r"got shape \(3,\)"):  # fmt: skip
        ppo.predict(np.zeros(3))


def test_ties_go_to_the_first_maximal_action_and_masks_choose_among_legal_ones():
    policy = table_policy()
    assert policy.predict(0) == 1
    assert policy.predict(0, action_masks=np.array([True, False, True, True])) == 2
    masks = np.array([[True, False, False, True], [False, True, True, True]])
    assert policy.predict(np.array([0, 1]), action_masks=masks).tolist() == [3, 1]


def test_masks_in_a_stochastic_policy_and_their_refusals(ppo):
    obs = np.zeros((3, 4), np.float32)
    free = ppo.predict(obs)
    masks = np.zeros((3, 2), bool)
    masks[np.arange(3), 1 - free] = True  # only the action it would not take
    assert ppo.predict(obs, action_masks=masks).tolist() == (1 - free).tolist()
    for _ in range(20):
        assert ppo.predict(obs, deterministic=False, action_masks=masks).tolist() == (
            1 - free
        ).tolist()
    with pytest.raises(ValueError, match="marks no action legal"):
        ppo.predict(obs, action_masks=np.zeros((3, 2), bool))
    with pytest.raises(ValueError, match=r"must have shape \(2,\) or \(3, 2\)"):
        ppo.predict(obs, action_masks=np.ones((3, 3), bool))
    with pytest.raises(ValueError, match="only for Discrete action spaces"):
        rk.TD3(rk.GymEnv("Pendulum-v1"), seed=0).predict(np.zeros(3), action_masks=[True])


def test_stochastic_predict_samples_without_changing_the_training_streams(ppo):
    before = ppo.generator.get_state().clone()
    draws = {int(ppo.predict(np.zeros(4), deterministic=False)) for _ in range(50)}
    assert draws == {0, 1}  # an untrained policy is near uniform
    assert torch.equal(ppo.generator.get_state(), before)
    policy = table_policy()
    state = policy.explorer.state_dict()
    draws = [int(policy.predict(1, deterministic=False)) for _ in range(400)]
    assert 0.55 < draws.count(0) / 400 < 0.7  # epsilon 0.5: p = 0.5 + 0.5 / 4 = 0.625
    assert policy.explorer.state_dict()["rng"] == state["rng"]


def test_sac_samples_td3_stays_deterministic():
    obs = np.ones((64, 3))
    sac = rk.SAC(rk.GymEnv("Pendulum-v1", seed=0), seed=0)
    sampled = sac.predict(obs, deterministic=False)
    assert not np.allclose(sampled, sac.predict(obs))
    assert np.all(np.abs(sampled) <= 2.0)
    td3 = rk.TD3(rk.GymEnv("Pendulum-v1", seed=0), seed=0)
    np.testing.assert_array_equal(td3.predict(obs, deterministic=False), td3.predict(obs))


def test_a_dqn_learner_that_never_ran_does_not_know_its_observations():
    env = rk.GymEnv("CartPole-v1", seed=0)
    from rlkit.approximators.neural import q_network

    approx = rk.NeuralNetworkApproximator(
        q_network(env.state_space, env.action_space, (8,), seed=0),
        lambda p: torch.optim.Adam(p, lr=1e-3),
    )
    learner = rk.DQNLearner(approx, sampler=rk.BatchSampler(4),
                            controller=rk.InsertSampleRatioController(1, 1, 1))  # fmt: skip
    policy = rk.QBasedPolicy(learner, rk.GreedyExplorer())
    with pytest.raises(ValueError, match="observation space of .* is not known; run the policy"):
        policy.predict(np.zeros(4))
    replay = rk.CircularArraySARTTrajectory(10, env.state_space, env.action_space)
    rk.run(rk.Agent(policy, replay), env, rk.StopAfterNSteps(1))
    assert policy.predict(np.zeros(4)).shape == ()


def test_an_agent_predicts_with_its_policy(ppo):
    agent = rk.Agent(ppo, rk.RolloutTrajectory(8))
    obs = np.linspace(-0.1, 0.1, 40, dtype=np.float32).reshape(10, 4)
    np.testing.assert_array_equal(agent.predict(obs), ppo.predict(obs))
