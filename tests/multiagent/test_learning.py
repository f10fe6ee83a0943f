"""Learning with fixed seeds (honest thresholds; benchmarks/multiagent.py measures more seeds)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import rlkit as rk


@pytest.mark.slow
def test_dqn_as_second_player_beats_a_random_masked_opponent():
    """Tianshou's tic-tac-toe test: mean reward >= 0.6 against a random player of the legal
    moves (0.7 is about optimal), here of the greedy learner over 500 games."""
    from rlkit.experiments.multiagent import tictactoe_env

    torch.set_num_threads(1)
    experiment = rk.make_experiment("DQN_TicTacToe", 0)
    rk.run(experiment)
    learner = rk.greedy(experiment.policy.policy_of("player_2"))
    policy = rk.MultiAgentPolicy({"player_2": learner, "player_1": rk.RandomPolicy(seed=7)})
    hook = rk.run(policy, tictactoe_env(99, tabular=False), rk.StopAfterNEpisodes(500),
                  rk.TotalRewardPerEpisode())  # fmt: skip
    rewards = np.array([r["player_2"] for r in hook.rewards])
    assert rewards.mean() >= 0.6, rewards.mean()
