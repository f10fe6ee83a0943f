import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk
from rlkit.trajectories.circular import CircularArraySARTTrajectory
from rlkit.trajectories.prioritized import PrioritizedCircularArraySARTTrajectory

# upper 0.1% quantile of the chi-square distribution with 7 degrees of freedom
CHI2_7_DF_999 = 24.322

BOX = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
DISCRETE = gym.spaces.Discrete(3)


def filled(capacity: int, count: int, **kwargs) -> PrioritizedCircularArraySARTTrajectory:
    t = PrioritizedCircularArraySARTTrajectory(capacity, state_shape=(), **kwargs)
    for i in range(count):
        t.append(i, 0, 1.0, False, False, i + 1)
    return t


def test_is_a_circular_trajectory():
    t = PrioritizedCircularArraySARTTrajectory(10, BOX, DISCRETE)
    assert isinstance(t, CircularArraySARTTrajectory)
    assert rk.PrioritizedCircularArraySARTTrajectory is PrioritizedCircularArraySARTTrajectory
    assert t.state.shape == (10, 2) and t.action.dtype == np.int64
    assert (t.alpha, t.beta, t.beta_end, t.epsilon, t.max_priority) == (0.6, 0.4, 1.0, 1e-6, 1.0)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"alpha": -0.1}, r"alpha must be a non-negative finite number, got -0.1"),
        ({"beta": 1.5}, r"beta must be a number in \[0, 1\], got 1.5"),
        ({"beta_end": -1}, r"beta_end must be a number in \[0, 1\], got -1"),
        ({"beta_steps": 0}, r"beta_steps must be a positive integer, got 0"),
        ({"beta_steps": 10.0}, r"beta_steps must be a positive integer, got 10.0"),
        ({"epsilon": 0.0}, r"epsilon must be a positive finite number, got 0.0"),
        ({"alpha": "0.6"}, r"alpha must be a non-negative finite number"),
        ({"alpha": float("nan")}, r"alpha must be a non-negative finite number"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match="PrioritizedCircularArraySARTTrajectory: " + message):
        PrioritizedCircularArraySARTTrajectory(10, BOX, DISCRETE, **kwargs)
    with pytest.raises(ValueError, match="capacity must be a positive integer"):
        PrioritizedCircularArraySARTTrajectory(0, BOX, DISCRETE)


def test_new_transitions_get_the_largest_priority_so_far():
    t = filled(8, 3, alpha=0.5)
    np.testing.assert_array_equal(t.tree.priorities, [1, 1, 1, 0, 0, 0, 0, 0])
    t.update_priorities([0, 1], [3.0, -0.5])  # |delta| + epsilon, to the power alpha
    np.testing.assert_allclose(t.tree[[0, 1]], np.sqrt([3.0 + 1e-6, 0.5 + 1e-6]))
    assert t.max_priority == pytest.approx(3.0 + 1e-6)
    t.append(3, 0, 1.0, False, False, 4)
    assert t.tree[3] == pytest.approx(np.sqrt(3.0 + 1e-6))
    t.update_priorities([0], [0.1])  # the largest so far does not fall
    t.append(4, 0, 1.0, False, False, 5)
    assert t.tree[4] == pytest.approx(np.sqrt(3.0 + 1e-6))


def test_recording_in_a_run_sets_priorities():
    env = rk.GymEnv("CartPole-v1", seed=0)
    t = PrioritizedCircularArraySARTTrajectory(64, env.state_space, env.action_space)
    rk.run(rk.Agent(rk.RandomPolicy(seed=0), t), env, rk.StopAfterNSteps(100))
    assert len(t) == 64 and t.n_inserted == 100
    np.testing.assert_array_equal(t.tree.priorities, np.ones(64))


def test_sampling_is_proportional_to_priority_to_the_alpha():
    t = filled(8, 8, alpha=0.7)
    errors = np.array([0.5, 3.0, 1.0, 10.0, 0.1, 2.0, 4.0, 1.5])
    t.update_priorities(np.arange(8), errors)
    rng = np.random.default_rng(0)
    draws = 8000
    counts = np.zeros(8)
    for _ in range(draws):
        counts += np.bincount(t.sample_indices(8, rng)[0], minlength=8)
    probabilities = (errors + 1e-6) ** 0.7 / ((errors + 1e-6) ** 0.7).sum()
    expected = draws * 8 * probabilities
    # stratified sampling varies less than multinomial sampling: the test is conservative
    assert ((counts - expected) ** 2 / expected).sum() < CHI2_7_DF_999


def test_alpha_zero_is_uniform_with_unit_weights():
    t = filled(10, 10, alpha=0.0)
    t.update_priorities(np.arange(10), np.arange(10.0))
    indices, weights = t.sample_indices(10, np.random.default_rng(0))
    # stratified over equal priorities: one from each tenth of the mass, i.e. every slot once
    assert sorted(indices.tolist()) == list(range(10))
    np.testing.assert_array_equal(weights, np.ones(10, np.float32))


