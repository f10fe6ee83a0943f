import math

import numpy as np
import pytest

import rlkit as rk
from rlkit.policies.explorers import (
    AbstractExplorer,
    EpsilonGreedyExplorer,
    GreedyExplorer,
    SoftmaxExplorer,
    UCBExplorer,
)


def assert_frequencies_match(actions, p, n_actions):
    """Counts of each action within 5 binomial standard deviations (+1) of n * p."""
    n = len(actions)
    counts = np.bincount(actions, minlength=n_actions)
    for a in range(n_actions):
        sd = math.sqrt(n * p[a] * (1 - p[a]))
        assert abs(counts[a] - n * p[a]) <= 5 * sd + 1, (a, counts, n * np.asarray(p))


def all_explorers(seed=0):
    return [
        EpsilonGreedyExplorer(0.3, seed=seed),
        EpsilonGreedyExplorer(0.05, kind="linear", decay_steps=50, warmup_steps=5, seed=seed),
        EpsilonGreedyExplorer(0.05, kind="exp", decay_steps=50, seed=seed),
        GreedyExplorer(seed=seed),
        UCBExplorer(c=1.0, seed=seed),
        SoftmaxExplorer(temperature=0.5, seed=seed),
    ]


# ---- epsilon-greedy: sampling matches prob ----


@pytest.mark.parametrize(
    "values, mask",
    [
        (np.array([0.0, 1.0, 0.5, -1.0]), None),
        (np.array([1.0, 1.0, 0.0, 1.0]), None),  # three-way tie
        (np.array([5.0, 1.0, 1.0, 0.0, 2.0]), np.array([False, True, True, True, False])),
    ],
)
def test_epsilon_greedy_frequencies_match_prob(values, mask):
    explorer = EpsilonGreedyExplorer(0.2, seed=1)
    p = explorer.prob(values, mask)
    assert p.sum() == pytest.approx(1.0)
    actions = [explorer(values, mask) for _ in range(20_000)]
    assert_frequencies_match(actions, p, len(values))


def test_epsilon_greedy_prob_values():
    explorer = EpsilonGreedyExplorer(0.2)
    np.testing.assert_allclose(
        explorer.prob(np.array([0.0, 3.0, 3.0, 1.0])), [0.05, 0.45, 0.45, 0.05]
    )
    mask = np.array([True, False, True, True])
    np.testing.assert_allclose(
        explorer.prob(np.array([0.0, 3.0, 2.0, 1.0]), mask), [0.2 / 3, 0.0, 0.8 + 0.2 / 3, 0.2 / 3]
    )
    assert explorer.prob(np.array([0.0, 3.0, 2.0, 1.0]), mask)[1] == 0.0


def test_epsilon_greedy_returns_python_ints_and_accepts_lists():
    explorer = EpsilonGreedyExplorer(0.5, seed=0)
    for _ in range(50):
        assert type(explorer([0.0, 1.0, 1.0])) is int
        assert type(explorer(np.zeros(3), np.array([True, False, True]))) is int


def test_epsilon_greedy_zero_is_greedy_and_one_is_uniform():
    values = np.array([0.0, 2.0, 1.0])
    greedy = EpsilonGreedyExplorer(0.0, seed=0)
    assert {greedy(values) for _ in range(200)} == {1}
    uniform = EpsilonGreedyExplorer(1.0, seed=0)
    np.testing.assert_allclose(uniform.prob(values), [1 / 3] * 3)
    assert_frequencies_match([uniform(values) for _ in range(6000)], [1 / 3] * 3, 3)


def test_epsilon_greedy_many_actions_path():
    values = np.zeros(200)
    values[[7, 150]] = 1.0
    explorer = EpsilonGreedyExplorer(0.0, seed=3)
    actions = [explorer(values) for _ in range(4000)]
    assert set(actions) == {7, 150}
    assert_frequencies_match(actions, explorer.prob(values), 200)
    values[150] = 0.5
    assert explorer(values) == 7
    p = EpsilonGreedyExplorer(0.1).prob(values)
    assert p[7] == pytest.approx(0.9 + 0.1 / 200) and p.sum() == pytest.approx(1.0)


