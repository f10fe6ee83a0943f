"""Checkpoints save every child and resume bit-exactly (also in the middle of an episode);
SelfPlay's pool, schedule and seats; the greedy form of a multi-agent policy."""

from __future__ import annotations

import numpy as np
import pytest
from multiagent_games import TakeTurns

import rlkit as rk


def _self_play_q(seed=0):
    return rk.make_experiment("SelfPlayQ_TicTacToe", seed, episodes=60, decay_episodes=40)


def test_a_resumed_self_play_run_is_the_uninterrupted_one(tmp_path):
    whole = _self_play_q()
    rk.run(whole.policy, whole.env, rk.StopAfterNSteps(301), whole.hook)

    first = _self_play_q()  # stopped in the middle of an episode ...
    hook = first.hook + rk.CheckpointHook(tmp_path / "ck", every_n_steps=137)
    rk.run(first.policy, first.env, rk.StopAfterNSteps(137), hook)
    assert not first.env.done and first.env.open_steps  # mid-episode, steps open
    resumed = _self_play_q(seed=5)  # ... and resumed into objects built afresh
    hook = resumed.hook + rk.CheckpointHook(tmp_path / "ck", every_n_steps=137)
    rk.run(resumed.policy, resumed.env, rk.StopAfterNSteps(301), hook,
           resume_from=tmp_path / "ck")  # fmt: skip

    def table(experiment):
        return experiment.policy.policy_of("player_1").policy.learner.approximator.table

    np.testing.assert_array_equal(table(resumed), table(whole))
    assert resumed.hook.rewards == whole.hook.rewards
    for agent in whole.env.agents:
        a = whole.policy.policy_of(agent).trajectory
        b = resumed.policy.policy_of(agent).trajectory
        assert a.action == b.action and a.reward == b.reward
    assert (resumed.env.view("player_2").state == whole.env.view("player_2").state)


def test_multi_agent_policy_state_names_its_agents():
    policy = rk.MultiAgentPolicy({"a": rk.RandomPolicy(seed=0), "b": rk.RandomPolicy(seed=1)})
    state = policy.state_dict()
    assert set(state["policies"]) == {"a", "b"}
    other = rk.MultiAgentPolicy({"a": rk.RandomPolicy(seed=0)})
    with pytest.raises(ValueError, match=r"saved agents \['a', 'b'\] differ"):
        other.load_state_dict(state)


def test_self_play_seats_the_learner_in_turn_and_refreshes_its_pool():
    env = rk.PettingZooEnv(TakeTurns())
    learner = rk.Agent(rk.RandomPolicy(seed=0), rk.VectorSARTTrajectory(max_episodes=100))
    policy = rk.SelfPlay(learner, env.agents, pool_size=3, refresh_every=4, seed=0)
    assert len(policy.pool) == 1 and policy.learner_seat == "a"
    seats = []
    for _ in range(10):
        rk.run(policy, env, rk.StopAfterNEpisodes(1))
        seats.append(learner.trajectory.state[-1][1])  # the learner's own index in the obs
    assert seats == [0.0, 1.0] * 5  # a, b, a, b, ...
    assert policy.episodes == 10 and len(policy.pool) == 3  # copies after 4 and 8 episodes
    assert len(learner.trajectory) == 20  # only the learner's seat records: 2 moves a game
    assert all(p is not learner.policy for p in policy.pool)


def test_self_play_state_round_trip_and_bad_arguments():
    env = rk.PettingZooEnv(TakeTurns())
    policy = rk.SelfPlay(rk.RandomPolicy(seed=0), env.agents, refresh_every=2, seed=3)
    rk.run(policy, env, rk.StopAfterNEpisodes(5))
    state = policy.state_dict()
    other = rk.SelfPlay(rk.RandomPolicy(seed=9), env.agents, refresh_every=2, seed=4)
    other.load_state_dict(state)
    assert other.episodes == 5 and len(other.pool) == len(policy.pool)
    assert other.rng.integers(1000) == policy.rng.integers(1000)
    with pytest.raises(ValueError, match="two or more distinct agents"):
        rk.SelfPlay(rk.RandomPolicy(), ["a"])
    with pytest.raises(ValueError, match="refresh_every"):
        rk.SelfPlay(rk.RandomPolicy(), ["a", "b"], refresh_every=0)
    with pytest.raises(rk.UnknownAgentError, match="no seat for agent 'c'"):
        policy.policy_of("c")


def test_the_greedy_form_keeps_sharing():
    q = _self_play_q().policy
    greedy = rk.greedy(q)
    assert isinstance(greedy, rk.MultiAgentPolicy)
    assert greedy.policy_of("player_1") is greedy.policy_of("player_2")
    assert type(greedy.policy_of("player_1").explorer).__name__ == "GreedyExplorer"


def test_a_parallel_run_resumes_from_the_middle_of_an_episode(tmp_path):
    from multiagent_games import LeaveEarly

    def make():
        env = rk.PettingZooParallelEnv(LeaveEarly(), seed=0)
        agents = {a: rk.Agent(rk.RandomPolicy(seed=i), rk.VectorSARTTrajectory(max_episodes=9))
                  for i, a in enumerate(env.agents)}  # fmt: skip
        return rk.MultiAgentPolicy(agents), env, rk.TotalRewardPerEpisode()

    policy, env, whole = make()
    rk.run(policy, env, rk.StopAfterNSteps(11), whole)
    expected = {a: policy.policy_of(a).trajectory.action for a in env.agents}

    policy, env, hook = make()
    rk.run(policy, env, rk.StopAfterNSteps(6), hook + rk.CheckpointHook(tmp_path, every_n_steps=6))
    assert not env.done and env.live_agents == ("x", "y")  # z left, x and y play on
    policy, env, hook = make()
    rk.run(policy, env, rk.StopAfterNSteps(11), hook + rk.CheckpointHook(tmp_path, every_n_steps=6),
           resume_from=tmp_path)  # fmt: skip
    assert hook.rewards == whole.rewards and hook.current == whole.current
    assert {a: policy.policy_of(a).trajectory.action for a in env.agents} == expected


def test_self_play_dqn_pool_copies_stay_frozen_while_the_learner_trains():
    """A pooled copy of a DQN learner acts with its own weights: after training, the first copy
    (taken as built) still gives the untrained network's Q-values, the learner others."""
    from rlkit.experiments.multiagent import connect_four_env

    pytest.importorskip("torch")
    overrides = {"total_steps": 1200, "learning_starts": 100, "buffer_size": 2000}
    trained = rk.make_experiment("SelfPlayDQN_ConnectFour", 0, **overrides)
    fresh = rk.make_experiment("SelfPlayDQN_ConnectFour", 0, **overrides)
    rk.run(trained)
    assert trained.policy.learner.policy.learner.gradient_steps > 0
    assert trained.policy.episodes < 500  # under 5 refreshes: pool[0] is the copy as built
    env = connect_four_env(3)
    env.reset()
    view = env.view("player_0")
    frozen = trained.policy.pool[0].learner(view)
    np.testing.assert_array_equal(frozen, fresh.policy.learner.policy.learner(view))
    assert not np.array_equal(frozen, trained.policy.learner.policy.learner(view))
