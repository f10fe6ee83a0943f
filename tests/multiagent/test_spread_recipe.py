"""SharedPPO_SimpleSpread (issue 25): the shared PPO learns on-policy from every agent's moves
in one update per rollout, and its budget counts every agent's moves.

Before, the recipe gave each agent of ``rk.PettingZooParallelEnv`` its own rollout of the shared
``rk.Agent``: three updates in turn per rollout, the second and third from moves that the
parameters before the first update made, and it got worse than random with training
(benchmarks/results_multiagent.txt)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.learners.drivers import on_policy


def _stale_log_probs(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """At every update: the largest gap between the log-probabilities the rollout stored when
    acting and those the policy gives the same moves just before it learns from them."""
    gaps: list[float] = []
    original = on_policy.learn_when_full

    def checked(policy, trajectory):
        if trajectory.full:  # the update follows
            batch = trajectory.batch()
            states = torch.as_tensor(batch["state"]).flatten(0, 1)
            actions = torch.as_tensor(batch["action"]).flatten(0, 1)
            with torch.no_grad():
                now = policy.distribution(states).log_prob(actions).numpy()
            stored = batch["log_prob"].reshape(-1)
            gaps.append(float(np.abs(now - stored).max()))
        original(policy, trajectory)

    monkeypatch.setattr(on_policy, "learn_when_full", checked)
    return gaps


def test_one_on_policy_update_per_rollout_of_every_agent(monkeypatch):
    gaps = _stale_log_probs(monkeypatch)
    experiment = rk.make_experiment("SharedPPO_SimpleSpread", 0, n_steps=16, total_steps=3 * 16 * 3)
    rk.run(experiment)
    agent = experiment.policy
    assert experiment.env.n_envs == 3 and agent.trajectory.n_envs == 3  # a row per agent
    assert experiment.stop_condition.steps == 144  # every agent's moves
    assert agent.policy.updates == 3 and len(gaps) == 3  # one update per 16 moves of each agent
    assert max(gaps) < 1e-5, gaps  # each from moves of the parameters it starts from


def test_the_old_parallel_form_learned_from_stale_moves(monkeypatch):
    """Why the recipe changed: a shared PPO ``rk.Agent`` on the parallel env updates once per
    agent; after the first agent's update the others' moves are no longer the policy's."""
    from mpe2 import simple_spread_v3

    gaps = _stale_log_probs(monkeypatch)
    env = rk.PettingZooParallelEnv(simple_spread_v3.parallel_env(), seed=0, agent_id=True)
    agent = rk.PPO.agent(env.view(env.agents[0]), seed=0, n_steps=16)
    rk.run(rk.MultiAgentPolicy.shared(agent, env.agents), env, rk.StopAfterNSteps(16))
    assert agent.policy.updates == 3 and len(gaps) == 3  # 16 joint steps: three updates
    assert gaps[0] < 1e-5 and min(gaps[1:]) > 1e-3, gaps


@pytest.mark.parametrize("option", ["n_steps", "total_steps", "max_cycles"])
def test_bad_sizes_are_refused_by_name(option):
    with pytest.raises(ValueError, match=f"SharedPPO_SimpleSpread.*{option}"):
        rk.make_experiment("SharedPPO_SimpleSpread", 0, **{option: 0})
