"""Many seeds of DQN in one process (rlkit/learners/many_seeds/dqn.py): each seed learns what it
learns alone, one seed matches its single run (the same weights, replay and actions; the same
updates to float rounding), a many-seed run resumes from a checkpoint exactly, and bad input is
refused."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.hooks.checkpoint import CheckpointHook
from rlkit.learners.many_seeds.stacked import StackedModel

# DQN_CartPole: random actions for 1000 steps, then 128 gradient steps every 256 steps (at
# 1024 and 1280): two rounds of learning, 276 transitions of greedy / epsilon-greedy acting
STEPS = 1300
TRACES = ("state", "action", "reward", "terminal", "truncated", "next_state")


def _many(seeds: list[int], steps: int = STEPS, **overrides):
    experiment = rk.make_experiment("DQN_CartPole", seeds=seeds, total_steps=steps, **overrides)
    hook = rk.run(experiment)
    return experiment, hook


def test_each_seed_learns_what_it_learns_alone():
    together, hook = _many([0, 2])
    alone, hook_alone = _many([2])
    policy, single = together.policy.policy, alone.policy.policy
    assert policy.n_seeds == 2 and policy.gradient_steps == 256 == single.gradient_steps
    a, b = policy.online.unstacked(1), single.online.unstacked(0)
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=1e-5, atol=1e-6, msg=key)
    assert hook.per_seed[2] == hook_alone.per_seed[2] and len(hook.per_seed[2]) > 10
    assert hook.per_seed[0] != hook.per_seed[2]  # its own envs and generators
    stats = rk.statistics(policy)
    assert {"loss/seed=0", "loss/seed=2", "q_mean/seed=2", "td_error/seed=0", "epsilon/seed=2",
            "transitions"} <= set(stats)  # fmt: skip
    assert stats["loss/seed=0"] != stats["loss/seed=2"]
    assert stats["transitions"] == 2 * STEPS
    # a seed's trained policy is a plain QBasedPolicy(DQNLearner) with that seed's parameters
    view = policy.seed_policy(1)
    assert isinstance(view.learner, rk.DQNLearner)
    assert view.learner.env_steps == STEPS and view.learner.gradient_steps == 256
    for key, value in view.learner.model.state_dict().items():
        assert torch.equal(value, a[key])
    assert view.learner.loss == stats["loss/seed=2"]
    greedy = rk.evaluate(view, rk.GymEnv("CartPole-v1"), 2, seed=0)
    assert len(greedy.returns) == 2


def test_one_seed_matches_its_single_run():
    """The same initial weights and replay contents (every action, the greedy ones after
    learning started included), and the same parameters after 256 gradient steps to float
    rounding (batched matrix products and the per-seed clipping's norm)."""
    single = rk.make_experiment("DQN_CartPole", 2, total_steps=STEPS)
    learner = single.policy.policy.learner
    initial = {k: v.clone() for k, v in learner.model.state_dict().items()}
    # the recipe's hook evaluates and keeps the best policy; the training is the same without it
    rk.run(single.policy, single.env, single.stop_condition, rk.TotalRewardPerEpisode())
    many = rk.make_experiment("DQN_CartPole", seeds=[2], total_steps=STEPS)
    policy = many.policy.policy
    start = policy.online.unstacked(0)
    assert all(torch.equal(start[k], initial[k]) for k in initial)
    rk.run(many)
    assert policy.gradient_steps == learner.gradient_steps == 256
    replay, alone = many.policy.trajectory.replays[0], single.policy.trajectory
    assert len(replay) == len(alone) == STEPS
    for name in TRACES:
        np.testing.assert_array_equal(getattr(replay, name), getattr(alone, name), err_msg=name)
    trained = policy.online.unstacked(0)
    for key, value in learner.model.state_dict().items():
        torch.testing.assert_close(trained[key], value, rtol=1e-5, atol=1e-6, msg=key)
        assert not torch.equal(value, initial[key])  # it learned
    target = policy.target.unstacked(0)
    for key, value in learner.target.model.state_dict().items():
        torch.testing.assert_close(target[key], value, rtol=1e-5, atol=1e-6, msg=key)
    assert policy.target_sync.steps == learner.target_sync.steps == STEPS
    for key in ("loss", "q_mean", "td_error"):
        assert rk.statistics(policy)[f"{key}/seed=2"] == pytest.approx(
            rk.statistics(learner)[key], rel=1e-4
        )


def test_a_resumed_many_seed_run_continues_exactly(tmp_path):
    full, full_hook = _many([0, 1])
    expected = full.policy.state_dict()

    first = rk.make_experiment("DQN_CartPole", seeds=[0, 1], total_steps=STEPS)
    every = 2 * 1100  # mid-run: after the first round of gradient steps, before the second
    hook = first.hook + CheckpointHook(tmp_path, every_n_steps=every)
    rk.run(first.policy, first.env, rk.StopAfterNSteps(every + 40), hook)
    again = rk.make_experiment("DQN_CartPole", seeds=[0, 1], total_steps=STEPS)
    resumed = again.hook + CheckpointHook(tmp_path, every_n_steps=every)
    rk.run(again.policy, again.env, again.stop_condition, resumed, resume_from=tmp_path)
    state = again.policy.state_dict()
    policy = state["policy"]
    assert policy["gradient_steps"] == 256 and policy["env_steps"] == STEPS
    for part in ("params", "target_params"):
        for key, value in expected["policy"][part].items():
            assert torch.equal(policy[part][key], value), (part, key)
    assert policy["explorers"] == expected["policy"]["explorers"]
    assert policy["samplers"] == expected["policy"]["samplers"]
    for saved, reference in zip(state["trajectory"]["replays"],
                                expected["trajectory"]["replays"], strict=True):  # fmt: skip
        for name in TRACES:
            np.testing.assert_array_equal(saved[name], reference[name], err_msg=name)
    assert resumed[0].per_seed == full_hook.per_seed


def _parts(seed: int, **learner_kw):
    from rlkit.approximators.neural import q_network

    block = rk.VectorGymEnv("CartPole-v1", 1, seed=seed)
    q = rk.NeuralNetworkApproximator(
        q_network(block.state_space, block.action_space, (8,), seed=seed),
        lambda p: torch.optim.Adam(p, lr=1e-3),
        max_grad_norm=10.0,
    )
    options = {"sampler": rk.BatchSampler(4, seed=seed),
               "controller": rk.InsertSampleRatioController(8, 2, 1),
               "target": rk.TargetNetwork(q, sync_every=10), **learner_kw}  # fmt: skip
    learner_class = options.pop("learner_class", rk.DQNLearner)
    policy = rk.QBasedPolicy(learner_class(q, **options), rk.EpsilonGreedyExplorer(0.1, seed=0))
    return block, policy, rk.CircularArraySARTTrajectory(50, block.state_space,
                                                         block.action_space)  # fmt: skip


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match=r"DQN_CartPole: seeds must be distinct, got \[0, 1, 0\]"):
        rk.make_experiment("DQN_CartPole", seeds=[0, 1, 0])
    with pytest.raises(ValueError, match="DQN_CartPole: compile=True and seeds=.* together"):
        rk.make_experiment("DQN_CartPole", seeds=[0, 1], compile=True)
    with pytest.raises(ValueError, match="DQN_Acrobot: seeds=.* is not supported by this recipe"):
        rk.make_experiment("DQN_Acrobot", seeds=[0, 1])
    (b0, p0, r0), (b1, p1, _) = _parts(0), _parts(1)
    env = rk.SeedBlocksEnv([b0, b1], [0, 1])
    with pytest.raises(TypeError, match="ManySeedsDQN: env must be an rlkit.envs.seed_blocks"):
        rk.ManySeedsDQN(b0, [p0])
    with pytest.raises(ValueError, match=r"ManySeedsDQN: one policy per block .* \(2\), got 1"):
        rk.ManySeedsDQN(env, [p0])
    _, gradient_step, _ = _parts(1, target_update_on="gradient_step")
    with pytest.raises(
        ValueError,
        match=r"policies\[1\]: target_update_on='gradient_step' is "
        r"not supported \(only 'env_step'\) with many seeds",
    ):
        rk.ManySeedsDQN(env, [p0, gradient_step])
    _, prioritized, _ = _parts(1, learner_class=rk.PrioritizedDQNLearner)
    with pytest.raises(TypeError, match=r"policies\[1\] must be an rk.QBasedPolicy\(rk.DQNLearner"):
        rk.ManySeedsDQN(env, [p0, prioritized])
    _, double, _ = _parts(1, double=True)
    with pytest.raises(
        ValueError,
        match=r"same hyperparameters; policies\[1\] has double=True, "
        r"policies\[0\] double=False",
    ):
        rk.ManySeedsDQN(env, [p0, double])
    with pytest.raises(ValueError, match="SeedBlocksReplay: each seed needs its own replay"):
        rk.ManySeedsDQN.agent(env, [p0, p1], [r0, r0])
    with pytest.raises(TypeError, match="SeedBlocksReplay: prioritized or other replay kinds"):
        rk.SeedBlocksReplay([r0, rk.PrioritizedCircularArraySARTTrajectory(
            50, b0.state_space, b0.action_space)])  # fmt: skip
    with pytest.raises(TypeError, match="OneEnvVector: env must be a single rk.AbstractEnv"):
        rk.OneEnvVector(b0)
    many = rk.ManySeedsDQN(env, [p0, p1])
    state = many.state_dict()
    other = rk.ManySeedsDQN(rk.SeedBlocksEnv([b0, b1], [0, 5]), [p0, p1])
    with pytest.raises(ValueError, match=r"ManySeedsDQN: the checkpoint holds seeds \[0, 1\], "):
        other.load_state_dict(state)
    env.close()


