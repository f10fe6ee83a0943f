"""Every-N hooks (``rlkit.hooks.every_n``): DoEveryNSteps, DoEveryNEpisodes, DoOnExit."""

from __future__ import annotations

import copy
import pickle

import pytest

import rlkit as rk


def run(hook, env, stop, policy=None):
    policy = policy if policy is not None else rk.RandomPolicy(seed=0)
    return rk.run(policy, env, stop, hook)


def _nothing(t, policy, env):
    return None


# ---- callbacks ----


def test_do_every_n_steps_counts_steps(countdown):
    seen = []
    hook = rk.DoEveryNSteps(lambda t, policy, env: seen.append((t, env.episode, env.state)), n=2)
    env = countdown(3)
    run(hook, env, rk.StopAfterNSteps(7))
    assert seen == [(2, 1, 2), (4, 2, 1), (6, 2, 3)]
    run(hook, env, rk.StopAfterNSteps(2))  # counts continue across runs
    assert seen[-1] == (8, 3, 2) and hook.t == 9


def test_do_every_n_steps_passes_policy_and_env(countdown):
    policy, env, seen = rk.RandomPolicy(seed=1), countdown(2), []
    run(rk.DoEveryNSteps(lambda t, p, e: seen.append((p, e))), env, rk.StopAfterNSteps(3), policy)
    assert seen == [(policy, env)] * 3


def test_do_every_n_episodes_after_finished_episodes(countdown):
    seen = []
    hook = rk.DoEveryNEpisodes(lambda t, policy, env: seen.append((t, env.episode, env.done)), n=2)
    run(hook, countdown(2), rk.StopAfterNSteps(11))  # 5 finished episodes, a 6th unfinished
    assert seen == [(2, 2, True), (4, 4, True)]
    assert hook.t == 5


def test_do_every_n_episodes_at_pre_episode(countdown):
    seen = []
    hook = rk.DoEveryNEpisodes(
        lambda t, policy, env: seen.append((t, env.episode, env.state)), 2, rk.PRE_EPISODE_STAGE
    )
    run(hook, countdown(2), rk.StopAfterNSteps(7))  # episodes 1..4 start
    assert seen == [(2, 2, 0), (4, 4, 0)]


def test_do_every_n_episodes_plans_only_its_stage(countdown):
    env, policy = countdown(), rk.RandomPolicy()
    for stage in (rk.PRE_EPISODE_STAGE, rk.POST_EPISODE_STAGE):
        hook = rk.DoEveryNEpisodes(_nothing, stage=stage)
        assert list(hook.plan(policy, env)) == [stage]
        other = rk.POST_EPISODE_STAGE if stage is rk.PRE_EPISODE_STAGE else rk.PRE_EPISODE_STAGE
        hook(other, policy, env)  # calling it at the other stage does nothing
        assert hook.t == 0
        hook(stage, policy, env)
        assert hook.t == 1


@pytest.mark.parametrize("stage", [rk.POST_ACT_STAGE, rk.PRE_EXPERIMENT_STAGE, "PostEpisode"])
def test_do_every_n_episodes_rejects_other_stages(stage):
    with pytest.raises(ValueError, match="DoEveryNEpisodes: stage must be"):
        rk.DoEveryNEpisodes(_nothing, stage=stage)


def test_do_on_exit(countdown):
    seen = []
    policy, env = rk.RandomPolicy(seed=0), countdown(2)
    run(rk.DoOnExit(lambda p, e: seen.append((p, e, e.steps))), env, rk.StopAfterNSteps(3), policy)
    assert seen == [(policy, env, 3)]


@pytest.mark.parametrize(
    "make",
    [
        lambda f: rk.DoEveryNSteps(f),
        lambda f: rk.DoEveryNEpisodes(f),
        lambda f: rk.DoOnExit(f),
    ],
)
def test_callbacks_reject_non_callables(make):
    with pytest.raises(TypeError, match="f must be callable as f\\(.*got int: 3"):
        make(3)


@pytest.mark.parametrize("cls", [rk.DoEveryNSteps, rk.DoEveryNEpisodes])
@pytest.mark.parametrize("n", [0, -1, 1.5, True, None])
def test_callbacks_reject_bad_n(cls, n):
    with pytest.raises(ValueError, match=f"{cls.__name__}: n must be a positive integer"):
        cls(_nothing, n=n)


def test_do_every_n_episodes_survives_pickling_and_deepcopy(countdown):
    hook = rk.DoEveryNEpisodes(_nothing, n=2, stage=rk.PRE_EPISODE_STAGE)
    for clone in (copy.deepcopy(hook), pickle.loads(pickle.dumps(hook))):
        assert clone.stage is rk.PRE_EPISODE_STAGE
        assert list(clone.plan(rk.RandomPolicy(), countdown())) == [rk.PRE_EPISODE_STAGE]
        clone(rk.PRE_EPISODE_STAGE, None, None)
        assert (clone.t, hook.t) == (1, 0)  # the clone's stage method is bound to the clone
