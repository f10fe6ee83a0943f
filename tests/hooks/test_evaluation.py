"""Tests of rlkit/core/evaluation_hook.py: EvaluationHook."""

from __future__ import annotations

import copy
from types import SimpleNamespace

import numpy as np
import pytest

import rlkit as rk
from rlkit.core.seeding import spawn_seeds
from rlkit.hooks.evaluation import EvaluationHook, EvaluationRecord


class Finished(rk.AbstractHook):
    """Returns and total steps of the training run's finished episodes."""

    def __init__(self) -> None:
        self.steps, self.ret, self.returns, self.ends = 0, 0.0, [], []

    def pre_episode(self, policy, env):
        self.ret = 0.0

    def post_act(self, policy, env):
        self.steps += 1
        self.ret += env.reward

    def post_episode(self, policy, env):
        self.returns.append(self.ret)
        self.ends.append(self.steps)


def q_agent(seed: int = 0) -> tuple[rk.Agent, rk.GymEnv]:
    env_seed, explorer_seed = spawn_seeds(seed, 2)
    env = rk.GymEnv("FrozenLake-v1", seed=int(env_seed.generate_state(1)[0]))
    q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.5)
    learner = rk.TDLearner(q, method="qlearning", gamma=0.99)
    explorer = rk.EpsilonGreedyExplorer(0.3, seed=explorer_seed)
    return rk.Agent(rk.QBasedPolicy(learner, explorer), rk.VectorSARTTrajectory()), env


def test_evaluates_at_the_right_env_steps():
    calls = []
    hook = EvaluationHook(rk.GymEnv("CartPole-v1"), every_n_steps=50, n_episodes=2, seed=0)
    original = hook.evaluate

    def spy(policy):
        calls.append(truth.steps)
        return original(policy)

    hook.evaluate = spy
    truth = Finished()
    rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(230),
           truth + hook)  # fmt: skip
    assert calls == [50, 100, 150, 200]
    assert [r.step for r in hook.results] == [50, 100, 150, 200]
    for r in hook.results:
        assert isinstance(r, EvaluationRecord) and r.mean >= 8 and r.std >= 0


def test_evaluates_every_n_episodes_at_the_episode_ends():
    truth = Finished()
    hook = EvaluationHook(rk.GymEnv("CartPole-v1"), every_n_episodes=3, n_episodes=1, seed=0)
    rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNEpisodes(10),
           truth + hook)  # fmt: skip
    assert [r.step for r in hook.results] == [truth.ends[2], truth.ends[5], truth.ends[8]]


def test_frequency_counts_steps_across_runs():
    hook = EvaluationHook(rk.GymEnv("CartPole-v1"), every_n_steps=100, n_episodes=1, seed=0)
    policy, env = rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0)
    for _ in range(5):
        rk.run(policy, env, rk.StopAfterNSteps(45), hook)
    assert [r.step for r in hook.results] == [100, 200]


def training_returns(make, hook_factory=None, episodes: int = 40) -> list[float]:
    policy, env = make()
    truth = Finished()
    hook = truth if hook_factory is None else truth + hook_factory()
    rk.run(policy, env, rk.StopAfterNEpisodes(episodes), hook)
    return truth.returns


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(
            lambda: (rk.RandomPolicy(seed=3), rk.GymEnv("CartPole-v1", seed=3)), id="random"
        ),
        pytest.param(q_agent, id="q-learning-agent"),
    ],
)
def test_does_not_change_the_training_run(make):
    evaluated_env = make()[1]  # same kind of env, a separate object
    without = training_returns(make)
    hook = None

    def factory():
        nonlocal hook
        hook = EvaluationHook(evaluated_env, every_n_steps=37, n_episodes=3, seed=1)
        return hook

    with_hook = training_returns(make, factory)
    assert len(hook.results) > 3
    assert with_hook == without


def test_same_seed_gives_the_same_evaluations():
    def results(seed):
        policy, env = q_agent(0)
        hook = EvaluationHook(q_agent(5)[1], every_n_episodes=10, n_episodes=5, seed=seed)
        rk.run(policy, env, rk.StopAfterNEpisodes(50), hook)
        return hook.results

    assert results(7) == results(7)


