"""The simultaneous loop: an agent that leaves early, every child's PostEpisode, unknown agents
refused, parameter sharing with the agent-id feature."""

from __future__ import annotations

import numpy as np
import pytest
from multiagent_games import LeaveEarly
from pettingzoo.test import parallel_api_test

import rlkit as rk


def test_the_scripted_game_passes_pettingzoo_parallel_api_test():
    parallel_api_test(LeaveEarly(), num_cycles=10)


class Ends(rk.AbstractPolicy):
    """Random actions; counts its PostEpisode calls."""

    def __init__(self, seed):
        self.random, self.episodes = rk.RandomPolicy(seed=seed), 0

    def act(self, env):
        return self.random.act(env)

    def plan(self, env):
        def end():
            self.episodes += 1

        return {rk.POST_EPISODE_STAGE: [rk.core.dispatch.PlanStep(end, "end", "test")]}


def test_an_agent_that_leaves_early_and_the_others_go_on():
    env = rk.PettingZooParallelEnv(LeaveEarly())
    agents = {
        name: rk.Agent(Ends(seed=i), rk.VectorSARTTrajectory())
        for i, name in enumerate(("x", "y", "z"))
    }
    hook = rk.TotalRewardPerEpisode() + rk.StepsPerEpisode()
    rk.run(rk.MultiAgentPolicy(agents), env, rk.StopAfterNEpisodes(1), hook)
    z, x = agents["z"].trajectory, agents["x"].trajectory
    assert len(z) == 2 and z.terminal == [False, True] and z.truncated == [False, False]
    assert len(x) == 4 and x.truncated == [False, False, False, True] and not any(x.terminal)
    assert [float(s[0]) for s in z.next_state] == [1.0, 2.0]  # z's real final observation
    assert env.view("z").state[0] == 2.0 and env.view("z").is_terminated
    assert [a.policy.episodes for a in agents.values()] == [1, 1, 1]  # z's PostEpisode too
    assert hook[0].rewards == [{"x": 4.0, "y": 4.0, "z": 2.0}]
    assert hook[1].steps == [4]
    assert env.is_truncated and not env.is_terminated


def test_a_parallel_env_returning_observations_for_unknown_agents_is_refused():
    env = rk.PettingZooParallelEnv(LeaveEarly(ghost=True))
    with pytest.raises(ValueError, match=r"observations for unknown agents \['ghost'\]"):
        env.reset()


def test_actions_must_cover_the_live_agents():
    env = rk.PettingZooParallelEnv(LeaveEarly())
    env.reset()
    with pytest.raises(ValueError, match=r"missing \['z'\]"):
        env.act({"x": 0, "y": 1})
    with pytest.raises(rk.InvalidActionError, match="'x'"):
        env.act({"x": 5, "y": 1, "z": 0})
    with pytest.raises(TypeError, match="dict of actions"):
        env.act([0, 1, 0])


def test_an_aec_env_given_to_the_parallel_adapter_is_refused():
    from multiagent_games import TakeTurns

    with pytest.raises(TypeError, match="turn-based.*rk.PettingZooEnv"):
        rk.PettingZooParallelEnv(TakeTurns())


def test_parameter_sharing_with_agent_ids():
    env = rk.PettingZooParallelEnv(LeaveEarly(), agent_id=True)
    env.reset()
    assert env.view("y").state.tolist() == [0.0, 1.0, 0.0, 1.0, 0.0]
    assert env.view("y").state_space.shape == (5,)
    shared = rk.Agent(rk.RandomPolicy(seed=0), rk.VectorSARTTrajectory())
    policy = rk.MultiAgentPolicy.shared(shared, env.agents)
    children = [policy.policy_of(a) for a in env.agents]
    assert children[0] is shared and all(c.policy is shared.policy for c in children)
    assert len({id(c.trajectory) for c in children}) == 3  # each agent records its own
    rk.run(policy, env, rk.StopAfterNEpisodes(1))
    assert [len(c.trajectory) for c in children] == [4, 4, 2]


def test_simple_spread_runs_with_a_shared_random_policy():
    from mpe2 import simple_spread_v3

    env = rk.PettingZooParallelEnv(simple_spread_v3.parallel_env(max_cycles=5), seed=0)
    policy = rk.MultiAgentPolicy.shared(rk.RandomPolicy(seed=0), env.agents)
    hook = rk.run(policy, env, rk.StopAfterNEpisodes(2), rk.TotalRewardPerEpisode())
    assert len(hook.rewards) == 2 and set(hook.rewards[0]) == set(env.agents)
    assert all(np.isfinite(list(r.values())).all() for r in hook.rewards)


class Actions(rk.AbstractHook):
    def __init__(self):
        self.actions = []

    def pre_act(self, policy, env, action):
        self.actions.append(dict(action))


def test_a_shared_ppo_policy_records_each_agents_own_action():
    """Each agent's PreAct comes right after its own choice: PPO's rollout of each agent holds
    the action that agent performed (not the last agent's)."""
    pytest.importorskip("torch")
    env = rk.PettingZooParallelEnv(LeaveEarly(), seed=0, agent_id=True)
    shared = rk.PPO.agent(env.view("x"), n_steps=64, seed=0)
    policy = rk.MultiAgentPolicy.shared(shared, env.agents)
    hook = Actions()
    rk.run(policy, env, rk.StopAfterNSteps(12), hook)
    for agent in env.agents:
        rollout = policy.policy_of(agent).trajectory
        performed = [step[agent] for step in hook.actions if agent in step]
        recorded = rollout.traces["action"][: len(performed), 0].tolist()
        assert recorded == performed, agent


def _samples(env) -> list:
    views = [env.view(agent) for agent in env.agents]
    return [v.action_space.sample() for v in views for _ in range(6)] + [
        np.asarray(v.state_space.sample()).round(6).tolist() for v in views
    ]


def test_a_seeded_adapter_seeds_each_agents_spaces():
    """Agent i's spaces are seeded with space_seeds(seed, i) (rlkit/envs/space_seeds.py), in
    the parallel and the AEC adapters: the same seed gives the same samples, another differs."""
    import gymnasium as gym
    from mpe2 import simple_spread_v3
    from pettingzoo.classic import tictactoe_v3

    from rlkit.envs.space_seeds import space_seeds

    def spread(seed):
        return rk.PettingZooParallelEnv(simple_spread_v3.parallel_env(max_cycles=5), seed=seed)

    def tictactoe(seed):
        return rk.PettingZooEnv(tictactoe_v3.env(), seed=seed)

    for make in (spread, tictactoe):
        assert _samples(make(3)) == _samples(make(3)), make
        assert _samples(make(3)) != _samples(make(4)), make
    env = spread(3)
    second = env.view(env.agents[1]).action_space
    reference = gym.spaces.Discrete(second.n, seed=space_seeds(3, 1)[0])
    assert [second.sample() for _ in range(12)] == [reference.sample() for _ in range(12)]
