"""SaveReluOutput (rlkit/learners/relu_masks.py): with it, the forward graph of a compiled
ReLU network saves float ReLU outputs for the backward graph, never a boolean mask; the
gradients are the same."""

from __future__ import annotations

import pytest
import torch
from functorch.compile import aot_function, make_boxed_func
from torch._functorch.partitioners import min_cut_rematerialization_partition
from torch._inductor.decomposition import select_decomp_table

from rlkit.learners.compiled import compile_options, compiled
from rlkit.learners.relu_masks import SaveReluOutput


def _critic() -> torch.nn.Module:
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Linear(4, 32), torch.nn.ReLU(), torch.nn.Linear(32, 32), torch.nn.ReLU(),
        torch.nn.Linear(32, 1),
    )  # fmt: skip
    for p in net.parameters():  # frozen, as the critics in SAC's and TD3's actor loss
        p.requires_grad_(False)
    return net


def _saved_dtypes(joint_pass) -> tuple[list[torch.dtype], torch.Tensor]:
    """The dtypes the forward graph saves for the backward one, partitioned as inductor does
    (its decompositions, the min-cut partitioner) after ``joint_pass``; and the input's
    gradient."""
    net, saved = _critic(), []

    def forward_compiler(gm, _inputs):
        outputs = next(n for n in gm.graph.nodes if n.op == "output").args[0]
        saved.extend(n.meta["val"].dtype for n in outputs[1:] if hasattr(n, "meta"))
        return make_boxed_func(gm)

    def partition(gm, joint_inputs, **kwargs):
        if joint_pass is not None:
            joint_pass(gm.graph)
        return min_cut_rematerialization_partition(gm, joint_inputs, **kwargs)

    fn = aot_function(
        lambda params, x: torch.func.functional_call(net, params, (x,)).sum(),
        fw_compiler=forward_compiler,
        bw_compiler=lambda gm, _: make_boxed_func(gm), partition_fn=partition,
        decompositions=select_decomp_table(),
    )  # fmt: skip
    x = torch.randn(8, 4, generator=torch.Generator().manual_seed(1), requires_grad=True)
    fn(dict(net.named_parameters()), x).backward()
    return saved, x.grad


def test_relu_outputs_are_saved_instead_of_boolean_masks():
    without, grad_without = _saved_dtypes(None)
    with_pass, grad_with = _saved_dtypes(SaveReluOutput())
    assert torch.bool in without  # what the pass is for: the partitioner saves the masks
    assert torch.bool not in with_pass and with_pass.count(torch.float32) >= 2
    assert torch.equal(grad_with, grad_without)


def test_the_pass_is_an_option_of_cpu_modes_only():
    assert isinstance(compile_options("default")["joint_custom_post_pass"], SaveReluOutput)
    options = compile_options("max-autotune-no-cudagraphs")
    assert options["max_autotune"] and "joint_custom_post_pass" in options
    assert SaveReluOutput().uuid() == "rlkit.SaveReluOutput.v1"  # keys inductor's cache


@pytest.mark.slow
def test_compiled_frozen_relu_network_gives_eager_gradients():
    net = _critic()
    x = torch.randn(64, 4, generator=torch.Generator().manual_seed(2), requires_grad=True)
    net(x).square().mean().backward()
    eager, x.grad = x.grad.clone(), None
    compiled(lambda v: net(v).square().mean(), "default")(x).backward()
    torch.testing.assert_close(x.grad, eager, rtol=1e-5, atol=1e-6)
