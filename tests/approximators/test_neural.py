"""Tests of rlkit/approximators/neural.py: NeuralNetworkApproximator, TargetNetwork, q_network."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from torch import nn

import rlkit as rk
from rlkit.approximators.neural import DuelingHead, clone_tensors, q_network, torch_generator

BOX = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
TWO = gym.spaces.Discrete(2)
cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def sgd(lr: float = 0.1):
    return lambda params: torch.optim.SGD(params, lr=lr)


def small_net(seed: int = 0) -> nn.Module:
    return q_network(BOX, TWO, (8,), seed=seed)


def params_of(module: nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in module.parameters()]


def same(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


# ---- NeuralNetworkApproximator ----


def test_forward_is_the_model():
    net = small_net()
    approx = rk.NeuralNetworkApproximator(net, sgd())
    x = torch.ones(3, 4)
    assert torch.equal(approx(x), net(x))
    assert approx.device == torch.device("cpu")


def test_step_takes_one_gradient_step():
    net = nn.Linear(1, 1, bias=False)
    with torch.no_grad():
        net.weight.fill_(1.0)
    approx = rk.NeuralNetworkApproximator(net, sgd(0.1))
    loss = (approx(torch.tensor([[2.0]])) ** 2).sum()  # d/dw (2w)^2 = 8w = 8
    approx.step(lambda: loss)
    assert net.weight.item() == pytest.approx(1.0 - 0.1 * 8.0)
    assert approx.updates == 1
    assert approx.grad_norm() == pytest.approx(8.0)


def test_gradient_clipping_limits_the_step_and_reports_the_norm_before_clipping():
    net = nn.Linear(1, 1, bias=False)
    with torch.no_grad():
        net.weight.fill_(1.0)
    approx = rk.NeuralNetworkApproximator(net, sgd(0.1), max_grad_norm=0.5)
    approx.step(lambda: (approx(torch.tensor([[2.0]])) ** 2).sum())
    assert net.weight.item() == pytest.approx(1.0 - 0.1 * 0.5)
    assert rk.statistics(approx) == {"lr": pytest.approx(0.1), "grad_norm": pytest.approx(8.0)}


def test_learning_rate_schedule_steps_after_each_update():
    approx = rk.NeuralNetworkApproximator(
        small_net(),
        sgd(1.0),
        lr_scheduler=lambda opt: torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5),
    )
    for _ in range(3):
        approx.step(lambda: approx(torch.ones(2, 4)).sum())
    assert approx.lr == pytest.approx(0.125)


def test_an_optimizer_instance_is_accepted():
    net = small_net()
    approx = rk.NeuralNetworkApproximator(net, torch.optim.Adam(net.parameters(), lr=1e-3))
    approx.step(lambda: approx(torch.ones(2, 4)).sum())
    assert approx.updates == 1


def test_the_module_tree_steps_like_torchs_own_loop_bit_for_bit():
    # the loop the approximator ran before its module tree: zero_grad(set_to_none),
    # backward, torch's clip_grad_norm_, optimizer step, scheduler step
    def make():
        return rk.NeuralNetworkApproximator(
            small_net(3),
            lambda p: torch.optim.Adam(p, lr=1e-2),
            max_grad_norm=0.5,
            lr_scheduler=lambda o: torch.optim.lr_scheduler.ExponentialLR(o, gamma=0.9),
        )

    x = torch.linspace(-1, 1, 12).reshape(3, 4)
    a, b = make(), make()
    assert isinstance(a.module, rk.optimizers.ClippedStep) and a.module.on == "gradient"
    assert a.module.inner.optimizer is a.optimizer and a.module.inner.lr_scheduler is a.lr_scheduler
    for _ in range(5):
        a.step(lambda: a(x).pow(2).sum())
        b.optimizer.zero_grad(set_to_none=True)
        b(x).pow(2).sum().backward()
        norm = nn.utils.clip_grad_norm_(b.parameters, 0.5)
        b.optimizer.step()
        b.lr_scheduler.step()
        assert a.grad_norm() == float(norm)
    assert same(params_of(a.model), params_of(b.model)) and a.lr == b.lr


def test_an_lr_scheduler_instance_is_accepted_and_the_tree_is_described():
    net = small_net()
    optimizer = torch.optim.SGD(net.parameters(), lr=1.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    approx = rk.NeuralNetworkApproximator(net, optimizer, lr_scheduler=scheduler)
    assert approx.module.describe() == (
        "GradientDescent(optimizer='sgd', lr=1.0, keep_deltas=False): computes its own step"
    )
    approx.step(lambda: approx(torch.ones(2, 4)).sum())
    assert approx.lr == pytest.approx(0.5) and approx.module.lr_scheduler is scheduler


def test_bad_arguments_are_rejected_with_clear_messages():
    with pytest.raises(TypeError, match="model must be a torch.nn.Module"):
        rk.NeuralNetworkApproximator("net", sgd())
    with pytest.raises(TypeError, match="optimizer must be"):
        rk.NeuralNetworkApproximator(small_net(), 0.1)
    other = nn.Linear(2, 2)
    with pytest.raises(ValueError, match="model's own parameters"):
        rk.NeuralNetworkApproximator(small_net(), torch.optim.SGD(other.parameters(), lr=0.1))
    with pytest.raises(ValueError, match="max_grad_norm must be a positive finite number"):
        rk.NeuralNetworkApproximator(small_net(), sgd(), max_grad_norm=-1.0)
    with pytest.raises(ValueError, match="device must be"):
        rk.NeuralNetworkApproximator(small_net(), sgd(), device="tpu-of-dreams")


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_cuda_without_a_gpu_is_a_clear_error():
    with pytest.raises(ValueError, match="torch.cuda.is_available"):
        rk.NeuralNetworkApproximator(small_net(), sgd(), device="cuda")


def test_auto_device_falls_back_to_cpu_without_a_gpu():
    approx = rk.NeuralNetworkApproximator(small_net(), sgd(), device="auto")
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert approx.device.type == expected


@cuda
def test_cuda_device_moves_the_model_and_trains():
    approx = rk.NeuralNetworkApproximator(small_net(), sgd(), device="cuda")
    assert next(approx.model.parameters()).is_cuda
    approx.step(lambda: approx(torch.ones(2, 4, device="cuda")).sum())
    target = rk.TargetNetwork(approx, tau=0.5)
    target.update()
    assert next(target.model.parameters()).is_cuda


def test_state_dict_round_trip_continues_bit_identically():
    def make(seed: int):
        return rk.NeuralNetworkApproximator(
            small_net(seed),
            lambda p: torch.optim.Adam(p, lr=1e-2),
            max_grad_norm=1.0,
            lr_scheduler=lambda o: torch.optim.lr_scheduler.ExponentialLR(o, gamma=0.9),
        )

    x = torch.linspace(-1, 1, 12).reshape(3, 4)
    a = make(0)
    for _ in range(3):
        a.step(lambda: a(x).pow(2).sum())
    state = a.state_dict()
    for _ in range(3):
        a.step(lambda: a(x).pow(2).sum())
    b = make(1)
    b.load_state_dict(state)
    for _ in range(3):
        b.step(lambda: b(x).pow(2).sum())
    assert same(params_of(a.model), params_of(b.model))
    assert a.lr == b.lr and a.updates == b.updates == 6
    # the saved state is a snapshot: training after saving did not change it
    c = make(2)
    c.load_state_dict(state)
    assert c.updates == 3


# ---- TargetNetwork ----


@pytest.mark.parametrize("wrap", [False, True], ids=["nn.Module", "approximator"])
def test_hard_sync_every_n_updates(wrap):
    net = nn.Linear(3, 2)
    source = rk.NeuralNetworkApproximator(net, sgd()) if wrap else net
    target = rk.TargetNetwork(source, sync_every=3)
    before = params_of(net)
    assert same(params_of(target.model), before)
    with torch.no_grad():
        net.weight.add_(1.0)
    assert [target.update() for _ in range(2)] == [False, False]
    assert same(params_of(target.model), before)  # not yet
    assert target.update() is True
    assert same(params_of(target.model), params_of(net))
    assert not any(p.requires_grad for p in target.model.parameters())


@pytest.mark.parametrize("wrap", [False, True], ids=["nn.Module", "approximator"])
def test_polyak_averaging(wrap):
    net = nn.Linear(2, 1)
    with torch.no_grad():
        net.weight.fill_(0.0)
        net.bias.fill_(0.0)
    source = rk.NeuralNetworkApproximator(net, sgd()) if wrap else net
    target = rk.TargetNetwork(source, tau=0.25)
    with torch.no_grad():
        net.weight.fill_(4.0)
        net.bias.fill_(-4.0)
    target.update()
    assert torch.allclose(target.model.weight, torch.full((1, 2), 1.0))
    target.update()  # 1 + 0.25 * (4 - 1)
    assert torch.allclose(target.model.weight, torch.full((1, 2), 1.75))
    assert torch.allclose(target.model.bias, torch.tensor([-1.75]))


def test_target_network_copies_buffers():
    net = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    target = rk.TargetNetwork(net, tau=0.5)
    with torch.no_grad():
        net[1].running_mean.fill_(3.0)
    target.update()
    assert torch.equal(target.model[1].running_mean, net[1].running_mean)


def test_target_network_arguments_are_checked():
    with pytest.raises(ValueError, match="exactly one of sync_every"):
        rk.TargetNetwork(nn.Linear(1, 1))
    with pytest.raises(ValueError, match="exactly one of sync_every"):
        rk.TargetNetwork(nn.Linear(1, 1), sync_every=2, tau=0.1)
    with pytest.raises(ValueError, match="sync_every must be a positive integer"):
        rk.TargetNetwork(nn.Linear(1, 1), sync_every=0)
    with pytest.raises(ValueError, match=r"TargetNetwork: tau must be a finite number in \(0, 1\]"):
        rk.TargetNetwork(nn.Linear(1, 1), tau=1.5)
    with pytest.raises(TypeError, match="torch.nn.Module or a NeuralNetworkApproximator"):
        rk.TargetNetwork("net", tau=0.5)


def test_target_network_state_dict_round_trip():
    net = nn.Linear(2, 2)
    target = rk.TargetNetwork(net, sync_every=2)
    with torch.no_grad():
        net.weight.add_(1.0)
    target.update()
    state = target.state_dict()
    other = rk.TargetNetwork(nn.Linear(2, 2), sync_every=2)
    other.load_state_dict(state)
    assert other.updates == 1
    assert same(params_of(other.model), params_of(target.model))


# ---- building networks ----


def test_q_network_is_seeded_locally_and_leaves_global_state_alone():
    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    a, b, c = small_net(5), small_net(5), small_net(6)
    assert torch.equal(torch.random.get_rng_state(), before)
    assert same(params_of(a), params_of(b))
    assert not same(params_of(a), params_of(c))
    seq = np.random.SeedSequence(7)
    assert same(params_of(q_network(BOX, TWO, seed=seq)), params_of(q_network(BOX, TWO, seed=seq)))


def test_q_network_initialisation_matches_torchs_default_distribution():
    net = q_network(gym.spaces.Box(-1, 1, (400,)), TWO, (300,), seed=0)
    w = net[0].weight.detach()
    bound = 1 / np.sqrt(400)  # kaiming_uniform(a=sqrt(5)) on fan_in 400
    assert float(w.abs().max()) <= bound
    assert float(w.abs().max()) > 0.99 * bound


def test_q_network_shapes_dueling_quantiles_and_images():
    assert q_network(BOX, TWO, (8, 8))(torch.zeros(5, 4)).shape == (5, 2)
    assert q_network(BOX, TWO, (8,), dueling=True)(torch.zeros(4)).shape == (2,)
    assert q_network(BOX, TWO, (8,), n_quantiles=7)(torch.zeros(3, 4)).shape == (3, 14)
    image = gym.spaces.Box(0, 255, (3, 5, 5), np.uint8)
    net = q_network(image, gym.spaces.Discrete(4), (8,), cnn="minatar")
    assert net(torch.zeros(3, 5, 5)).shape == (4,)
    assert net(torch.zeros(2, 3, 5, 5)).shape == (2, 4)
    with pytest.raises(ValueError, match=r"uint8 images of shape \(3, 5, 5\).*MLP"):
        q_network(image, gym.spaces.Discrete(4), (8,))  # an MLP on raw pixels
    flat = q_network(gym.spaces.Box(0, 255, (3, 5), np.uint8), gym.spaces.Discrete(4), (8,))
    assert flat(torch.zeros(2, 3, 5)).shape == (2, 4)  # other integer Boxes: flattened
    one_hot = q_network(gym.spaces.Discrete(3), TWO)  # other spaces: their encoder first
    assert one_hot(torch.tensor([2.0])).shape == (1, 2)
    with pytest.raises(TypeError, match="q_network: encoder_for: no encoder for the "
                       "observation space Text"):  # fmt: skip
        q_network(gym.spaces.Text(3), TWO)
    with pytest.raises(TypeError, match="action_space must be gymnasium Discrete"):
        q_network(BOX, gym.spaces.Box(-1, 1, (2,)))


def test_dueling_head_centres_the_advantages():
    head = DuelingHead(3, 4)
    features = torch.randn(6, 3, generator=torch_generator(0))
    q = head(features)
    value = head.value(features)
    assert torch.allclose(q.mean(dim=1, keepdim=True), value, atol=1e-6)


def test_clone_tensors_makes_snapshots():
    t = torch.zeros(2)
    tree = {"a": [t, {"b": t}], "c": 3}
    copy = clone_tensors(tree)
    t.add_(1.0)
    assert torch.equal(copy["a"][0], torch.zeros(2)) and copy["c"] == 3
