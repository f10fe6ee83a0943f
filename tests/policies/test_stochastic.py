import gymnasium as gym
import numpy as np
import pytest
import torch

import rlkit as rk


def test_recording_on_a_vector_env_keeps_transitions_within_episodes():
    env = rk.VectorGymEnv("CartPole-v1", 3, seed=0)
    agent = rk.PPO.agent(env, seed=0, n_steps=200, batch_size=64)
    rk.run(agent, env, rk.StopAfterNSteps(3 * 60))
    batch = agent.trajectory.batch()
    done = batch["terminated"] | batch["truncated"]
    assert done.any()  # some episodes ended in 60 steps of a random-ish policy
    # where a sub-env's episode did not end, the next state acted on is the final state
    same = np.all(batch["final_state"][:-1] == batch["state"][1:], axis=-1)
    assert same[~done[:-1]].all()
    assert not same[done[:-1]].any()  # after an end comes a reset observation
    # the stored values and log-probs are the model's for the stored states and actions
    policy = agent.policy
    obs = torch.as_tensor(batch["state"][:5].reshape(-1, 4))
    with torch.no_grad():
        dist = policy.distribution(obs)
        np.testing.assert_allclose(batch["value"][:5].ravel(), policy.model.value(obs), 1e-5, 1e-6)
        logp = dist.log_prob(torch.as_tensor(batch["action"][:5].ravel()))
    np.testing.assert_allclose(batch["log_prob"][:5].ravel(), logp, 1e-5, 1e-6)
    env.close()


def test_greedy_form_on_single_and_vector_envs():
    env = rk.VectorGymEnv("CartPole-v1", 2, seed=0)
    policy = rk.PPO(env, seed=0)
    env.reset()
    actions = rk.greedy(policy)(env)
    assert actions.shape == (2,) and actions.dtype.kind == "i"
    single = rk.GymEnv("CartPole-v1", seed=0)
    single.reset()
    assert rk.greedy(policy)(single) in (0, 1)
    env.close()


def test_sampling_is_reproducible_from_the_seed():
    def actions(seed):
        env = rk.GymEnv("CartPole-v1", seed=0)
        env.reset()
        policy = rk.PPO(env, seed=seed)
        return [policy(env) for _ in range(30)]

    assert actions(1) == actions(1) and actions(1) != actions(2)


def test_box_policy_on_a_vector_env_clips_and_shapes():
    env = rk.VectorGymEnv("Pendulum-v1", 2, seed=0)
    env.reset()
    policy = rk.PPO(env, seed=0, log_std_init=2.0)
    action = policy(env)
    assert action.shape == (2, 1) and np.all(np.abs(action) <= 2.0)
    assert policy.last_action.shape == (2, 1)
    assert isinstance(env.action_space, gym.spaces.Box)
    env.close()


class _BoxOf(gym.Env):
    """An env with a given Box action space that refuses actions outside it."""

    observation_space = gym.spaces.Box(-1, 1, (2,), np.float32)

    def __init__(self, action_space):
        self.action_space = action_space

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}

    def step(self, action):
        assert self.action_space.contains(action), action
        return np.zeros(2, np.float32), 0.0, False, False, {}


def test_integer_and_float16_box_actions_reach_the_env_in_its_dtype():
    # float32 samples were refused by GymEnv as outside Box(..., int64) or Box(..., float16)
    for space in (gym.spaces.Box(0, 10, (3,), np.int64), gym.spaces.Box(-1, 1, (3,), np.float16)):
        env = rk.GymEnv(_BoxOf(space), seed=0)
        env.reset()
        policy = rk.PPO(env, seed=0, log_std_init=2.0)
        for _ in range(5):
            action = policy(env)
            assert action.dtype == space.dtype and space.contains(action)
            env.act(action)
        assert policy.last_action.dtype == np.float32  # the sample is stored as drawn
    env64 = rk.GymEnv(_BoxOf(gym.spaces.Box(-1, 1, (3,), np.float64)), seed=0)
    env64.reset()
    assert rk.PPO(env64, seed=0)(env64).dtype == np.float64  # clipped to its float64 bounds


def test_acting_before_the_env_was_reset_says_so():
    # it was torch's "can't convert np.ndarray of type numpy.object_"
    env = rk.GymEnv("CartPole-v1", seed=0)
    policy = rk.PPO(env, seed=0)
    for acting in (policy, rk.greedy(policy)):
        with pytest.raises(TypeError, match=r"PPO: cannot act on the observation .*None.* before "
                           r"env.reset\(\)"):
            acting(env)
