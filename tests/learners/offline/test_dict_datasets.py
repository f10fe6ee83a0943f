"""The offline learners on datasets of Dict observations (rk.Dataset holds them as dicts of
arrays by key): each equals, update for update, the same learner on the flattened dataset with
the same initial weights (the encoder of Box keys has no parameters and concatenates the same
float32 numbers in the same order), with torch.equal."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from observation_envs import DictCartPole, DictPendulum

import rlkit as rk
from rlkit.approximators.neural import q_network

STEPS = 40



def _recorded(env_id: str, steps: int, path) -> rk.Dataset:
    recorder = rk.DatasetRecorder(path / f"{env_id}.npz", seed=0)  # written at the run's end
    rk.run(rk.RandomPolicy(seed=0), rk.GymEnv(env_id, seed=0), rk.StopAfterNSteps(steps), recorder)
    return recorder.dataset()


def _as_dict(ds: rk.Dataset, wrapper, keys: dict[str, slice]) -> rk.Dataset:
    split = lambda obs: {k: obs[:, rows] for k, rows in keys.items()}  # noqa: E731
    return rk.Dataset.from_arrays(
        observations=split(ds.observations), next_observations=split(ds.next_observations),
        actions=ds.actions, rewards=ds.rewards, terminations=ds.terminations,
        truncations=ds.truncations, observation_space=wrapper().observation_space,
        action_space=ds.action_space,
    )  # fmt: skip


@pytest.fixture(scope="module")
def cartpole(tmp_path_factory) -> tuple[rk.Dataset, rk.Dataset]:
    flat = _recorded("CartPole-v1", 400, tmp_path_factory.mktemp("data"))
    return flat, _as_dict(flat, DictCartPole, {"cart": slice(0, 2), "pole": slice(2, 4)})


@pytest.fixture(scope="module")
def pendulum(tmp_path_factory) -> tuple[rk.Dataset, rk.Dataset]:
    flat = _recorded("Pendulum-v1", 400, tmp_path_factory.mktemp("data"))
    return flat, _as_dict(flat, DictPendulum, {"cos_sin": slice(0, 2), "speed": slice(2, 3)})


def _params(module: torch.nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in module.parameters()]


def _assert_equal(a: list[torch.Tensor], b: list[torch.Tensor]) -> None:
    assert len(a) == len(b)
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


def _built(name: str, dataset: rk.Dataset) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    env = rk.OfflineEnv(dataset, batch_size=32, seed=0)
    policy = getattr(rk, name)(env, seed=0, hidden=(32, 32))
    initial = _params(policy.model)
    rk.run(policy, env, rk.StopAfterNSteps(STEPS))
    return initial, _params(policy.model)


def _discrete_cql(dataset: rk.Dataset) -> tuple[list[torch.Tensor], list[torch.Tensor], float]:
    env = rk.OfflineEnv(dataset, batch_size=32, seed=0)
    net = q_network(env.state_space, env.action_space, (32, 32), seed=0)
    q = rk.NeuralNetworkApproximator(net, lambda p: torch.optim.Adam(p, lr=1e-3))
    learner = rk.DiscreteCQL(q, target=rk.TargetNetwork(q, sync_every=10))
    initial = _params(learner.model)
    rk.run(rk.QBasedPolicy(learner, rk.GreedyExplorer()), env, rk.StopAfterNSteps(STEPS))
    assert learner.gradient_steps == STEPS
    return initial, _params(learner.model), learner.loss


@pytest.mark.parametrize("name", ["BC", "DiscreteCQL"])
def test_discrete_offline_learners_on_a_dict_dataset_equal_the_flat_dataset(name, cartpole):
    flat, structured = cartpole
    if name == "DiscreteCQL":
        initial, flat_params, flat_loss = _discrete_cql(flat)
        _, params, loss = _discrete_cql(structured)
        assert loss == flat_loss
    else:
        initial, flat_params = _built(name, flat)
        _, params = _built(name, structured)
    _assert_equal(params, flat_params)
    assert not all(torch.equal(a, b) for a, b in zip(initial, flat_params, strict=True))


@pytest.mark.parametrize("name", ["IQL", "TD3BC", "CQL"])
def test_continuous_offline_learners_on_a_dict_dataset_equal_the_flat_dataset(name, pendulum):
    flat, structured = pendulum
    initial, flat_params = _built(name, flat)
    _, params = _built(name, structured)
    _assert_equal(params, flat_params)
    assert not all(torch.equal(a, b) for a, b in zip(initial, flat_params, strict=True))


def test_td3bc_normalises_each_float_key_as_the_flat_normaliser_does(pendulum):
    flat, structured = pendulum
    policies = []
    for dataset in (flat, structured):
        policy = rk.TD3BC(rk.OfflineEnv(dataset, 32, seed=0), seed=0, hidden=(8,))
        policy.fit_normalizer(dataset)
        policies.append(policy)
    a, b = policies
    assert torch.equal(a.model.obs_mean, b.model.obs_mean)
    assert torch.equal(a.model.obs_std, b.model.obs_std)
    obs = torch.as_tensor(flat.observations[:5])
    normalised = b.model.normalize({"cos_sin": obs[:, :2], "speed": obs[:, 2:]})
    assert torch.equal(torch.cat([normalised["cos_sin"], normalised["speed"]], 1),
                       a.model.normalize(obs))  # fmt: skip
    # the greedy actions of the two on the same observations
    assert np.array_equal(b.predict({"cos_sin": flat.observations[:5, :2],
                                     "speed": flat.observations[:5, 2:]}),
                          a.predict(flat.observations[:5]))  # fmt: skip
    with pytest.raises(TypeError, match=r"TD3BC: the policy's observations are dicts by key"):
        b.fit_normalizer(flat.observations)
    with pytest.raises(ValueError, match=r"TD3BC: the observation's keys \['cos_sin'\] differ"):
        b.fit_normalizer({"cos_sin": flat.observations[:, :2]})


def test_a_learner_for_other_keys_is_refused_when_the_offline_run_starts(cartpole):
    flat, structured = cartpole
    policy = rk.BC(rk.OfflineEnv(flat, 32, seed=0), seed=0, hidden=(8,))
    with pytest.raises((TypeError, ValueError), match=r"BC"):
        rk.run(policy, rk.OfflineEnv(structured, 32, seed=0), rk.StopAfterNSteps(1))


class _WrongKeysData:
    """A user's stand-in dataset (OfflineEnv takes any object with sample, len and the spaces)
    whose samples carry another key than its observation space says."""

    def __init__(self, dataset: rk.Dataset) -> None:
        self.dataset = dataset
        self.observation_space, self.action_space = dataset.observation_space, dataset.action_space

    def __len__(self) -> int:
        return len(self.dataset)

    def sample(self, batch_size, generator):
        sample = self.dataset.sample(batch_size, generator)
        state = sample["state"]
        sample["state"] = {"cart": state["cart"], "pole_angle": state["pole"]}
        return sample


@pytest.mark.parametrize("name", ["BC", "DiscreteCQL"])
def test_a_sample_whose_keys_differ_from_the_space_is_refused_naming_the_keys(name, cartpole):
    env = rk.OfflineEnv(_WrongKeysData(cartpole[1]), batch_size=8, seed=0)
    if name == "BC":
        policy = rk.BC(env, seed=0, hidden=(8,))
    else:
        net = q_network(env.state_space, env.action_space, (8,), seed=0)
        q = rk.NeuralNetworkApproximator(net, lambda p: torch.optim.Adam(p, lr=1e-3))
        policy = rk.QBasedPolicy(rk.DiscreteCQL(q, target=rk.TargetNetwork(q, sync_every=10)),
                                 rk.GreedyExplorer())  # fmt: skip
    with pytest.raises(ValueError, match=r"the sample's state: the observation's keys "
                       r"\['cart', 'pole_angle'\] differ from the Dict space's keys "
                       r"\['cart', 'pole'\]"):  # fmt: skip
        rk.run(policy, env, rk.StopAfterNSteps(1))
