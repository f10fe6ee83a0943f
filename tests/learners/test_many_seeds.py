"""Many seeds in one process (rlkit/learners/many_seeds): each seed learns what it learns alone,
a many-seed run resumes from a checkpoint exactly, and bad input is refused."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.hooks.checkpoint import CheckpointHook

STEPS = 512  # two PPO_CartPole updates per seed (8 envs x 32 steps), 20 epochs each


def _run(seeds: list[int], steps: int = STEPS):
    experiment = rk.make_experiment("PPO_CartPole", seeds=seeds, total_steps=steps)
    hook = rk.run(experiment)
    experiment.env.close()
    return experiment, hook


def test_each_seed_learns_what_it_learns_alone():
    together, hook = _run([0, 2])
    alone, hook_alone = _run([2])
    policy, single = together.policy.policy, alone.policy.policy
    assert policy.updates == 2 and policy.n_seeds == 2
    a, b = policy.stacked.unstacked(1), single.stacked.unstacked(0)
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=1e-5, atol=1e-6, msg=key)
    assert hook.per_seed[2] == hook_alone.per_seed[2] and len(hook.per_seed[2]) > 10
    assert hook.per_seed[0] != hook.per_seed[2]  # its own envs and generators
    stats = rk.statistics(policy)
    assert {"approx_kl/seed=0", "approx_kl/seed=2", "clip_fraction/seed=2"} <= set(stats)
    # a seed's trained policy is a plain rk.PPO with that seed's parameters
    ppo = policy.seed_policy(1)
    assert isinstance(ppo, rk.PPO) and ppo.transitions == STEPS
    for key, value in ppo.model.state_dict().items():
        assert torch.equal(value, a[key])


def test_a_resumed_many_seed_run_continues_exactly(tmp_path):
    full, full_hook = _run([0, 1], STEPS)
    expected = full.policy.policy.state_dict()["params"]

    first = rk.make_experiment("PPO_CartPole", seeds=[0, 1], total_steps=STEPS)
    hook = first.hook + CheckpointHook(tmp_path, every_n_steps=2 * 256)
    rk.run(first.policy, first.env, rk.StopAfterNSteps(2 * 256 + 16), hook)
    first.env.close()
    again = rk.make_experiment("PPO_CartPole", seeds=[0, 1], total_steps=STEPS)
    resumed = again.hook + CheckpointHook(tmp_path, every_n_steps=2 * 256)
    rk.run(again.policy, again.env, again.stop_condition, resumed, resume_from=tmp_path)
    again.env.close()
    params = again.policy.policy.state_dict()["params"]
    assert again.policy.policy.updates == 2
    for key, value in expected.items():
        assert torch.equal(params[key], value), key
    assert resumed[0].per_seed == full_hook.per_seed
    np.testing.assert_array_equal(resumed[0].current, full_hook.current)


def test_bad_seeds_are_refused():
    with pytest.raises(ValueError, match="PPO_CartPole: seeds must name at least one seed"):
        rk.make_experiment("PPO_CartPole", seeds=[])
    with pytest.raises(ValueError, match=r"PPO_CartPole: seeds must be distinct, got \[0, 1, 0\]"):
        rk.make_experiment("PPO_CartPole", seeds=[0, 1, 0])
    with pytest.raises(ValueError, match="PPO_CartPole: seeds must be non-negative integers"):
        rk.make_experiment("PPO_CartPole", seeds=[0, -1])
    with pytest.raises(TypeError, match="PPO_CartPole: seeds must be a list"):
        rk.make_experiment("PPO_CartPole", seeds="0-4")
    with pytest.raises(ValueError, match="DQN_Acrobot: seeds=.* is not supported by this recipe"):
        rk.make_experiment("DQN_Acrobot", seeds=[0, 1])
    with pytest.raises(ValueError, match="compile=True and seeds=.* together are not supported"):
        rk.make_experiment("PPO_CartPole", seeds=[0, 1], compile=True)
    envs = [rk.VectorGymEnv("CartPole-v1", 2, seed=s) for s in (0, 1)]
    env = rk.SeedBlocksEnv(envs, [0, 1])
    with pytest.raises(ValueError, match="ManySeedsPPO: target_kl is not supported"):
        rk.ManySeedsPPO(env, policy_seeds=[0, 1], target_kl=0.01)
    with pytest.raises(ValueError, match="ManySeedsPPO: one policy seed per block"):
        rk.ManySeedsPPO(env, policy_seeds=[0])
    with pytest.raises(TypeError, match="ManySeedsPPO: env must be an rlkit.envs.seed_blocks"):
        rk.ManySeedsPPO(envs[0], policy_seeds=[0])
    with pytest.raises(ValueError, match="SeedBlocksEnv: seeds must be distinct"):
        rk.SeedBlocksEnv(envs, [3, 3])
    with pytest.raises(ValueError, match="SeedBlocksEnv.reset: each block is seeded"):
        env.reset(seed=1)
    env.close()


def test_batched_matrix_products_and_vmap_learn_the_same():
    """The ActorCritic fast path (torch.baddbmm) and the generic vmap of functional_call."""
    results = []
    for fast in (True, False):
        envs = [rk.VectorGymEnv("CartPole-v1", 2, seed=s) for s in (0, 1)]
        env = rk.SeedBlocksEnv(envs, [0, 1])
        agent = rk.ManySeedsPPO.agent(
            env, policy_seeds=[10, 11], n_steps=16, batch_size=8, n_epochs=2, fast=fast
        )
        assert (agent.policy.stacked.mlps is not None) is fast
        rk.run(agent, env, rk.StopAfterNSteps(128))
        results.append(agent.policy.state_dict()["params"])
        env.close()
    for key, value in results[0].items():
        torch.testing.assert_close(value, results[1][key], rtol=1e-5, atol=1e-6, msg=key)
