"""The default ``update(policy, batch)`` of a built policy: what it learns from one batch.

In this order: ``postprocess_fn(policy, batch)`` (on the rollout's ``(n_steps, n_envs, ...)``
arrays: advantages, returns) -> the batch as flat tensors -> one ``step`` of the policy's
optimizer module tree over the loss -> ``stats_fn`` -> ``rk.statistics(policy)``.

The tree receives the loss and the KL divergence as closures it can evaluate as often as it
needs (``MultiStep``'s minibatches and epochs, ``NaturalGradient``, a line search,
``Evolutionary``'s perturbed parameters):

* ``fn_loss(indices=None)`` evaluates ``loss_fn`` on the whole batch, or on the rows
  ``indices``; it checks that the loss is a scalar (the optimizer modules refuse a step whose
  loss or gradient is nan or inf: ``rk.optimizers.NonFiniteError``, told with the policy's
  name, ``loss_fn`` and update), keeps the loss's diagnostics, and
  ends the update early (``rk.optimizers.EarlyStop``, before the step) when a ``target_kl`` is
  set and the loss reports ``approx_kl > 1.5 * target_kl`` (Stable-Baselines3's rule);
* ``fn_kl_divergence(indices=None)`` is the mean ``KL(old || new)`` from the policy that
  collected the batch (its distribution inputs, computed once before the step) to the policy at
  the current parameters; given to trees that need it (anything but plain gradient steps);
* ``fn_gradients`` is the algorithm's ``gradients_fn``, when it has one; ``generator`` is the
  policy's, so its seed decides the minibatches; ``batch_size`` the number of rows.

``NaturalGradient`` bounds the KL divergence of the action distribution only: parameters the
distribution does not depend on (a value head trained by the same loss) have a zero Fisher
block, so their step is set by ``cg_damping`` alone. Give a natural-gradient module a
policy-only loss (TRPO trains its critic with a second tree, in its own ``update``).

Example:
    >>> import rlkit as rk
    >>> Natural = rk.VPG.with_updates(name="NaturalVPG", optimizer=rk.optimizers.make(
    ...     {"type": "natural_gradient", "max_kl": 0.01, "cg_iterations": 10}))
    >>> env = rk.GymEnv("CartPole-v1", seed=0)
    >>> agent = Natural.agent(env, seed=0, n_steps=64)
    >>> hook = rk.run(agent, env, rk.StopAfterNSteps(128))
    >>> agent.policy.updates, 0.0 < rk.statistics(agent.policy)["kl_divergence"] < 0.02
    (2, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from ..core.dispatch import update
from ..optimizers import EarlyStop, GradientDescent, NonFiniteError, OptimizerModule
from .batch import Batch, flatten, fn_name
from .built import BuiltPolicy
from .compiled import plain_tree
from .function_checks import check_dict_result

__all__ = ["learn", "postprocessed", "refused", "set_learning_rate", "LossClosures"]

def postprocessed(policy: Any, batch: Mapping[str, Any]) -> Batch:
    """``postprocess_fn(policy, batch)`` (when the algorithm has one), checked to be a dict."""
    cls = type(policy)
    out = batch
    if cls.postprocess_fn is not None:
        out = cls.postprocess_fn(policy, Batch(batch))
        if not isinstance(out, Mapping):
            raise TypeError(
                f"{cls.name}: postprocess_fn {fn_name(cls.postprocess_fn)} must return the batch "
                f"(a dict), got {type(out).__name__}"
            )
    out = Batch(out)
    out.owner = f"{cls.name}: the batch after postprocess_fn"
    return out


def set_learning_rate(tree: Any, lr: float) -> None:
    """Set the learning rate of every ``GradientDescent`` module of ``tree``."""
    if isinstance(tree, GradientDescent):
        tree.learning_rate = lr
    children = getattr(tree, "children", None)
    for child in (children() if callable(children) else {}).values():
        set_learning_rate(child, lr)


class LossClosures:
    """``fn_loss`` and ``fn_kl_divergence`` over ``flat`` for ``policy`` (module docstring);
    ``means()`` are the loss diagnostics averaged over the steps taken."""

    def __init__(self, policy: Any, flat: Batch, with_kl: bool) -> None:
        self.policy, self.flat = policy, flat
        self.sums: dict[str, float] = {}
        self.count = 0
        self.target_kl = policy.config.get("target_kl")
        self.old_inputs = None
        if with_kl:
            with torch.no_grad():
                self.old_inputs = policy.model(flat["state"])

    def rows(self, indices: Any) -> Batch:
        return self.flat if indices is None else self.flat.rows(indices)

    def fn_loss(self, indices: Any = None) -> torch.Tensor:
        policy = self.policy
        out = policy.loss_fns(policy, policy.model, policy.dist_class, self.rows(indices))
        loss, info = out if isinstance(out, tuple) else (out, {})
        _check_loss(policy, loss)
        info = {k: float(v) for k, v in info.items()}
        kl = info.get("approx_kl")
        if self.target_kl is not None and kl is not None and kl > 1.5 * self.target_kl:
            raise EarlyStop
        self.count += 1
        for key, value in info.items():
            self.sums[key] = self.sums.get(key, 0.0) + value
        return loss.reshape(())

    def fn_kl_divergence(self, indices: Any = None) -> torch.Tensor:
        policy = self.policy
        part = self.rows(indices)
        old_part = self.old_inputs if indices is None else self.old_inputs[torch.as_tensor(indices)]
        old = policy.dist_class.from_inputs(old_part, policy.action_space)
        new = policy.dist_class.from_inputs(policy.model(part["state"]), policy.action_space)
        return old.kl(new).mean()

    def means(self) -> dict[str, float]:
        return {k: v / max(self.count, 1) for k, v in self.sums.items()}


def _check_loss(policy: Any, loss: Any) -> None:
    cls = type(policy)
    where_ = f"at update {policy.updates + 1} (gradient step {policy.gradient_steps + 1})"
    name = fn_name(cls.loss_fn)
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        shape = tuple(loss.shape) if isinstance(loss, torch.Tensor) else type(loss).__name__
        raise ValueError(
            f"{cls.name}: loss_fn {name} must return a scalar tensor, got {shape} {where_}"
        )


def refused(policy: Any, error: NonFiniteError) -> NonFiniteError:
    """``error`` (a step the optimizer module refused) told with the policy's name, its
    ``loss_fn`` and the update."""
    cls = type(policy)
    name = fn_name(cls.loss_fn)
    if error.what.endswith("loss"):
        text = f"loss_fn {name} returned a non-finite {error.what} {error.value}"
    else:
        text = f"the {error.what} of loss_fn {name} is {error.value}"
    return error.restated(f"{cls.name}: {text} at update {policy.updates + 1}")


def learn(policy: Any, batch: Mapping[str, Any]) -> None:
    """Learn from one rollout batch in the documented order (module docstring)."""
    cls = type(policy)
    batch = postprocessed(policy, batch)
    flat = flatten(batch, policy.device)
    tree: OptimizerModule = policy.optimizer
    if policy.lr_driven and "lr" in policy.config:
        set_learning_rate(tree, float(policy.hp("lr")))
    closures = LossClosures(policy, flat, with_kl=not plain_tree(tree))
    fns: dict[str, Any] = {"batch_size": len(flat), "generator": policy.rng}
    if closures.old_inputs is not None:
        fns["fn_kl_divergence"] = closures.fn_kl_divergence
    if cls.gradients_fn is not None:
        fns["fn_gradients"] = cls.gradients_fn
    try:
        result = tree.step(policy.params, closures.fn_loss, **fns)
    except NonFiniteError as error:
        raise refused(policy, error) from None
    policy.updates += 1
    policy.gradient_steps += int(result.statistics.get("inner_steps", 1))
    stats = {**closures.means(), **_step_statistics(result)}
    if "lr" in policy.config:
        stats["learning_rate"] = float(policy.hp("lr"))
    if closures.old_inputs is not None:
        with torch.no_grad():
            stats["kl_divergence"] = float(closures.fn_kl_divergence())
    if cls.stats_fn is not None:
        out = check_dict_result(cls.name, "stats_fn", cls.stats_fn, cls.stats_fn(policy, batch))
        stats.update({k: float(v) for k, v in out.items()})
    policy.stats = stats


def _step_statistics(result: Any) -> dict[str, float]:
    stats = {"loss": result.statistics.get("loss", result.loss)}
    stats["grad_norm"] = result.statistics.get("grad_norm", result.grad_norm)
    if "early_stop_epoch" in result.statistics:
        stats["early_stop_epoch"] = result.statistics["early_stop_epoch"]
    return stats


# ---- what a built policy learns from one batch ----
@update.dispatch
def _(policy: BuiltPolicy, batch: Batch, /):
    learn(policy, batch)
