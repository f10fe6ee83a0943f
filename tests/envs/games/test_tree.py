"""rk.GameTree: sizes, the generic fallback, and the games it refuses (clear errors)."""

import pytest
from game_helpers import Pennies

import rlkit as rk


def test_sizes_match_openspiel():
    assert rk.GameTree.from_game("rlkit/KuhnPoker-v0").n_nodes == 58
    leduc = rk.GameTree.from_game(rk.make_game("rlkit/LeducPoker-v0"))
    assert (leduc.n_nodes, len(leduc.infosets)) == (9457, 936)


def test_a_generic_aec_game_without_chance():
    tree = rk.GameTree.from_game(Pennies())
    assert tree.n_nodes == 7 and tree.infosets == ["player_0:0", "player_1:1"]
    assert sorted(tree.utility[tree.kind == 0].tolist()) == [-1.0, -1.0, 1.0, 1.0]


def test_refuses_a_game_that_is_not_two_player():
    with pytest.raises(
        ValueError, match=r"agents \['player_0', 'player_1', 'player_2'\].*two-player"
    ):
        rk.GameTree.from_game(Pennies(n_agents=3))


def test_refuses_a_game_that_is_not_zero_sum():
    game = Pennies(payoff=lambda a, b: (1.0, 1.0))
    with pytest.raises(ValueError, match="pennies is not zero-sum: at the root, player_0: 0, "):
        rk.GameTree.from_game(game)


def test_refuses_an_information_state_that_is_not_hashable():
    game = Pennies(key=lambda agent, bits: [agent, *bits])
    with pytest.raises(
        TypeError, match=r"information state of player_0 .* is a list, which is not hashable"
    ):
        rk.GameTree.from_game(game)


def test_refuses_an_information_state_shared_by_two_agents():
    game = Pennies(key=lambda agent, bits: "same")
    with pytest.raises(ValueError, match="'same' of pennies is reached by player_0"):
        rk.GameTree.from_game(game)


def test_refuses_what_is_not_a_game():
    with pytest.raises(TypeError, match="expected a bundled game's id"):
        rk.GameTree.from_game(42)
    with pytest.raises(ValueError, match="more than max_nodes=10 nodes"):
        rk.GameTree.from_game("rlkit/KuhnPoker-v0", max_nodes=10)
