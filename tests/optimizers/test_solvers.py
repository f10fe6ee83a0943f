"""ConjugateGradient and LineSearch on their own."""

from __future__ import annotations

import pytest
import torch

from rlkit.optimizers import ConjugateGradient, LineSearch


def _random_spd(n: int, seed: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    q = torch.randn(n, n, generator=generator, dtype=torch.float64)
    return q @ q.T + 0.5 * torch.eye(n, dtype=torch.float64)


@pytest.mark.parametrize(("n", "seed"), [(5, 0), (20, 1), (50, 2)])
def test_conjugate_gradient_solves_random_spd_systems(n, seed):
    a = _random_spd(n, seed)
    x_true = torch.randn(n, generator=torch.Generator().manual_seed(seed + 100), dtype=a.dtype)
    b = a @ x_true
    solution = ConjugateGradient(max_iterations=10 * n, tolerance=1e-24).solve(lambda v: a @ v, b)
    assert torch.linalg.norm(solution.x - x_true) / torch.linalg.norm(x_true) < 1e-6
    assert torch.linalg.norm(a @ solution.x - b) / torch.linalg.norm(b) < 1e-6
    assert solution.iterations <= 10 * n


def test_conjugate_gradient_damping_solves_the_damped_system():
    a = _random_spd(8, 3)
    b = torch.ones(8, dtype=torch.float64)
    x = (
        ConjugateGradient(max_iterations=50, damping=0.7, tolerance=1e-24)
        .solve(lambda v: a @ v, b)
        .x
    )
    expected = torch.linalg.solve(a + 0.7 * torch.eye(8, dtype=a.dtype), b)
    assert torch.allclose(x, expected, atol=1e-9)


def test_conjugate_gradient_stops_after_max_iterations_and_from_x_init():
    a = _random_spd(30, 4)
    b = torch.ones(30, dtype=torch.float64)
    assert ConjugateGradient(max_iterations=3).solve(lambda v: a @ v, b).iterations == 3
    x_true = torch.linalg.solve(a, b)
    started = ConjugateGradient(max_iterations=1).solve(lambda v: a @ v, b, x_init=x_true)
    assert started.iterations == 0 and torch.allclose(started.x, x_true)


def test_line_search_accepts_the_full_step_when_the_ratio_is_reached():
    calls = []

    def value(fraction):
        calls.append(fraction)
        return 1.0 - 2.0 * fraction  # exactly linear: ratio 1

    result = LineSearch(max_iterations=5, accept_ratio=0.9).search(value, 1.0, 2.0)
    assert (result.accepted, result.fraction, result.iterations) == (True, 1.0, 1)
    assert calls == [1.0] and result.ratios == [1.0]


def test_line_search_backtracks_to_the_first_fraction_that_reaches_the_ratio():
    f = lambda x: (x - 1.0) ** 2  # noqa: E731
    search = LineSearch(max_iterations=6, accept_ratio=0.5, parameter=0.5)
    result = search.search(lambda frac: f(4.0 * frac), f(0.0), 8.0)
    # fractions 1 (value 9), 0.5 (value 1: no improvement), 0.25 (value 0: ratio 1 / 2)
    assert result.accepted and result.fraction == 0.25 and result.iterations == 3
    assert result.value == 0.0
    assert result.ratios[2] == pytest.approx(0.5)


def test_line_search_rejects_when_no_fraction_reaches_the_ratio():
    result = LineSearch(max_iterations=4, accept_ratio=0.5).search(lambda frac: 2.0, 1.0, 1.0)
    assert not result.accepted and result.fraction == 0.0 and result.value == 1.0
    assert len(result.ratios) == 4


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_iterations": 0, "accept_ratio": 0.1}, "max_iterations must be a positive integer"),
        ({"max_iterations": 3, "accept_ratio": -1.0}, "accept_ratio"),
        ({"max_iterations": 3, "accept_ratio": 0.1, "parameter": 1.0}, "parameter"),
    ],
)
def test_line_search_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        LineSearch(**kwargs)


def test_conjugate_gradient_bad_arguments():
    with pytest.raises(ValueError, match="ConjugateGradient: max_iterations"):
        ConjugateGradient(max_iterations=0)
    with pytest.raises(ValueError, match="ConjugateGradient: damping"):
        ConjugateGradient(max_iterations=3, damping=-1.0)