def _library_parts(seed: int):
    """A seed's vector env of 2 sub-envs, its n-step double DQN with MSE loss and its replay."""
    from rlkit.approximators.neural import q_network

    block = rk.VectorGymEnv("CartPole-v1", 2, seed=seed)
    q = rk.NeuralNetworkApproximator(
        q_network(block.state_space, block.action_space, (16, 16), seed=seed),
        lambda p: torch.optim.Adam(p, lr=1e-3),
        max_grad_norm=1.0,
    )
    learner = rk.DQNLearner(
        q, sampler=rk.NStepBatchSampler(8, 3, 0.9, seed=seed), gamma=0.9, double=True,
        controller=rk.InsertSampleRatioController(16, 2, 2), loss="mse",
        target=rk.TargetNetwork(q, sync_every=20),
    )  # fmt: skip
    policy = rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.2, seed=seed))
    return block, policy, rk.CircularArraySARTTrajectory(100, block.state_space,
                                                         block.action_space)  # fmt: skip


def test_the_library_api_on_vector_blocks_matches_single_runs():
    """``rk.ManySeedsDQN.agent`` on blocks of 2 sub-envs (n-step returns, double DQN, MSE):
    each seed as its single run (the same replay, the same parameters to float rounding), with
    batched matrix products and with ``vmap``."""
    singles = {}
    for seed in (3, 4):
        block, policy, replay = _library_parts(seed)
        rk.run(rk.Agent(policy, replay), block, rk.StopAfterNSteps(100))
        singles[seed] = (policy.learner, replay)
        block.close()
    for fast in (True, False):
        blocks, policies, replays = zip(*(_library_parts(seed) for seed in (3, 4)), strict=True)
        env = rk.SeedBlocksEnv(list(blocks), [3, 4])
        agent = rk.ManySeedsDQN.agent(env, policies, replays, fast=fast)
        assert (agent.policy.online.sequential is not None) is fast
        rk.run(agent, env, rk.StopAfterNSteps(200))
        env.close()
        for i, seed in enumerate((3, 4)):
            learner, replay = singles[seed]
            assert agent.policy.gradient_steps == learner.gradient_steps > 40
            for name in TRACES:
                np.testing.assert_array_equal(
                    getattr(agent.trajectory.replays[i], name), getattr(replay, name)
                )
            params = agent.policy.online.unstacked(i)
            for key, value in learner.model.state_dict().items():
                torch.testing.assert_close(params[key], value, rtol=1e-5, atol=1e-6, msg=key)


