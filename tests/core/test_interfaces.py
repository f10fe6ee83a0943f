"""rlkit/core/interfaces.py: the contracts. Hooks' stage methods and check moments (attach,
after_step_check, after_episode_check) are called at the right points, in order, once per step
or episode; ``+`` composes hooks; the defaults of envs, policies, learners and stop conditions."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk
from rlkit.core.interfaces import CHECK_MOMENTS, step_takes_action
from rlkit.core.stages import STAGES
from rlkit.hooks.basic import ComposedHook


class MomentsHook(rk.AbstractHook):
    """Records every stage and check moment as ``(name, steps so far[, stop])``."""

    def __init__(self, log: list, name: str = "h") -> None:
        self.log, self.name = log, name

    def _add(self, what: str, env: Any, *extra: Any) -> None:
        self.log.append((self.name, what, env.steps, *extra))

    def attach(self, policy, env, stop_condition, hook):
        self.log.append((self.name, "attach", env.steps, type(stop_condition).__name__, hook))

    def pre_experiment(self, policy, env):
        self._add("PreExperiment", env)

    def pre_episode(self, policy, env):
        self._add("PreEpisode", env)

    def pre_act(self, policy, env, action):
        self._add("PreAct", env)

    def post_act(self, policy, env):
        self._add("PostAct", env)

    def post_episode(self, policy, env):
        self._add("PostEpisode", env)

    def post_experiment(self, policy, env):
        self._add("PostExperiment", env)

    def after_step_check(self, policy, env, stop):
        self._add("after_step_check", env, stop)

    def after_episode_check(self, policy, env, stop):
        self._add("after_episode_check", env, stop)


def _step(name: str, t: int, stop: bool = False) -> list[tuple]:
    """What one step of the run records: PreAct and PostAct at step ``t``, then the check."""
    return [(name, "PreAct", t - 1), (name, "PostAct", t), (name, "after_step_check", t, stop)]


def test_moments_in_order_once_per_step_and_episode(countdown):
    log: list = []
    hook = MomentsHook(log)
    rk.run(rk.RandomPolicy(seed=0), countdown(3), rk.StopAfterNSteps(7), hook)
    episode_end = [("h", "PostEpisode", 3), ("h", "after_episode_check", 3, False)]
    expected = (
        [("h", "attach", 0, "StopAfterNSteps", hook), ("h", "PreExperiment", 0)]
        + [("h", "PreEpisode", 0), *_step("h", 1), *_step("h", 2), *_step("h", 3)]
        + episode_end
        + [("h", "PreEpisode", 3), *_step("h", 4), *_step("h", 5), *_step("h", 6)]
        + [("h", "PostEpisode", 6), ("h", "after_episode_check", 6, False)]
        + [("h", "PreEpisode", 6), *_step("h", 7, stop=True)]
        + [("h", "PostExperiment", 7)]
    )
    assert log == expected
    counts = {what: sum(entry[1] == what for entry in log) for _, what, *_ in log}
    assert counts["after_step_check"] == counts["PostAct"] == 7
    assert counts["after_episode_check"] == counts["PostEpisode"] == 2
    assert counts["attach"] == counts["PreExperiment"] == counts["PostExperiment"] == 1


def test_after_episode_check_gets_the_episode_stop_answer(countdown):
    log: list = []
    rk.run(rk.RandomPolicy(seed=0), countdown(2), rk.StopAfterNEpisodes(2), MomentsHook(log))
    checks = [entry for entry in log if entry[1].startswith("after")]
    assert checks == [
        ("h", "after_step_check", 1, False),
        ("h", "after_step_check", 2, False),
        ("h", "after_episode_check", 2, False),
        ("h", "after_step_check", 3, False),
        ("h", "after_step_check", 4, False),
        ("h", "after_episode_check", 4, True),
    ]
    assert log[-1] == ("h", "PostExperiment", 4)


def test_composed_hooks_get_every_moment_in_order(countdown):
    log: list = []
    first, second = MomentsHook(log, "a"), MomentsHook(log, "b")
    composed = first + second
    assert isinstance(composed, ComposedHook)
    rk.run(rk.RandomPolicy(seed=0), countdown(2), rk.StopAfterNSteps(2), composed)
    # attach gets the run's whole hook, the composition, in each part
    assert log[:2] == [("a", "attach", 0, "StopAfterNSteps", composed),
                       ("b", "attach", 0, "StopAfterNSteps", composed)]  # fmt: skip
    names = [(name, what) for name, what, *_ in log[2:]]
    assert names[0::2] == [("a", what) for _, what in names[0::2]]
    assert names[1::2] == [("b", what) for _, what in names[0::2]]  # b right after a, each time
    assert [entry[1:] for entry in log if entry[0] == "a"][1:] == [
        ("PreExperiment", 0), ("PreEpisode", 0),
        ("PreAct", 0), ("PostAct", 1), ("after_step_check", 1, False),
        ("PreAct", 1), ("PostAct", 2), ("after_step_check", 2, True),
        ("PostEpisode", 2), ("after_episode_check", 2, True), ("PostExperiment", 2),
    ]  # fmt: skip


def test_plus_with_a_plain_callable_on_either_side(countdown):
    log: list = []

    def plain(stage, policy, env, action=None):
        log.append(("f", repr(stage)))

    hook = MomentsHook(log)
    for composed, order in ((hook + plain, ["h", "f"]), (plain + hook, ["f", "h"])):
        log.clear()
        rk.run(rk.RandomPolicy(seed=0), countdown(1), rk.StopAfterNSteps(1), composed)
        first_calls = [entry[0] for entry in log if "PreExperiment" in entry]
        assert first_calls == order


def test_plan_holds_only_the_overridden_methods(countdown):
    class OnlyChecks(rk.AbstractHook):
        def after_step_check(self, policy, env, stop):
            pass

    assert list(OnlyChecks().plan(rk.RandomPolicy(), countdown())) == ["after_step_check"]
    assert rk.AbstractHook().plan(rk.RandomPolicy(), countdown()) == {}
    plan = MomentsHook([]).plan(rk.RandomPolicy(), countdown())
    assert list(plan) == [*STAGES, *CHECK_MOMENTS]
    assert all(len(steps) == 1 for steps in plan.values())


def test_a_hook_called_directly_dispatches_on_the_stage(countdown):
    log: list = []
    hook, env = MomentsHook(log), countdown()
    env.reset()
    hook(rk.PRE_ACT_STAGE, None, env, 1)
    hook(rk.POST_ACT_STAGE, None, env)
    assert log == [("h", "PreAct", 0), ("h", "PostAct", 0)]


# ---- envs, policies, learners, stop conditions ----


class Coin(rk.AbstractEnv):
    def __init__(self) -> None:
        self.action_space = gym.spaces.Discrete(2)
        self.acted: list = []

    def reset(self, seed=None):
        self.state, self.needs_reset = 0, False
        self.is_terminated = self.is_truncated = False

    def act(self, action):
        self.acted.append(action)
        self.is_truncated = True


def test_env_defaults():
    env = Coin()
    assert env.needs_reset and env.legal_action_mask is None
    env.reset()
    assert not env.done
    env(1)  # calling an env performs the action
    assert env.acted == [1] and env.done and not env.is_terminated
    env.close()
    with pytest.raises(TypeError):
        rk.AbstractEnv()  # reset and act are abstract


def test_policy_call_acts_or_runs_the_stage_plan():
    class Fixed(rk.AbstractPolicy):
        def act(self, env):
            return 1

    env = Coin()
    env.reset()
    policy = Fixed()
    assert policy(env) == 1
    assert policy.plan(env) == {}
    assert policy(rk.POST_ACT_STAGE, env) is None  # nothing to do at any stage
    assert step_takes_action(rk.PRE_ACT_STAGE)
    assert not any(step_takes_action(s) for s in STAGES if s is not rk.PRE_ACT_STAGE)


def test_a_learner_without_estimates_says_so():
    class Silent(rk.AbstractLearner):
        pass

    with pytest.raises(NotImplementedError, match="Silent does not estimate values"):
        Silent()(Coin())


def test_stop_condition_defaults_and_operators():
    never = rk.AbstractStopCondition()
    assert never.step(None, None) is False and never.episode(None, None) is False
    assert never(None, None) is False
    steps = rk.StopAfterNSteps(1)
    either, both = never | steps, never & steps
    assert type(either).__name__ == "StopAny" and type(both).__name__ == "StopAll"
    assert type(steps | never).__name__ == "StopAny"
    assert either.step(None, None) is True  # StopAfterNSteps(1) stops after one step
    assert both.step(None, None) is False  # StopAll: the abstract condition never stops


def test_abstract_trajectory_and_approximator_need_their_methods():
    with pytest.raises(TypeError):
        rk.AbstractTrajectory()
    with pytest.raises(TypeError):
        rk.AbstractApproximator()

    class Zero(rk.AbstractApproximator):
        def __call__(self, x):
            return np.zeros(2)

    assert Zero()(0).tolist() == [0.0, 0.0]
