"""The negamax learners (rlkit/learners/tabular/negamax.py, value_based/negamax_dqn.py), the
games' afterstate rules they use (experiments/multiagent.py) and rk.RandomOpening."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from pettingzoo.classic import connect_four_v3, tictactoe_v3

import rlkit as rk


def _random_transitions(game, games: int, seed: int):
    """``(observation, mask, action, next observation, next mask)`` of every move of random
    games that did not end the game (the next observation is the opponent's)."""
    rng = np.random.default_rng(seed)
    out = []
    for g in range(games):
        game.reset(seed=g)
        while True:
            obs, _, terminated, truncated, _ = game.last()
            if terminated or truncated:
                break
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            game.step(action)
            after, _, done, _, _ = game.last()
            if not done:
                out.append((obs["observation"], action, after["observation"],
                            after["action_mask"].astype(bool)))  # fmt: skip
    return out


def test_the_tictactoe_afterstate_is_the_board_the_opponent_sees():
    from rlkit.experiments.multiagent import tictactoe_afterstate, tictactoe_state

    transitions = _random_transitions(tictactoe_v3.env(), 100, 0)
    assert len(transitions) > 500
    for obs, action, after, mask in transitions:
        state, legal = tictactoe_afterstate(tictactoe_state(obs), action)
        assert state == tictactoe_state(after) and legal.tolist() == mask.tolist()


def test_the_connect_four_afterstate_is_the_board_the_opponent_sees():
    torch = pytest.importorskip("torch")
    from rlkit.experiments.multiagent import connect_four_afterstate

    transitions = _random_transitions(connect_four_v3.env(), 60, 1)
    states = torch.tensor(np.stack([t[0].reshape(-1) for t in transitions]), dtype=torch.float32)
    actions = torch.tensor([t[1] for t in transitions])
    after, legal = connect_four_afterstate(states, actions)
    expected = np.stack([t[2].reshape(-1) for t in transitions])
    assert len(transitions) > 1000
    np.testing.assert_array_equal(after.numpy(), expected)
    np.testing.assert_array_equal(legal.numpy(), np.stack([t[3] for t in transitions]))


def test_negamax_q_targets_on_tictactoe_boards():
    from multiagent_games import _cells

    from rlkit.experiments.multiagent import tictactoe_afterstate

    q = rk.TabularQApproximator(gym.spaces.Discrete(3**9), 9, step_size=1.0)
    learner = rk.NegamaxQLearner(q, tictactoe_afterstate)
    powers = 3 ** np.arange(9)
    # mine at 0, 1; theirs at 3, 4: playing 8 leaves them the win at 5
    board = np.array([1, 1, 0, 2, 2, 0, 0, 0, 0])
    state = int(board @ powers)
    after, legal = tictactoe_afterstate(state, 8)
    assert _cells(after) == (2, 2, 0, 1, 1, 0, 0, 0, 2) and legal.sum() == 4
    q.table[after, 5] = 1.0  # the opponent learned its win at 5
    assert learner.target(state, 8, 0.0, terminal=False) == -1.0
    assert learner.target(state, 2, 1.0, terminal=True) == 1.0  # my win ends the game
    q.table[after, 0] = 5.0  # an illegal (occupied) cell of theirs is never the max
    assert learner.target(state, 8, 0.0, terminal=False) == -1.0


def test_negamax_q_refusals():
    q = rk.TabularQApproximator(gym.spaces.Discrete(4), 2)
    with pytest.raises(TypeError, match="approximator must be an rk.TabularQApproximator"):
        rk.NegamaxQLearner(rk.TabularVApproximator(gym.spaces.Discrete(4)), lambda s, a: s)
    with pytest.raises(TypeError, match="afterstate must be callable"):
        rk.NegamaxQLearner(q, "rules")
    with pytest.raises(ValueError, match="gamma"):
        rk.NegamaxQLearner(q, lambda s, a: (s, [True, True]), gamma=1.5)
    learner = rk.NegamaxQLearner(q, lambda s, a: (0, np.zeros(2, bool)))
    with pytest.raises(
        ValueError,
        match=r"move 1 in state 2 brought reward 0.5 before the game "
        r"ended",
    ):
        learner.target(2, 1, 0.5, terminal=False)
    with pytest.raises(ValueError, match="leaves the opponent no legal action"):
        learner.target(2, 1, 0.0, terminal=False)


def test_negamax_dqn_is_one_move_deep():
    torch = pytest.importorskip("torch")
    from rlkit.approximators.neural import q_network
    from rlkit.experiments.multiagent import connect_four_afterstate, connect_four_env

    view = connect_four_env(0).view("player_0")
    approx = rk.NeuralNetworkApproximator(
        q_network(view.state_space, view.action_space, (8,), seed=0),
        lambda p: torch.optim.Adam(p, lr=1e-3),
    )
    controller = rk.InsertSampleRatioController(20, 1, 1)
    with pytest.raises(ValueError, match="one move deep; give a one-step sampler"):
        rk.NegamaxDQNLearner(approx, afterstate=connect_four_afterstate, controller=controller,
                             sampler=rk.NStepBatchSampler(8, n=3, gamma=0.99, seed=0),
                             gamma=0.99)  # fmt: skip
    with pytest.raises(TypeError, match="afterstate must be callable"):
        rk.NegamaxDQNLearner(approx, afterstate=None, controller=controller,
                             sampler=rk.BatchSampler(8, seed=0))  # fmt: skip
    with pytest.raises(ValueError, match="target must be 'negamax' or 'dqn', got 'minimax'"):
        rk.make_experiment("SelfPlayDQN_ConnectFour", 0, target="minimax")
    with pytest.raises(ValueError, match="n_step must be 1, got 3"):
        rk.make_experiment("SelfPlayDQN_ConnectFour", 0, target="negamax", n_step=3)


def test_random_openings_are_legal_rewardless_and_reproducible():
    def openings(seed):
        game = rk.RandomOpening(tictactoe_v3.env(), max_moves=6, seed=seed)
        found = []
        for _ in range(200):
            game.reset()
            marks = int(game.observe(game.agent_selection)["observation"].sum())
            assert marks == game.opening_moves and not any(game.terminations.values())
            assert not any(game.rewards.values())
            found.append(game.opening_moves)
        return found

    first = openings(3)
    assert first == openings(3) and first != openings(4)
    assert set(first) == set(range(7))  # 0 .. max_moves


def test_random_opening_refusals():
    with pytest.raises(ValueError, match="RandomOpening: max_moves"):
        rk.RandomOpening(tictactoe_v3.env(), max_moves=-1)
    with pytest.raises(TypeError, match="RandomOpening: max_moves"):
        rk.RandomOpening(tictactoe_v3.env(), max_moves=2.5)