def test_stacked_sequential_matches_each_network():
    nets = [torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.ReLU(), torch.nn.Linear(5, 2))
            for _ in range(3)]  # fmt: skip
    stacked = StackedModel(nets)
    assert stacked.sequential is not None and stacked.mlps is None
    x = torch.randn(3, 7, 3, generator=torch.Generator().manual_seed(0))
    out = stacked(x)
    for i, net in enumerate(nets):
        torch.testing.assert_close(out[i], net(x[i]))
    tanh = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh())
    assert StackedModel([tanh, tanh]).sequential is None  # not linear + ReLU: vmap


def test_the_command_line_runs_dqn_seeds_and_saves_each(tmp_path, capsys):
    from rlkit.cli import main

    run_dir = tmp_path / "r"
    args = ["run", "DQN_CartPole", "--seeds", "0-1", "--steps", "1100", "--logdir", str(run_dir)]
    assert main([*args, "--checkpoint-every", "1100"]) == 0
    out = capsys.readouterr().out
    assert "DQN_CartPole (seeds 0-1)" in out and "seed 0: " in out and "seed 1: " in out
    for seed in (0, 1):
        loaded = rk.load(run_dir / f"policy-seed{seed}.rlkit")
        assert loaded.predict(np.zeros(4, np.float32)).shape == ()
    assert main(["resume", str(run_dir)]) == 0  # finished: ends as the uninterrupted run did
    assert "already finished" in capsys.readouterr().out
