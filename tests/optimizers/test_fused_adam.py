"""``fused_adam_step`` (rlkit/optimizers/fused_adam.py): the same numbers as torch's
``Adam(fused=True).step()``, bit for bit, and torch's own step wherever it does not apply."""

from __future__ import annotations

import pytest
import torch
from torch.optim.optimizer import register_optimizer_step_post_hook

import rlkit as rk
from rlkit.optimizers.fused_adam import fused_adam_step


def _net(seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))


def _grads(net: torch.nn.Module, step: int) -> None:
    gen = torch.Generator().manual_seed(step)
    for p in net.parameters():
        p.grad = torch.randn(p.shape, generator=gen) * (10.0 ** (step % 5 - 2))


def _states(optimizer: torch.optim.Optimizer) -> list[torch.Tensor]:
    return [t for s in optimizer.state.values() for t in s.values()]


@pytest.mark.parametrize("kwargs", [
    {"lr": 1e-3}, {"lr": 3e-4, "eps": 1e-5, "betas": (0.8, 0.95)},
    {"lr": 1e-2, "weight_decay": 0.1}, {"lr": 1e-3, "maximize": True},
])  # fmt: skip
def test_the_direct_step_equals_torchs_fused_step_bit_for_bit(kwargs):
    nets = [_net(), _net()]
    adams = [torch.optim.Adam(n.parameters(), fused=True, **kwargs) for n in nets]
    for step in range(60):
        for net in nets:
            _grads(net, step)
        if step == 30:  # a learning-rate change (a schedule) between steps
            for adam in adams:
                adam.param_groups[0]["lr"] = kwargs["lr"] / 3
        adams[0].step()
        direct = fused_adam_step(adams[1])
        assert direct == (step > 0)  # the first step is torch's own: it creates the state
        if not direct:
            adams[1].step()
    for a, b in zip(list(nets[0].parameters()) + _states(adams[0]),
                    list(nets[1].parameters()) + _states(adams[1]), strict=True):  # fmt: skip
        assert torch.equal(a, b)


def _stepped(**kwargs) -> tuple[torch.nn.Module, torch.optim.Optimizer]:
    net = _net()
    cls = kwargs.pop("cls", torch.optim.Adam)
    adam = cls(net.parameters(), **{"lr": 1e-3, "fused": True, **kwargs})
    _grads(net, 0)
    adam.step()
    _grads(net, 1)
    return net, adam


@pytest.mark.parametrize("kwargs", [
    {"fused": False}, {"amsgrad": True}, {"cls": torch.optim.AdamW}, {"lr": torch.tensor(1e-3)},
])  # fmt: skip
def test_other_settings_are_left_to_torchs_step(kwargs):
    net, adam = _stepped(**kwargs)
    before = [p.detach().clone() for p in net.parameters()]
    assert fused_adam_step(adam) is False
    assert all(torch.equal(a, b) for a, b in zip(before, net.parameters(), strict=True))


def test_hooks_a_missing_gradient_and_a_replaced_step_are_left_to_torchs_step():
    net, adam = _stepped()
    handle = adam.register_step_pre_hook(lambda *args: None)
    assert fused_adam_step(adam) is False
    handle.remove()
    handle = register_optimizer_step_post_hook(lambda *args: None)
    try:
        assert fused_adam_step(adam) is False
    finally:
        handle.remove()
    adam.step = lambda *args: None
    assert fused_adam_step(adam) is False
    del adam.step
    next(net.parameters()).grad = None
    assert fused_adam_step(adam) is False


def test_an_lr_scheduler_sees_the_optimizer_stepped():
    net, adam = _stepped()
    scheduler = torch.optim.lr_scheduler.StepLR(adam, step_size=1, gamma=0.5)
    adam._opt_called = False
    assert fused_adam_step(adam) is True
    assert adam._opt_called is True
    scheduler.step()
    assert adam.param_groups[0]["lr"] == pytest.approx(5e-4)


def test_gradient_descent_with_a_fused_adam_equals_torchs_steps():
    nets = [_net(), _net()]
    x, y = torch.randn(32, 5, generator=torch.Generator().manual_seed(1)), torch.zeros(32, 3)
    module = rk.optimizers.ClippedStep(
        rk.optimizers.GradientDescent("adam", lr=1e-2, fused=True), 0.5, on="gradient"
    )
    adam = torch.optim.Adam(nets[1].parameters(), lr=1e-2, fused=True)
    params = list(nets[0].parameters())
    for _ in range(20):
        module.step(params, lambda: ((nets[0](x) - y) ** 2).mean())
        adam.zero_grad()
        ((nets[1](x) - y) ** 2).mean().backward()
        torch.nn.utils.clip_grad_norm_(nets[1].parameters(), 0.5)
        adam.step()
    for a, b in zip(nets[0].parameters(), nets[1].parameters(), strict=True):
        assert torch.equal(a, b)


def test_a_torch_whose_kernels_differ_steps_through_optimizer_step(monkeypatch):
    """The private kernels are checked once per process; where they do not agree with
    ``Adam.step`` (another torch build), nothing is done and the caller steps as usual."""
    from rlkit.optimizers import fused_adam

    w = torch.nn.Parameter(torch.ones(3))
    adam = torch.optim.Adam([w], lr=0.1, fused=True)
    w.grad = torch.ones(3)
    adam.step()
    w.grad = torch.ones(3)
    monkeypatch.setattr(fused_adam, "_AGREE", [False])
    before = w.detach().clone()
    assert fused_adam.fused_adam_step(adam) is False
    assert torch.equal(w.detach(), before) and int(adam.state[w]["step"]) == 1


def test_the_kernels_agree_with_adam_step_on_this_torch():
    from rlkit.optimizers import fused_adam

    assert fused_adam._check_kernels() is True
