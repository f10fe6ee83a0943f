"""Shared helpers of the core tests: a tiny deterministic env and recorders of the run loop.

The classes are handed to tests through fixtures (``countdown``, ``recording_policy``,
``recording_hook``), so no test imports this module by name.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest

import rlkit as rk
from rlkit.core.dispatch import PlanStep
from rlkit.core.stages import STAGES


def pytest_configure(config: pytest.Config) -> None:
    """Torch on one thread in every test process, as the recipes and the CLI run: fast for the
    small networks here, immune to a busy machine, and the same floating-point reductions in
    every test. A test that changes the count restores it."""
    try:
        import torch
    except ImportError:  # the core tests run without torch
        return
    torch.set_num_threads(1)


class CountdownEnv(rk.AbstractEnv):
    """Episodes of exactly ``length`` steps. ``state`` is the number of steps taken in the
    episode, the reward of step ``k`` (1-based) is ``k``, so a finished episode returns
    ``length * (length + 1) / 2``. ``end`` says how episodes end: ``"terminate"``,
    ``"truncate"`` or ``"alternate"`` (odd episodes terminate, even ones are truncated).
    ``episode`` counts resets (1 during the first episode)."""

    def __init__(self, length: int = 3, end: str = "terminate") -> None:
        assert end in ("terminate", "truncate", "alternate")
        self.length, self.end = length, end
        self.action_space = gym.spaces.Discrete(2)
        self.state_space = gym.spaces.Discrete(length + 1)
        self.episode = 0
        self.steps = 0  # all steps ever taken

    def __repr__(self) -> str:
        return f"CountdownEnv({self.length})"

    def reset(self, seed: int | None = None) -> None:
        self.episode += 1
        self.state, self.reward = 0, 0.0
        self.is_terminated = self.is_truncated = False
        self.needs_reset = False

    def act(self, action: Any) -> None:
        assert not self.done, "CountdownEnv.act on a done env"
        assert action in (0, 1), f"bad action {action!r}"
        self.state += 1
        self.steps += 1
        self.reward = float(self.state)
        if self.state == self.length:
            terminate = self.end == "terminate" or (self.end == "alternate" and self.episode % 2)
            self.is_terminated, self.is_truncated = bool(terminate), not terminate


class RecordingPolicy(rk.AbstractPolicy):
    """A policy that records every call the run loop makes into ``log``:
    ``("act", episode, state)``, ``("policy", stage, episode, state)`` and, at PreAct,
    ``("policy", "PreAct", episode, state, action)``. ``flags`` gets
    ``(is_terminated, is_truncated)`` at every PostAct. ``act`` asserts the env is not done."""

    def __init__(self, log: list) -> None:
        self.log = log
        self.flags: list[tuple[bool, bool]] = []

    def act(self, env: Any) -> Any:
        assert not env.done, "policy.act called on a done env"
        self.log.append(("act", env.episode, env.state))
        return env.state % 2

    def plan(self, env: Any) -> dict:
        def at(stage: rk.AbstractStage):
            if stage is rk.PRE_ACT_STAGE:
                return lambda action: self.log.append(
                    ("policy", repr(stage), env.episode, env.state, action)
                )
            if stage is rk.POST_ACT_STAGE:

                def post_act() -> None:
                    self.log.append(("policy", repr(stage), env.episode, env.state))
                    self.flags.append((env.is_terminated, env.is_truncated))

                return post_act
            return lambda: self.log.append(("policy", repr(stage), env.episode, env.state))

        return {s: [PlanStep(at(s), f"RecordingPolicy at {s!r}", "conftest")] for s in STAGES}


class RecordingHook(rk.AbstractHook):
    """A hook that records ``("hook", stage, episode, state[, action])`` at every stage."""

    def __init__(self, log: list) -> None:
        self.log = log

    def _record(self, stage: str, env: Any, *action: Any) -> None:
        self.log.append(("hook", stage, getattr(env, "episode", None), env.state, *action))

    def pre_experiment(self, policy: Any, env: Any) -> None:
        self._record("PreExperiment", env)

    def pre_episode(self, policy: Any, env: Any) -> None:
        self._record("PreEpisode", env)

    def pre_act(self, policy: Any, env: Any, action: Any) -> None:
        self._record("PreAct", env, action)

    def post_act(self, policy: Any, env: Any) -> None:
        self._record("PostAct", env)

    def post_episode(self, policy: Any, env: Any) -> None:
        self._record("PostEpisode", env)

    def post_experiment(self, policy: Any, env: Any) -> None:
        self._record("PostExperiment", env)


@pytest.fixture
def countdown():
    """The :class:`CountdownEnv` class."""
    return CountdownEnv


@pytest.fixture
def recording_policy():
    """The :class:`RecordingPolicy` class."""
    return RecordingPolicy


@pytest.fixture
def recording_hook():
    """The :class:`RecordingHook` class."""
    return RecordingHook
