"""TRPO (Schulman et al. 2015) with Stable-Baselines3's semantics, as pure functions compiled by
``rk.build_policy`` and trained by optimizer modules (:mod:`rlkit.optimizers`).

Each rollout of ``n_steps`` steps of every env: values and log-probabilities stored when acting,
GAE (``gamma``, ``gae_lambda``) as PPO, advantages normalised over the whole batch; then

* the policy takes one step of ``OptimizedStep(NaturalGradient(max_kl=target_kl,
  cg_iterations=cg_max_steps, cg_damping=cg_damping), ls_max_iterations=line_search_max_iter,
  ls_accept_ratio=0, ls_parameter=line_search_shrinking_factor, ls_max_kl=target_kl)`` on the
  surrogate :func:`trpo_loss` (``-mean(ratio * A)``) with the KL :func:`trpo_kl` from the
  rollout's policy: a natural-gradient step scaled to the KL bound, shortened until the
  surrogate improves and the KL stays within ``target_kl``, or undone;
* the value network takes ``MultiStep(GradientDescent(Adam, lr, eps=1e-5), n_critic_updates,
  minibatch_size=batch_size)``: ``n_critic_updates`` epochs over shuffled minibatches of the
  value MSE :func:`trpo_value_loss`.

Parameters: the value step trains the value network's own layers (``model.vf``) only; the
policy step covers every other parameter, so a body shared by the policy and the value function
(the CNN and its 512-unit layer on images, the encoder of ``Dict``, ``Tuple`` or ``Discrete``
observations) moves only by the KL-bounded natural-gradient step. This is sb3-contrib's TRPO with
its default ``share_features_extractor=True``: its critic update removes the gradients of the
parameters shared with the actor (``CnnPolicy``: only ``value_net`` is stepped).

Both module trees are settings: ``policy_optimizer`` and ``value_optimizer`` take a spec of
``rk.optimizers.make`` instead (``rk.explain(agent.policy.optimizer)`` prints both).

Defaults are Stable-Baselines3 contrib's. Differences: the natural-gradient step is scaled with
the undamped Fisher product ``d^T F d`` (TensorForce's derivation; Stable-Baselines3 uses the
damped one, a slightly shorter first step the line search then needs less often to shorten); no
``sub_sampling_factor`` and no gSDE; ``lr`` is a number (no schedule); the KL is ``KL(old || new)``
as in the TRPO paper and TensorForce (Stable-Baselines3 uses ``KL(new || old)``: the same Fisher
matrix at the old parameters, slightly different values in the line search's KL test).

Example:
    >>> import rlkit as rk
    >>> agent = rk.TRPO.agent(rk.GymEnv("CartPole-v1", seed=0), seed=0, n_steps=64,
    ...                       batch_size=32, n_critic_updates=2)
    >>> hook = rk.run(agent, rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(128))
    >>> agent.policy.updates, rk.statistics(agent.policy)["is_line_search_success"] in (0.0, 1.0)
    (2, True)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ...core.checks import positive_int
from ...core.dispatch import update
from ...optimizers import (
    GradientDescent,
    MultiStep,
    NaturalGradient,
    NonFiniteError,
    OptimizedStep,
    OptimizerModule,
    StepResult,
    make,
)
from ...optimizers.base import restore, snapshot
from ..batch import Batch, flatten
from ..builder import BuiltPolicy, build_policy
from ..update import postprocessed, refused
from .functions import (
    add_advantages,
    explained_variance,
    extra_value_and_log_prob,
    normalize,
    value_loss,
)
from .models import actor_critic_model

__all__ = [
    "TRPO",
    "TRPO_DEFAULTS",
    "LossOptimizers",
    "trpo_loss",
    "trpo_kl",
    "trpo_value_loss",
    "trpo_optimizers",
    "trpo_update",
]

TRPO_DEFAULTS = {
    "lr": 1e-3,
    "n_steps": 2048,
    "batch_size": 128,
    "gamma": 0.99,
    "gae_lambda": 0.95,
    "cg_max_steps": 15,
    "cg_damping": 0.1,
    "line_search_shrinking_factor": 0.8,
    "line_search_max_iter": 10,
    "n_critic_updates": 10,
    "normalize_advantage": True,
    "target_kl": 0.01,
    "policy_optimizer": None,
    "value_optimizer": None,
    "hidden": (64, 64),
    "activation": "tanh",
    "log_std_init": 0.0,
}


# ---- the losses (pure functions of the policy, the model and the batch) ----


def _distribution(policy, model, dist_class, batch, inputs=None):
    inputs = model(batch["state"]) if inputs is None else inputs
    return dist_class.from_inputs(inputs, policy.action_space, batch.get("legal_action_mask"))


def trpo_loss(policy, model, dist_class, batch):
    """The surrogate ``-mean(exp(log_prob - old_log_prob) * A)`` (``A`` as given: the learning
    step normalises it over the whole batch first)."""
    log_prob = _distribution(policy, model, dist_class, batch).log_prob(batch["action"])
    return -(torch.exp(log_prob - batch["log_prob"]) * batch["advantages"]).mean()


def trpo_kl(policy, model, dist_class, batch):
    """``mean KL(old || new)``: the rollout's policy (its distribution inputs stored in the
    batch as ``old_inputs``) against the model's."""
    old = _distribution(policy, model, dist_class, batch, batch["old_inputs"])
    return old.kl(_distribution(policy, model, dist_class, batch)).mean()


