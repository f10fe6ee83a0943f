"""``fused_adam_step``: the step of a ``torch.optim.Adam(..., fused=True)`` on the CPU, without
``Optimizer.step``'s per-call bookkeeping.

``torch.optim.Adam.step`` with ``fused=True`` ends in two kernels, ``torch._foreach_add_`` on the
step counters and ``torch._fused_adam_`` on the parameters, gradients and moments; before them
it runs the optimizer's profiler scope, hooks, grad-mode switch, ``_init_group`` (which reads
every parameter's state) and the grouping of the tensors by device and dtype. For the small
networks of rlkit's recipes that bookkeeping costs more than the kernels (about 35 of 53 us per
step for a 2-layer MLP on one CPU thread, docs/how-to/speed.md). :func:`fused_adam_step` calls
the two kernels directly, with the same arguments, when that is exactly what ``step`` would do:
the same numbers, bit for bit (a test compares them over many steps,
tests/optimizers/test_fused_adam.py). Anything else returns False and the caller calls
``optimizer.step()``: another optimizer class (``AdamW`` too), several parameter groups,
``amsgrad``, ``capturable``, ``differentiable``, a tensor learning rate, optimizer hooks
(global or the optimizer's own), a parameter without gradient, a sparse or complex one, or
parameters on several devices or dtypes or off the CPU, and the first step (``step`` creates
the state). The kernels are private to torch: once per process they are checked against
``Adam.step`` on a small problem, and a build where they differ (or are missing) always steps
through ``optimizer.step()``.

Example:
    >>> import torch
    >>> w = torch.nn.Parameter(torch.ones(3))
    >>> adam = torch.optim.Adam([w], lr=0.1, fused=True)
    >>> w.grad = torch.ones(3); adam.step()  # the first step: torch's own
    >>> w.grad = torch.ones(3); fused_adam_step(adam)
    True
    >>> int(adam.state[w]["step"]), w.detach().tolist()  # doctest: +ELLIPSIS
    (2, [0.80000..., 0.80000..., 0.80000...])
"""

from __future__ import annotations

import torch
from torch.optim import optimizer as _torch_optimizer

__all__ = ["fused_adam_step"]


def fused_adam_step(optimizer: torch.optim.Optimizer) -> bool:
    """Step ``optimizer`` (its gradients already computed) as ``optimizer.step()`` would, when
    it is a fused ``torch.optim.Adam`` in the plain case the module docstring lists; False
    (nothing done) otherwise."""
    if type(optimizer) is not torch.optim.Adam or len(optimizer.param_groups) != 1:
        return False
    if _hooked(optimizer) or not _plain_step(optimizer):
        return False
    if getattr(optimizer, "grad_scale", None) is not None:  # set by a GradScaler
        return False
    if getattr(optimizer, "found_inf", None) is not None:
        return False
    group = optimizer.param_groups[0]
    if not group.get("fused") or group["amsgrad"] or group["capturable"]:
        return False
    if group["differentiable"] or group.get("decoupled_weight_decay", False):
        return False
    if not all(type(x) is float for x in (group["lr"], *group["betas"])):
        return False
    params = group["params"]
    state = optimizer.state
    grads, exp_avgs, exp_avg_sqs, steps = [], [], [], []
    device, dtype = params[0].device, params[0].dtype
    if device.type != "cpu" or not _kernels_agree():
        return False
    for p in params:
        grad = p.grad
        s = state.get(p)
        if grad is None or not s or grad.is_sparse or p.is_complex():
            return False
        if p.device != device or p.dtype != dtype:
            return False
        grads.append(grad)
        exp_avgs.append(s["exp_avg"])
        exp_avg_sqs.append(s["exp_avg_sq"])
        steps.append(s["step"])
    _kernel_step(params, grads, exp_avgs, exp_avg_sqs, steps, group)
    if "step" in vars(optimizer):  # an LRScheduler's wrapper: what it records
        optimizer._opt_called = True
    return True


def _kernel_step(params: list, grads: list, exp_avgs: list, exp_avg_sqs: list, steps: list,
                 group: dict) -> None:  # fmt: skip
    """The two kernels of a fused Adam step, with the arguments ``torch.optim.Adam`` passes."""
    lr, (beta1, beta2) = group["lr"], group["betas"]
    with torch.no_grad():
        torch._foreach_add_(steps, 1)
        torch._fused_adam_(
            params, grads, exp_avgs, exp_avg_sqs, [], steps,
            amsgrad=False, lr=lr, beta1=beta1, beta2=beta2,
            weight_decay=group["weight_decay"], eps=group["eps"], maximize=group["maximize"],
            grad_scale=None, found_inf=None,
        )  # fmt: skip


_AGREE: list[bool] = []  # filled once per process by _kernels_agree


def _kernels_agree() -> bool:
    """Whether this torch build has the two kernels with the arguments used here and they give
    ``Adam.step``'s numbers bit for bit (checked once per process on a small problem; the
    private kernels' signatures may differ in other torch versions: then every step is
    ``optimizer.step()``)."""
    if not _AGREE:
        _AGREE.append(_check_kernels())
    return _AGREE[0]


def _check_kernels() -> bool:
    try:
        generator = torch.Generator().manual_seed(0)
        start = torch.randn(7, generator=generator)
        grads = [torch.randn(7, generator=generator) for _ in range(3)]
        ours, theirs = torch.nn.Parameter(start.clone()), torch.nn.Parameter(start.clone())
        adams = [torch.optim.Adam([p], lr=0.01, fused=True) for p in (ours, theirs)]
        for i, grad in enumerate(grads):
            ours.grad, theirs.grad = grad.clone(), grad.clone()
            adams[1].step()
            if i == 0:
                adams[0].step()  # the state is created by torch's own first step
                continue
            s = adams[0].state[ours]
            _kernel_step([ours], [ours.grad], [s["exp_avg"]], [s["exp_avg_sq"]], [s["step"]],
                         adams[0].param_groups[0])  # fmt: skip
        mine, reference = adams[0].state[ours], adams[1].state[theirs]
        return torch.equal(ours, theirs) and all(
            torch.equal(mine[k], reference[k]) for k in ("exp_avg", "exp_avg_sq", "step")
        )
    except (RuntimeError, TypeError, AttributeError, ValueError):
        return False


def _hooked(optimizer: torch.optim.Optimizer) -> bool:
    """Whether ``optimizer.step`` would run step hooks (global or the optimizer's own)."""
    m = _torch_optimizer
    return bool(
        m._global_optimizer_pre_hooks
        or m._global_optimizer_post_hooks
        or optimizer._optimizer_step_pre_hooks
        or optimizer._optimizer_step_post_hooks
    )


def _plain_step(optimizer: torch.optim.Optimizer) -> bool:
    """Whether ``optimizer.step`` is the class's, or an ``LRScheduler``'s wrapper of it (which
    only records that the optimizer stepped): a step replaced otherwise is left to run."""
    patched = vars(optimizer).get("step")
    return patched is None or bool(getattr(patched, "_wrapped_by_lr_sched", False))
