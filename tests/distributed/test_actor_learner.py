"""rk.distributed.ActorLearner on the local backend: lock-step runs identical for a seed, the
versions the actors report, Ape-X's epsilons and priorities, checkpoint and resume, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from distributed_helpers import CARTPOLE, dqn_agent, fingerprint, impala_agent

import rlkit as rk
from rlkit.distributed.actor import Actor
from rlkit.hooks.checkpoint import CheckpointHook


def run_impala(steps: int = 320, **kwargs) -> tuple:
    agent = impala_agent()
    al = rk.distributed.ActorLearner(agent, CARTPOLE, 2, seed=3, **kwargs)
    hook = al.run(rk.StopAfterNSteps(steps), rk.TotalRewardPerEpisode())
    return agent, al, hook


def run_apex(steps: int = 600, **kwargs) -> tuple:
    agent = dqn_agent()
    al = rk.distributed.ActorLearner(agent, CARTPOLE, 3, seed=3, rollout_length=10, **kwargs)
    hook = al.run(rk.StopAfterNSteps(steps), rk.TotalRewardPerEpisode())
    return agent, al, hook


@pytest.mark.parametrize("run", [run_impala, run_apex])
def test_local_lock_step_runs_are_identical_for_a_seed(run):
    a_agent, a_al, a_hook = run()
    b_agent, b_al, b_hook = run()
    assert a_hook.rewards == b_hook.rewards and len(a_hook.rewards) >= 5
    for x, y in zip(fingerprint(a_agent), fingerprint(b_agent), strict=True):
        np.testing.assert_array_equal(x, y)
    assert a_al.version() == b_al.version() > 0


def test_another_seed_gives_other_actors_episodes():
    agent = impala_agent()
    al = rk.distributed.ActorLearner(agent, CARTPOLE, 2, seed=4)
    other = al.run(rk.StopAfterNSteps(320), rk.TotalRewardPerEpisode())
    assert other.rewards != run_impala()[2].rewards


def test_every_actors_episodes_are_reported_and_steps_count_transitions():
    agent, al, hook = run_impala(steps=320)
    assert al.rounds * al.rollout_length * 2 >= 320
    # every transition of every actor is recorded: returns sum to the finished episodes' steps
    assert sum(hook.rewards) + hook.current.sum() == 320


@pytest.mark.parametrize("sync_every", [1, 4, 16])
def test_weights_actors_use_are_never_older_than_sync_every(sync_every):
    agent, al, _ = run_apex(steps=900, sync_every=sync_every)
    assert 0 < al.version()
    assert al.max_staleness <= sync_every
    if sync_every == 1:
        assert al.max_staleness == 0
    if sync_every == 16:  # fewer updates a round: the actors act with older weights, in bounds
        assert al.max_staleness > 0
    assert al.max_policy_lag >= al.max_staleness  # the learner learns while the actors act


def test_an_actor_that_keeps_old_weights_is_caught(monkeypatch):
    monkeypatch.setattr(Actor, "set_weights", lambda self, weights, version: None)
    with pytest.raises(RuntimeError, match=r"actor 0 acted with weights of version 0"):
        run_apex(steps=900, sync_every=4)


def test_apex_actors_explore_with_their_own_epsilons():
    agent = dqn_agent()
    al = rk.distributed.ActorLearner(agent, CARTPOLE, 3, seed=0)
    epsilons = [actor.policy.explorer.epsilon_at(0) for actor in al.actors.actors]
    assert epsilons == pytest.approx([0.4, 0.4**4.5, 0.4**8])
    assert rk.distributed.apex_epsilons(4, 0.5, 3.0)[3] == pytest.approx(0.5**4)


def test_a_prioritized_replay_gets_the_actors_priorities():
    agent, al, _ = run_apex(steps=30, sync_every=1)  # before any gradient step
    replay = agent.trajectory
    n = len(replay)
    priorities = replay.tree[np.arange(n)] ** (1 / replay.alpha) - replay.epsilon
    assert n == 30 and len(np.unique(np.round(priorities, 6))) > 20  # not all the max priority


def test_on_policy_rollouts_hold_the_behaviour_log_probs():
    agent, al, _ = run_impala(steps=32 * 2 - 2)  # the second rollout is not full yet
    assert agent.policy.updates == 1
    stored = agent.trajectory.batch()["log_prob"]
    assert stored.shape == (15, 2) and np.all(stored < 0)


def test_checkpoint_and_resume_of_an_actor_learner_run(tmp_path):
    full_agent, _, full = run_apex(steps=600)

    agent = dqn_agent()
    al = rk.distributed.ActorLearner(agent, CARTPOLE, 3, seed=3, rollout_length=10)
    al.run(rk.StopAfterNSteps(300), rk.TotalRewardPerEpisode() + CheckpointHook(tmp_path,
           every_n_steps=150))  # fmt: skip
    agent = dqn_agent()  # a fresh process would build the same objects
    al = rk.distributed.ActorLearner(agent, CARTPOLE, 3, seed=3, rollout_length=10)
    resumed = rk.TotalRewardPerEpisode() + CheckpointHook(tmp_path, every_n_steps=150)
    al.run(rk.StopAfterNSteps(600), resumed, resume_from=tmp_path)
    assert resumed[0].rewards == full.rewards and len(full.rewards) > 10
    for x, y in zip(fingerprint(agent), fingerprint(full_agent), strict=True):
        np.testing.assert_array_equal(x, y)


# ---- bad input ----
def test_n_actors_must_be_positive():
    with pytest.raises(ValueError, match="ActorLearner: n_actors must be a positive integer.*0"):
        rk.distributed.ActorLearner(impala_agent(), CARTPOLE, 0)


def test_rollout_columns_must_match_the_actors():
    with pytest.raises(ValueError, match="n_envs=2; with n_actors=3 it needs n_envs=3"):
        rk.distributed.ActorLearner(impala_agent(n_actors=2), CARTPOLE, 3)


def test_a_policy_that_is_not_an_agent_is_refused():
    with pytest.raises(TypeError, match="policy must be an rk.Agent"):
        rk.distributed.ActorLearner(rk.RandomPolicy(), CARTPOLE, 1)


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match=r"backend must be one of \('local', 'ray'\), got 'mpi'"):
        rk.distributed.ActorLearner(impala_agent(), CARTPOLE, 2, backend="mpi")


def failing_env():
    raise OSError("no such simulator: /opt/sim")


def test_an_env_fn_that_fails_in_an_actor_names_the_actor_and_its_error():
    with pytest.raises(rk.distributed.ActorError, match="actor 0 of 2 failed to start: OSError: "
                       "no such simulator") as info:  # fmt: skip
        rk.distributed.ActorLearner(impala_agent(), failing_env, 2)
    assert isinstance(info.value.__cause__, OSError)  # its traceback


def test_env_fn_must_return_an_rlkit_env():
    with pytest.raises(rk.distributed.ActorError, match="env_fn.. must return an rk.AbstractEnv"):
        rk.distributed.ActorLearner(impala_agent(), lambda: "CartPole-v1", 2)


def test_running_another_policy_on_the_split_is_refused():
    al = rk.distributed.ActorLearner(impala_agent(), CARTPOLE, 2)
    with pytest.raises(TypeError, match="feeds the learner it was made with"):
        rk.run(impala_agent(), al, rk.StopAfterNSteps(10))


def test_the_scale_out_page_example_runs():
    """docs/how-to/scale-out.md's example, on the local backend and a short budget."""
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "scale-out.md"
    (block,) = re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)
    assert 'backend="ray"' in block and "200_000" in block
    block = block.replace('backend="ray"', 'backend="local"').replace("200_000", "256")
    namespace: dict = {}
    exec(compile(block, str(page), "exec"), namespace)
    assert namespace["agent"].policy.updates == 2 and namespace["split"].rounds == 2
