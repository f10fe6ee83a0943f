"""Issue 21, item 8: every replay-based learner (the DQN family, SAC, TD3, DDPG) refuses a
batch_size larger than its replay's buffer_size, in one place (rlkit/policies/agent.py)."""

import pytest

import rlkit as rk


@pytest.mark.parametrize("algorithm", ["SAC", "TD3", "DDPG"])
def test_an_off_policy_actor_critic_refuses_a_batch_larger_than_its_buffer(algorithm):
    env = rk.GymEnv("Pendulum-v1", seed=0)
    with pytest.raises(ValueError, match=rf"Agent: {algorithm} draws batches of batch_size=256 "
                       r"transitions, more than its replay CircularArraySARTTrajectory holds "
                       r"\(capacity=100\); expected batch_size <= capacity \(the buffer_size\)"):
        getattr(rk, algorithm).agent(env, buffer_size=100, batch_size=256)
    getattr(rk, algorithm).agent(env, buffer_size=256, batch_size=256)  # equal is fine


@pytest.mark.parametrize(
    ("recipe", "learner"),
    [
        ("DQN_CartPole", "DQNLearner"),
        ("QRDQN_CartPole", "QRDQNLearner"),
        ("PrioritizedDQN_CartPole", "PrioritizedDQNLearner"),
        ("C51_CartPole", "C51Learner"),
        ("IQN_CartPole", "IQNLearner"),
        ("Rainbow_CartPole", "RainbowLearner"),
        ("SAC_Pendulum", "SAC"),
        ("TD3_Pendulum", "TD3"),
    ],
)
def test_every_replay_recipe_refuses_it_naming_its_learner(recipe, learner):
    with pytest.raises(ValueError, match=rf"Agent: {learner} draws batches of batch_size=256 "
                       r".*capacity=100"):
        rk.make_experiment(recipe, seed=0, buffer_size=100, batch_size=256)


def test_a_user_made_sac_agent_with_its_own_replay_is_checked_too():
    env = rk.GymEnv("Pendulum-v1", seed=0)
    policy = rk.SAC(env, batch_size=64)
    with pytest.raises(ValueError, match=r"SAC draws batches of batch_size=64 .*capacity=10"):
        rk.Agent(policy, rk.CircularArraySARTTrajectory(10, env.state_space, env.action_space))
