"""rk.ExploitabilityCurve and rk.GameTreeEnv: the curve of a run, its CSV file, bad input."""

import pytest

import rlkit as rk

KUHN = "rlkit/KuhnPoker-v0"


def test_records_every_n_iterations_and_writes_csv(tmp_path):
    path = tmp_path / "curve.csv"
    curve = rk.ExploitabilityCurve(n=5, path=path)
    env = rk.GameTreeEnv(KUHN)
    rk.run(rk.CFR(KUHN), env, rk.StopAfterNSteps(12), curve)
    assert env.steps == 12 and [i for i, _ in curve.curve] == [5, 10]
    lines = path.read_text().splitlines()
    assert lines[0] == "iteration,exploitability" and lines[2].startswith("10,")
    assert float(lines[2].split(",")[1]) == curve.curve[1][1]


def test_refuses_a_bad_n_and_a_run_without_a_game():
    with pytest.raises(ValueError, match="ExploitabilityCurve: n must be a positive integer"):
        rk.ExploitabilityCurve(n=0)
    with pytest.raises(TypeError, match="not an rk.GameTreeEnv"):
        rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(2),
               rk.ExploitabilityCurve(n=1))  # fmt: skip


def test_a_game_tree_env_needs_a_step_counting_stop():
    with pytest.raises(TypeError, match="count gradient steps"):
        rk.run(rk.CFR(KUHN), rk.GameTreeEnv(KUHN), rk.StopAfterNEpisodes(3))
