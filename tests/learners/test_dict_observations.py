"""Deep learners on Dict, Tuple and Discrete observations, through the encoders by space
(rlkit/approximators/encoders).

The key check: a Dict CartPole (``{"cart": [x, x_dot], "pole": [theta, theta_dot]}``, whose
sorted keys flatten to CartPole's own vector) gives, update for update, the same parameters as
the same learner on CartPole itself, with torch.equal: the encoder of Box keys has no
parameters and concatenates the same float32 numbers in the same order, so the networks'
initial weights, every forward pass, gradient and sampled action are the same computation.
"""

from __future__ import annotations

import re
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from observation_envs import DictCartPole, DictPendulum, TupleCartPole, WrongKeys
from one_liners import ONE_LINERS
from state_helpers import assert_equal_tensors as _assert_equal
from state_helpers import parameter_copies as _params

import rlkit as rk
from rlkit.approximators.neural import q_network

SMALL = {
    "PPO": {"n_steps": 64, "batch_size": 32, "n_epochs": 2},
    "A2C": {"n_steps": 8},
    "VPG": {"n_steps": 64},
    "TRPO": {"n_steps": 64, "batch_size": 32},
}



def _on_policy(name: str, env, steps: int):
    agent = getattr(rk, name).agent(env, seed=3, **SMALL[name])
    hook = rk.TotalRewardPerEpisode()
    rk.run(agent, env, rk.StopAfterNSteps(steps), hook)
    return agent.policy, hook.rewards


@pytest.mark.parametrize("name", sorted(SMALL))
def test_dict_cartpole_equals_cartpole_update_for_update(name):
    n = SMALL[name]["n_steps"]
    flat, flat_rewards = _on_policy(name, rk.GymEnv("CartPole-v1", seed=0), 3 * n)
    structured, rewards = _on_policy(name, rk.GymEnv(DictCartPole(), seed=0), 3 * n)
    assert structured.updates == flat.updates == 3
    assert rewards == flat_rewards
    _assert_equal(_params(structured.model), _params(flat.model))
    # and it learned something: the parameters moved from their initial values
    fresh = getattr(rk, name)(rk.GymEnv(DictCartPole(), seed=0), seed=3, **SMALL[name])
    pairs = zip(_params(fresh.model), _params(flat.model), strict=True)
    assert not all(torch.equal(a, b) for a, b in pairs)


def test_nested_tuple_cartpole_equals_cartpole():
    flat, _ = _on_policy("PPO", rk.GymEnv("CartPole-v1", seed=0), 128)
    nested, _ = _on_policy("PPO", rk.GymEnv(TupleCartPole(), seed=0), 128)
    _assert_equal(_params(nested.model), _params(flat.model))


def test_vector_env_stacks_dict_observations_per_key_and_equals_the_flat_run():
    dict_env = rk.VectorGymEnv([DictCartPole] * 2, seed=0)
    dict_env.reset()
    assert set(dict_env.state) == {"cart", "pole"} and dict_env.state["cart"].shape == (2, 2)
    flat, _ = _on_policy("PPO", rk.VectorGymEnv("CartPole-v1", 2, seed=0), 256)
    structured, _ = _on_policy("PPO", rk.VectorGymEnv([DictCartPole] * 2, seed=0), 256)
    assert structured.updates == 2
    _assert_equal(_params(structured.model), _params(flat.model))


def test_greedy_evaluation_on_dict_observations():
    policy = rk.PPO(rk.GymEnv(DictCartPole(), seed=0), seed=0)
    env = rk.GymEnv(DictCartPole(), seed=1)
    hook = rk.TotalRewardPerEpisode()
    rk.run(rk.greedy(policy), env, rk.StopAfterNEpisodes(2), hook)
    flat_policy = rk.PPO(rk.GymEnv("CartPole-v1", seed=0), seed=0)
    flat_hook = rk.TotalRewardPerEpisode()
    rk.run(rk.greedy(flat_policy), rk.GymEnv("CartPole-v1", seed=1), rk.StopAfterNEpisodes(2),
           flat_hook)  # fmt: skip
    assert hook.rewards == flat_hook.rewards


