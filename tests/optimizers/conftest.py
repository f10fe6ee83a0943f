"""Helpers for the optimizer-module tests: a small categorical policy network and its KL."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch
from torch.func import functional_call


class SmallPolicy(torch.nn.Module):
    """A 4 -> 8 -> 3 categorical policy network (tanh hidden layer), in float64."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__()
        generator = torch.Generator().manual_seed(seed)
        self.hidden = torch.nn.Linear(4, 8).double()
        self.out = torch.nn.Linear(8, 3).double()
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.randn(p.shape, generator=generator, dtype=torch.float64) * 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(self.out(torch.tanh(self.hidden(x))), dim=-1)


@dataclass
class PolicyProblem:
    """A policy-gradient surrogate loss and the KL from the data-collecting policy, as closures
    over the module's parameters and as functions of a flat parameter vector."""

    policy: SmallPolicy
    states: torch.Tensor
    actions: torch.Tensor
    advantages: torch.Tensor
    old_log_probs: torch.Tensor

    def log_probs_at(self, vector: torch.Tensor | None = None) -> torch.Tensor:
        if vector is None:
            return self.policy(self.states)
        pieces, start = {}, 0
        for name, p in self.policy.named_parameters():
            pieces[name] = vector[start : start + p.numel()].view_as(p)
            start += p.numel()
        return functional_call(self.policy, pieces, (self.states,))

    def loss_at(self, vector: torch.Tensor | None = None) -> torch.Tensor:
        log_probs = self.log_probs_at(vector)
        taken = log_probs.gather(1, self.actions[:, None])[:, 0]
        old = self.old_log_probs.gather(1, self.actions[:, None])[:, 0]
        return -(torch.exp(taken - old) * self.advantages).mean()

    def kl_at(self, vector: torch.Tensor | None = None) -> torch.Tensor:
        old = self.old_log_probs
        return (old.exp() * (old - self.log_probs_at(vector))).sum(-1).mean()

    def fn_loss(self) -> torch.Tensor:
        return self.loss_at()

    def fn_kl_divergence(self) -> torch.Tensor:
        return self.kl_at()


@pytest.fixture
def problem() -> PolicyProblem:
    generator = torch.Generator().manual_seed(1)
    policy = SmallPolicy()
    states = torch.randn(64, 4, generator=generator, dtype=torch.float64)
    actions = torch.randint(0, 3, (64,), generator=generator)
    advantages = torch.randn(64, generator=generator, dtype=torch.float64)
    with torch.no_grad():
        old_log_probs = policy(states)
    return PolicyProblem(policy, states, actions, advantages, old_log_probs)
