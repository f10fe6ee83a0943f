"""Copies of a parallel env as one vector env, a row per agent per copy (SuperSuit's
convention): backends agree, rows map to agents, PPO with shared parameters trains on them."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from mpe2 import simple_spread_v3
from multiagent_games import LeaveEarly

import rlkit as rk


def _run(backend):
    env = rk.PettingZooVectorEnv(simple_spread_v3.parallel_env, 2, seed=3, backend=backend,
                                 agent_id=True)  # fmt: skip
    hook = rk.run(rk.RandomPolicy(seed=1), env, rk.StopAfterNSteps(6 * 30),
                  rk.TotalRewardPerEpisode())  # fmt: skip
    state, final = env.state.copy(), env.final_state.copy()
    env.close()
    return hook.rewards, state, final


def test_the_subprocess_backend_gives_the_sync_results():
    sync, subprocess = _run("sync"), _run("subprocess")
    assert sync[0] == subprocess[0] and len(sync[0]) == 6  # each agent's episode of each copy
    np.testing.assert_array_equal(sync[1], subprocess[1])
    np.testing.assert_array_equal(sync[2], subprocess[2])


def test_rows_are_the_agents_of_each_copy():
    env = rk.PettingZooVectorEnv(simple_spread_v3.parallel_env, 2, seed=0, agent_id=True)
    env.reset()
    assert env.n_envs == 6 and env.state.shape == (6, 21)
    np.testing.assert_array_equal(env.state[:, -3:], np.tile(np.eye(3), (2, 1)))  # agent ids
    raw = simple_spread_v3.parallel_env()
    observations, _ = raw.reset(seed=1)  # copy 1 is seeded seed + 1
    np.testing.assert_array_equal(env.state[4, :-3], observations["agent_1"])


def test_an_env_whose_agents_leave_early_is_refused():
    env = rk.PettingZooVectorEnv(LeaveEarly, 1)
    env.reset()
    env.act([0, 0, 0])
    with pytest.raises(ValueError, match=r"agents \['z'\] ended their episode before"):
        env.act([0, 0, 0])
    with pytest.raises(ValueError, match="expected 3 actions"):
        rk.PettingZooVectorEnv(LeaveEarly, 1).act([0])
    with pytest.raises(ValueError, match="backend must be 'sync' or 'subprocess'"):
        rk.PettingZooVectorEnv(LeaveEarly, 1, backend="ray")


def test_shared_ppo_learns_from_every_agent_of_every_copy():
    env = rk.PettingZooVectorEnv(simple_spread_v3.parallel_env, 2, seed=0, agent_id=True)
    agent = rk.PPO.agent(env, n_steps=32, seed=0)
    before = [p.detach().clone() for p in agent.policy.model.parameters()]
    rk.run(agent, env, rk.StopAfterNSteps(6 * 32))  # one rollout: 32 steps of 6 rows
    after = list(agent.policy.model.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(before, after, strict=True))


def test_a_seeded_vector_env_seeds_its_spaces():
    def samples(seed):
        env = rk.PettingZooVectorEnv(simple_spread_v3.parallel_env, 2, seed=seed)
        out = [env.action_space.sample() for _ in range(12)]
        out += [env.state_space.sample().round(6).tolist() for _ in range(2)]
        env.close()
        return out

    assert samples(3) == samples(3)
    assert samples(3) != samples(4)