def _dqn_agent(env, seed: int = 1) -> rk.Agent:
    net = q_network(env.state_space, env.action_space, (32, 32), seed=seed)
    q = rk.NeuralNetworkApproximator(net, lambda p: torch.optim.Adam(p, lr=1e-3))
    learner = rk.DQNLearner(
        q,
        target=rk.TargetNetwork(q, sync_every=50),
        sampler=rk.BatchSampler(16, seed=2),
        controller=rk.InsertSampleRatioController(64, 4, 1),
        gamma=0.99,
    )
    explorer = rk.EpsilonGreedyExplorer(0.2, seed=3)
    return rk.Agent(
        rk.QBasedPolicy(learner, explorer),
        rk.CircularArraySARTTrajectory(1000, env.state_space, env.action_space),
    )


def test_dict_cartpole_dqn_equals_cartpole_dqn_update_for_update():
    runs = []
    for env in (rk.GymEnv("CartPole-v1", seed=0), rk.GymEnv(DictCartPole(), seed=0)):
        agent = _dqn_agent(env)
        rk.run(agent, env, rk.StopAfterNSteps(400))
        runs.append(agent)
    flat, structured = runs
    assert structured.policy.learner.gradient_steps == flat.policy.learner.gradient_steps == 84
    a, b = flat.policy.learner, structured.policy.learner
    _assert_equal(_params(b.approximator.model), _params(a.approximator.model))
    _assert_equal(_params(b.target.model), _params(a.target.model))
    # the replay holds the dict as arrays by key, the same numbers as the flat replay
    states = structured.trajectory.state.arrays
    joined = np.concatenate([states["cart"], states["pole"]], 1)
    assert np.array_equal(joined, flat.trajectory.state)


def test_dqn_with_vector_env_of_dict_observations():
    env = rk.VectorGymEnv([DictCartPole] * 2, seed=0)
    agent = _dqn_agent(env)
    rk.run(agent, env, rk.StopAfterNSteps(300))
    flat_env = rk.VectorGymEnv("CartPole-v1", 2, seed=0)
    flat = _dqn_agent(flat_env)
    rk.run(flat, flat_env, rk.StopAfterNSteps(300))
    assert agent.policy.learner.gradient_steps > 0
    _assert_equal(_params(agent.policy.learner.approximator.model),
                  _params(flat.policy.learner.approximator.model))  # fmt: skip


SMALL_REPLAY = {"learning_starts": 64, "batch_size": 16, "hidden": (32,), "buffer_size": 1000,
                "target_update_interval": 50, "total_steps": 400}  # fmt: skip


def _one_liner(name: str, env) -> rk.Agent:
    return getattr(rk, name).agent(env, seed=1, **SMALL_REPLAY, **ONE_LINERS[name])


@pytest.mark.parametrize("name", sorted(ONE_LINERS))
def test_dict_cartpole_equals_cartpole_for_every_dqn_family_one_liner(name):
    # the distributional heads (categorical, dueling noisy, implicit quantile) included
    runs = []
    for env in (rk.GymEnv("CartPole-v1", seed=0), rk.GymEnv(DictCartPole(), seed=0)):
        agent = _one_liner(name, env)
        hook = rk.TotalRewardPerEpisode()
        rk.run(agent, env, rk.StopAfterNSteps(400), hook)
        runs.append((agent.policy.learner, hook.rewards))
    (flat, flat_rewards), (structured, rewards) = runs
    assert structured.gradient_steps == flat.gradient_steps == 84
    assert rewards == flat_rewards
    _assert_equal(_params(structured.model), _params(flat.model))
    _assert_equal(_params(structured.target.model), _params(flat.target.model))
    fresh = _one_liner(name, rk.GymEnv(DictCartPole(), seed=0)).policy.learner
    pairs = zip(_params(fresh.model), _params(flat.model), strict=True)
    assert not all(torch.equal(a, b) for a, b in pairs)  # it learned: the parameters moved


