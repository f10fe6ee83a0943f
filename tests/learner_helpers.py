"""Helpers shared by the learner tests, imported by name (``from learner_helpers import ...``):
module-level helper functions of the test files use them, which fixtures cannot reach.

pytest puts this folder on ``sys.path`` when it imports a test file here (tests/ has no
``__init__.py``), hence the folder-specific module name.
"""

from __future__ import annotations

import torch

import rlkit as rk
from rlkit.core.dispatch import update
from rlkit.core.stages import POST_ACT_STAGE
from rlkit.learners.drivers.off_policy import train


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


def post_act(learner, trajectory, env) -> None:
    """What the off-policy driver does at PostAct after one step of ``env``: count it, then the
    gradient steps the learner's controller grants (``update(learner, batch)`` for each)."""
    update(learner, trajectory, env, POST_ACT_STAGE)


def gradient_steps(learner, trajectory, n: int = 1) -> None:
    """``n`` gradient steps of a replay learner as the off-policy driver takes them (batches from
    ``learner.batches``, ``update(learner, batch)``, priorities handed back)."""
    train(learner, trajectory, n)


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
        post_act(learner, agent.trajectory, env)
    _, _, other = make(seed=1)
    other.load_state_dict(state)
    for _ in range(10):
        post_act(other, agent.trajectory, env)
    assert all(
        torch.equal(a, b)
        for a, b in zip(learner.model.parameters(), other.model.parameters(), strict=True)
    )
