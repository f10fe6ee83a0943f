"""Learning with fixed seeds (honest thresholds; benchmarks/multiagent.py measures more seeds)."""

from __future__ import annotations

import numpy as np
import pytest
from multiagent_games import TicTacToeMinimax, tictactoe_games

import rlkit as rk


@pytest.mark.slow
def test_dqn_as_second_player_beats_a_random_masked_opponent():
    """Tianshou's tic-tac-toe test: mean reward >= 0.6 against a random player of the legal
    moves (0.7 is about optimal), here of the greedy learner over 500 games."""
    from rlkit.experiments.multiagent import tictactoe_env

    experiment = rk.make_experiment("DQN_TicTacToe", 0)
    rk.run(experiment)
    learner = rk.greedy(experiment.policy.policy_of("player_2"))
    policy = rk.MultiAgentPolicy({"player_2": learner, "player_1": rk.RandomPolicy(seed=7)})
    hook = rk.run(policy, tictactoe_env(99, tabular=False), rk.StopAfterNEpisodes(500),
                  rk.TotalRewardPerEpisode())  # fmt: skip
    rewards = np.array([r["player_2"] for r in hook.rewards])
    assert rewards.mean() >= 0.6, rewards.mean()


def test_the_minimax_reference_player_is_perfect():
    """The tests' minimax never loses to a random player and draws against itself."""
    for seat in ("player_1", "player_2"):
        random = tictactoe_games(TicTacToeMinimax(seed=1), rk.RandomPolicy(seed=2), seat, 100, 3)
        itself = tictactoe_games(TicTacToeMinimax(seed=1), TicTacToeMinimax(seed=4), seat, 10, 3)
        assert (random >= 0).all() and (itself == 0).all()


@pytest.mark.slow
def test_tabular_self_play_never_loses_to_random_and_draws_minimax_from_both_seats():
    """SelfPlayQ_TicTacToe (seed 0, its 20,000 games, rk.NegamaxQLearner): the greedy table
    loses none of 1,000 games against a random player and draws all 50 against minimax, from
    either seat (benchmarks/results_multiagent.txt: the same on seeds 0-4)."""
    experiment = rk.make_experiment("SelfPlayQ_TicTacToe", 0)
    rk.run(experiment)
    greedy = rk.greedy(experiment.policy)
    for seat in ("player_1", "player_2"):
        player = greedy.policy_of(seat)
        random = tictactoe_games(player, rk.RandomPolicy(seed=11), seat, 1000, 123)
        perfect = tictactoe_games(player, TicTacToeMinimax(seed=5), seat, 50, 7)
        assert (random >= 0).all(), f"{seat} lost {(random < 0).sum()} games to random"
        assert (perfect == 0).all(), f"{seat} vs minimax: {perfect.tolist()}"