@pytest.mark.parametrize("name", ["C51", "IQN", "Rainbow"])
def test_distributional_one_liners_on_a_vector_env_of_dict_observations(name):
    params = []
    for env in (rk.VectorGymEnv("CartPole-v1", 2, seed=0),
                rk.VectorGymEnv([DictCartPole] * 2, seed=0)):  # fmt: skip
        agent = _one_liner(name, env)
        rk.run(agent, env, rk.StopAfterNSteps(200))
        assert agent.policy.learner.gradient_steps > 0
        params.append(_params(agent.policy.learner.model))
    _assert_equal(params[1], params[0])


@pytest.mark.parametrize("name", ["C51", "IQN", "Rainbow"])
def test_distributional_one_liners_take_discrete_and_nested_tuple_observations(name):
    lake = rk.GymEnv("FrozenLake-v1", seed=0)
    agent = _one_liner(name, lake)
    assert type(agent.policy.learner.model).__name__ in ("Sequential", "EncodedIQNNetwork")
    rk.run(agent, lake, rk.StopAfterNSteps(100))
    assert agent.policy.learner.gradient_steps == 9
    flat, nested = (rk.GymEnv("CartPole-v1", seed=0), rk.GymEnv(TupleCartPole(), seed=0))
    agents = [_one_liner(name, env) for env in (flat, nested)]
    for agent, env in zip(agents, (flat, nested), strict=True):
        rk.run(agent, env, rk.StopAfterNSteps(120))
    _assert_equal(_params(agents[1].policy.learner.model), _params(agents[0].policy.learner.model))


@pytest.mark.parametrize("learner", ["PPO", "DQN", "C51", "IQN", "Rainbow"])
def test_an_observation_whose_keys_differ_from_the_space_is_refused_naming_the_keys(learner):
    env = rk.GymEnv(WrongKeys(), seed=0)
    if learner == "DQN":
        agent = _dqn_agent(env)
    elif learner == "PPO":
        agent = rk.PPO.agent(env, seed=0, n_steps=64, batch_size=32)
    else:
        agent = _one_liner(learner, env)
    with pytest.raises(ValueError, match=r"keys \['cart', 'pole_angle'\] differ from the Dict "
                       r"space's keys \['cart', 'pole'\] \(missing: \['pole'\], not in the "
                       r"space: \['pole_angle'\]\)"):  # fmt: skip
        rk.run(agent, env, rk.StopAfterNSteps(10))


def test_discrete_observations_are_one_hot_in_the_network():
    env = rk.GymEnv("FrozenLake-v1", seed=0)
    policy = rk.PPO(env, seed=0)
    assert type(policy.model.encoder).__name__ == "OneHotEncoder"
    assert policy.model.pi[0].in_features == 16
    q = q_network(env.state_space, env.action_space, (8,), seed=0)
    assert q(torch.tensor([0.0, 15.0])).shape == (2, 4)


def _frozen_lake(seed: int) -> rk.GymEnv:
    # the deterministic 4x4 map: a greedy policy either reaches the goal (1) or never does (0)
    return rk.GymEnv("FrozenLake-v1", seed=seed, is_slippery=False)


def _greedy_success(policy) -> float:
    hook = rk.TotalRewardPerEpisode()
    rk.run(rk.greedy(policy), _frozen_lake(123), rk.StopAfterNEpisodes(10), hook)
    return float(np.mean(hook.rewards))


@pytest.mark.slow
def test_ppo_learns_frozen_lake_through_one_hot_observations():
    env = _frozen_lake(0)
    agent = rk.PPO.agent(env, seed=0, n_steps=256, batch_size=64, n_epochs=10, ent_coef=0.01)
    assert _greedy_success(agent.policy) == 0.0  # the untrained policy never reaches the goal
    rk.run(agent, env, rk.StopAfterNSteps(2500))
    assert _greedy_success(agent.policy) == 1.0  # measured: 1.0 on seeds 0, 1, 2


