"""The DQN family on vector envs: one forward pass per step for the batch, schedules counted in
transitions, and DQN solving CartPole on four sub-envs."""

from __future__ import annotations

from dataclasses import replace

import pytest
from rlkit.experiments.dqn import CARTPOLE, DQN_CartPole, PrioritizedDQN_CartPole

import rlkit as rk

# The single-env learning test's budget (tests/learners/value_based/test_dqn.py): zoo settings,
# 20k transitions, training every 64 transitions. Measured with n_envs=4: greedy means 263.7,
# 500, 500, 500 on seeds 0, 1, 2, 3 (20 evaluation episodes; 40-195 s each on a busy 2-core box).
FAST_CARTPOLE = replace(
    CARTPOLE, total_steps=20_000, buffer_size=20_000, train_freq=64, gradient_steps=32
)


def test_one_forward_pass_per_step_and_schedules_in_transitions():
    config = replace(
        FAST_CARTPOLE, total_steps=400, learning_starts=100, train_freq=50, n_envs=4
    )
    exp = DQN_CartPole(0, config)
    agent, env = exp.policy, exp.env
    assert isinstance(env, rk.VectorGymEnv) and env.n_envs == 4
    learner = agent.policy.learner
    calls = []
    forward = learner._act_forward
    learner._act_forward = lambda x: calls.append(tuple(x.shape)) or forward(x)
    rk.run(agent, env, rk.StopAfterNSteps(400))
    env.close()
    assert calls == [(4, 4)] * 100  # 100 steps of 4 sub-envs: one batched forward pass each
    assert learner.env_steps == 400 == len(agent.trajectory)
    assert agent.policy.explorer.step == 400  # epsilon's schedule advances per transition
    # training at transitions 150, 200, ..., 400: six rounds of 32 gradient steps
    assert learner.gradient_steps == 6 * 32


def test_the_recipes_n_envs_parameter_is_checked():
    with pytest.raises(ValueError, match="n_envs"):
        rk.make_experiment("DQN_CartPole", 0, n_envs=0)


def test_prioritized_dqn_records_priorities_for_the_batch():
    config = replace(
        FAST_CARTPOLE, total_steps=300, learning_starts=100, train_freq=50, n_envs=3
    )
    exp = PrioritizedDQN_CartPole(0, config)
    agent, env = exp.policy, exp.env
    rk.run(agent, env, rk.StopAfterNSteps(300))
    env.close()
    assert agent.policy.learner.gradient_steps > 0 and len(agent.trajectory) == 300


@pytest.mark.slow
def test_dqn_solves_cartpole_on_four_sub_envs_within_20k_transitions():
    exp = DQN_CartPole(0, replace(FAST_CARTPOLE, n_envs=4))  # no evaluation hook: the agent
    agent, env = exp.policy, exp.env
    rk.run(agent, env, rk.StopAfterNSteps(FAST_CARTPOLE.total_steps))
    env.close()
    result = rk.evaluate(agent, rk.GymEnv("CartPole-v1"), 20, seed=123)
    assert result.mean >= 195, result
