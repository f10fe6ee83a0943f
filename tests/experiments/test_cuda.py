"""The deep recipes and learners on a CUDA device (skipped where there is none): they train
with every parameter on the GPU, while the policies' generators stay on the CPU."""

from __future__ import annotations

import pytest
import torch

import rlkit as rk

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

SHORT = {
    "PPO_CartPole": {"total_steps": 2048},
    "PPO_Pendulum": {"total_steps": 4096},
    "A2C_CartPole": {"total_steps": 400},
    "VPG_CartPole": {"total_steps": 2048},
    "SAC_Pendulum": {"total_steps": 300, "learning_starts": 100},
    "TD3_Pendulum": {"total_steps": 300, "learning_starts": 100},
    "DDPG_Pendulum": {"total_steps": 300, "learning_starts": 100},
}


def _model(policy):
    return getattr(policy, "model", None) or policy.learner.model


@pytest.mark.parametrize("name", sorted(SHORT))
def test_recipe_trains_on_cuda(name):
    exp = rk.make_experiment(name, seed=0, device="cuda", **SHORT[name])
    before = [p.detach().clone() for p in _model(exp.policy.policy).parameters()]
    rk.run(exp)
    after = list(_model(exp.policy.policy).parameters())
    assert all(p.is_cuda for p in after)
    assert any(not torch.equal(a, b) for a, b in zip(before, after, strict=True))
    exp.env.close()


def test_es_plays_its_fitness_episodes_on_cuda():
    env = rk.GymEnv("CartPole-v1", seed=0)
    agent = rk.ES.agent(env, seed=0, device="cuda", num_samples=2)
    rk.run(agent, env, rk.StopAfterNEpisodes(2))
    assert agent.policy.updates == 2 and rk.statistics(agent.policy)["fitness_steps"] > 0


@pytest.mark.parametrize("dist", ["categorical", "gaussian", "bernoulli"])
def test_a_cpu_generator_draws_the_same_samples_for_cuda_distributions(dist):
    from rlkit.policies.distributions import Bernoulli, Categorical, DiagGaussian

    inputs = torch.randn(5, 4, generator=torch.Generator().manual_seed(1))
    make = {
        "categorical": Categorical,
        "gaussian": lambda x: DiagGaussian(x[:, :2], x[:, 2:]),
        "bernoulli": Bernoulli,
    }[dist]
    draws = [
        make(inputs.to(device)).sample(torch.Generator().manual_seed(7))
        for device in ("cpu", "cuda")
    ]
    assert draws[1].is_cuda
    torch.testing.assert_close(draws[1].cpu(), draws[0])


# the learners of wave 3 (distributional, model-based, actor-learner), a few steps each
NEW = {
    "C51_CartPole": {
        "total_steps": 300,
        "learning_starts": 100,
        "train_freq": 32,
        "gradient_steps": 8,
    },
    "IQN_CartPole": {"total_steps": 300, "learning_starts": 100},
    "Rainbow_CartPole": {
        "total_steps": 300,
        "learning_starts": 100,
        "train_freq": 32,
        "gradient_steps": 8,
    },
    "ApeX_CartPole": {"total_steps": 600, "learning_starts": 100},
    "MBPO_Pendulum": {"total_steps": 400, "learning_starts": 200},
}


def _modules(policy):
    """The torch modules a policy (or its learner) holds as attributes."""
    owners = [policy, getattr(policy, "learner", None)]
    return [
        value
        for owner in owners
        if owner is not None
        for value in vars(owner).values()
        if isinstance(value, torch.nn.Module)
    ]


def _train(name, device):
    exp = rk.make_experiment(name, seed=0, device=device, **NEW[name])
    inner = getattr(exp.policy, "policy", exp.policy)
    modules = _modules(inner)
    assert modules, f"{name}: no torch module found on {inner!r}"
    before = [p.detach().cpu().clone() for m in modules for p in m.parameters()]
    rk.run(exp)
    after = [p for m in modules for p in m.parameters()]
    exp.env.close()
    return before, after


@pytest.mark.parametrize("name", sorted(NEW))
def test_new_learners_train_on_cuda(name):
    before, after = _train(name, "cuda")
    assert all(p.is_cuda for p in after)
    assert any(not torch.equal(a.cpu(), b) for a, b in zip(after, before, strict=True))


# issue 30 and 28: structured observations, action masks, many seeds of DQN
MASKED = {
    "PPO_InvalidActionGrid": {"total_steps": 512},
    "DQN_InvalidActionGrid": {"total_steps": 600, "learning_starts": 100},
}


@pytest.mark.parametrize("name", sorted(MASKED))
def test_masked_recipes_train_on_cuda(name):
    exp = rk.make_experiment(name, seed=0, device="cuda", **MASKED[name])
    inner = exp.policy.policy
    before = [p.detach().cpu().clone() for m in _modules(inner) for p in m.parameters()]
    rk.run(exp)
    after = [p for m in _modules(inner) for p in m.parameters()]
    assert after and all(p.is_cuda for p in after)
    assert any(not torch.equal(a.cpu(), b) for a, b in zip(after, before, strict=True))


@pytest.mark.parametrize("name", ["PPO", "DQN", "SAC"])
def test_dict_observations_train_on_cuda(name):
    from observation_envs import DictCartPole, DictPendulum

    env = rk.GymEnv(DictPendulum() if name == "SAC" else DictCartPole(), seed=0)
    small = {"PPO": {"n_steps": 64, "batch_size": 32}}.get(name, {"learning_starts": 50})
    agent = getattr(rk, name).agent(env, seed=0, device="cuda", **small)
    before = [p.detach().cpu().clone() for m in _modules(agent.policy) for p in m.parameters()]
    rk.run(agent, env, rk.StopAfterNSteps(192))
    after = [p for m in _modules(agent.policy) for p in m.parameters()]
    assert after and all(p.is_cuda for p in after)
    assert any(not torch.equal(a.cpu(), b) for a, b in zip(after, before, strict=True))


def test_many_seeds_of_dqn_train_on_cuda():
    exp = rk.make_experiment(
        "DQN_CartPole", seeds=[0, 1], device="cuda", total_steps=600, learning_starts=100
    )
    rk.run(exp)
    stats = rk.statistics(exp.policy.policy)
    assert {"loss/seed=0", "loss/seed=1"} <= set(stats)
    from rlkit.learners.many_seeds.stacked import StackedModel

    stacked = [m for m in vars(exp.policy.policy).values() if isinstance(m, StackedModel)]
    assert stacked and all(p.is_cuda for m in stacked for p in m.params.values())


def test_recurrent_ppo_trains_on_cuda():
    env = rk.VectorGymEnv("rlkit/CartPoleNoVel-v1", 2, seed=0)
    agent = rk.RecurrentPPO.agent(env, seed=0, device="cuda", n_steps=32, batch_size=32)
    model = agent.policy.model
    before = [p.detach().cpu().clone() for p in model.parameters()]
    rk.run(agent, env, rk.StopAfterNSteps(128))
    after = list(model.parameters())
    assert agent.policy.updates == 2 and all(p.is_cuda for p in after)
    assert any(not torch.equal(a.cpu(), b) for a, b in zip(after, before, strict=True))