@pytest.mark.slow
def test_dqn_learns_frozen_lake_through_one_hot_observations():
    env = _frozen_lake(0)
    net = q_network(env.state_space, env.action_space, (64,), seed=0)
    q = rk.NeuralNetworkApproximator(net, lambda p: torch.optim.Adam(p, lr=1e-3))
    learner = rk.DQNLearner(
        q,
        target=rk.TargetNetwork(q, sync_every=250),
        sampler=rk.BatchSampler(32, seed=10),
        controller=rk.InsertSampleRatioController(500, 1, 1),
        gamma=0.95,
    )
    agent = rk.Agent(
        rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.1, seed=20)),
        rk.CircularArraySARTTrajectory(10_000, env.state_space, env.action_space),
    )
    assert _greedy_success(agent.policy) == 0.0
    rk.run(agent, env, rk.StopAfterNSteps(5000))
    # measured: 1.0 on seeds 0, 1, 2 after 5,000 steps (0.0, 0.0, 1.0 after 2,500)
    assert _greedy_success(agent.policy) == 1.0


def test_the_docs_example_prints_what_the_page_says(capsys):
    page = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "observations.md"
    text = page.read_text()
    (example,) = [b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S)
                  if "DictCartPole" in b]  # fmt: skip
    exec(compile(example, str(page), "exec"), {})
    out = capsys.readouterr().out.strip().splitlines()
    shown = re.search(r"prints\n\n```text\n(.*?)```", text, flags=re.S).group(1).splitlines()
    assert out == shown


@pytest.mark.parametrize("name", ["SAC", "TD3", "DDPG"])
def test_dict_pendulum_equals_pendulum_for_the_off_policy_actor_critics(name):
    runs = []
    for env in (rk.GymEnv("Pendulum-v1", seed=0), rk.GymEnv(DictPendulum(), seed=0)):
        agent = getattr(rk, name).agent(env, seed=0, learning_starts=100, batch_size=32,
                                        hidden=(32, 32))  # fmt: skip
        hook = rk.TotalRewardPerEpisode()
        rk.run(agent, env, rk.StopAfterNSteps(300), hook)
        greedy = rk.TotalRewardPerEpisode()
        rk.run(rk.greedy(agent.policy), env, rk.StopAfterNEpisodes(1), greedy)
        runs.append((agent.policy, hook.rewards, greedy.rewards))
    (flat, flat_rewards, flat_greedy), (structured, rewards, greedy_rewards) = runs
    assert structured.updates == flat.updates == 200
    assert rewards == flat_rewards and greedy_rewards == flat_greedy
    _assert_equal(_params(structured.model), _params(flat.model))


def test_predict_takes_dict_observations_one_or_a_batch():
    policy = rk.PPO(rk.GymEnv(DictCartPole(), seed=0), seed=0)
    flat = rk.PPO(rk.GymEnv("CartPole-v1", seed=0), seed=0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 4)).astype(np.float32)
    batch = {"pole": x[:, 2:], "cart": x[:, :2]}
    assert policy.predict(batch).tolist() == flat.predict(x).tolist()
    assert policy.predict({"cart": x[0, :2], "pole": x[0, 2:]}) == flat.predict(x[0])
    sac = rk.SAC(rk.GymEnv(DictPendulum(), seed=0), seed=0)
    flat_sac = rk.SAC(rk.GymEnv("Pendulum-v1", seed=0), seed=0)
    obs = {"cos_sin": np.array([0.6, 0.8], np.float32), "speed": np.array([1.0], np.float32)}
    assert sac.predict(obs).tolist() == flat_sac.predict(np.array([0.6, 0.8, 1.0])).tolist()
    dqns = []
    for env in (rk.GymEnv(DictCartPole(), seed=0), rk.GymEnv("CartPole-v1", seed=0)):
        agent = _dqn_agent(env)
        rk.run(agent, env, rk.StopAfterNSteps(5))  # a run records the spaces it acts on
        dqns.append(agent)
    dqn, flat_dqn = dqns
    assert dqn.policy.predict(batch).tolist() == flat_dqn.policy.predict(x).tolist()
    assert dqn.policy.predict({"cart": x[0, :2], "pole": x[0, 2:]}) == flat_dqn.policy.predict(x[0])
    with pytest.raises(ValueError, match=r"PPO.predict: every array of a Dict observation .* "
                       r"\[\(\(3, 2\), \(2,\)\), \(\(2, 2\), \(2,\)\)\]"):  # fmt: skip
        policy.predict({"cart": np.ones((3, 2)), "pole": np.zeros((2, 2))})
    with pytest.raises(ValueError, match=r"PPO.predict: the observation's keys \['cart'\]"):
        policy.predict({"cart": np.ones(2)})