def trpo_value_loss(policy, model, batch):
    """The value MSE against the GAE returns."""
    return value_loss(model.value(batch["state"]), batch["returns"])


# ---- the optimizers: one module tree per loss ----


class LossOptimizers:
    """One optimizer module per loss: ``step(params, fn_loss, *, loss, **fns)`` steps the module
    named ``loss``. ``describe()`` (``rk.explain``) prints every tree; the state holds all."""

    def __init__(self, **modules: OptimizerModule) -> None:
        for name, module in modules.items():
            if not isinstance(module, OptimizerModule):
                raise TypeError(
                    f"LossOptimizers: {name} must be an optimizer module, got {module!r}"
                )
        self.modules = modules

    def __repr__(self) -> str:
        return f"LossOptimizers({', '.join(f'{k}={v!r}' for k, v in self.modules.items())})"

    def describe(self) -> str:
        lines = []
        for name, module in self.modules.items():
            lines.append(f"{name} loss:")
            lines.extend("  " + line for line in module.describe().splitlines())
        return "\n".join(lines)

    def step(self, params: Any, fn_loss: Any, *, loss: str, **fns: Any) -> StepResult:
        if loss not in self.modules:
            raise KeyError(
                f"LossOptimizers: no module for loss {loss!r}; has {sorted(self.modules)}"
            )
        return self.modules[loss].step(params, fn_loss, **fns)

    def reseed(self, rng: np.random.Generator) -> None:
        """Reseed every module with a generator of its own (shuffling, perturbations)."""
        for module in self.modules.values():
            for node in _walk(module):
                if callable(getattr(node, "reseed", None)):
                    node.reseed(int(rng.integers(2**31)))

    def state_dict(self) -> dict[str, Any]:
        return {name: module.state_dict() for name, module in self.modules.items()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if set(state) != set(self.modules):
            raise ValueError(
                f"LossOptimizers: the saved state has modules {sorted(state)}, this one "
                f"{sorted(self.modules)}"
            )
        for name, module in self.modules.items():
            module.load_state_dict(state[name])


def _walk(module: OptimizerModule):
    yield module
    for child in module.children().values():
        yield from _walk(child)


def trpo_optimizers(config: dict[str, Any]) -> LossOptimizers:
    """The policy's and the value function's module trees from the hyperparameters (or from
    the specs ``policy_optimizer`` / ``value_optimizer``)."""
    policy = config["policy_optimizer"]
    if policy is None:
        policy = OptimizedStep(
            NaturalGradient(
                max_kl=config["target_kl"],
                cg_iterations=config["cg_max_steps"],
                cg_damping=config["cg_damping"],
            ),
            ls_max_iterations=config["line_search_max_iter"],
            ls_accept_ratio=0.0,
            ls_parameter=config["line_search_shrinking_factor"],
            ls_max_kl=config["target_kl"],
        )
    value = config["value_optimizer"]
    if value is None:
        value = MultiStep(
            GradientDescent("adam", lr=config["lr"], eps=1e-5),
            num_steps=positive_int("TRPO", "n_critic_updates", config["n_critic_updates"]),
            minibatch_size=config["batch_size"],
        )
    return LossOptimizers(policy=make(policy), value=make(value))


# ---- the learning step ----


def trpo_update(policy: BuiltPolicy, batch: Batch) -> None:
    """TRPO's update from one rollout batch: postprocess, one policy step (``loss_fn`` with
    ``fn_kl_divergence``), the value steps, statistics."""
    cls = type(policy)
    batch = postprocessed(policy, batch)
    flat = flatten(batch, policy.device)
    n = len(flat)
    if policy.hp("normalize_advantage"):
        flat["advantages"] = normalize(flat["advantages"])
    model = policy.model
    with torch.no_grad():
        flat["old_inputs"] = model(flat["state"])
    value_params = list(model.vf.parameters())
    value_ids = {id(p) for p in value_params}
    actor_params = [p for p in policy.params if id(p) not in value_ids]

    def fn_loss():
        return cls.loss_fn(policy, model, policy.dist_class, flat)

    def fn_kl_divergence():
        return trpo_kl(policy, model, policy.dist_class, flat)

    def fn_value_loss(indices=None):
        return trpo_value_loss(policy, model, flat if indices is None else flat.rows(indices))

    actor_before = snapshot(actor_params)  # restored if the value step is refused
    try:
        result = policy.optimizer.step(
            actor_params, fn_loss, loss="policy", fn_kl_divergence=fn_kl_divergence
        )
    except NonFiniteError as error:
        raise refused(policy, error) from None
    try:
        value_result = policy.optimizer.step(
            value_params, fn_value_loss, loss="value", batch_size=n
        )
    except NonFiniteError as error:
        restore(actor_params, actor_before)
        raise error.restated(
            f"TRPO: the value network's {error.what} (trpo_value_loss) is {error.value} at "
            f"update {policy.updates + 1}; the update's policy step was undone"
        ) from None
    policy.updates += 1
    policy.gradient_steps += 1 + int(value_result.statistics.get("inner_steps", 1))
    with torch.no_grad():
        kl = float(fn_kl_divergence())
    policy.stats = {
        "policy_objective": -float(result.loss_before),
        "kl_divergence_loss": kl,
        "is_line_search_success": float(result.statistics.get("ls_accepted", 1.0)),
        "line_search_fraction": float(result.statistics.get("ls_fraction", 1.0)),
        "value_loss": float(value_result.statistics.get("loss", float("nan"))),
        "explained_variance": explained_variance(batch["value"], batch["returns"]),
    }


_TRPO = build_policy(
    "TRPO",
    loss_fn=trpo_loss,
    postprocess_fn=add_advantages,
    extra_action_out_fn=extra_value_and_log_prob,
    model_fn=actor_critic_model,
    optimizer=trpo_optimizers,
    defaults=TRPO_DEFAULTS,
)


class TRPO(_TRPO):
    """The TRPO policy (see the module docstring); its optimizers' generators are derived from
    the policy's seed.

    Example:
        >>> import rlkit as rk
        >>> rk.explain(rk.TRPO(rk.GymEnv("CartPole-v1"), seed=0).optimizer)  # doctest: +ELLIPSIS
        policy loss:
          OptimizedStep(...): wraps: line-searches along the inner module's step
            optimizer:
              NaturalGradient(max_kl=0.01, cg_iterations=15, cg_damping=0.1): computes its own step
        value loss:
          MultiStep(...): wraps: repeats the inner module's step
            optimizer:
              GradientDescent(optimizer='adam', lr=0.001, eps=1e-05): computes its own step
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.optimizer.reseed(self.rng)


# ---- what TRPO learns from one batch: its own order (a natural-gradient policy step, then
# the critic's epochs) ----
@update.dispatch
def _(policy: TRPO, batch: Batch, /):
    trpo_update(policy, batch)
