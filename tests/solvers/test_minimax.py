"""rk.Minimax on tic-tac-toe (PettingZoo's tictactoe_v3): never loses, draws itself."""

import numpy as np
import pytest
from pettingzoo.classic import tictactoe_v3

import rlkit as rk

_PLAYER = rk.Minimax(seed=0)  # one table for the whole module: the first search fills it


def _play(players, seed):
    """One game of tic-tac-toe; ``players``: {agent: policy}; returns each agent's reward."""
    env = tictactoe_v3.env()
    env.reset(seed=seed)
    final = {}
    for agent in env.agent_iter():
        _, reward, terminated, truncated, _ = env.last()
        if terminated or truncated:
            final[agent] = reward
            env.step(None)
        else:
            env.step(players[agent](env))
    return final


@pytest.mark.slow
@pytest.mark.parametrize("seat", ["player_1", "player_2"])
def test_never_loses_to_a_random_player_in_1000_games(seat):
    rng = np.random.default_rng(0)

    def random_move(env):
        mask = env.observe(env.agent_selection)["action_mask"]
        return int(rng.choice(np.flatnonzero(mask)))

    other = "player_2" if seat == "player_1" else "player_1"
    results = [_play({seat: _PLAYER, other: random_move}, game)[seat] for game in range(1000)]
    assert min(results) >= 0  # no loss
    assert sum(r > 0 for r in results) > 700  # and it wins most games against random moves


def test_minimax_against_minimax_draws_from_both_seats():
    other = rk.Minimax(seed=1)
    for game in range(5):
        assert _play({"player_1": _PLAYER, "player_2": other}, game) == {
            "player_1": 0,
            "player_2": 0,
        }
        assert _play({"player_1": other, "player_2": _PLAYER}, game) == {
            "player_1": 0,
            "player_2": 0,
        }


def test_the_value_of_tic_tac_toe_and_of_a_lost_position():
    env = tictactoe_v3.env()
    env.reset(seed=0)
    assert _PLAYER.value(env) == 0.0
    for move in (0, 4, 1):  # X threatens the top row; O (in the centre) must block
        env.step(move)
    assert _PLAYER(env) == 2
    env.step(5)  # O does not block: X wins
    assert _PLAYER.value(env) == 1.0


def test_refuses_games_with_chance_and_more_than_two_players():
    env = rk.make_game("rlkit/KuhnPoker-v0")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"has chance events \(cards, dice\).*use rk.CFR"):
        rk.Minimax()(env)
    from game_helpers import Pennies

    three = Pennies(n_agents=3)
    three.reset()
    with pytest.raises(ValueError, match="Minimax plays two-player zero-sum games"):
        rk.Minimax()(three)


def test_refuses_a_board_too_big_for_its_table():
    env = tictactoe_v3.env()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="more than max_positions=10 positions"):
        rk.Minimax(max_positions=10)(env)
