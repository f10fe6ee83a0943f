"""``rk.build_policy``: a deep learner compiled from pure functions (RLlib's policy builder,
without mixins). The functions, their signatures and the order they run in are described in
:mod:`rlkit.learners.built` (the base class :class:`BuiltPolicy`); what a built policy learns
from one batch is :mod:`rlkit.learners.update`; when it learns, its kind's driver
(:mod:`rlkit.learners.drivers.on_policy`, :mod:`rlkit.learners.drivers.off_policy`). Importing
this module registers all three, so a policy built here always has its pipeline.

Example:
    >>> import rlkit as rk
    >>> from rlkit.learners.policy_gradient import vpg
    >>> Mine = vpg.VPG.with_updates(name="Mine", defaults={"lr": 1e-2})
    >>> Mine.defaults["lr"], Mine.loss_fn is vpg.VPG.loss_fn
    (0.01, True)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from . import update as _update  # noqa: F401 - registers update(BuiltPolicy, Batch)
from .batch import Batch
from .built import (
    _COMMON_DEFAULTS,
    FUNCTION_NAMES,
    BuiltPolicy,
    _make_class,
    check_algorithm,
    describe_step,
    gradient_tree,
    with_updates,
)
from .drivers import off_policy as _off_policy  # noqa: F401 - registers the off-policy driver
from .drivers import offline as _offline  # noqa: F401 - registers the offline driver
from .drivers import on_policy as _on_policy  # noqa: F401 - registers the on-policy driver

__all__ = [
    "build_policy",
    "BuiltPolicy",
    "Batch",
    "FUNCTION_NAMES",
    "with_updates",
    "describe_step",
    "check_algorithm",
    "gradient_tree",
]


def build_policy(
    name: str,
    *,
    loss_fn: Callable[..., Any],
    postprocess_fn: Callable[..., Any] | None = None,
    stats_fn: Callable[..., Any] | None = None,
    extra_action_out_fn: Callable[..., Any] | None = None,
    gradients_fn: Callable[..., Any] | None = None,
    model_fn: Callable[..., Any] | None = None,
    optimizer: Any = None,
    defaults: Mapping[str, Any] | None = None,
    base: type | None = None,
    doc: str | None = None,
) -> type:
    """Compile pure functions into a subclass of ``base`` named ``name`` (see the module
    docstring for each function's signature and the order they run in).

    ``base`` is :class:`BuiltPolicy` by default (then ``model_fn`` and ``optimizer`` are
    required), a subclass of it, or a value-based learner base
    (:class:`~rlkit.learners.value_based.common.ValueBasedLearner`): its user gives the network
    (an approximator) to the constructor, so it takes a ``loss_fn`` only, and a ``model_fn``,
    ``optimizer`` or other function given to it is an error. A base says what it takes in its
    ``builder_functions`` (and requires in ``builder_required``). ``doc`` is the class
    docstring (default: one line naming the builder).

    ``loss_fn`` may also be a dict ``{name: loss_fn}`` of several losses (actor-critic methods),
    with ``optimizer`` a dict of as many optimizers under the same names; such a policy needs a
    ``base`` (a :class:`BuiltPolicy` subclass) whose learning step steps each loss with its own
    optimizer (e.g. :class:`~rlkit.learners.actor_critic.common.OffPolicyActorCritic`).

    Checks: each function's signature when the class is built (a ``TypeError`` naming the
    function, its parameters and the call rlkit makes); the model against the spaces with one
    forward pass when a run is planned (``rk.run``, ``rk.explain``); ``stats_fn`` and
    ``extra_action_out_fn`` must return dicts (``rlkit/learners/function_checks.py``).

    **model_fn(state_space, action_space, dist_class, config, seed)**: ``seed`` is a
    ``numpy.random.SeedSequence`` derived from the policy's seed (one stream per purpose: the
    model, the action sampling, the minibatches), not an int. For torch, turn it into an int
    with ``rlkit.core.seeding.int_seed(seed)`` and seed a ``torch.Generator`` (or
    ``torch.manual_seed``) with it::

        def model_fn(state_space, action_space, dist_class, config, seed):
            torch.manual_seed(int_seed(seed))  # or torch.Generator().manual_seed(...)
            return torch.nn.Linear(state_space.shape[0], dist_class.n_inputs(action_space))

    ``config`` holds every hyperparameter (the defaults updated with the constructor's
    arguments). ``hidden`` means the layer widths to rlkit's own model functions only (a
    tuple, or one int for one layer, checked when the policy is made); a custom ``model_fn``
    may give it any meaning, or none.

    **The batch** ``loss_fn``, ``postprocess_fn`` and ``stats_fn`` receive is an ``rk.Batch``
    (tensors by key, one row per transition; ``postprocess_fn`` sees the rollout's
    ``(n_steps, n_envs, ...)`` arrays). The keys each kind of learner provides:

    * on-policy (VPG, A2C, PPO, TRPO: ``base=BuiltPolicy``): ``state``, ``action``, ``reward``,
      ``terminated``, ``truncated``, ``final_state`` (the rollout), what
      ``extra_action_out_fn`` stored with each action (rlkit's: ``value``, ``log_prob``), what
      ``postprocess_fn`` adds (rlkit's ``add_advantages``: ``advantages``, ``returns``), and
      ``legal_action_mask`` when the env masks actions; TRPO's update adds ``old_inputs``;
    * ES: ``reset_seeds`` (the fitness episodes' reset seeds);
    * off-policy actor-critics (SAC, TD3, DDPG): ``state``, ``action`` (scaled to [-1, 1]),
      ``reward``, ``terminal``, ``next_state``;
    * value-based learners (the DQN family): ``state``, ``action``, ``reward``,
      ``terminal``, ``next_state``, ``discount``, and ``weights``, ``indices`` from a
      prioritized replay.

    Reading a missing key is a ``KeyError`` listing the keys the batch has; ``policy.hp(name)``
    of an unknown hyperparameter is a ``KeyError`` suggesting the closest known name.

    Example:
        A policy that reinforces each action by its immediate reward, from a linear model:

        >>> import torch
        >>> import rlkit as rk
        >>> def linear_model(state_space, action_space, dist_class, config, seed):
        ...     torch.manual_seed(int(seed.generate_state(1)[0]))  # seed is a SeedSequence
        ...     return torch.nn.Linear(state_space.shape[0], action_space.n)
        >>> def one_step_loss(policy, model, dist_class, batch):
        ...     dist = dist_class.from_inputs(model(batch["state"]), policy.action_space)
        ...     return -(dist.log_prob(batch["action"]) * batch["reward"]).mean()
        >>> OneStep = rk.build_policy(
        ...     "OneStep", loss_fn=one_step_loss, model_fn=linear_model,
        ...     optimizer=lambda config: rk.optimizers.GradientDescent("adam", lr=config["lr"]),
        ...     defaults={"lr": 1e-2, "n_steps": 32})
        >>> env = rk.GymEnv("CartPole-v1", seed=0)
        >>> agent = OneStep.agent(env, seed=0)
        >>> hook = rk.run(agent, env, rk.StopAfterNSteps(64))
        >>> agent.policy.updates, issubclass(OneStep, rk.BuiltPolicy)
        (2, True)
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"build_policy: name must be an identifier, got {name!r}")
    defaults = {} if defaults is None else defaults
    if not isinstance(defaults, Mapping):
        raise TypeError(f"build_policy: defaults must be a mapping, got {defaults!r}")
    functions = {
        "loss_fn": loss_fn,
        "postprocess_fn": postprocess_fn,
        "stats_fn": stats_fn,
        "extra_action_out_fn": extra_action_out_fn,
        "gradients_fn": gradients_fn,
        "model_fn": model_fn,
        "optimizer": optimizer,
    }
    if base is None:
        base = BuiltPolicy
    if not (isinstance(base, type) and hasattr(base, "builder_functions")):
        raise TypeError(
            f"build_policy: base must be a BuiltPolicy subclass or a value-based learner base "
            f"(ValueBasedLearner or a subclass), got {base!r}"
        )
    refused = sorted(
        k for k, v in functions.items() if v is not None and k not in base.builder_functions
    )
    if refused:
        raise TypeError(
            f"build_policy({name!r}): base {base.__name__} takes only "
            f"{list(base.builder_functions)}, got {refused} too"
            + (
                "; its network is the approximator given to the constructor"
                if "model_fn" in refused
                else ""
            )
        )
    missing = [k for k in base.builder_required if functions[k] is None]
    if missing:
        raise TypeError(f"build_policy({name!r}): {', '.join(missing)} is required")
    if isinstance(loss_fn, Mapping) and base is BuiltPolicy:
        raise TypeError(
            f"build_policy({name!r}): a dict of losses needs a base class that steps each loss "
            f"with its own optimizer (base=...), e.g. OffPolicyActorCritic"
        )
    functions = {k: v for k, v in functions.items() if k in base.builder_functions}
    common = _COMMON_DEFAULTS if issubclass(base, BuiltPolicy) else {}
    return _make_class(name, base, {**common, **defaults}, functions, doc)


