"""rk.CFR: OpenSpiel's CFR tests (Kuhn game values after 300 CFR / 200 CFR+ iterations),
convergence, equality with OpenSpiel's solvers, runs, bit-exact resume and bad input."""

import numpy as np
import pytest
from game_helpers import Pennies

import rlkit as rk
from rlkit.solvers.tree_passes import edge_probabilities, tree_index, values

KUHN, LEDUC = "rlkit/KuhnPoker-v0", "rlkit/LeducPoker-v0"


def _game_values(policy, game):
    tree = rk.GameTree.from_game(game)
    table = np.array([policy.probabilities(key) for key in tree.infosets])
    index = tree_index(tree)
    v = values(tree, index, edge_probabilities(tree, index, table))[0]
    return [v, -v]


@pytest.mark.parametrize(("plus", "iterations"), [(False, 300), (True, 200)])
def test_kuhn_average_policy_values_as_openspiel_asserts(plus, iterations):
    cfr = rk.CFR(KUHN, plus=plus)
    cfr.iterate(iterations)
    np.testing.assert_allclose(
        _game_values(cfr.average_policy(), KUHN), [-1 / 18, 1 / 18], atol=1e-3
    )


@pytest.mark.parametrize("plus", [False, True])
def test_kuhn_exploitability_below_0_005(plus):
    cfr = rk.CFR(KUHN, plus=plus)
    cfr.iterate(600)
    assert rk.exploitability(cfr.average_policy(), KUHN) < 0.005


def test_leduc_cfr_plus_converges():
    cfr = rk.CFR(LEDUC, plus=True)
    curve = []
    for _ in range(5):
        cfr.iterate(20)
        curve.append(rk.exploitability(cfr, LEDUC))
    assert all(b < a for a, b in zip(curve, curve[1:], strict=False))
    assert curve[-1] < 0.02


@pytest.mark.parametrize(("game", "plus"), [("kuhn_poker", False), ("leduc_poker", True)])
def test_same_numbers_as_openspiel(game, plus):
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python.algorithms import cfr as os_cfr
    from open_spiel.python.algorithms import exploitability as os_exploitability

    os_game = pyspiel.load_game(game)
    theirs = (os_cfr.CFRPlusSolver if plus else os_cfr.CFRSolver)(os_game)
    ours = rk.CFR(KUHN if game == "kuhn_poker" else LEDUC, plus=plus)
    for _ in range(5):
        theirs.evaluate_and_update_policy()
    ours.iterate(5)
    expected = os_exploitability.exploitability(os_game, theirs.average_policy())
    assert rk.exploitability(ours, ours.tree) == pytest.approx(expected, rel=1e-12)


def test_a_run_counts_iterations_and_resumes_bit_exactly(tmp_path):
    def solver():
        return rk.CFR(LEDUC, plus=True, seed=0)

    straight = solver()
    rk.run(straight, rk.GameTreeEnv(LEDUC), rk.StopAfterNSteps(6))
    first = solver()
    rk.run(first, rk.GameTreeEnv(LEDUC), rk.StopAfterNSteps(3),
           rk.CheckpointHook(tmp_path, every_n_steps=3))  # fmt: skip
    resumed, env = solver(), rk.GameTreeEnv(LEDUC)
    rk.run(resumed, env, rk.StopAfterNSteps(6), rk.CheckpointHook(tmp_path, every_n_steps=3),
           resume_from=tmp_path)  # fmt: skip
    assert resumed.iteration == env.steps == 6
    assert np.array_equal(resumed.cumulative_regret, straight.cumulative_regret)
    assert np.array_equal(resumed.cumulative_policy, straight.cumulative_policy)


def test_the_average_policy_plays_the_game():
    cfr = rk.CFR(KUHN, seed=0)
    cfr.iterate(50)
    env = rk.make_game(KUHN)
    env.reset(seed=1)
    action = cfr(env)
    assert action in (0, 1)
    assert rk.statistics(cfr)["iteration"] == 50.0


def test_bad_input():
    with pytest.raises(TypeError, match="CFR: plus must be True or False, got 'yes'"):
        rk.CFR(KUHN, plus="yes")
    with pytest.raises(ValueError, match="two-player zero-sum"):
        rk.CFR(Pennies(payoff=lambda a, b: (1.0, 0.5)))
    with pytest.raises(TypeError, match="is a dict, which is not hashable"):
        rk.CFR(Pennies(key=lambda agent, bits: {"agent": agent}))
    cfr = rk.CFR(KUHN)
    with pytest.raises(ValueError, match="does not fit"):
        cfr.load_state_dict(rk.CFR(LEDUC).state_dict())


def test_a_generic_aec_game_matching_pennies_in_turn():
    cfr = rk.CFR(Pennies(), plus=True)
    cfr.iterate(200)
    average = cfr.average_policy()
    assert average.probabilities("player_1:1") == pytest.approx([0.5, 0.5], abs=0.01)
    assert rk.exploitability(average, cfr.tree) < 0.01
    assert rk.game_value(average, cfr.tree) == pytest.approx([0.0, 0.0], abs=0.01)
