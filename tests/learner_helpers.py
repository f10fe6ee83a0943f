"""Helpers shared by the learner tests, imported by name (``from learner_helpers import ...``):
module-level helper functions of the test files use them, which fixtures cannot reach.

pytest puts this folder on ``sys.path`` when it imports a test file here (tests/ has no
``__init__.py``), hence the folder-specific module name.
"""

from __future__ import annotations

import torch

import rlkit as rk


class EpisodeReturns(rk.AbstractHook):
    """The sum of the rewards of every finished episode."""

    def __init__(self) -> None:
        self.returns: list[float] = []
        self._total = 0.0

    def post_act(self, policy, env) -> None:
        self._total += env.reward

    def post_episode(self, policy, env) -> None:
        self.returns.append(self._total)
        self._total = 0.0


class Scripted(rk.AbstractPolicy):
    """Plays a fixed list of actions."""

    def __init__(self, actions) -> None:
        self.actions = list(actions)
        self.i = 0

    def act(self, env):
        action = self.actions[self.i]
        self.i += 1
        return action


def walk(n_states: int = 5, rewards=(0.0, 1.0), seed: int = 0, **kwargs) -> rk.GymEnv:
    return rk.GymEnv(
        "rlkit/RandomWalk1D-v0", seed=seed, n_states=n_states, rewards=rewards, **kwargs
    )


def assert_checkpoint_round_trip(make) -> None:
    """A learner restored from another one's ``state_dict`` learns identically afterwards.

    ``make(seed=...)`` returns ``(agent, env, learner)``; the learner is a neural one.
    """
    agent, env, learner = make()
    rk.run(agent, env, rk.StopAfterNSteps(40))
    state = learner.state_dict()
    for _ in range(10):
        learner.learn(agent.trajectory)
    _, _, other = make(seed=1)
    other.load_state_dict(state)
    for _ in range(10):
        other.learn(agent.trajectory)
    assert all(
        torch.equal(a, b)
        for a, b in zip(learner.model.parameters(), other.model.parameters(), strict=True)
    )
