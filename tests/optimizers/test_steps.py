"""GradientDescent, MultiStep, ClippedStep and OptimizedStep."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlkit.optimizers import ClippedStep, Evolutionary, GradientDescent, MultiStep, OptimizedStep
from rlkit.optimizers.base import flat

# ---- GradientDescent ----


def test_gradient_descent_matches_the_torch_optimizer(problem):
    reference = [p.detach().clone().requires_grad_(True) for p in problem.policy.parameters()]
    adam = torch.optim.Adam(reference, lr=0.01)
    module = GradientDescent(torch.optim.Adam, lr=0.01)
    for _ in range(3):
        result = module.step(problem.policy, problem.fn_loss)
        adam.zero_grad()
        problem.loss_at(flat(reference)).backward()
        adam.step()
    for p, q in zip(problem.policy.parameters(), reference, strict=True):
        assert torch.equal(p.detach(), q.detach())
    assert result.estimated_improvement > 0 and result.loss_before is not None


def test_gradient_descent_by_name_and_its_deltas():
    w = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    result = GradientDescent("SGD", lr=0.5).step([w], lambda: (w**2).sum())
    assert torch.equal(w.detach(), torch.tensor([0.0, 0.0]))
    assert torch.equal(result.deltas[0], torch.tensor([-1.0, 2.0]))
    # first order: -g . delta = -(2, -4) . (-1, 2) = 10
    assert result.estimated_improvement == pytest.approx(10.0)


def test_gradient_descent_clips_the_gradient_norm():
    w = torch.nn.Parameter(torch.zeros(2))
    result = ClippedStep(GradientDescent("sgd", lr=1.0), 1.0, on="gradient").step(
        [w], lambda: -(w * torch.tensor([3.0, 4.0])).sum()
    )
    assert torch.allclose(w.detach(), torch.tensor([0.6, 0.8]))
    assert result.statistics["grad_norm"] == pytest.approx(5.0)
    with pytest.raises(TypeError, match="max_grad_norm is not a GradientDescent setting"):
        GradientDescent("sgd", lr=1.0, max_grad_norm=1.0)
    with pytest.raises(ValueError, match=r"on must be one of \('step', 'gradient'\), got 'grad'"):
        ClippedStep(GradientDescent("sgd", lr=1.0), 1.0, on="grad")
    with pytest.raises(TypeError, match="must back-propagate"):
        ClippedStep(Evolutionary(0.01, 2), 1.0, on="gradient")


def test_gradient_descent_runs_lbfgs_through_its_closure():
    w = torch.nn.Parameter(torch.tensor([3.0]))
    GradientDescent("lbfgs", lr=1.0, max_iter=20).step([w], lambda: ((w - 1.0) ** 2).sum())
    assert abs(float(w.detach()) - 1.0) < 1e-4


def test_gradient_descent_bad_input():
    with pytest.raises(ValueError, match=r"torch_optimizer_cls must be .* one of \[.*'adam'"):
        GradientDescent("adamm", lr=0.1)
    with pytest.raises(ValueError, match="GradientDescent: lr must be a positive"):
        GradientDescent("adam", lr=0.0)
    w, v = torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(2))
    module = GradientDescent("sgd", lr=0.1)
    module.step([w], lambda: w.sum())
    with pytest.raises(ValueError, match="other parameters"):
        module.step([v], lambda: v.sum())


@pytest.mark.parametrize(
    "bad_loss",
    [
        lambda w: w * 2.0,  # a vector
        lambda w: (w.sum() * 1.0).reshape(1),  # shape (1,) is not a scalar either
        lambda w: "loss",
    ],
)
def test_a_non_scalar_loss_is_refused_naming_the_function(bad_loss):
    w = torch.nn.Parameter(torch.zeros(2))

    def my_loss():
        return bad_loss(w)

    with pytest.raises(ValueError, match=r"GradientDescent: fn_loss \(.*my_loss\) must return a"):
        GradientDescent("sgd", lr=0.1).step([w], my_loss)


def test_params_must_be_tensors():
    with pytest.raises(TypeError, match="params must be a torch.nn.Module or"):
        GradientDescent("sgd", lr=0.1).step([1.0, 2.0], lambda: torch.tensor(0.0))


# ---- MultiStep ----


def test_multi_step_without_minibatches_repeats_the_inner_step():
    w = torch.nn.Parameter(torch.tensor([1.0]))
    result = MultiStep(GradientDescent("sgd", lr=0.25), num_steps=3).step([w], lambda: (w**2).sum())
    assert float(w.detach()) == pytest.approx(0.5**3)
    assert float(result.deltas[0]) == pytest.approx(0.5**3 - 1.0)
    assert result.statistics["inner_steps"] == 3.0 and result.loss_before == 1.0


def test_a_minibatch_as_large_as_the_batch_is_the_whole_batch_in_order():
    w = torch.nn.Parameter(torch.zeros(1))
    seen = []
    module = MultiStep(GradientDescent("sgd", lr=0.01), num_steps=2, minibatch_size=8)
    state = module.rng.bit_generator.state
    module.step([w], lambda indices: seen.append(indices) or (w**2).sum(), batch_size=5)
    assert seen == [None, None] and module.rng.bit_generator.state == state  # nothing drawn


@pytest.mark.parametrize(("batch_size", "minibatch_size"), [(10, 3), (12, 4)])
def test_multi_step_visits_every_sample_once_per_epoch(batch_size, minibatch_size):
    w = torch.nn.Parameter(torch.zeros(1))
    data = torch.arange(float(batch_size))
    seen: list[np.ndarray] = []
    kl_seen: list[np.ndarray] = []

    def fn_loss(indices):
        seen.append(np.asarray(indices).copy())
        return ((w - data[indices]) ** 2).mean()

    def fn_other(indices):
        kl_seen.append(np.asarray(indices).copy())

    module = MultiStep(GradientDescent("sgd", lr=0.01), num_steps=3, minibatch_size=minibatch_size)
    result = module.step([w], fn_loss, batch_size=batch_size, fn_other=fn_other, flag=7)
    per_epoch = -(-batch_size // minibatch_size)
    assert len(seen) == 3 * per_epoch and result.statistics["inner_steps"] == 3 * per_epoch
    for epoch in range(3):
        batch = np.concatenate(seen[epoch * per_epoch : (epoch + 1) * per_epoch])
        assert sorted(batch.tolist()) == list(range(batch_size))
    assert kl_seen == []  # bound, passed on, but GradientDescent does not call other closures
    if batch_size > minibatch_size:  # shuffled: the epochs do not repeat one order
        orders = {
            tuple(np.concatenate(seen[e * per_epoch : (e + 1) * per_epoch])) for e in range(3)
        }
        assert len(orders) > 1


def test_multi_step_shuffles_reproducibly_from_its_seed_and_state():
    def orders(module, n=2):
        return [np.concatenate(module.minibatches(10)).tolist() for _ in range(n)]

    a = MultiStep(GradientDescent("sgd", lr=0.1), 2, minibatch_size=4, seed=3)
    b = MultiStep(GradientDescent("sgd", lr=0.1), 2, minibatch_size=4, seed=3)
    c = MultiStep(GradientDescent("sgd", lr=0.1), 2, minibatch_size=4, seed=4)
    assert orders(a) == orders(b) != orders(c)
    saved = a.state_dict()
    after = orders(a)
    a.load_state_dict(saved)
    assert orders(a) == after


def test_multi_step_bad_input():
    inner = GradientDescent("sgd", lr=0.1)
    with pytest.raises(ValueError, match="MultiStep: num_steps must be a positive integer, got 0"):
        MultiStep(inner, 0)
    with pytest.raises(ValueError, match="MultiStep: minibatch_size"):
        MultiStep(inner, 2, minibatch_size=0)
    with pytest.raises(TypeError, match="MultiStep: inner must be an optimizer module"):
        MultiStep(torch.optim.SGD, 2)
    w = torch.nn.Parameter(torch.zeros(1))
    with pytest.raises(ValueError, match="step needs batch_size"):
        MultiStep(inner, 2, minibatch_size=2).step([w], lambda idx: w.sum())


# ---- ClippedStep ----


def test_clipped_step_clips_long_steps_and_keeps_short_ones():
    w = torch.nn.Parameter(torch.zeros(2))
    module = ClippedStep(GradientDescent("sgd", lr=1.0), max_norm=0.5)
    result = module.step([w], lambda: -(w * torch.tensor([3.0, 4.0])).sum())
    assert torch.allclose(w.detach(), torch.tensor([0.3, 0.4]))
    assert result.statistics["clip_scale"] == pytest.approx(0.1)
    assert result.estimated_improvement == pytest.approx(2.5)  # 25 * 0.1
    v = torch.nn.Parameter(torch.zeros(2))
    module = ClippedStep(GradientDescent("sgd", lr=1.0), max_norm=0.5)
    module.step([v], lambda: -(v * torch.tensor([0.3, 0.0])).sum())
    assert torch.allclose(v.detach(), torch.tensor([0.3, 0.0]))
    with pytest.raises(ValueError, match="ClippedStep: max_norm must be a positive"):
        ClippedStep(GradientDescent("sgd", lr=1.0), max_norm=0.0)


# ---- OptimizedStep ----


def _quadratic(w):
    return lambda: ((w - 1.0) ** 2).sum()


def test_optimized_step_accepts_the_full_step_when_it_improves_enough():
    w = torch.nn.Parameter(torch.tensor([0.0]))
    module = OptimizedStep(
        GradientDescent("sgd", lr=0.25), ls_max_iterations=5, ls_accept_ratio=0.5
    )
    result = module.step([w], _quadratic(w))
    # full step to 0.5: actual improvement 0.75, expected 1.0 -> ratio 0.75 >= 0.5
    assert float(w.detach()) == 0.5 and result.statistics["ls_fraction"] == 1.0
    assert result.statistics["ls_iterations"] == 1.0
    assert result.actual_improvement == pytest.approx(0.75)
    assert result.estimated_improvement == pytest.approx(1.0)


def test_optimized_step_backtracks():
    w = torch.nn.Parameter(torch.tensor([0.0]))
    module = OptimizedStep(GradientDescent("sgd", lr=2.0), ls_max_iterations=5, ls_accept_ratio=0.5)
    result = module.step([w], _quadratic(w))
    # step to 4 (loss 9), then 2 (loss 1: no improvement), then 1 (loss 0: ratio 0.5)
    assert float(w.detach()) == 1.0 and result.statistics["ls_fraction"] == 0.25
    assert result.statistics["ls_iterations"] == 3.0 and result.statistics["ls_accepted"] == 1.0
    assert float(result.deltas[0]) == 1.0


def test_optimized_step_rejects_and_restores_the_parameters():
    w = torch.nn.Parameter(torch.tensor([0.0]))
    module = OptimizedStep(GradientDescent("sgd", lr=4.0), ls_max_iterations=2, ls_accept_ratio=0.5)
    result = module.step([w], _quadratic(w))
    # fractions 1 (w = 8) and 0.5 (w = 4) both make the loss worse
    assert float(w.detach()) == 0.0 and result.statistics["ls_accepted"] == 0.0
    assert float(result.deltas[0]) == 0.0 and result.actual_improvement == 0.0


def test_optimized_step_restores_when_the_ratio_is_never_reached():
    w = torch.nn.Parameter(torch.tensor([0.0]))
    # improves a little at every fraction, never by 99% of the first-order estimate
    module = OptimizedStep(
        GradientDescent("sgd", lr=1.0), ls_max_iterations=3, ls_accept_ratio=0.99
    )
    module.step([w], _quadratic(w))
    assert float(w.detach()) == 0.0


def test_optimized_step_of_a_natural_gradient_keeps_the_loss_down(problem):
    from rlkit.optimizers import NaturalGradient

    module = OptimizedStep(NaturalGradient(max_kl=0.01), ls_max_iterations=10, ls_accept_ratio=0.1)
    before = float(problem.loss_at().detach())
    result = module.step(problem.policy, problem.fn_loss, fn_kl_divergence=problem.fn_kl_divergence)
    after = float(problem.loss_at().detach())
    assert result.statistics["ls_accepted"] == 1.0
    assert after == pytest.approx(before - result.actual_improvement)


def test_optimized_step_bad_input():
    with pytest.raises(ValueError, match="OptimizedStep: ls_max_iterations must be a positive"):
        OptimizedStep(GradientDescent("sgd", lr=1.0), ls_max_iterations=0)
    with pytest.raises(ValueError, match="OptimizedStep: ls_accept_ratio"):
        OptimizedStep(GradientDescent("sgd", lr=1.0), ls_accept_ratio=-0.5)


def test_optimized_step_with_a_kl_bound_backtracks_until_the_kl_is_met():
    w = torch.nn.Parameter(torch.tensor([0.0]))
    kl = lambda: (w**2).sum()  # noqa: E731 - a stand-in "KL" that grows with the step
    module = OptimizedStep(
        GradientDescent("sgd", lr=0.5), ls_max_iterations=5, ls_accept_ratio=0.0, ls_max_kl=0.1
    )
    result = module.step([w], _quadratic(w), fn_kl_divergence=kl)
    # fraction 1 (w = 1, kl 1), 0.5 (w = 0.5, kl 0.25), 0.25 (w = 0.25, kl 0.0625 <= 0.1)
    assert float(w.detach()) == 0.25 and result.statistics["ls_fraction"] == 0.25
    with pytest.raises(ValueError, match="ls_max_kl the line search needs fn_kl_divergence"):
        module.step([w], _quadratic(w))


def test_a_steps_deltas_are_refused_after_the_next_step():
    w = torch.nn.Parameter(torch.tensor([1.0]))
    sgd = GradientDescent("sgd", lr=0.5)
    first = sgd.step([w], lambda: (w**2).sum())
    sgd.step([w], lambda: (w**2).sum())
    with pytest.raises(RuntimeError, match="before the module's next step"):
        _ = first.deltas


def test_lean_gradient_clipping_equals_torchs(problem):
    from rlkit.optimizers.base import clip_grad_norm

    params = list(problem.policy.parameters())
    problem.fn_loss().backward()
    reference = [p.grad.clone() for p in params]
    copies = [torch.nn.Parameter(p.detach().clone()) for p in params]
    for c, g in zip(copies, reference, strict=True):
        c.grad = g.clone()
    expected = torch.nn.utils.clip_grad_norm_(copies, 0.01)
    assert clip_grad_norm(params, 0.01) == float(expected)
    for p, c in zip(params, copies, strict=True):
        assert torch.equal(p.grad, c.grad)


def test_gradient_descent_without_deltas_takes_the_same_step_and_refuses_to_report_them():
    def run(keep: bool):
        w = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
        opt = GradientDescent("adam", lr=0.1, keep_deltas=keep)
        results = [opt.step([w], lambda: (w**2).sum()) for _ in range(3)]
        return w.detach().clone(), results[-1], opt

    (kept, with_deltas, _), (lean, without, opt) = run(True), run(False)
    assert torch.equal(kept, lean) and with_deltas.loss == without.loss
    with pytest.raises(RuntimeError, match="keep_deltas=False"):
        _ = without.deltas
    assert without.estimated_improvement is None  # not known without the deltas
    assert opt.settings()["keep_deltas"] is False
