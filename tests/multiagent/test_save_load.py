"""rk.save / rk.load of multi-agent policies (rlkit/deploy/multi_agent.py): a MultiAgentPolicy
of tabular and deep children, and a SelfPlay, round-trip with the same actions per agent; what
cannot be saved is refused naming the agent, and a refused save or load changes nothing."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest
from multiagent_games import tictactoe_games

import rlkit as rk
from rlkit.deploy.errors import ArtifactError

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def tabular():
    """SelfPlayQ_TicTacToe trained briefly: one table shared by both seats."""
    experiment = rk.make_experiment("SelfPlayQ_TicTacToe", 0, episodes=300)
    rk.run(experiment)
    return experiment.policy


@pytest.fixture(scope="module")
def connect_four():
    """SelfPlayDQN_ConnectFour trained briefly (some gradient steps)."""
    overrides = {"total_steps": 600, "learning_starts": 100, "buffer_size": 1000}
    experiment = rk.make_experiment("SelfPlayDQN_ConnectFour", 0, **overrides)
    rk.run(experiment)
    assert experiment.policy.learner.policy.learner.gradient_steps > 0
    return experiment.policy


def _boards(n: int, seed: int) -> np.ndarray:
    """Random tic-tac-toe states (board integers, legal or not: the table has every row)."""
    return np.random.default_rng(seed).integers(0, 3**9, n)


def test_a_shared_tabular_policy_round_trips_with_the_same_actions(tabular, tmp_path):
    path = tmp_path / "ttt.rlkit"
    rk.save(tabular, path)
    from rlkit.experiments.multiagent import tictactoe_env

    loaded = rk.load(path, env=tictactoe_env(0, tabular=True))
    assert isinstance(loaded, rk.MultiAgentPolicy)
    assert loaded.policy_of("player_1") is loaded.policy_of("player_2")  # shared, saved once
    boards = _boards(2000, 1)
    for agent in ("player_1", "player_2"):
        expected = tabular.policy_of(agent).predict(boards)
        assert loaded.predict({agent: boards})[agent].tolist() == expected.tolist()
    with zipfile.ZipFile(path) as zf:  # one table for both agents
        assert zf.namelist() == ["policy.json", "policy.safetensors"]
    meta, tensors = rk.deploy.archive.read_archive(path)
    assert meta["agents"] == [["player_1", 0], ["player_2", 0]] and list(tensors) == ["0/q"]


def test_the_loaded_players_play_as_the_trained_ones(tabular, tmp_path):
    """In games, not only on states: the loaded greedy players give the trained greedy
    players' results (ties broken alike: the same generator seeds)."""
    path = tmp_path / "ttt.rlkit"
    rk.save(tabular, path)
    trained, loaded = rk.greedy(tabular, 3), rk.greedy(rk.load(path), 3)
    for seat in ("player_1", "player_2"):
        a = tictactoe_games(trained.policy_of(seat), rk.RandomPolicy(seed=4), seat, 40, 5)
        b = tictactoe_games(loaded.policy_of(seat), rk.RandomPolicy(seed=4), seat, 40, 5)
        assert a.tolist() == b.tolist()


def test_self_play_dqn_saves_its_learner_for_every_seat(connect_four, tmp_path):
    path = tmp_path / "c4.rlkit"
    rk.save(connect_four, path)
    loaded = rk.load(path)
    assert list(loaded.policies) == ["player_0", "player_1"]
    assert loaded.policy_of("player_0") is loaded.policy_of("player_1")
    boards = np.random.default_rng(2).integers(0, 2, (500, 84)).astype(np.float32)
    masks = np.random.default_rng(3).random((500, 7)) < 0.7
    masks[:, 0] = True
    expected = connect_four.learner.predict(boards, action_masks=masks)
    got = loaded.predict({"player_0": boards, "player_1": boards},
                         action_masks={"player_1": masks})  # fmt: skip
    assert got["player_1"].tolist() == expected.tolist()
    assert got["player_0"].tolist() == connect_four.learner.predict(boards).tolist()


