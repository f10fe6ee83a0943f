"""RecurrentPPO on Dict observations, through the encoders by space (rlkit/approximators/
encoders), as the PPO family takes them.

The key check, as tests/learners/test_dict_observations.py does for PPO: a Dict CartPoleNoVel
(``{"cart": [x], "pole": [theta]}``, whose sorted keys flatten to the task's own vector) gives,
update for update, the same parameters and returns as RecurrentPPO on ``rlkit/CartPoleNoVel-v1``
itself (torch.equal): the encoder of Box keys has no parameters and concatenates the same
float32 numbers in the same order, so the initial weights, every LSTM step (acting, the
bootstrapped values, the sequences replayed) and every gradient are the same computation.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from observation_envs import DictCartPoleNoVel
from state_helpers import assert_equal_tensors as _assert_equal
from state_helpers import parameter_copies as _params

import rlkit as rk

ENV = "rlkit/CartPoleNoVel-v1"
# batch_size 16 < 2 envs x 16 steps: several minibatches of whole sequences per epoch
SMALL = {"lstm_hidden_size": 16, "hidden": (16,), "n_steps": 16, "batch_size": 16,
         "n_epochs": 2}  # fmt: skip


def _run(env, steps: int, **hp):
    agent = rk.RecurrentPPO.agent(env, seed=3, **{**SMALL, **hp})
    hook = rk.TotalRewardPerEpisode()
    rk.run(agent, env, rk.StopAfterNSteps(steps), hook)
    return agent, hook.rewards


@pytest.mark.parametrize("critic", ["lstm", "shared", "none"])
def test_dict_cartpole_no_vel_equals_the_flat_task_update_for_update(critic):
    hp = {"lstm": {}, "shared": {"shared_lstm": True, "enable_critic_lstm": False},
          "none": {"enable_critic_lstm": False}}[critic]  # fmt: skip
    flat, flat_rewards = _run(rk.VectorGymEnv(ENV, 2, seed=0), 4 * 32, **hp)
    structured, rewards = _run(rk.VectorGymEnv([DictCartPoleNoVel] * 2, seed=0), 4 * 32, **hp)
    assert structured.policy.updates == flat.policy.updates == 4
    assert structured.policy.gradient_steps == flat.policy.gradient_steps > 4 * 2
    assert len(rewards) > 0 and rewards == flat_rewards
    _assert_equal(_params(structured.policy.model), _params(flat.policy.model))
    # the hidden states carried into the next rollout are the same too
    assert torch.equal(structured.policy.act_state.hidden, flat.policy.act_state.hidden)
    # and it learned something: the parameters moved from their initial values
    fresh = rk.RecurrentPPO(rk.GymEnv(DictCartPoleNoVel(), seed=0), seed=3, **SMALL, **hp)
    pairs = zip(_params(fresh.model), _params(flat.policy.model), strict=True)
    assert not all(torch.equal(a, b) for a, b in pairs)


def test_the_rollout_holds_the_dict_by_key_and_the_model_encodes_it():
    agent, _ = _run(rk.VectorGymEnv([DictCartPoleNoVel] * 2, seed=0), 2 * 8)
    states = agent.trajectory.batch()["state"]
    assert set(states) == {"cart", "pole"}
    assert np.asarray(states["cart"]).shape == (8, 2, 1)
    assert type(agent.policy.model.encoder).__name__ == "CombinedEncoder"
    assert agent.policy.model.lstm_actor.input_size == 2


def test_a_single_dict_env_and_greedy_evaluation_equal_the_flat_task():
    runs = []
    flat_env, dict_env = (lambda s: rk.GymEnv(ENV, seed=s),
                          lambda s: rk.GymEnv(DictCartPoleNoVel(), seed=s))  # fmt: skip
    for make in (flat_env, dict_env):
        agent, rewards = _run(make(0), 48)
        greedy = rk.TotalRewardPerEpisode()
        rk.run(rk.greedy(agent.policy), make(1), rk.StopAfterNEpisodes(3), greedy)
        runs.append((agent.policy, rewards, greedy.rewards))
    (flat, flat_rewards, flat_greedy), (structured, rewards, greedy_rewards) = runs
    assert structured.updates == flat.updates == 3
    assert rewards == flat_rewards and greedy_rewards == flat_greedy
    _assert_equal(_params(structured.model), _params(flat.model))


def test_predict_takes_dict_observations_with_the_state_one_or_a_batch():
    policy = rk.RecurrentPPO(rk.GymEnv(DictCartPoleNoVel(), seed=0), seed=0, **SMALL)
    flat = rk.RecurrentPPO(rk.GymEnv(ENV, seed=0), seed=0, **SMALL)
    x = np.random.default_rng(0).normal(size=(3, 2)).astype(np.float32)
    batch = {"pole": x[:, 1:], "cart": x[:, :1]}
    starts = np.array([True, False, True])
    state = np.random.default_rng(1).normal(size=(3, 4, 1, 16)).astype(np.float32)
    actions, after = policy.predict(batch, state, starts)
    flat_actions, flat_after = flat.predict(x, state, starts)
    assert actions.tolist() == flat_actions.tolist()
    assert np.array_equal(after, flat_after)
    one, one_after = policy.predict({"cart": x[0, :1], "pole": x[0, 1:]}, episode_start=True)
    assert one == flat.predict(x[0], episode_start=True)[0] and one_after.shape == (4, 1, 16)
    with pytest.raises(ValueError, match=r"RecurrentPPO.predict: the observation's keys "
                       r"\['cart'\]"):  # fmt: skip
        policy.predict({"cart": x[0, :1]})


def test_save_load_predict_of_a_dict_recurrent_policy(tmp_path):
    env = rk.VectorGymEnv([DictCartPoleNoVel] * 2, seed=0)
    agent, _ = _run(env, 2 * 32)
    rk.save(agent, tmp_path / "rppo.rlkit")
    loaded = rk.load(tmp_path / "rppo.rlkit", env=rk.GymEnv(DictCartPoleNoVel(), seed=0))
    assert loaded.state_space == agent.policy.state_space
    space = DictCartPoleNoVel().observation_space
    space.seed(0)
    state = expected_state = None
    for step in range(20):
        obs = [space.sample() for _ in range(3)]
        batch = {key: np.stack([o[key] for o in obs]) for key in ("cart", "pole")}
        starts = np.array([step == 0, step % 7 == 0, step == 0])
        for deterministic in (True, False):
            got = loaded.predict(batch, state, starts, deterministic=deterministic)
            want = agent.policy.predict(batch, expected_state, starts,
                                        deterministic=deterministic)  # fmt: skip
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
        state, expected_state = got[1], want[1]
    # the loaded policy acts on the Dict env as the trained one's greedy policy does
    hooks = []
    for policy in (loaded, agent.policy):
        hook = rk.TotalRewardPerEpisode()
        rk.run(rk.greedy(policy), rk.GymEnv(DictCartPoleNoVel(), seed=5),
               rk.StopAfterNEpisodes(2), hook)  # fmt: skip
        hooks.append(hook.rewards)
    assert hooks[0] == hooks[1]


def test_export_of_a_dict_recurrent_policy_is_refused_naming_the_space(tmp_path):
    env = rk.GymEnv(DictCartPoleNoVel(), seed=0)
    policy = rk.RecurrentPPO(env, seed=0, **SMALL)
    with pytest.raises(TypeError, match=r"rk.export: the policy's observations are a Dict space"):
        rk.export(policy, tmp_path / "rppo.onnx")
    assert not (tmp_path / "rppo.onnx").exists()


def test_predicts_refusals_name_the_policy_once():
    policy = rk.RecurrentPPO(rk.GymEnv(ENV, seed=0), seed=0, **SMALL)
    with pytest.raises(ValueError, match=r"^RecurrentPPO.predict: observations must have shape "
                       r"\(2,\)"):  # fmt: skip
        policy.predict(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match=r"^RecurrentPPO.predict: action_masks must be a boolean"):
        policy.predict(np.zeros(2, np.float32), action_masks=np.ones(2))


def test_discrete_observations_are_one_hot_in_the_recurrent_model():
    env = rk.GymEnv("FrozenLake-v1", seed=0)
    agent = rk.RecurrentPPO.agent(env, seed=0, **SMALL)
    assert type(agent.policy.model.encoder).__name__ == "OneHotEncoder"
    assert agent.policy.model.lstm_actor.input_size == 16
    rk.run(agent, env, rk.StopAfterNSteps(48))
    assert agent.policy.updates == 3
    one_hot = torch.nn.functional.one_hot(torch.tensor([3, 7]), 16).float()
    net = agent.policy.model
    expected = net._run(one_hot.unsqueeze(0), net.initial_state(2))[0][0]
    assert torch.equal(net(torch.tensor([3.0, 7.0])), expected)