# ---- epsilon-greedy: schedules ----


def test_constant_epsilon_and_step_counter():
    explorer = EpsilonGreedyExplorer(0.25, seed=0)
    values = np.zeros(3)
    for _ in range(10):
        explorer.prob(values)
    assert explorer.step == 0  # prob never advances the counter
    for _ in range(7):
        explorer(values)
    assert explorer.step == 7
    assert explorer.epsilon == 0.25


def test_linear_decay_with_warmup_at_chosen_steps():
    explorer = EpsilonGreedyExplorer(
        0.1, kind="linear", epsilon_start=0.9, decay_steps=8, warmup_steps=4, seed=0
    )
    expected = {0: 0.9, 3: 0.9, 4: 0.9, 5: 0.8, 8: 0.5, 11: 0.2, 12: 0.1, 13: 0.1, 1000: 0.1}
    for step, eps in expected.items():
        assert explorer.epsilon_at(step) == pytest.approx(eps)
    values = np.zeros(2)
    seen = []
    for _ in range(14):
        seen.append(explorer.epsilon)
        explorer(values)
    for step in range(14):
        assert seen[step] == pytest.approx(explorer.epsilon_at(step))
    assert explorer.epsilon == pytest.approx(0.1)


def test_exponential_decay():
    explorer = EpsilonGreedyExplorer(
        0.05, kind="exp", epsilon_start=1.0, decay_steps=10, warmup_steps=3, seed=0
    )
    assert explorer.epsilon_at(0) == explorer.epsilon_at(3) == 1.0  # warm-up
    assert explorer.epsilon_at(13) == pytest.approx(0.05 + 0.95 * math.exp(-1.0))
    assert explorer.epsilon_at(23) == pytest.approx(0.05 + 0.95 * math.exp(-2.0))
    assert explorer.epsilon_at(10_000) == pytest.approx(0.05)
    for _ in range(13):
        explorer(np.zeros(2))
    assert explorer.epsilon == pytest.approx(0.05 + 0.95 * math.exp(-1.0))


def test_epsilon_end_overrides_and_defaults_to_epsilon():
    assert EpsilonGreedyExplorer(0.2, kind="linear", decay_steps=5).epsilon_at(5) == 0.2
    explorer = EpsilonGreedyExplorer(kind="linear", epsilon_end=0.3, decay_steps=5)
    assert explorer.epsilon_at(99) == pytest.approx(0.3)


def test_warmup_keeps_start_during_sampling():
    explorer = EpsilonGreedyExplorer(
        0.0, kind="linear", epsilon_start=1.0, decay_steps=1, warmup_steps=3000, seed=4
    )
    values = np.array([0.0, 10.0])
    actions = [explorer(values) for _ in range(3000)]  # uniformly random during warm-up
    assert_frequencies_match(actions, [0.5, 0.5], 2)
    assert {explorer(values) for _ in range(100)} == {1}  # fully greedy after the decay


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"epsilon": 1.5}, "epsilon must be a number in \\[0, 1\\], got 1.5"),
        ({"epsilon": -0.1}, "got -0.1"),
        ({"epsilon": float("nan")}, "got nan"),
        ({"epsilon": True}, "got True"),
        ({"kind": "linear", "decay_steps": 3, "epsilon_start": 2.0}, "epsilon_start .* got 2.0"),
        ({"kind": "linear", "decay_steps": 3, "epsilon_end": -1}, "epsilon_end .* got -1"),
        ({"kind": "cosine"}, "kind must be one of .* got 'cosine'"),
        ({"kind": "linear"}, "decay_steps must be a positive integer, got None"),
        ({"kind": "exp", "decay_steps": 0}, "got 0"),
        ({"decay_steps": 10}, "needs kind='linear'"),
        ({"kind": "linear", "decay_steps": 3, "warmup_steps": -1}, "warmup_steps .* got -1"),
    ],
)
def test_epsilon_greedy_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=f"EpsilonGreedyExplorer: .*{match}"):
        EpsilonGreedyExplorer(**kwargs)


