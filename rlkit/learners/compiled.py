"""``compile=True``: a learner's pure functions compiled with ``torch.compile``
(docs/how-to/speed.md).

What a deep learner learns from one batch is one ``update(policy, batch)`` over pure loss
functions and an optimizer module tree (docs/architecture.md). With ``compile=True`` (a keyword of
``rk.PPO``, ``rk.A2C``, ``rk.VPG``, ``rk.SAC``, ``rk.TD3``, ``rk.DDPG`` and the DQN-family
learners, and a parameter of every deep recipe: ``rlkit run NAME --set compile=true``):

* each ``loss_fn`` is compiled: the forward pass is one inductor graph, and AOTAutograd compiles
  its backward pass too, so ``loss.backward()`` inside the optimizer module runs the compiled
  backward kernel;
* the acting forward pass (the network that chooses actions) is compiled;
* the optimizer module tree stays as it is: its Python control flow (minibatches, clipping, the
  refusal of a non-finite loss or gradient, early stops) runs eagerly around the compiled
  functions, and its torch optimizer is the fused (one-kernel) Adam where torch has one; target
  networks move with ``Synchronization``'s foreach kernels. So the learning semantics are the
  eager ones (the same numbers to float rounding: inductor may reorder sums).

On a GPU (``device="cuda"``) ``compile=True`` uses ``mode="reduce-overhead"`` (CUDA graphs); on
the CPU inductor's default mode. A mode may be named instead of True
(``compile="max-autotune"``). Learners whose optimizer evaluates the loss in other ways
(TRPO's natural gradient and line search, ES's perturbed parameters) refuse ``compile=True``.

Without CUDA graphs (the CPU's default mode, ``"max-autotune-no-cudagraphs"``) the compiled
losses get one joint-graph pass, :class:`~rlkit.learners.relu_masks.SaveReluOutput`: ReLU's
backward reads the saved ReLU output instead of a boolean mask, which inductor's CPU code
stores and loads one element at a time (:func:`compile_options`; the same numbers). A loss's
diagnostics may be tensors (SAC's and TD3's are): the learner turns them into floats after the
step, since a ``float()`` inside a compiled function splits it into two graphs.

Compiled code is cached on disk by inductor (its FX graph cache, on by default): in
``TORCHINDUCTOR_CACHE_DIR``, or ``/tmp/torchinductor_<user>`` when unset, so a second run of the
same recipe skips most of the compile time.

Example:
    >>> compile_mode("PPO", True, "cpu"), compile_mode("PPO", False, "cpu")
    ('default', None)
    >>> compile_mode("PPO", "yes", "cpu")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: PPO: compile must be True, False or a torch.compile mode (...), got 'yes'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from .relu_masks import SaveReluOutput

__all__ = [
    "COMPILE_MODES",
    "compile_mode",
    "compile_options",
    "compiled",
    "refuse_compile",
    "plain_tree",
]

#: the modes ``torch.compile`` accepts, which ``compile=`` may name
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")

_CUDA_GRAPHS = ("reduce-overhead", "max-autotune")  # modes compiled with mode= as they are

_PLAIN = ("multi_step", "clipped_step", "gradient_descent")


def compile_mode(owner: str, value: Any, device: Any) -> str | None:
    """The ``torch.compile`` mode of ``compile=value`` on ``device`` (None: eager): True is
    ``"reduce-overhead"`` (CUDA graphs) on a GPU and ``"default"`` elsewhere; a mode name is
    itself; anything else is a ``ValueError`` naming ``owner``."""
    if value is False or value is None:
        return None
    if value is True:
        return "reduce-overhead" if torch.device(device).type == "cuda" else "default"
    if isinstance(value, str) and value in COMPILE_MODES:
        return value
    raise ValueError(
        f"{owner}: compile must be True, False or a torch.compile mode ({', '.join(COMPILE_MODES)}"
        f"), got {value!r}"
    )


def compiled(fn: Callable, mode: str | None) -> Callable:
    """``fn`` compiled with ``torch.compile`` in ``mode``, or ``fn`` itself when ``mode`` is None.
    Shapes and numbers start static; one that changes between calls (a last, smaller minibatch;
    a learning-rate or clip-range schedule read inside the loss) is made dynamic at its first
    change (torch's automatic dynamic shapes), so a schedule costs one recompilation, not one
    per update.

    Example:
        >>> import torch
        >>> compiled(torch.relu, None) is torch.relu
        True
    """
    if mode is None:
        return fn
    if mode in _CUDA_GRAPHS:
        return torch.compile(fn, mode=mode)
    return torch.compile(fn, options=compile_options(mode))


def compile_options(mode: str) -> dict[str, Any]:
    """The inductor options of ``torch.compile`` in ``mode`` (one without CUDA graphs: the CPU's
    ``"default"``): the mode's own options and the joint-graph pass
    :class:`~rlkit.learners.relu_masks.SaveReluOutput` (ReLU's backward reads the saved ReLU
    output, not a boolean mask, which inductor's CPU code stores and loads slowly).

    Example:
        >>> sorted(compile_options("default"))
        ['joint_custom_post_pass']
    """
    return {**torch._inductor.list_mode_options(mode), "joint_custom_post_pass": SaveReluOutput()}


def refuse_compile(owner: str, why: str) -> None:
    """The error of ``compile=True`` on a learner that cannot be compiled, saying why."""
    raise ValueError(
        f"{owner}: compile=True is not supported: {why}; run it eagerly (compile=False). "
        f"Compiled learners: PPO, A2C, VPG, SAC, TD3, DDPG and the DQN family"
    )


def plain_tree(tree: Any) -> bool:
    """Whether the optimizer module tree ``tree`` only takes gradient steps (``MultiStep``,
    ``ClippedStep``, ``GradientDescent``): its loss is evaluated once per step and
    back-propagated, what a compiled loss function serves."""
    if getattr(tree, "type_name", None) not in _PLAIN:
        return False
    return all(plain_tree(child) for child in tree.children().values())
