"""rk.distributed.ActorLearner on Ray: an actor killed mid-run, an env_fn that fails in an
actor, more actors than the cluster's CPUs, the versions the actors report. (Learning CartPole
with 2 Ray actors takes minutes on 2 cores: benchmarks/distributed.py measures it.)"""

from __future__ import annotations

import functools

import pytest
from distributed_helpers import CARTPOLE, dqn_agent, impala_agent

import rlkit as rk


class KillActorAt(rk.AbstractHook):
    """Kill Ray actor ``index`` of the split after ``step`` steps of the run."""

    def __init__(self, split, index: int, step: int) -> None:
        self.split, self.index, self.step, self.steps = split, index, step, 0

    def post_act(self, policy, env) -> None:
        self.steps += 1
        if self.steps == self.step:
            import ray

            ray.kill(self.split.actors.actors[self.index])


def test_a_killed_actor_stops_the_run_with_a_clear_error(ray_session):
    agent = dqn_agent()
    split = rk.distributed.ActorLearner(agent, CARTPOLE, 2, backend="ray", rollout_length=10)
    hook = rk.TotalRewardPerEpisode() + KillActorAt(split, 1, 25)
    with pytest.raises(rk.distributed.ActorError, match=r"actor 1 of 2 failed while acting; the "
                       r"run stops \(actors are not replaced"):  # fmt: skip
        split.run(rk.StopAfterNSteps(2000), hook)
    assert hook[rk.TotalRewardPerEpisode].rewards  # the episodes so far are kept


# an env_fn of importable parts (a Ray worker cannot import the test modules)
FAILING_ENV = functools.partial(rk.GymEnv, "NoSuchSimulator-v0")


def test_an_env_fn_that_fails_in_a_ray_actor_shows_its_traceback(ray_session):
    with pytest.raises(rk.distributed.ActorError) as info:
        rk.distributed.ActorLearner(impala_agent(), FAILING_ENV, 2, backend="ray")
    message = str(info.value)
    assert "ActorLearner: actor 0 of 2 failed to start" in message
    assert "`NoSuchSimulator` doesn't exist" in message
    assert "distributed/actor.py\", line" in message and "env = env_fn()" in message  # its frames


def test_more_actors_than_the_clusters_cpus_are_refused(ray_session):
    with pytest.raises(ValueError, match=r"n_actors=3 is more than the Ray cluster's 2 CPUs"):
        rk.distributed.ActorLearner(impala_agent(n_actors=3), CARTPOLE, 3, backend="ray")


def test_ray_actors_report_their_versions(ray_session):
    agent = dqn_agent()
    split = rk.distributed.ActorLearner(agent, CARTPOLE, 2, backend="ray", rollout_length=10,
                                        sync_every=8)  # fmt: skip
    split.run(rk.StopAfterNSteps(800), rk.TotalRewardPerEpisode())
    split.close()
    assert split.version() > 0 and 0 < split.max_staleness <= 8