def test_epsilon_statistics():
    explorer = EpsilonGreedyExplorer(0.1, kind="linear", decay_steps=10)
    assert rk.statistics(explorer) == {"epsilon": 1.0}
    explorer(np.zeros(2))
    assert rk.statistics(explorer)["epsilon"] == pytest.approx(0.91)
    assert rk.statistics(GreedyExplorer()) == {}


# ---- greedy: ties ----


def test_greedy_ties_uniform():
    explorer = GreedyExplorer(seed=0)
    values = np.array([1.0, 1.0, 0.0, 1.0])
    p = explorer.prob(values)
    np.testing.assert_allclose(p, [1 / 3, 1 / 3, 0, 1 / 3])
    actions = [explorer(values) for _ in range(6000)]
    assert 2 not in actions
    assert_frequencies_match(actions, p, 4)


def test_greedy_unique_max_and_mask():
    explorer = GreedyExplorer(seed=0)
    assert explorer(np.array([0.0, -1.0, 3.0])) == 2
    mask = np.array([True, True, False])
    assert {explorer(np.array([0.0, 0.0, 3.0]), mask) for _ in range(100)} == {0, 1}
    np.testing.assert_allclose(explorer.prob(np.array([0.0, 0.0, 3.0]), mask), [0.5, 0.5, 0.0])


# ---- every explorer: masks and reproducibility ----


@pytest.mark.parametrize("index", range(6))
def test_masks_never_choose_illegal_actions(index):
    explorer = all_explorers(seed=index)[index]
    rng = np.random.default_rng(100 + index)
    for _ in range(300):
        values = rng.normal(size=6)
        values[rng.integers(6)] = 10.0  # often an illegal best action
        mask = rng.random(6) < 0.5
        mask[rng.integers(6)] = True
        p = explorer.prob(values, mask)
        assert p.sum() == pytest.approx(1.0)
        assert np.all(p[~mask] == 0.0)
        assert mask[explorer(values, mask)]


@pytest.mark.parametrize("index", range(6))
def test_same_seed_same_actions(index):
    rng = np.random.default_rng(7)
    values = [rng.normal(size=4).round(0) for _ in range(200)]
    first, second = all_explorers(seed=5)[index], all_explorers(seed=5)[index]
    assert [first(v) for v in values] == [second(v) for v in values]


@pytest.mark.parametrize("index", range(6))
def test_state_dict_round_trip(index):
    rng = np.random.default_rng(3)
    values = [rng.normal(size=4).round(0) for _ in range(100)]
    explorer = all_explorers(seed=1)[index]
    for v in values[:40]:
        explorer(v)
    state = explorer.state_dict()
    expected = [explorer(v) for v in values[40:]]
    fresh = all_explorers(seed=999)[index]
    fresh.load_state_dict(state)
    assert [fresh(v) for v in values[40:]] == expected
    explorer.load_state_dict(state)
    assert [explorer(v) for v in values[40:]] == expected


@pytest.mark.parametrize("index", range(6))
def test_bad_masks(index):
    explorer = all_explorers()[index]
    values = np.zeros(3)
    with pytest.raises(ValueError, match="mask shape"):
        explorer(values, np.array([True, False]))
    with pytest.raises(ValueError, match="no action legal"):
        explorer.prob(values, np.zeros(3, dtype=bool))
    with pytest.raises(ValueError, match="boolean"):
        explorer(values, np.array([1, 0, 1]))


def test_all_are_explorers():
    assert all(isinstance(e, AbstractExplorer) for e in all_explorers())
    assert rk.EpsilonGreedyExplorer is EpsilonGreedyExplorer


# ---- UCB ----


def test_ucb_tries_every_arm_first():
    explorer = UCBExplorer(c=2.0, seed=0)
    values = np.array([0.0, 5.0, 1.0, 2.0, 3.0])
    first = [explorer(values) for _ in range(5)]
    assert sorted(first) == [0, 1, 2, 3, 4]
    assert explorer.counts.tolist() == [1] * 5 and explorer.t == 5