def test_stratified_sampling():
    t = filled(4, 4, alpha=1.0)
    t.update_priorities(np.arange(4), [1.0, 1.0, 1.0, 9.0])  # the last holds 3/4 of the mass
    rng = np.random.default_rng(1)
    first = set()
    for _ in range(50):
        indices, _ = t.sample_indices(4, rng)
        # one draw from each quarter of the mass: the first from slots 0-2, the others slot 3
        assert indices[0] != 3 and indices[1] == indices[2] == indices[3] == 3
        first.add(int(indices[0]))
    assert first == {0, 1, 2}


def test_importance_weights():
    t = filled(4, 4, alpha=1.0, beta=0.5)
    errors = np.array([1.0, 2.0, 3.0, 4.0])
    t.update_priorities(np.arange(4), errors - 1e-6)  # priorities exactly 1, 2, 3, 4
    indices, weights = t.sample_indices(4, np.random.default_rng(2))
    probabilities = errors[indices] / errors.sum()
    expected = (4 * probabilities) ** -0.5
    np.testing.assert_allclose(weights, expected / expected.max(), rtol=1e-6)
    assert weights.dtype == np.float32 and weights.max() == 1.0


def test_beta_anneals_linearly_per_sampled_batch():
    t = filled(8, 8, beta=0.4, beta_end=1.0, beta_steps=4)
    t.update_priorities(np.arange(8), np.arange(1.0, 9.0))
    rng = np.random.default_rng(3)
    betas = []
    for _ in range(6):
        betas.append(t.beta)
        indices, weights = t.sample_indices(8, rng)
        p = t.tree[indices] / t.tree.total
        expected = (8 * p) ** -betas[-1]
        np.testing.assert_allclose(weights, expected / expected.max(), rtol=1e-6)
    np.testing.assert_allclose(betas, [0.4, 0.55, 0.7, 0.85, 1.0, 1.0])
    assert t.n_sampled == 6


def test_the_slot_being_rewritten_is_never_sampled():
    t = filled(4, 6)  # full: head at slot 2
    t.begin_transition(6, 0)
    rng = np.random.default_rng(4)
    seen = set()
    for _ in range(200):
        seen |= set(t.sample_indices(3, rng)[0].tolist())
    assert seen == {0, 1, 3}
    t.end_transition(1.0, False, False, 7)
    assert t.tree[2] == t.max_priority**t.alpha


def test_unwritten_slots_are_never_sampled():
    t = filled(100, 5)
    seen = set()
    rng = np.random.default_rng(5)
    for _ in range(200):
        seen |= set(t.sample_indices(5, rng)[0].tolist())
    assert seen == {0, 1, 2, 3, 4}
    with pytest.raises(ValueError, match="holds 5 transitions, fewer than batch_size 6"):
        t.sample_indices(6, rng)


def test_update_priorities_errors_and_tensors():
    torch = pytest.importorskip("torch")
    t = filled(8, 8, alpha=1.0)
    errors = torch.tensor([0.5, -2.0], requires_grad=True) * 2
    t.update_priorities(torch.tensor([1, 2]), errors)
    np.testing.assert_allclose(t.tree[[1, 2]], [1.0 + 1e-6, 4.0 + 1e-6])
    name = "PrioritizedCircularArraySARTTrajectory"
    with pytest.raises(ValueError, match=name + ": update_priorities got 2 indices and 3 TD"):
        t.update_priorities([1, 2], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=name + r": TD errors must be finite, got \[nan\]"):
        t.update_priorities([1, 2], [1.0, float("nan")])
    with pytest.raises(IndexError, match="SumTree: indices must be in"):
        t.update_priorities([8], [1.0])


def test_clear():
    t = filled(8, 8)
    t.update_priorities([0], [9.0])
    t.sample_indices(4, np.random.default_rng(0))
    t.clear()
    assert len(t) == 0 and t.tree.total == 0 and t.max_priority == 1.0 and t.n_sampled == 1


def test_state_dict_round_trip():
    t = filled(16, 20, alpha=0.5, beta_steps=10)
    rng = np.random.default_rng(6)
    for _ in range(3):
        indices, _ = t.sample_indices(8, rng)
        t.update_priorities(indices, rng.normal(size=8))
    saved = t.state_dict()
    restored = filled(16, 0, alpha=0.5, beta_steps=10)
    restored.load_state_dict(saved)
    assert restored.n_sampled == 3 and restored.beta == t.beta
    assert restored.max_priority == t.max_priority
    np.testing.assert_array_equal(restored.tree._tree, t.tree._tree)
    for trajectory in (t, restored):
        trajectory.append(20, 0, 1.0, False, False, 21)
    state = rng.bit_generator.state
    a = t.sample_indices(8, rng)
    rng.bit_generator.state = state
    b = restored.sample_indices(8, rng)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


def test_load_state_dict_rejects_other_settings():
    saved = filled(16, 3, alpha=0.5).state_dict()
    with pytest.raises(
        ValueError,
        match="PrioritizedCircularArraySARTTrajectory: checkpoint has alpha=0.5, this "
        "trajectory has 0.6",
    ):
        filled(16, 0).load_state_dict(saved)
    plain = CircularArraySARTTrajectory(16, state_shape=()).state_dict()
    with pytest.raises(ValueError, match="checkpoint has no 'alpha'"):
        filled(16, 0).load_state_dict(plain)
