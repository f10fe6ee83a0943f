"""The one finiteness check of every optimizer module: a step whose loss or gradient is nan or
inf is refused before it changes anything.

Every module that computes a step (``GradientDescent``, ``NaturalGradient``, ``Evolutionary``)
calls :func:`check_finite` on the loss it starts from and on the norm of the gradient it would
step with (a nan or inf anywhere in the gradient makes its global norm nan or inf, so one fused
norm checks every element). The error is a :class:`NonFiniteError`, a ``FloatingPointError``
naming the module, the quantity and its value; the parameters (and the module's own state:
moments, generators) are those before the refused step. A learner catches it to add its own
context (the algorithm, the loss function, the update) and raises it again.

What "nothing changed" covers: the refused step. Inside a ``MultiStep`` the steps taken before
it (earlier minibatches or epochs) stay taken; a torch optimizer that evaluates its closure
several times in one step (``LBFGS``) is refused at the first non-finite evaluation.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["NonFiniteError", "check_finite"]


class NonFiniteError(FloatingPointError):
    """A step refused because its loss or gradient is nan or inf; nothing was changed.

    Attributes:
        module: the optimizer module that refused the step (``"GradientDescent"``).
        what: the quantity (``"loss"``, ``"gradient norm"``, ``"perturbed loss"``).
        value: its value (nan, inf or -inf).

    Example:
        >>> import torch, rlkit as rk
        >>> w = torch.nn.Parameter(torch.ones(2))
        >>> sgd = rk.optimizers.GradientDescent("sgd", lr=0.1)
        >>> try:
        ...     sgd.step([w], lambda: (w * float("nan")).sum())
        ... except rk.optimizers.NonFiniteError as error:
        ...     print(error.what, error.value, w.data)
        loss nan tensor([1., 1.])
    """

    def __init__(self, module: str, what: str, value: float, message: str | None = None) -> None:
        self.module, self.what, self.value = module, what, value
        super().__init__(
            message
            or f"{module} refused the step: the {what} is {value}; the parameters are unchanged. "
            f"Check the rewards and observations for nan/inf, lower the learning rate or clip "
            f"the gradients"
        )

    def restated(
        self,
        message: str,
        cls: type[NonFiniteError] | None = None,
        unchanged: str = "the parameters",
    ) -> NonFiniteError:
        """The same refusal told by a learner (its name, loss function and step): ``message``
        followed by the module that refused and what it left ``unchanged``; an error of class
        ``cls`` (a subclass) if given."""
        return (cls or type(self))(
            self.module,
            self.what,
            self.value,
            f"{message} ({self.module} refused the step; {unchanged} are unchanged)",
        )


def check_finite(module: str, what: str, value: Any) -> float:
    """``value`` as a float if it is finite; else a :class:`NonFiniteError`.

    Example:
        >>> check_finite("GradientDescent", "loss", 0.5)
        0.5
    """
    x = float(value)
    if not math.isfinite(x):
        raise NonFiniteError(module, what, x)
    return x
