"""rk.TabularPolicy: acting from a table of information states, and the tables it refuses."""

import numpy as np
import pytest

import rlkit as rk

KUHN_STATES = [f"{c}{h}" for c in "012" for h in ("", "p", "b", "pb")]


def test_acts_by_the_table_and_is_reproducible():
    def actions(seed):
        policy = rk.TabularPolicy(dict.fromkeys(KUHN_STATES, [0.3, 0.7]), seed=seed)
        env = rk.make_game("rlkit/KuhnPoker-v0")
        env.reset(seed=0)
        return [policy(env) for _ in range(200)]

    assert actions(1) == actions(1)
    assert 0.6 < np.mean(actions(1)) < 0.8


def test_a_missing_information_state_is_named():
    policy = rk.TabularPolicy({"0": [1.0, 0.0]})
    env = rk.make_game("rlkit/KuhnPoker-v0")
    env.reset(seed=1)
    env.step(0)  # player_1 to act: "<card>p" is not in the table
    with pytest.raises(ValueError, match=r"no probabilities for the information state '\dp'"):
        policy(env)


def test_bad_tables_are_refused():
    with pytest.raises(TypeError, match="table must be a mapping"):
        rk.TabularPolicy([0.5, 0.5])
    with pytest.raises(ValueError, match="at information state 'x' sum to 0.5, expected 1"):
        rk.TabularPolicy({"x": [0.25, 0.25]})
    with pytest.raises(ValueError, match="2 finite non-negative numbers"):
        rk.TabularPolicy({"x": [1.5, -0.5]})


def test_weight_on_an_illegal_action_is_refused_when_acting():
    env = rk.make_game("rlkit/LeducPoker-v0")
    env.reset(seed=0)
    key = env.information_state(env.agent_selection)
    with pytest.raises(ValueError, match=r"illegal action \(legal: \[1, 2\]\)"):
        rk.TabularPolicy({key: [1.0, 0.0, 0.0]})(env)


def test_dict_rows_and_state_dict():
    policy = rk.TabularPolicy({"a": {1: 1.0}}, num_actions=3, seed=0)
    assert policy.probabilities("a").tolist() == [0.0, 1.0, 0.0]
    state = policy.state_dict()
    policy.rng.random()
    policy.load_state_dict(state)
    assert policy.state_dict()["rng"] == state["rng"]
