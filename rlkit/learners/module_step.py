"""The learning step of a built policy whose optimizer is an ``rk.optimizers`` module tree
(:func:`rlkit.learners.builder.learn` hands such policies to :func:`learn_with_module`): the loss
and the KL divergence are handed to the module as closures (DESIGN.md section 9), so modules
that evaluate them many times work (``NaturalGradient``, ``OptimizedStep``'s line search,
``Evolutionary``'s perturbed parameters, ``MultiStep``'s minibatches).

The order is the builder's (:func:`rlkit.learners.builder.learn`): the rollout's batch ->
``postprocess_fn`` -> one ``optimizer.step(params, fn_loss, fn_kl_divergence=...,
batch_size=n)`` -> ``stats_fn`` -> ``rk.statistics``; then the rollout is cleared.

* ``fn_loss(indices=None)`` evaluates ``loss_fn`` on the whole batch, or on the rows
  ``indices`` (``MultiStep`` with ``minibatch_size`` passes them);
* ``fn_kl_divergence(indices=None)`` is the mean ``KL(old || new)`` from the policy that
  collected the rollout (its distribution inputs, computed once before the step and held
  fixed) to the policy at the current parameters.

``NaturalGradient`` bounds the KL divergence of the action distribution only: parameters the
distribution does not depend on (a value head trained by the same loss, as in VPG's own
:func:`~rlkit.learners.policy_gradient.vpg.vpg_loss`) have a zero Fisher block, so their
step is set by ``cg_damping`` alone and can be arbitrarily large. Give a natural-gradient
module a policy-only loss (TRPO trains its critic with a second optimizer).

Epochs and minibatches are the module tree's business (``MultiStep``), so ``n_epochs`` must
be 1 and ``batch_size`` unset; ``target_kl`` is not used (``NaturalGradient``'s ``max_kl``
bounds the step instead).

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

from typing import Any

import numpy as np
import torch

from ..optimizers import OptimizerModule
from ..trajectories.rollout import RolloutTrajectory
from .batch import Batch, flatten, fn_name

__all__ = ["learn_with_module", "reseed_modules"]


def reseed_modules(module: OptimizerModule, rng: np.random.Generator) -> None:
    """Reseed every module of the tree that has a generator (``Evolutionary``'s perturbations,
    ``MultiStep``'s shuffling) from ``rng``, so a policy's seed decides them."""
    reseed = getattr(module, "reseed", None)
    if callable(reseed):
        reseed(int(rng.integers(2**31)))
    for child in module.children().values():
        reseed_modules(child, rng)


def learn_with_module(policy: Any, trajectory: RolloutTrajectory) -> None:
    """Learn from a full rollout with one step of the policy's optimizer module (see the
    module docstring), then clear the rollout."""
    cls = type(policy)
    _check_config(policy)
    batch = Batch({k: np.array(v) for k, v in trajectory.batch().items()})
    if cls.postprocess_fn is not None:
        batch = Batch(cls.postprocess_fn(policy, batch))
    batch.owner = f"{cls.name}: the batch after postprocess_fn"
    flat = flatten(batch, policy.device)
    n = len(flat["state"])
    model, dist_class = policy.model, policy.dist_class
    with torch.no_grad():
        old_inputs = model(flat["state"])
    info: dict[str, float] = {}

    def rows(indices: Any) -> Batch:
        if indices is None:
            return flat
        index = torch.as_tensor(indices, device=policy.device)
        part = Batch({k: v[index] for k, v in flat.items()})
        part.owner = flat.owner
        return part

    def fn_loss(indices: Any = None) -> torch.Tensor:
        out = cls.loss_fn(policy, model, dist_class, rows(indices))
        loss, extra = out if isinstance(out, tuple) else (out, {})
        if isinstance(loss, torch.Tensor) and loss.numel() == 1 and not torch.isfinite(loss):
            raise FloatingPointError(
                f"{cls.name}: loss_fn {fn_name(cls.loss_fn)} returned a non-finite loss "
                f"{loss.item()} at update {policy.updates + 1} (optimizer "
                f"{type(policy.optimizer).__name__})"
            )
        info.update({k: float(v) for k, v in extra.items()})
        return loss

    def fn_kl_divergence(indices: Any = None) -> torch.Tensor:
        part = rows(indices)
        old_part = old_inputs if indices is None else old_inputs[torch.as_tensor(indices)]
        old = dist_class.from_inputs(old_part, policy.action_space)
        new = dist_class.from_inputs(model(part["state"]), policy.action_space)
        return old.kl(new).mean()

    result = policy.optimizer.step(
        policy.params, fn_loss, fn_kl_divergence=fn_kl_divergence, batch_size=n
    )
    policy.updates += 1
    policy.gradient_steps += int(result.statistics.get("inner_steps", 1))
    with torch.no_grad():
        kl = float(fn_kl_divergence())
    stats = {**info, "loss": result.loss, "grad_norm": result.grad_norm, "kl_divergence": kl}
    if cls.stats_fn is not None:
        stats.update({k: float(v) for k, v in cls.stats_fn(policy, batch).items()})
    policy.stats = stats
    trajectory.clear()


def _check_config(policy: Any) -> None:
    config = policy.config
    if config["n_epochs"] != 1 or config["batch_size"] is not None:
        raise ValueError(
            f"{type(policy).name}: with an optimizer module ({type(policy.optimizer).__name__}) "
            f"epochs and minibatches are the module's (MultiStep(inner, num_steps, "
            f"minibatch_size)); n_epochs must be 1 and batch_size None, got n_epochs="
            f"{config['n_epochs']!r}, batch_size={config['batch_size']!r}"
        )
