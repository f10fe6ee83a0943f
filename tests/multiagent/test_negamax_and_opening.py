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


def test_the_tictactoe_successors_are_pettingzoos_moves():
    """Every move of random games: the opponent's board and legal moves, the mover's reward and
    the game's end are what PettingZoo's tic-tac-toe gives."""
    from rlkit.experiments.multiagent import tictactoe_state, tictactoe_successors

    game, rng, checked = tictactoe_v3.env(), np.random.default_rng(0), 0
    for g in range(150):
        game.reset(seed=g)
        while True:
            obs, _, terminated, truncated, _ = game.last()
            if terminated or truncated:
                break
            mover = game.agent_selection
            actions, opponents, legal, rewards, dones = tictactoe_successors(
                tictactoe_state(obs["observation"])
            )
            assert actions.tolist() == np.flatnonzero(obs["action_mask"]).tolist()
            action = int(rng.choice(actions))
            k = actions.tolist().index(action)
            game.step(action)
            after, _, done, _, _ = game.last()
            assert bool(dones[k]) == done and rewards[k] == game.rewards[mover]
            if not done:
                assert opponents[k] == tictactoe_state(after["observation"])
                assert legal[k].tolist() == after["action_mask"].astype(bool).tolist()
            checked += 1
    assert checked > 1000


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


def test_negamax_q_backs_up_every_legal_move_on_tictactoe_boards():
    from rlkit.experiments.multiagent import tictactoe_successors

    q = rk.TabularQApproximator(gym.spaces.Discrete(3**9), 9, step_size=1.0)
    learner = rk.NegamaxQLearner(q, tictactoe_successors)
    powers = 3 ** np.arange(9)
    # mine at 0, 1; theirs at 3, 4; the mover wins at 2, and any move but 2 or 5 leaves them 5
    state = int(np.array([1, 1, 0, 2, 2, 0, 0, 0, 0]) @ powers)
    actions, opponents, _, _, _ = tictactoe_successors(state)
    for opponent in opponents:  # the opponent knows its win at 5 where 5 is still free
        if (int(opponent) // powers[5]) % 3 == 0:
            q.table[opponent, 5] = 1.0
    q.table[opponents[0], 0] = 5.0  # an occupied cell of theirs is never their best move
    learner.backup(state)
    assert actions.tolist() == [2, 5, 6, 7, 8]
    assert q.table[state].tolist() == [0, 0, 1, 0, 0, 0, -1, -1, -1]
    assert learner.td_error == 1.0


def test_negamax_q_refusals():
    q = rk.TabularQApproximator(gym.spaces.Discrete(4), 2)
    with pytest.raises(TypeError, match="approximator must be an rk.TabularQApproximator"):
        rk.NegamaxQLearner(rk.TabularVApproximator(gym.spaces.Discrete(4)), lambda s: s)
    with pytest.raises(TypeError, match="successors must be callable"):
        rk.NegamaxQLearner(q, "rules")
    with pytest.raises(ValueError, match="gamma"):
        rk.NegamaxQLearner(q, lambda s: s, gamma=1.5)
    stuck = rk.NegamaxQLearner(q, lambda s: ([1], [0], [[False, False]], [0.0], [False]))
    with pytest.raises(
        ValueError,
        match=r"successors\(2\) leaves the opponent no legal action "
        r"after move 1, but says the game goes on",
    ):
        stuck.backup(2)
    with pytest.raises(ValueError, match="state"):
        stuck.backup(7)
    assert not q.table.any()  # refused: nothing changed


def test_negamax_dqn_is_one_move_deep():
    torch = pytest.importorskip("torch")
    from rlkit.experiments.multiagent import connect_four_afterstate, connect_four_env

    from rlkit.approximators.neural import q_network

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


def test_an_opening_needs_legal_action_masks():
    from multiagent_games import TakeTurns

    class NoMask(TakeTurns):
        def observe(self, agent):
            return super().observe(agent)["observation"]

    game = rk.RandomOpening(NoMask(), max_moves=3, seed=0)
    with pytest.raises(
        ValueError,
        match=r"gives agent 'a' no action_mask \(in its observation "
        r"or info\)",
    ):
        for _ in range(20):
            game.reset()


def test_the_tictactoe_recipe_refuses_an_unknown_target_and_keeps_plain_q_learning():
    with pytest.raises(ValueError, match="target must be 'negamax' or 'qlearning', got 'td'"):
        rk.make_experiment("SelfPlayQ_TicTacToe", 0, target="td")
    plain = rk.make_experiment("SelfPlayQ_TicTacToe", 0, target="qlearning", step_size=0.5)
    learner = plain.policy.policy_of("player_1").policy.learner
    assert type(learner).__name__ == "QLearningLearner" and learner.approximator.step_size == 0.5
    default = rk.make_experiment("SelfPlayQ_TicTacToe", 0).policy.policy_of("player_2")
    assert isinstance(default.policy.learner, rk.NegamaxQLearner)


def test_a_checkpoint_restores_the_openings_generator():
    def make():
        return rk.PettingZooEnv(rk.RandomOpening(tictactoe_v3.env(), 6, seed=3), seed=0)

    def openings(env):
        found = []
        for _ in range(8):
            env.reset()
            found.append(env.env.opening_moves)
        return found

    played = make()
    played.reset()
    played.reset()
    restored = make()
    restored.load_state_dict(played.state_dict())
    assert openings(restored) == openings(played) != openings(make())
