"""The turn-based loop on a scripted two-player game: who acts, who is rewarded, rewards that
arrive for an agent that did not act, illegal actions refused by name, and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from multiagent_games import TakeTurns
from pettingzoo.test import api_test

import rlkit as rk


class Scripted(rk.AbstractPolicy):
    """Plays the given actions in order and logs the stages it sees."""

    def __init__(self, actions, log, name):
        self.actions, self.log, self.name = list(actions), log, name

    def act(self, env):
        self.log.append((self.name, "act", float(env.state[0])))
        return self.actions.pop(0)

    def plan(self, env):
        def note(stage):
            return lambda *action: self.log.append((self.name, stage, env.reward, env.done))

        return {
            stage: [rk.core.dispatch.PlanStep(note(stage.name), stage.name, "test")]
            for stage in (rk.PRE_EPISODE_STAGE, rk.POST_ACT_STAGE, rk.POST_EPISODE_STAGE)
        }


def test_the_scripted_game_passes_pettingzoo_api_test():
    api_test(TakeTurns(), num_cycles=10)


def test_who_acts_who_is_rewarded_and_rewards_for_an_agent_that_did_not_act():
    log: list = []
    env = rk.PettingZooEnv(TakeTurns())
    policy = rk.MultiAgentPolicy(
        {"a": Scripted([1, 0], log, "a"), "b": Scripted([0, 1], log, "b")}
    )
    hook = rk.run(policy, env, rk.StopAfterNEpisodes(1), rk.TotalRewardPerEpisode())
    assert log == [
        ("a", "PreEpisode", 0.0, False),
        ("b", "PreEpisode", 0.0, False),
        ("a", "act", 0.0),  # a moves 1: a gets 1, b gets 10
        ("b", "act", 1.0),  # b moves 0: b gets 0, a gets 10
        ("a", "PostAct", 11.0, False),  # a's first step ends at its turn: 1 + 10
        ("a", "act", 2.0),  # a moves 0: a 0, b 10
        ("b", "PostAct", 10.0, False),  # b's first step: its 0 and a's 10
        ("b", "act", 3.0),  # b moves 1: the last move; a gets 10 without acting
        ("a", "PostAct", 10.0, True),  # the episode's end closes both open steps
        ("b", "PostAct", 1.0, True),
        ("a", "PostEpisode", 10.0, True),  # every agent's PostEpisode
        ("b", "PostEpisode", 1.0, True),
    ]
    # the hook sees every step's rewards (b's first 10 came before it ever acted)
    assert hook.rewards == [{"a": 21.0, "b": 21.0}]


def test_recording_agents_get_their_own_transitions():
    env = rk.PettingZooEnv(TakeTurns(moves=6))
    agents = {
        name: rk.Agent(rk.RandomPolicy(seed=i), rk.VectorSARTTrajectory())
        for i, name in enumerate(("a", "b"))
    }
    rk.run(rk.MultiAgentPolicy(agents), env, rk.StopAfterNEpisodes(1))
    a, b = agents["a"].trajectory, agents["b"].trajectory
    assert [float(s[0]) for s in a.state] == [0, 2, 4]  # a acts at moves 0, 2, 4
    assert [float(s[0]) for s in a.next_state] == [2, 4, 6]
    assert [float(s[0]) for s in b.state] == [1, 3, 5]
    assert a.terminal == [False, False, True] and b.terminal == [False, False, True]
    assert a.reward == [float(u + 10) for u in a.action]  # b's move after each of a's
    assert b.reward == [float(u + 10) for u in b.action[:2]] + [float(b.action[2])]


def test_illegal_action_refused_naming_the_agent():
    env = rk.PettingZooEnv(TakeTurns())
    env.reset()
    with pytest.raises(rk.InvalidActionError, match=r"not legal for 'a'.*\[0, 1\]"):
        env.act(2)
    with pytest.raises(rk.InvalidActionError, match="'a'.*action space"):
        env.act(7)
    policy = rk.MultiAgentPolicy({"a": Scripted([2], [], "a"), "b": Scripted([], [], "b")})
    with pytest.raises(rk.InvalidActionError, match="'a'"):
        rk.run(policy, rk.PettingZooEnv(TakeTurns()), rk.StopAfterNEpisodes(1))


def test_an_action_for_an_agent_whose_turn_it_is_not_is_refused():
    env = rk.PettingZooEnv(TakeTurns())
    env.reset()
    with pytest.raises(ValueError, match="it is 'a''s turn, not 'b''s"):
        env.view("b").act(0)
    env.view("a").act(0)  # a's turn: fine
    assert env.current_agent == "b"


def test_a_policy_map_missing_an_agent_is_refused_before_the_first_step():
    env = rk.PettingZooEnv(TakeTurns())
    policy = rk.MultiAgentPolicy({"a": rk.RandomPolicy(seed=0)})
    with pytest.raises(rk.UnknownAgentError, match="no policy for agent 'b'.*\\['a'\\]"):
        rk.run(policy, env, rk.StopAfterNEpisodes(1))
    assert env.needs_reset  # nothing ran


def test_a_single_agent_policy_is_refused_naming_multi_agent_policy():
    with pytest.raises(TypeError, match="rk.MultiAgentPolicy"):
        rk.run(rk.RandomPolicy(seed=0), rk.PettingZooEnv(TakeTurns()), rk.StopAfterNSteps(3))


def test_bad_arguments_of_the_adapters_and_policy():
    with pytest.raises(TypeError, match="PettingZooEnv: expected a PettingZoo AEC env"):
        rk.PettingZooEnv(object())
    with pytest.raises(ValueError, match="observation_fn and observation_space go together"):
        rk.PettingZooEnv(TakeTurns(), observation_fn=lambda o: o)
    with pytest.raises(TypeError, match="the policy of agent 'b' must be an rk.AbstractPolicy"):
        rk.MultiAgentPolicy({"a": rk.RandomPolicy(), "b": "random"})
    with pytest.raises(TypeError, match="non-empty dict"):
        rk.MultiAgentPolicy({})
    with pytest.raises(KeyError, match="no agent 'c'"):
        rk.PettingZooEnv(TakeTurns()).view("c")


def test_a_stop_mid_episode_continues_the_open_steps_in_the_next_run():
    log: list = []
    env = rk.PettingZooEnv(TakeTurns())
    policy = rk.MultiAgentPolicy(
        {"a": Scripted([1, 0], log, "a"), "b": Scripted([0, 1], log, "b")}
    )
    rk.run(policy, env, rk.StopAfterNSteps(2))
    assert ("a", "PostAct", 11.0, False) not in log and env.open_steps == ["a", "b"]
    rk.run(policy, env, rk.StopAfterNEpisodes(1))
    assert [e for e in log if e[1] == "PostAct"] == [
        ("a", "PostAct", 11.0, False),
        ("b", "PostAct", 10.0, False),
        ("a", "PostAct", 10.0, True),
        ("b", "PostAct", 1.0, True),
    ]


def test_rewards_per_episode_and_steps_per_episode_by_agent():
    env = rk.PettingZooEnv(TakeTurns())
    policy = rk.MultiAgentPolicy.shared(rk.RandomPolicy(seed=0), env.agents)
    hook = rk.RewardsPerEpisode() + rk.StepsPerEpisode()
    rk.run(policy, env, rk.StopAfterNEpisodes(2), hook)
    assert hook[rk.StepsPerEpisode].steps == [4, 4]
    first = hook[rk.RewardsPerEpisode].rewards[0]
    assert len(first) == 4 and first[0]["b"] == 10.0 and set(first[0]) == {"a", "b"}


def test_tictactoe_masks_and_zero_sum_returns():
    from pettingzoo.classic import tictactoe_v3

    env = rk.PettingZooEnv(tictactoe_v3.env(), seed=0)
    env.reset()
    env.act(4)
    mask = env.view("player_2").legal_action_mask
    assert mask.dtype == bool and not mask[4] and mask.sum() == 8
    policy = rk.MultiAgentPolicy({a: rk.RandomPolicy(seed=i) for i, a in enumerate(env.agents)})
    hook = rk.run(policy, env, rk.StopAfterNEpisodes(30), rk.TotalRewardPerEpisode())
    returns = np.array([[r["player_1"], r["player_2"]] for r in hook.rewards])
    assert (returns.sum(axis=1) == 0).all() and set(returns[:, 0]) <= {-1.0, 0.0, 1.0}


def test_explain_lists_each_agents_calls(capsys):
    env = rk.PettingZooEnv(TakeTurns())
    agents = {name: rk.Agent(rk.RandomPolicy(seed=0), rk.VectorSARTTrajectory())
              for name in ("a", "b")}  # fmt: skip
    rk.explain(rk.MultiAgentPolicy(agents), env)
    out = capsys.readouterr().out
    assert "agent 'a' (Agent):" in out and "agent 'b' (Agent):" in out
    assert "update(VectorSARTTrajectory, RandomPolicy, AgentView, PostActStage)" in out
