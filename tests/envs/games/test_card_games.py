"""The bundled card games: PettingZoo's api_test, the rules (checked node by node against
OpenSpiel's kuhn_poker and leduc_poker), seeding, bad input."""

import copy

import numpy as np
import pytest
from pettingzoo.test import api_test

import rlkit as rk

GAMES = {"rlkit/KuhnPoker-v0": "kuhn_poker", "rlkit/LeducPoker-v0": "leduc_poker"}


@pytest.mark.parametrize("game_id", GAMES)
def test_pettingzoo_api_test(game_id):
    api_test(rk.make_game(game_id), num_cycles=300)


def _walk(ours, theirs, pyspiel_state_count):
    """Visit both trees at once; compare who acts, legal actions, information states, returns."""
    pyspiel_state_count[0] += 1
    if theirs.is_chance_node():
        mine, spiel = ours.chance_outcomes(), theirs.chance_outcomes()
        assert [a for a, _ in mine] == [a for a, _ in spiel]
        assert [p for _, p in mine] == pytest.approx([p for _, p in spiel])
        for outcome, _ in theirs.chance_outcomes():
            child = copy.deepcopy(ours)
            child.apply_chance(outcome)
            _walk(child, theirs.child(outcome), pyspiel_state_count)
        return
    if theirs.is_terminal():
        assert all(ours.terminations.values())
        assert [ours.rewards[a] for a in ours.possible_agents] == theirs.returns()
        return
    agent = ours.agent_selection
    assert agent == f"player_{theirs.current_player()}"
    mask = ours.observe(agent)["action_mask"]
    assert np.flatnonzero(mask).tolist() == theirs.legal_actions()
    for player in (0, 1):
        assert ours.information_state(f"player_{player}") == theirs.information_state_string(player)
    for action in theirs.legal_actions():
        child = copy.deepcopy(ours)
        child.step(action)
        _walk(child, theirs.child(action), pyspiel_state_count)


@pytest.mark.parametrize("game_id", GAMES)
def test_rules_and_information_states_match_openspiel(game_id):
    pyspiel = pytest.importorskip("pyspiel")
    env = rk.make_game(game_id)
    env.reset(options={"explicit_chance": True})
    count = [0]
    _walk(env, pyspiel.load_game(GAMES[game_id]).new_initial_state(), count)
    assert count[0] == {"rlkit/KuhnPoker-v0": 58, "rlkit/LeducPoker-v0": 9457}[game_id]


def test_kuhn_showdown_and_fold_rewards():
    env = rk.KuhnPokerEnv()
    env.reset(options={"explicit_chance": True})
    env.apply_chance(2)  # player_0: king
    env.apply_chance(0)  # player_1: jack
    env.step(1)
    env.step(1)  # bet, call: king wins 2
    assert env.rewards == {"player_0": 2.0, "player_1": -2.0}
    env.reset(options={"explicit_chance": True})
    env.apply_chance(0)
    env.apply_chance(2)
    env.step(0)
    env.step(1)
    env.step(0)  # pass, bet, fold: the bettor wins the ante
    assert env.rewards == {"player_0": -1.0, "player_1": 1.0}


def test_leduc_pair_beats_higher_card_and_second_round_raises_by_4():
    env = rk.LeducPokerEnv()
    env.reset(options={"explicit_chance": True})
    env.apply_chance(0)  # player_0: jack
    env.apply_chance(4)  # player_1: king
    env.step(1)
    env.step(1)  # check, check
    env.apply_chance(1)  # the public jack: player_0 has a pair
    assert env.agent_selection == "player_0"
    env.step(2)
    assert env.money_in == [5, 1]
    env.step(1)
    assert env.rewards == {"player_0": 5.0, "player_1": -5.0}


def test_seeded_deals_are_reproducible_and_vary():
    def deal(seed):
        env = rk.LeducPokerEnv()
        env.reset(seed=seed)
        env.step(1)
        env.step(1)
        return env.cards, env.public

    assert deal(3) == deal(3)
    assert len({str(deal(s)) for s in range(10)}) > 1


def test_deepcopy_steps_independently():
    env = rk.KuhnPokerEnv()
    env.reset(seed=0)
    clone = copy.deepcopy(env)
    clone.step(1)
    assert env.history == [] and clone.history == [1]


def test_illegal_action_is_refused_by_name():
    env = rk.LeducPokerEnv()
    env.reset(seed=0)
    with pytest.raises(
        ValueError, match=r"illegal action 0 for player_0; legal actions are \[1, 2\]"
    ):
        env.step(0)  # no fold without a bet


def test_acting_during_a_pending_chance_event_is_refused():
    env = rk.KuhnPokerEnv()
    env.reset(options={"explicit_chance": True})
    with pytest.raises(RuntimeError, match="chance event is pending"):
        env.step(0)
    with pytest.raises(ValueError, match="chance outcome 7 is not possible"):
        env.apply_chance(7)


def test_unknown_game_and_render_mode():
    with pytest.raises(ValueError, match="unknown game 'rlkit/Poker-v0'"):
        rk.make_game("rlkit/Poker-v0")
    with pytest.raises(ValueError, match="render_mode must be None or 'ansi'"):
        rk.KuhnPokerEnv(render_mode="human")
    env = rk.KuhnPokerEnv(render_mode="ansi")
    env.reset(seed=0)
    assert env.render().startswith("cards [")