def test_tabular_and_deep_children_side_by_side(tabular, connect_four, tmp_path):
    """A map of different kinds: each child is saved with its own artifact and loaded back."""
    policy = rk.MultiAgentPolicy({
        "x": tabular.policy_of("player_1"),
        "o": connect_four.learner,
        "o2": connect_four.learner,
    })  # fmt: skip
    path = tmp_path / "mixed.rlkit"
    rk.save(policy, path)
    loaded = rk.load(path)
    names = sorted(
        type(child.policy.learner).__name__
        for child in (policy.policies["x"], connect_four.learner)
    )
    assert loaded.algorithm == f"MultiAgent({', '.join(names)})"  # NegamaxDQN..., NegamaxQ...
    assert loaded.policy_of("o") is loaded.policy_of("o2") is not loaded.policy_of("x")
    boards = np.random.default_rng(5).integers(0, 2, (100, 84)).astype(np.float32)
    got = loaded.predict({"x": _boards(100, 6), "o": boards})
    assert got["x"].tolist() == tabular.policy_of("player_1").predict(_boards(100, 6)).tolist()
    assert got["o"].tolist() == connect_four.learner.predict(boards).tolist()
    again = tmp_path / "again.rlkit"
    rk.save(loaded, again)  # a loaded multi-agent policy saves again, to the same tensors
    assert (
        rk.deploy.archive.read_archive(again)[0]["tensors_sha256"]
        == (rk.deploy.archive.read_archive(path)[0]["tensors_sha256"])
    )


def test_a_child_that_cannot_be_saved_is_refused_by_agent_and_nothing_is_written(tabular, tmp_path):
    path = tmp_path / "p.rlkit"
    rk.save(tabular, path)
    before = path.read_bytes()
    policy = rk.MultiAgentPolicy({"player_1": tabular.policy_of("player_1"),
                                  "player_2": rk.RandomPolicy(seed=0)})  # fmt: skip
    with pytest.raises(
        TypeError,
        match=r"the policy of agent 'player_2', a RandomPolicy, cannot "
        r"be saved: rk.save: no artifact for a RandomPolicy",
    ):
        rk.save(policy, path)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["p.rlkit"]
    shared = rk.MultiAgentPolicy.shared(rk.RandomPolicy(seed=0), ["a", "b"])
    with pytest.raises(TypeError, match=r"agent 'a' \(shared by agents \['a', 'b'\]\)"):
        rk.save(shared, tmp_path / "q.rlkit")
    odd = rk.MultiAgentPolicy({("team", 1): tabular.policy_of("player_1")})
    with pytest.raises(TypeError, match=r"agent name \('team', 1\) \(tuple\) cannot be stored"):
        rk.save(odd, tmp_path / "q.rlkit")
    assert [p.name for p in tmp_path.iterdir()] == ["p.rlkit"]


def test_a_refused_load_names_the_agent_and_changes_nothing(tabular, tmp_path):
    from rlkit.experiments.multiagent import connect_four_env, tictactoe_env

    path = tmp_path / "ttt.rlkit"
    rk.save(tabular, path)
    before = path.read_bytes()
    with pytest.raises(
        ValueError,
        match=r"\(agent 'player_1'\): the policy was saved for "
        r"observations Discrete\(19683\)",
    ):
        rk.load(path, env=tictactoe_env(0, tabular=False))
    with pytest.raises(
        ValueError,
        match=r"the env \(PettingZooEnv\) has agents \['player_0'\] the saved policy has no "
        r"child for \(it has \['player_1', 'player_2'\]\)",
    ):
        rk.load(path, env=connect_four_env(0))
    with pytest.raises(TypeError, match="checked against a multi-agent env"):
        rk.load(path, env=rk.GymEnv("CliffWalking-v1"))
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["ttt.rlkit"]


def test_a_malformed_member_is_an_artifact_error(tabular, tmp_path):
    from rlkit.deploy.archive import read_archive, write_archive

    path = tmp_path / "ttt.rlkit"
    rk.save(tabular, path)
    meta, tensors = read_archive(path)
    for key in ("format", "format_version", "versions", "tensors_sha256"):
        meta.pop(key)
    bad = {**meta, "agents": [["player_1", 3]]}
    write_archive(tmp_path / "bad.rlkit", bad, tensors)
    with pytest.raises(ArtifactError, match=r"agent entry must be \[agent, member index\]"):
        rk.load(tmp_path / "bad.rlkit")
    nested = {**meta, "members": [{**meta}]}
    write_archive(tmp_path / "nested.rlkit", nested, tensors)
    with pytest.raises(ArtifactError, match="member 0 is not a single-agent policy"):
        rk.load(tmp_path / "nested.rlkit")


def test_predict_refuses_unknown_agents_and_stray_masks(tabular):
    with pytest.raises(rk.UnknownAgentError, match="no policy for agent 'player_3'"):
        tabular.predict({"player_3": 0})
    with pytest.raises(
        ValueError,
        match=r"action_masks for agents \['player_2'\] that have no "
        r"observation",
    ):
        tabular.predict({"player_1": 0}, action_masks={"player_2": np.ones(9, bool)})
    with pytest.raises(TypeError, match="expected a dict"):
        tabular.predict(np.zeros(3))
