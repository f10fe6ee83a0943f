"""Shared helpers of the trajectory tests.

The classes are handed to tests through fixtures (``recorder``, ``fails_once``), as in
``tests/core/conftest.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

import rlkit as rk


class Recorder(rk.AbstractHook):
    """What the env shows at PreAct and PostAct, recorded independently of the trajectory."""

    def __init__(self):
        self.state, self.action, self.reward = [], [], []
        self.terminal, self.truncated, self.next_state = [], [], []

    def pre_act(self, policy, env, action):
        self.state.append(np.array(env.state))
        self.action.append(action)

    def post_act(self, policy, env):
        self.reward.append(env.reward)
        self.terminal.append(env.is_terminated)
        self.truncated.append(env.is_truncated)
        self.next_state.append(np.array(env.state))


class FailsOnce(rk.RandomPolicy):
    """A random policy whose ``at``-th action is outside the action space (env.act raises)."""

    def __init__(self, seed, at):
        super().__init__(seed)
        self.calls, self.at = 0, at

    def act(self, env):
        self.calls += 1
        return 7 if self.calls == self.at else super().act(env)


@pytest.fixture
def recorder():
    """The :class:`Recorder` class."""
    return Recorder


@pytest.fixture
def fails_once():
    """The :class:`FailsOnce` class."""
    return FailsOnce
