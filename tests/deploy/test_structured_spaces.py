"""rk.save / rk.load of policies on Dict and Tuple observation spaces (rlkit/deploy/spaces.py):
the spaces round-trip as JSON (nested, key order kept), a loaded PPO/A2C/DQN/SAC/TD3 gives the
trained policy's actions on the same observations (and a loaded SAC/TD3 acts on a Dict env),
an env whose Dict keys differ is refused naming both spaces, and rk.export refuses such a
policy with a clear message."""

from __future__ import annotations

from collections import OrderedDict

import gymnasium as gym
import pytest
import torch

import rlkit as rk
from rlkit.deploy.errors import ArtifactError
from rlkit.deploy.spaces import space_from_json, space_to_json

BOX = gym.spaces.Box(-1.0, 1.0, (3,))
SPACES = {
    "tuple": gym.spaces.Tuple((BOX, gym.spaces.Discrete(4))),
    "dict": gym.spaces.Dict({"pos": BOX, "k": gym.spaces.Discrete(4),
                             "bits": gym.spaces.MultiBinary(3)}),
    "nested": gym.spaces.Tuple((gym.spaces.Dict({"a": BOX, "m": gym.spaces.MultiDiscrete([2, 3])}),
                                gym.spaces.Discrete(2))),
}  # fmt: skip


class StructuredEnv(gym.Env):
    """Random observations of ``space``; reward 1 for action 1 when the first feature is > 0."""

    action_space = gym.spaces.Discrete(2)

    def __init__(self, space):
        self.observation_space = space
        self.t = 0

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.observation_space.seed(int(self.np_random.integers(2**31)))
        self.t = 0
        return self.observation_space.sample(), {}

    def step(self, action):
        self.t += 1
        return self.observation_space.sample(), float(action), False, self.t >= 20, {}


def sample(space, n=200, seed=1):
    space.seed(seed)
    return [space.sample() for _ in range(n)]


@pytest.mark.parametrize("name", sorted(SPACES))
def test_spaces_round_trip_with_their_key_order(name):
    space = SPACES[name]
    back = space_from_json(space_to_json(space))
    assert back == space and repr(back) == repr(space)
    unsorted = gym.spaces.Dict(OrderedDict([("z", BOX), ("a", gym.spaces.Discrete(2))]))
    assert list(space_from_json(space_to_json(unsorted)).spaces) == ["z", "a"]


def test_unstorable_spaces_and_bad_descriptions_are_refused_naming_them():
    with pytest.raises(TypeError, match=r"rk.save \(key 'name'\): cannot store the space Text"):
        space_to_json(gym.spaces.Dict({"name": gym.spaces.Text(5)}))
    with pytest.raises(ArtifactError, match="malformed space description"):
        space_from_json({"type": "Dict", "spaces": [["a"]]})
    with pytest.raises(ArtifactError, match="repeats a key"):
        space_from_json({"type": "Dict", "spaces": [["a", space_to_json(BOX)]] * 2})
    with pytest.raises(ArtifactError, match="key must be a string, got 3"):
        space_from_json({"type": "Dict", "spaces": [[3, space_to_json(BOX)]]})


@pytest.mark.parametrize("name", sorted(SPACES))
@pytest.mark.parametrize("algorithm", ["PPO", "A2C"])
def test_loaded_policy_gives_the_trained_actions(name, algorithm, tmp_path):
    env = rk.GymEnv(StructuredEnv(SPACES[name]), seed=0)
    agent = getattr(rk, algorithm).agent(env, seed=0, n_steps=64)
    rk.run(agent, env, rk.StopAfterNSteps(128))
    path = tmp_path / "p.rlkit"
    rk.save(agent, path)
    loaded = rk.load(path, env=env)
    assert loaded.state_space == env.state_space
    observations = sample(env.state_space)
    trained = [agent.predict(o).item() for o in observations]
    assert trained == [loaded.predict(o).item() for o in observations]
    assert len(set(trained)) == 2  # the observations matter to the policy
    stochastic = [agent.predict(o, deterministic=False).item() for o in observations]
    assert stochastic == [loaded.predict(o, deterministic=False).item() for o in observations]


@pytest.mark.parametrize("name", ["dict", "tuple"])
def test_loaded_dqn_gives_the_trained_q_values(name, tmp_path):
    env = rk.GymEnv(StructuredEnv(SPACES[name]), seed=0)
    agent = rk.DQN.agent(env, seed=0, learning_starts=16)
    rk.run(agent, env, rk.StopAfterNSteps(40))
    path = tmp_path / "q.rlkit"
    rk.save(agent, path)
    loaded = rk.load(path, env=env)
    observations = sample(env.state_space, 50)
    assert [agent.predict(o).item() for o in observations] == [
        loaded.predict(o).item() for o in observations
    ]
    trained = agent.policy.learner.approximator.model.state_dict()
    saved = loaded.learner.model.state_dict()
    assert trained.keys() == saved.keys()
    assert all(torch.equal(trained[k], saved[k]) for k in trained)


def test_an_env_whose_dict_keys_differ_is_refused_and_the_file_is_kept(tmp_path):
    env = rk.GymEnv(StructuredEnv(SPACES["dict"]), seed=0)
    path = tmp_path / "p.rlkit"
    rk.save(rk.PPO(env, seed=0), path)
    before = path.read_bytes()
    other = gym.spaces.Dict({"pos": BOX, "key": gym.spaces.Discrete(4),
                             "bits": gym.spaces.MultiBinary(3)})  # fmt: skip
    with pytest.raises(ValueError, match=r"saved for observations Dict\(.*'k': Discrete\(4\)"):
        rk.load(path, env=rk.GymEnv(StructuredEnv(other)))
    assert path.read_bytes() == before


def test_export_refuses_structured_observations(tmp_path):
    pytest.importorskip("onnx")
    env = rk.GymEnv(StructuredEnv(SPACES["tuple"]), seed=0)
    with pytest.raises(TypeError, match=r"rk.export: the policy's observations are a Tuple space"):
        rk.export(rk.PPO(env, seed=0), tmp_path / "p.onnx")
    assert not (tmp_path / "p.onnx").exists()


@pytest.mark.parametrize("algorithm", ["SAC", "TD3"])
def test_loaded_actor_on_dict_observations_gives_the_trained_actions(algorithm, tmp_path):
    env = rk.GymEnv("rlkit/BitFlipping-v0", seed=0, n_bits=4, continuous=True)
    agent = getattr(rk, algorithm).agent(
        env, seed=0, learning_starts=16, batch_size=16, hidden=(8,)
    )
    rk.run(agent, env, rk.StopAfterNSteps(40))
    path = tmp_path / "actor.rlkit"
    rk.save(agent, path)
    loaded = rk.load(path, env=env)
    observations = sample(env.state_space, 20)
    trained = [agent.predict(o) for o in observations]
    assert all((a == loaded.predict(o)).all() for a, o in zip(trained, observations, strict=True))
    assert len({a.tobytes() for a in trained}) > 1  # the observations matter to the policy
    # acting on the env (a dict observation of one env), greedy as rk.evaluate runs it
    assert rk.evaluate(loaded, rk.GymEnv("rlkit/BitFlipping-v0", n_bits=4, continuous=True), 2)
