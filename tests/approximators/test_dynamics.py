"""rk.EnsembleDynamicsModel: the batched ensemble, its loss against a direct formula, training
with a held-out split and elite selection, sampling, known functions, checkpoints and bad input
(issue 27)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.approximators.dynamics import select_elites
from rlkit.approximators.ensemble import EnsembleLinear, ProbabilisticEnsemble, gaussian_nll


def _spaces():
    env = rk.GymEnv("Pendulum-v1")
    return env.state_space, env.action_space


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    s = rng.normal(size=(n, 3)).astype(np.float32)
    a = rng.uniform(-2, 2, size=(n, 1)).astype(np.float32)
    next_s = s + 0.1 * np.concatenate([a, -a, 2 * a], axis=1) + 0.05 * s
    return {"state": s, "action": a, "reward": -(s**2).sum(1), "next_state": next_s}


def test_ensemble_linear_is_each_member_s_linear_layer():
    layer = EnsembleLinear(3, 4, 2, generator=torch.Generator().manual_seed(0))
    x = torch.randn(3, 5, 4)
    out = layer(x)
    for e in range(3):
        expected = x[e] @ layer.weight[e] + layer.bias[e]
        torch.testing.assert_close(out[e], expected)
    # a selection of members runs only those
    picked = layer(x[:2], torch.tensor([2, 0]))
    torch.testing.assert_close(picked[0], x[0] @ layer.weight[2] + layer.bias[2])
    torch.testing.assert_close(picked[1], x[1] @ layer.weight[0] + layer.bias[0])


def test_gaussian_nll_matches_the_direct_formula():
    g = torch.Generator().manual_seed(1)
    mean, logvar, target = (torch.randn(4, 6, 3, generator=g) for _ in range(3))
    min_logvar, max_logvar = torch.full((3,), -5.0), torch.full((3,), 0.5)
    direct = 0.0
    for e in range(4):
        terms = []
        for b in range(6):
            for d in range(3):
                m, lv, t = mean[e, b, d].item(), logvar[e, b, d].item(), target[e, b, d].item()
                terms.append((m - t) ** 2 * math.exp(-lv) + lv)
        direct += sum(terms) / len(terms)
    direct += 0.01 * (0.5 * 3 - (-5.0) * 3)
    loss = gaussian_nll(mean, logvar, target, min_logvar, max_logvar)
    assert loss.item() == pytest.approx(direct, rel=1e-5)


def test_the_log_variance_stays_within_the_learned_soft_bounds():
    net = ProbabilisticEnsemble(2, 3, 2, (8,), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        net.head.bias += 1e4
        _, high = net(torch.zeros(2, 4, 3))
        net.head.bias -= 2e4
        _, low = net(torch.zeros(2, 4, 3))
    assert torch.all(high <= net.max_logvar + 1e-3)  # soft: within softplus(-10.5)
    assert torch.all(low >= net.min_logvar - 1e-3)


def test_the_model_s_loss_is_the_nll_plus_mbpo_s_weight_decay():
    model = rk.EnsembleDynamicsModel(*_spaces(), ensemble_size=2, n_elites=1, hidden=(4,))
    x, y = torch.randn(2, 5, 4), torch.randn(2, 5, 4)
    net = model.network
    mean, logvar = net(x)
    expected = gaussian_nll(mean, logvar, y, net.min_logvar, net.max_logvar)
    expected = expected + 2.5e-5 * 0.5 * net.hidden[0].weight.pow(2).sum()
    expected = expected + 1e-4 * 0.5 * net.head.weight.pow(2).sum()
    torch.testing.assert_close(model.loss(x, y), expected)


def test_select_elites_takes_the_lowest_held_out_errors():
    assert select_elites([0.5, 0.1, 0.4, 0.2, 0.9], 3) == [1, 2, 3]
    assert select_elites([1.0, 1.0, 0.5], 2) == [0, 2]


def test_fitting_learns_the_dynamics_and_a_broken_member_is_no_elite():
    model = rk.EnsembleDynamicsModel(
        *_spaces(), ensemble_size=4, n_elites=3, hidden=(32, 32), batch_size=32, seed=0
    )
    data = _data()
    before = model((data["state"][:50], data["action"][:50]))[0]
    with torch.no_grad():  # member 2 predicts a change of 1000: never the best
        model.network.head.bias[2] += 1000.0
    stats = model.fit(data)
    assert stats["model_epochs"] >= 1 and len(model.elites) == 3
    assert 2 not in model.elites
    assert model.elites == select_elites(model.holdout_mse, 3)
    after = model((data["state"][:50], data["action"][:50]))[0]
    err_before = np.mean((before - data["next_state"][:50]) ** 2)
    err_after = np.mean((after - data["next_state"][:50]) ** 2)
    assert err_after < 0.2 * err_before


def test_fitting_reads_a_replay_and_the_same_seed_gives_the_same_model():
    env = rk.GymEnv("Pendulum-v1", seed=0)
    replay = rk.CircularArraySARTTrajectory(500, env.state_space, env.action_space)
    data = _data(120)
    for i in range(120):
        replay.append(data["state"][i], data["action"][i], data["reward"][i], False, False,
                      data["next_state"][i])  # fmt: skip
    models = []
    for _ in range(2):
        m = rk.EnsembleDynamicsModel(*_spaces(), ensemble_size=3, n_elites=2, hidden=(8,),
                                     max_epochs=3, seed=5)  # fmt: skip
        m.fit(replay)
        models.append(m)
    for a, b in zip(models[0].network.parameters(), models[1].network.parameters(), strict=True):
        assert torch.equal(a, b)


def test_a_known_reward_is_used_and_not_learned():
    calls = []

    def reward(state, action, next_state):
        calls.append(len(state))
        return -state[..., 0]

    model = rk.EnsembleDynamicsModel(*_spaces(), ensemble_size=2, n_elites=2, hidden=(8,),
                                     reward_fn=reward)  # fmt: skip
    assert model.network.out_features == 3  # the change of state only
    s = torch.tensor([[1.0, 0.0, 0.0], [-2.0, 0.0, 0.0]])
    _, r, done = model.sample(s, torch.zeros(2, 1), torch.Generator().manual_seed(0))
    assert r.tolist() == [-1.0, 2.0] and calls == [2] and done.tolist() == [False, False]


def test_grouped_sampling_steps_each_group_with_its_elite():
    model = rk.EnsembleDynamicsModel(*_spaces(), ensemble_size=3, n_elites=2, hidden=(8,))
    model.elites = [0, 2]
    s, a = torch.randn(2, 4, 3), torch.randn(2, 4, 1)
    g = torch.Generator().manual_seed(0)
    next_s, _, _ = model.sample_grouped(s, a, g)
    mean, logvar = model.network(model._inputs(s, a), torch.tensor([0, 2]))
    noise = torch.randn(mean.shape, generator=torch.Generator().manual_seed(0))
    expected = s + (mean + noise * torch.exp(0.5 * logvar))[..., 1:]
    torch.testing.assert_close(next_s, expected)


def test_selected_members_compute_exactly_the_network_s_forward_on_those_members():
    net = ProbabilisticEnsemble(4, 5, 3, (16, 16), generator=torch.Generator().manual_seed(0))
    members, x = torch.tensor([3, 0, 2]), torch.randn(3, 7, 5)
    with torch.no_grad():
        selected = net.select(members)
        for got, expected in zip(selected(x), net(x, members), strict=True):
            assert torch.equal(got, expected)  # bit for bit: the same kernels
        net.head.bias.add_(1.0)  # a later change of the network is not followed
        assert not torch.equal(net.select(members)(x)[0], selected(x)[0])


def test_grouped_sampling_with_the_elites_gathered_once_is_the_same_step():
    model = rk.EnsembleDynamicsModel(*_spaces(), ensemble_size=3, n_elites=2, hidden=(8,))
    model.elites = [2, 0]
    s, a = torch.randn(2, 4, 3), torch.randn(2, 4, 1)
    slow = model.sample_grouped(s, a, torch.Generator().manual_seed(0))
    fast = model.sample_grouped(
        s, a, torch.Generator().manual_seed(0), elites=model.elite_network()
    )
    assert all(torch.equal(x, y) for x, y in zip(slow, fast, strict=True))


def test_the_state_dict_restores_the_model():
    a = rk.EnsembleDynamicsModel(*_spaces(), ensemble_size=3, n_elites=2, hidden=(8,),
                                 max_epochs=2, seed=1)  # fmt: skip
    a.fit(_data(60))
    b = rk.EnsembleDynamicsModel(*_spaces(), ensemble_size=3, n_elites=2, hidden=(8,), seed=2)
    b.load_state_dict(a.state_dict())
    s, act = _data(5)["state"], _data(5)["action"]
    np.testing.assert_array_equal(a((s, act))[0], b((s, act))[0])
    assert b.elites == a.elites
    other = rk.EnsembleDynamicsModel(*_spaces(), ensemble_size=3, n_elites=2, hidden=(9,))
    with pytest.raises(ValueError, match="does not match this model's"):
        other.load_state_dict(a.state_dict())


# ---- bad input ----


def test_an_ensemble_smaller_than_its_elites_is_refused():
    with pytest.raises(ValueError, match="ensemble_size 3 is below n_elites 5"):
        rk.EnsembleDynamicsModel(*_spaces(), ensemble_size=3, n_elites=5)


@pytest.mark.parametrize("name", ["reward_fn", "termination_fn"])
def test_a_function_of_the_wrong_signature_is_refused(name):
    def two(state, action):
        return state[..., 0]

    with pytest.raises(TypeError, match=rf"{name} two\(state, action\) cannot be called as "
                                        rf"{name}\(state, action, next_state\)"):  # fmt: skip
        rk.EnsembleDynamicsModel(*_spaces(), **{name: two})
    with pytest.raises(TypeError, match=f"{name} must be callable"):
        rk.EnsembleDynamicsModel(*_spaces(), **{name: 3.0})


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"hidden": ()}, "hidden must be a non-empty tuple"),
        ({"holdout_ratio": 1.0}, "holdout_ratio"),
        ({"lr": -1.0}, "lr"),
        ({"weight_decay": [1e-4]}, "weight_decay must be None or one number per layer"),
        ({"max_epochs": 0}, "max_epochs"),
    ],
)
def test_bad_settings_are_refused(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        rk.EnsembleDynamicsModel(*_spaces(), **kwargs)


def test_a_discrete_space_is_refused():
    env = rk.GymEnv("CartPole-v1")
    with pytest.raises(TypeError, match="action_space must be a flat gymnasium Box"):
        rk.EnsembleDynamicsModel(env.state_space, env.action_space)


def test_bad_data_is_refused():
    model = rk.EnsembleDynamicsModel(*_spaces(), hidden=(8,))
    with pytest.raises(KeyError, match="expected the keys state, action, reward, next_state"):
        model.fit({"state": np.zeros((5, 3))})
    with pytest.raises(TypeError, match="CircularArraySARTTrajectory or a mapping"):
        model.fit([1, 2, 3])
