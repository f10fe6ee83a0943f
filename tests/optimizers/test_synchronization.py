"""Synchronization as a target network's stepper: a step that does not synchronise only counts
(zero deltas made once, nothing copied), its step count is its state, and Polyak averaging is
TargetNetwork.polyak's arithmetic bit for bit."""

from __future__ import annotations

import copy

import pytest
import torch

import rlkit as rk
from rlkit.optimizers import Synchronization


def _pair(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)


def test_a_step_without_sync_only_counts_and_reports_zero_deltas():
    online, target = _pair()
    before = [p.detach().clone() for p in target.parameters()]
    sync = Synchronization(online, every=5)
    first = sync.step(target, None)
    second = sync.step(target, None)
    assert first.statistics == second.statistics == {"synchronized": 0.0}
    assert all(torch.count_nonzero(d) == 0 for d in first.deltas)
    assert [d.shape for d in first.deltas] == [p.shape for p in target.parameters()]
    assert all(torch.equal(a, b) for a, b in zip(before, target.parameters(), strict=True))
    assert sync.steps == 2


def test_the_step_count_is_the_state_and_sync_resumes_on_time():
    online, target = _pair()
    sync = Synchronization(online, every=3)
    sync.step(target, None)
    sync.step(target, None)
    state = sync.state_dict()
    assert state["own"] == {"steps": 2}
    resumed = Synchronization(online, every=3)
    resumed.load_state_dict(copy.deepcopy(state))
    assert resumed.step(target, None).statistics["synchronized"] == 1.0
    assert torch.equal(target.weight, online.weight)


def test_new_params_or_source_are_checked_again():
    online, target = _pair()
    sync = Synchronization(online, every=2)
    sync.step(target, None)
    bigger = torch.nn.Linear(3, 4)
    with pytest.raises(ValueError, match="same shapes"):
        sync.step(bigger, None)


def test_polyak_is_target_network_polyak_bit_for_bit():
    online, _ = _pair(1)
    target_network = rk.TargetNetwork(online, tau=0.005)
    copy_for_sync = copy.deepcopy(target_network.model)
    sync = Synchronization(online, tau=0.005)
    for _ in range(20):
        with torch.no_grad():
            for p in online.parameters():
                p.add_(torch.randn_like(p))
        target_network.update()
        sync.step(copy_for_sync, None)
    for a, b in zip(target_network.model.parameters(), copy_for_sync.parameters(), strict=True):
        assert torch.equal(a, b)


def test_without_deltas_the_sync_is_the_same_and_its_deltas_cannot_be_read():
    online, target = _pair()
    other = copy.deepcopy(target)
    full = Synchronization(online, tau=0.3).step(target, None)
    bare = Synchronization(online, tau=0.3, keep_deltas=False).step(other, None)
    assert bare.statistics == full.statistics == {"synchronized": 1.0}
    assert len(full.deltas) == 2
    with pytest.raises(RuntimeError, match="keep_deltas=False"):
        _ = bare.deltas
    for a, b in zip(target.parameters(), other.parameters(), strict=True):
        assert torch.equal(a, b)