def test_ucb_untried_first_with_mask_and_random_order():
    orders = set()
    for seed in range(20):
        explorer = UCBExplorer(seed=seed)
        mask = np.array([True, False, True, True])
        orders.add(tuple(explorer(np.zeros(4), mask) for _ in range(3)))
        assert explorer.counts[1] == 0
    assert all(sorted(o) == [0, 2, 3] for o in orders)
    assert len(orders) > 1  # untried arms are taken in random order


def test_ucb_formula_and_prob():
    explorer = UCBExplorer(c=1.0, n_actions=3, seed=0)
    explorer.load_state_dict(
        {"rng": explorer.rng.bit_generator.state, "t": 10, "counts": np.array([5, 1, 4])}
    )
    values = np.array([1.0, 0.2, 0.9])
    scores = values + np.sqrt(math.log(11) / np.array([5, 1, 4]))
    best = int(np.argmax(scores))
    np.testing.assert_allclose(explorer.prob(values), np.eye(3)[best])
    assert explorer(values) == best
    assert explorer.counts[best] == [5, 1, 4][best] + 1 and explorer.t == 11
    assert UCBExplorer(c=0.0, n_actions=3).prob(np.zeros(3)).tolist() == [1 / 3] * 3


def test_ucb_prob_before_first_call_does_not_fix_action_count():
    explorer = UCBExplorer()
    explorer.prob(np.zeros(3))
    assert explorer.counts is None
    assert explorer(np.zeros(5)) in range(5)
    with pytest.raises(ValueError, match="counts 5 actions"):
        explorer(np.zeros(3))


def test_ucb_finds_best_arm_of_a_bandit():
    rng = np.random.default_rng(0)
    means = np.array([0.1, 0.5, 0.9, 0.3])
    explorer = UCBExplorer(c=1.0, n_actions=4, seed=0)
    estimates, counts = np.zeros(4), np.zeros(4)
    for _ in range(2000):
        a = explorer(estimates)
        counts[a] += 1
        estimates[a] += (rng.normal(means[a], 1.0) - estimates[a]) / counts[a]
    assert np.argmax(counts) == 2 and counts[2] > 1000


@pytest.mark.parametrize("c", [-1.0, float("inf"), "2"])
def test_ucb_bad_c(c):
    with pytest.raises(ValueError, match=f"UCBExplorer: c must be .* got {c!r}"):
        UCBExplorer(c=c)


# ---- softmax ----


def test_softmax_probabilities():
    explorer = SoftmaxExplorer(temperature=2.0, seed=0)
    values = np.array([1.0, 2.0, 4.0])
    expected = np.exp(values / 2.0) / np.exp(values / 2.0).sum()
    np.testing.assert_allclose(explorer.prob(values), expected)
    actions = [explorer(values) for _ in range(20_000)]
    assert_frequencies_match(actions, expected, 3)


def test_softmax_is_numerically_stable():
    explorer = SoftmaxExplorer(temperature=0.01, seed=0)
    p = explorer.prob(np.array([1000.0, 1000.0, 999.0]))
    np.testing.assert_allclose(p, [0.5, 0.5, 0.0], atol=1e-12)
    assert explorer(np.array([1e6, -1e6])) == 0
    np.testing.assert_allclose(explorer.prob(np.array([-np.inf, -np.inf])), [0.5, 0.5])
    np.testing.assert_allclose(explorer.prob(np.array([np.inf, 0.0])), [1.0, 0.0])


def test_softmax_mask():
    explorer = SoftmaxExplorer(seed=0)
    mask = np.array([False, True, True])
    values = np.array([10.0, 0.0, math.log(3.0)])
    np.testing.assert_allclose(explorer.prob(values, mask), [0.0, 0.25, 0.75])
    assert_frequencies_match([explorer(values, mask) for _ in range(8000)], [0, 0.25, 0.75], 3)


@pytest.mark.parametrize("temperature", [0.0, -1.0, float("inf"), float("nan")])
def test_softmax_bad_temperature(temperature):
    with pytest.raises(ValueError, match="SoftmaxExplorer: temperature must be .* got"):
        SoftmaxExplorer(temperature=temperature)