def test_keep_best_keeps_a_copy_of_the_best_parameters():
    policy, env = q_agent(0)
    hook = EvaluationHook(
        rk.GymEnv("FrozenLake-v1"), every_n_episodes=20, n_episodes=10, seed=0, keep_best=True
    )
    snapshots = {}
    original = hook.evaluate

    def spy(p):
        record = original(p)
        snapshots[record.step] = copy.deepcopy(policy.policy.state_dict())
        return record

    hook.evaluate = spy
    rk.run(policy, env, rk.StopAfterNEpisodes(190), hook)  # 10 episodes after the last one
    best = max(reversed(hook.results), key=lambda r: r.mean)  # the last of equal means
    assert hook.best_mean == best.mean > 0 and hook.best_step == best.step
    expected = snapshots[best.step]["learner"]
    kept = hook.best_state["learner"]
    assert _equal(kept, expected)
    assert not _equal(kept, policy.policy.state_dict()["learner"])  # a copy, not the live one
    # restoring it gives the best evaluation's parameters back
    policy.policy.load_state_dict(hook.best_state)
    assert _equal(policy.policy.state_dict()["learner"], expected)


def test_restore_best_keeps_the_later_of_equal_evaluations(monkeypatch):
    import rlkit.hooks.evaluation as module

    scores = iter([1.0, 3.0, 3.0, 2.0])  # the evaluations at steps 10, 20, 30, 40
    monkeypatch.setattr(
        module, "evaluate", lambda *args, **kwargs: SimpleNamespace(mean=next(scores), std=0.0)
    )
    policy, env = q_agent(0)
    hook = EvaluationHook(rk.GymEnv("FrozenLake-v1"), every_n_steps=10, restore_best=True)
    snapshots = {}
    hook.post_act = lambda p, e: (
        EvaluationHook.post_act(hook, p, e),
        snapshots.setdefault(hook.total_steps, copy.deepcopy(policy.policy.state_dict())),
    )
    rk.run(policy, env, rk.StopAfterNSteps(40), hook)
    assert [r.mean for r in hook.results] == [1.0, 3.0, 3.0, 2.0]
    assert hook.best_step == hook.restored_step == 30
    assert _equal(policy.policy.state_dict()["learner"], snapshots[30]["learner"])


def test_restore_best_without_an_evaluation_leaves_the_policy_alone():
    policy, env = q_agent(0)
    hook = EvaluationHook(rk.GymEnv("FrozenLake-v1"), every_n_steps=10, restore_best=True)
    rk.run(policy, env, rk.StopAfterNSteps(5), hook)
    assert hook.restored_step is None and hook.best_state is None


def _equal(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b


def test_keep_best_needs_a_policy_with_state_dict():
    class Plain(rk.AbstractPolicy):
        def act(self, env):
            return 0

    hook = EvaluationHook(rk.GymEnv("CartPole-v1"), every_n_steps=10, keep_best=True)
    with pytest.raises(TypeError, match="EvaluationHook: keep_best=True needs a policy"):
        rk.run(Plain(), rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(5), hook)


def test_state_dict_round_trip_continues_identically():
    def fresh():
        return EvaluationHook(
            rk.GymEnv("FrozenLake-v1"), every_n_episodes=15, n_episodes=4, seed=2, keep_best=True
        )

    policy, env = q_agent(1)
    hook = fresh()
    rk.run(policy, env, rk.StopAfterNEpisodes(40), hook)
    state = copy.deepcopy(hook.state_dict())
    expected_next = hook.evaluate(policy)

    restored = fresh()
    restored.load_state_dict(state)
    assert restored.results == hook.results[:-1]
    assert _equal(restored.state_dict(), state)
    assert restored.evaluate(policy) == expected_next  # same generator position


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, "exactly one of every_n_steps or every_n_episodes must be given"),
        ({"every_n_steps": 5, "every_n_episodes": 5}, "exactly one of every_n_steps or every_n_ep"),
        ({"every_n_steps": 0}, "every_n_steps must be a positive integer or None, got 0"),
        ({"every_n_episodes": 2.5}, "every_n_episodes must be a positive integer"),
        ({"every_n_steps": 5, "n_episodes": 0}, "n_episodes must be a positive integer"),
    ],
)
def test_bad_arguments_are_rejected(kwargs, match):
    with pytest.raises(ValueError, match=f"EvaluationHook: {match}"):
        EvaluationHook(rk.GymEnv("CartPole-v1"), **kwargs)


def test_env_must_be_an_rlkit_env_and_not_the_training_env():
    with pytest.raises(TypeError, match="EvaluationHook: env must be an rk.AbstractEnv"):
        EvaluationHook("CartPole-v1", every_n_steps=5)
    env = rk.GymEnv("CartPole-v1", seed=0)
    hook = EvaluationHook(env, every_n_steps=5)
    with pytest.raises(ValueError, match="is the training env"):
        rk.run(rk.RandomPolicy(seed=0), env, rk.StopAfterNSteps(10), hook)