def test_image_keys_inside_a_dict_use_the_cnn():
    space = gym.spaces.Dict({
        "frame": gym.spaces.Box(0, 255, (1, 10, 10), np.uint8),
        "speed": gym.spaces.Box(-1, 1, (2,), np.float32),
    })  # fmt: skip
    policy = rk.PPO(state_space=space, action_space=gym.spaces.Discrete(3), cnn="minatar", seed=0)
    encoder = policy.model.encoder.encoders["frame"]
    assert type(encoder).__name__ == "ImageKeyEncoder" and encoder.body.cnn == "minatar"
    assert policy.model.pi[0].in_features == 256 + 2
    space.seed(0)
    batch = {"frame": np.stack([space.sample()["frame"] for _ in range(4)]),
             "speed": np.zeros((4, 2), np.float32)}  # fmt: skip
    assert policy.model(policy.observation_tensor(batch)).shape == (4, 3)
    q = q_network(space, gym.spaces.Discrete(3), (16,), cnn="minatar", seed=0)
    assert q({k: torch.as_tensor(v, dtype=torch.float32) for k, v in batch.items()}).shape == (4, 3)


@pytest.mark.parametrize("name", ["C51", "Rainbow"])
def test_an_encoded_distributional_network_saves_and_predicts_its_greedy_actions(name, tmp_path):
    env = rk.GymEnv(DictCartPole(), seed=0)
    agent = _one_liner(name, env)
    rk.run(agent, env, rk.StopAfterNSteps(50))
    rk.save(agent.policy, tmp_path / "policy")
    loaded = rk.load(tmp_path / "policy", env=rk.GymEnv(DictCartPole(), seed=0))
    space = DictCartPole().observation_space
    space.seed(3)
    batch = [space.sample() for _ in range(16)]
    obs = {key: np.stack([o[key] for o in batch]) for key in space.spaces}
    assert np.array_equal(loaded.predict(obs), agent.policy.predict(obs))


def test_a_saved_encoded_iqn_network_loads_and_acts_as_the_trained_one(tmp_path):
    env = rk.GymEnv(DictCartPole(), seed=0)
    agent = _one_liner("IQN", env)
    rk.run(agent, env, rk.StopAfterNSteps(5))
    rk.save(agent.policy, tmp_path / "policy")  # the network with its encoder (rlkit/deploy)
    loaded = rk.load(tmp_path / "policy", env=env)
    env.state_space.seed(0)
    observations = [env.state_space.sample() for _ in range(20)]
    trained = [np.asarray(agent.policy.predict(o)).tolist() for o in observations]
    assert trained == [np.asarray(loaded.predict(o)).tolist() for o in observations]


@pytest.mark.parametrize("network", ["categorical", "iqn"])
def test_image_keys_inside_a_dict_use_the_cnn_in_the_distributional_networks(network):
    from rlkit.approximators.distributional import categorical_network, iqn_network

    space = gym.spaces.Dict({
        "frame": gym.spaces.Box(0, 255, (1, 10, 10), np.uint8),
        "speed": gym.spaces.Box(-1, 1, (2,), np.float32),
    })  # fmt: skip
    make = categorical_network if network == "categorical" else iqn_network
    net = make(space, gym.spaces.Discrete(3), (16,), cnn="minatar", seed=0)
    encoder = (net[0] if network == "categorical" else net.encoder).encoders["frame"]
    assert type(encoder).__name__ == "ImageKeyEncoder" and encoder.body.cnn == "minatar"
    space.seed(0)
    batch = {"frame": torch.as_tensor(np.stack([space.sample()["frame"] for _ in range(4)]),
                                      dtype=torch.float32),
             "speed": torch.zeros(4, 2)}  # fmt: skip
    assert net(batch).shape == (4, 3 * (51 if network == "categorical" else 32))
