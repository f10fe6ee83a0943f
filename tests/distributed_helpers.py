"""Small actor-learner setups for the tests (picklable env functions, tiny learners)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

import rlkit as rk

CARTPOLE = functools.partial(rk.GymEnv, "CartPole-v1")


def impala_agent(n_actors: int = 2, n_steps: int = 16, seed: int = 0) -> rk.Agent:
    policy = rk.IMPALA(CARTPOLE(), seed=seed, n_steps=n_steps, hidden=(16,))
    return rk.Agent(policy, rk.RolloutTrajectory(n_steps, n_actors))


def dqn_agent(seed: int = 0, prioritized: bool = True, train_freq: int = 8) -> rk.Agent:
    import torch

    from rlkit.approximators.neural import q_network

    env = CARTPOLE()
    q = rk.NeuralNetworkApproximator(
        q_network(env.state_space, env.action_space, (32,), seed=np.random.SeedSequence(seed)),
        lambda params: torch.optim.Adam(params, lr=1e-3),
    )
    learner = rk.PrioritizedDQNLearner(
        q, target=rk.TargetNetwork(q, sync_every=50), double=True,
        sampler=rk.BatchSampler(32, seed=seed),
        controller=rk.InsertSampleRatioController(64, train_freq, 2), gamma=0.99,
    ) if prioritized else rk.DQNLearner(
        q, target=rk.TargetNetwork(q, sync_every=50), sampler=rk.BatchSampler(32, seed=seed),
        controller=rk.InsertSampleRatioController(64, train_freq, 2), gamma=0.99,
    )  # fmt: skip
    replay = (
        rk.PrioritizedCircularArraySARTTrajectory(2000, env.state_space, env.action_space)
        if prioritized
        else rk.CircularArraySARTTrajectory(2000, env.state_space, env.action_space)
    )
    return rk.Agent(rk.QBasedPolicy(learner, rk.GreedyExplorer()), replay)


def fingerprint(agent: rk.Agent) -> list[Any]:
    """The learner's parameters as numpy arrays (to compare runs bit for bit)."""
    inner = agent.policy
    model = inner.learner.approximator.model if hasattr(inner, "learner") else inner.model
    return [v.detach().numpy().copy() for v in model.state_dict().values()]
