"""``rk.build_policy``: a deep learner compiled from pure functions (RLlib's policy builder,
without mixins; DESIGN.md section 8).

An algorithm is a handful of pure functions:

* ``model_fn(state_space, action_space, dist_class, config, seed) -> torch.nn.Module``: the
  network; ``model(obs)`` gives the action distribution's inputs (actor-critic models also have
  ``model.value(obs)``);
* ``extra_action_out_fn(policy, model, dist, obs, actions) -> dict[str, tensor]``: what is
  stored beside each action when acting (values, log-probabilities);
* ``postprocess_fn(policy, batch) -> batch``: adds what the loss needs (advantages, returns);
* ``loss_fn(policy, model, dist_class, batch) -> tensor`` (a scalar), or ``(tensor, dict)`` with
  scalar diagnostics (``approx_kl``, ``clip_fraction``, ...);
* ``gradients_fn(params)`` (optional): changes the gradients in place after backpropagation;
* ``stats_fn(policy, batch) -> dict[str, float]``: reported through ``rk.statistics``;

plus an ``optimizer``: an object with ``step(params, fn_loss, **fns)`` (see
:class:`GradientStep`, the default; ``rk.optimizers`` modules have the same interface), or a
callable ``config -> optimizer``; and ``defaults``, the hyperparameters (numbers or
``Schedule`` objects, whose counters are the policy's environment transitions).

The learning step, in this order (:func:`learn`, called by each algorithm's PostAct method when
the :class:`~rlkit.RolloutTrajectory` is full): the rollout's batch -> ``postprocess_fn`` ->
``n_epochs`` passes over shuffled minibatches of ``batch_size`` (the whole batch by default),
each an optimizer step over ``loss_fn`` (and ``gradients_fn``), stopping early when a
``target_kl`` is set and the loss reports ``approx_kl > 1.5 * target_kl`` (Stable-Baselines3) ->
``stats_fn`` -> ``rk.statistics(policy)``; then the rollout is cleared.

Example:
    >>> import rlkit as rk
    >>> from rlkit.learners.policy_gradient import vpg
    >>> Mine = vpg.VPG.with_updates(name="Mine", defaults={"lr": 1e-2})
    >>> Mine.defaults["lr"], Mine.loss_fn is vpg.VPG.loss_fn
    (0.01, True)
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import torch

from ..approximators.neural import resolve_device
from ..core.checks import check_callable, optional_positive_int, positive_int
from ..core.dispatch import PlanStep, statistics, update, where
from ..core.seeding import spawn_seeds
from ..core.stages import POST_ACT_STAGE, PRE_ACT_STAGE, AbstractStage, PostActStage
from ..core.state import generator_state, require_keys, set_generator_state, state_count
from ..optimizers.base import OptimizerModule, clear_grads, clip_grad_norm, total_norm
from ..policies.agent import Agent
from ..policies.distributions import distribution_for
from ..policies.spaces import check_env_fits
from ..policies.stochastic import AnyEnv, StochasticPolicy, is_vector_env
from ..schedules import Schedule
from ..trajectories.rollout import RolloutTrajectory
from .batch import Batch, flatten, fn_name
from .hyperparameters import check_hyperparameters, check_minibatches
from .module_step import learn_with_module, reseed_modules

__all__ = [
    "build_policy",
    "BuiltPolicy",
    "Batch",
    "GradientStep",
    "StepResult",
    "learn",
    "FUNCTION_NAMES",
    "with_updates",
    "describe_step",
    "check_algorithm",
]

FUNCTION_NAMES = (
    "loss_fn",
    "postprocess_fn",
    "stats_fn",
    "extra_action_out_fn",
    "gradients_fn",
    "model_fn",
)
_SIGNATURES = {
    "loss_fn": "loss_fn(policy, model, dist_class, batch)",
    "postprocess_fn": "postprocess_fn(policy, batch)",
    "stats_fn": "stats_fn(policy, batch)",
    "extra_action_out_fn": "extra_action_out_fn(policy, model, dist, obs, actions)",
    "gradients_fn": "gradients_fn(params)",
    "model_fn": "model_fn(state_space, action_space, dist_class, config, seed)",
}
# hyperparameters every built policy has (an algorithm's defaults may change them)
_COMMON_DEFAULTS = {"n_steps": 1, "n_epochs": 1, "batch_size": None, "target_kl": None}


# ---- the default optimizer ----


@dataclass
class StepResult:
    """What one optimizer step reports: the loss and the gradient norm before clipping."""

    loss: float
    grad_norm: float


class GradientStep:
    """One gradient step of a torch optimizer with global gradient-norm clipping:
    ``step(params, fn_loss, **fns) -> StepResult`` (the interface of ``rk.optimizers``).

    ``learning_rate`` is set by the policy before each update (from its ``lr`` hyperparameter);
    ``fn_gradients`` (the builder's ``gradients_fn``), when given, changes the gradients in place
    before clipping.

    Example:
        >>> import torch
        >>> w = torch.nn.Parameter(torch.ones(2))
        >>> opt = GradientStep(torch.optim.SGD, learning_rate=0.5, max_grad_norm=None)
        >>> opt.step([w], lambda: (w ** 2).sum()).loss, w.tolist()
        (2.0, [0.0, 0.0])
    """

    def __init__(
        self,
        optimizer_cls: Callable[..., torch.optim.Optimizer] = torch.optim.Adam,
        *,
        learning_rate: float = 3e-4,
        max_grad_norm: float | None = 0.5,
        **kwargs: Any,
    ) -> None:
        self.optimizer_cls = optimizer_cls
        self.learning_rate = float(learning_rate)
        self.max_grad_norm = max_grad_norm
        self.kwargs = kwargs
        self.torch_optimizer: torch.optim.Optimizer | None = None
        self._pending: dict[str, Any] | None = None

    def __repr__(self) -> str:
        name = getattr(self.optimizer_cls, "__name__", repr(self.optimizer_cls))
        return f"GradientStep({name}, max_grad_norm={self.max_grad_norm})"

    def bind(self, params: list[torch.nn.Parameter]) -> None:
        """Create the torch optimizer over ``params`` (done by the first ``step`` otherwise)."""
        self.torch_optimizer = self.optimizer_cls(params, lr=self.learning_rate, **self.kwargs)
        if self._pending is not None:
            self.torch_optimizer.load_state_dict(self._pending)
            self._pending = None

    def step(self, params: list[torch.nn.Parameter], fn_loss: Callable[[], Any], **fns: Any):
        if self.torch_optimizer is None:
            self.bind(params)
        optimizer = self.torch_optimizer
        for group in optimizer.param_groups:
            group["lr"] = self.learning_rate
        clear_grads(params)
        loss = fn_loss()
        loss.backward()
        fn_gradients = fns.get("fn_gradients")
        if fn_gradients is not None:
            fn_gradients(params)
        if self.max_grad_norm is not None:
            norm = clip_grad_norm(params, self.max_grad_norm)
        else:
            grads = [p.grad for p in params if p.grad is not None]
            norm = float(total_norm(grads)) if grads else math.nan
        optimizer.step()
        return StepResult(float(loss.detach()), norm)

    def state_dict(self) -> dict[str, Any]:
        state = self.torch_optimizer.state_dict() if self.torch_optimizer else self._pending
        return {"torch_optimizer": copy.deepcopy(state), "learning_rate": self.learning_rate}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        require_keys("GradientStep", state, "torch_optimizer", "learning_rate")
        self.learning_rate = float(state["learning_rate"])
        saved = copy.deepcopy(state["torch_optimizer"])
        if self.torch_optimizer is None:
            self._pending = saved
        elif saved is not None:
            self.torch_optimizer.load_state_dict(saved)


# ---- the built policies ----


def spaces_and_config(
    policy: Any, env: Any, state_space: Any, action_space: Any, config: dict[str, Any]
) -> tuple[Any, Any]:
    """What every built policy's constructor starts with: the spaces (``env``'s unless given)
    and ``policy.config``, its class's defaults updated with ``config`` (unknown names are
    refused, listing the known ones)."""
    owner = type(policy).name
    if env is not None and not hasattr(env, "state_space"):
        raise TypeError(
            f"{owner}: env must be an rlkit environment (rk.GymEnv or rk.VectorGymEnv), got "
            f"{type(env).__name__}: {env!r}; wrap it, e.g. rk.GymEnv('CartPole-v1', seed=0)"
        )
    if env is not None:
        state_space = env.state_space if state_space is None else state_space
        action_space = env.action_space if action_space is None else action_space
    if state_space is None or action_space is None:
        raise TypeError(f"{owner}: give an env, or both state_space and action_space")
    unknown = sorted(set(config) - set(policy.defaults))
    if unknown:
        raise TypeError(
            f"{owner}: unknown hyperparameter(s) {unknown}; known: {sorted(policy.defaults)}"
        )
    policy.config = copy.deepcopy({**policy.defaults, **config})
    return state_space, action_space


class BuiltPolicy(StochasticPolicy):
    """Base class of the policies :func:`build_policy` makes (see the module docstring).

    ``Built(env, seed=0, **config)``: the spaces come from ``env`` (or give ``state_space=`` and
    ``action_space=``); ``config`` overrides the class's ``defaults`` (an unknown name is an
    error listing the known ones). ``Built.agent(env, seed=0, **config)`` pairs a new policy with
    the :class:`~rlkit.RolloutTrajectory` it learns from.
    """

    name = "BuiltPolicy"
    defaults: Mapping[str, Any] = MappingProxyType(dict(_COMMON_DEFAULTS))
    loss_fn = None
    postprocess_fn = None
    stats_fn = None
    extra_action_out_fn = None
    gradients_fn = None
    model_fn = None
    optimizer: Any = None
    #: what build_policy / with_updates may set on a subclass of this base, and must be given
    builder_functions = (*FUNCTION_NAMES, "optimizer")
    builder_required = ("loss_fn", "model_fn", "optimizer")
    builder_options = ("name", "defaults")

    def __init__(
        self,
        env: Any = None,
        *,
        state_space: Any = None,
        action_space: Any = None,
        seed: int | np.random.SeedSequence = 0,
        device: str | torch.device = "cpu",
        **config: Any,
    ) -> None:
        cls_name = type(self).name
        state_space, action_space = spaces_and_config(self, env, state_space, action_space, config)
        positive_int(cls_name, "n_steps", self.config["n_steps"])
        positive_int(cls_name, "n_epochs", self.config["n_epochs"])
        optional_positive_int(cls_name, "batch_size", self.config["batch_size"])
        check_hyperparameters(cls_name, self.config)
        check_minibatches(cls_name, self.config, _n_envs(env))
        device = resolve_device(device, cls_name)
        dist_class = distribution_for(action_space)
        model_seed, sample_seed, shuffle_seed = spawn_seeds(seed, 3)
        model = type(self).model_fn(state_space, action_space, dist_class, self.config, model_seed)
        if not isinstance(model, torch.nn.Module):
            raise TypeError(
                f"{cls_name}: model_fn {fn_name(type(self).model_fn)} must return a "
                f"torch.nn.Module, got {type(model).__name__}: {model!r:.80}"
            )
        super().__init__(
            model.to(device), action_space, dist_class=dist_class, seed=sample_seed, device=device
        )
        self.state_space = state_space
        self.rng = np.random.default_rng(shuffle_seed)
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = _make_optimizer(type(self).optimizer, self.config, cls_name)
        if callable(getattr(self.optimizer, "bind", None)):
            self.optimizer.bind(self.params)
        if isinstance(self.optimizer, OptimizerModule):  # its generators follow the seed
            reseed_modules(self.optimizer, self.rng)
        self.transitions = 0  # environment transitions seen (the schedules' clock)
        self.updates = 0  # learning steps (one per full rollout)
        self.gradient_steps = 0
        self.stats: dict[str, float] = {}

    def __repr__(self) -> str:
        return f"{type(self).name}({self.dist_class.__name__})"

    @classmethod
    def agent(cls, env: Any, *, seed: int = 0, **config: Any) -> Agent:
        """A new policy for ``env`` and the rollout it learns from, as an ``rk.Agent``."""
        policy = cls(env, seed=seed, **config)
        return Agent(policy, RolloutTrajectory(policy.config["n_steps"], _n_envs(env)))

    @classmethod
    def with_updates(cls, **changes: Any) -> type[BuiltPolicy]:
        """A new policy class (a subclass of this one) with the named functions, ``optimizer``,
        ``name`` or ``defaults`` replaced (``defaults`` replaces the keys it names and keeps the
        others); anything else is an error listing what can be changed."""
        return with_updates(cls, changes)

    # ---- hyperparameters ----
    def hp(self, name: str) -> Any:
        """The hyperparameter ``name`` now (a schedule's value at the policy's transitions)."""
        value = self.config[name]
        if isinstance(value, Schedule):
            value.t = self.transitions
            return value.value
        return value

    def extra_action_out(self, obs, dist, actions):
        fn = type(self).extra_action_out_fn
        return {} if fn is None else fn(self, self.model, dist, obs, actions)

    # ---- what rk.explain shows for the learning step ----
    def plan(self, env: Any) -> dict[AbstractStage, list[PlanStep]]:
        cls = type(self)
        check_env_fits(cls.name, self.state_space, self.action_space, env)
        if isinstance(self.optimizer, OptimizerModule):
            label = "  learns (when the rollout is full; the loss and the KL as closures) with:"
            steps = [PlanStep(_nothing, label, where(learn_with_module))]
        else:
            steps = [PlanStep(_nothing, "  learns (when the rollout is full) with:", where(learn))]
        for key in ("postprocess_fn", "loss_fn", "gradients_fn", "stats_fn"):
            fn = getattr(cls, key)
            if fn is not None:
                label = f"    {key} = {fn_name(fn)}"
                steps.append(PlanStep(_nothing, label, where(fn)))
        steps.append(PlanStep(_nothing, f"    optimizer = {self.optimizer!r}", where(learn)))
        plan = {POST_ACT_STAGE: steps}
        fn = cls.extra_action_out_fn
        if fn is not None:
            label = f"  stored with each action: extra_action_out_fn = {fn_name(fn)}"
            plan[PRE_ACT_STAGE] = [PlanStep(_nothing_with_action, label, where(fn))]
        return plan

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        return {
            **super().state_dict(),
            "algorithm": type(self).name,
            "optimizer": self.optimizer.state_dict(),
            "schedules": {
                k: v.state_dict() for k, v in self.config.items() if isinstance(v, Schedule)
            },
            "rng": generator_state(self.rng),
            "transitions": self.transitions,
            "updates": self.updates,
            "gradient_steps": self.gradient_steps,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        owner = type(self).name
        require_keys(owner, state, "optimizer", "schedules", "rng", "transitions", "updates")
        check_algorithm(owner, state)
        super().load_state_dict(state)
        self.optimizer.load_state_dict(state["optimizer"])
        for key, schedule_state in state["schedules"].items():
            self.config[key].load_state_dict(schedule_state)
        set_generator_state(self.rng, state["rng"])
        self.transitions = state_count(owner, state, "transitions")
        self.updates = state_count(owner, state, "updates")
        self.gradient_steps = state_count(owner, state, "gradient_steps")


def _n_envs(env: Any) -> int | None:
    """The number of environments a policy constructed with ``env`` will act in (None: none
    given)."""
    if env is None:
        return None
    return env.n_envs if is_vector_env(env) else 1


def check_algorithm(owner: str, state: dict[str, Any]) -> None:
    """Refuse a state saved by another algorithm (PPO's, A2C's and VPG's states have the same
    keys and shapes; loaded, the wrong optimizer state fails at the next update or not at
    all). A state without the name (saved before it was recorded) is not checked."""
    saved = state.get("algorithm", owner)
    if saved != owner:
        raise ValueError(
            f"{owner}.load_state_dict: the state was saved by {saved}, not {owner}; load it into "
            f"a {saved} built with the same settings"
        )


def _nothing() -> None:
    """A plan step that only describes (the learning itself is the update method above it)."""


def describe_step(label: str, fn: Any) -> PlanStep:
    """A PostAct plan step that does nothing and shows ``label`` with ``fn``'s ``file:line`` in
    ``rk.explain`` (how a learner lists the functions its update method calls)."""
    return PlanStep(_nothing, label, where(fn))


def _nothing_with_action(action: Any) -> None:
    """The same at PreAct (where plan steps receive the action)."""


def _make_optimizer(optimizer: Any, config: dict[str, Any], owner: str) -> Any:
    if callable(getattr(optimizer, "step", None)):
        return copy.deepcopy(optimizer)
    if callable(optimizer):
        made = optimizer(config)
        if callable(getattr(made, "step", None)):
            return made
        optimizer = made
    raise TypeError(
        f"{owner}: optimizer must be an object with step(params, fn_loss, **fns) or a callable "
        f"config -> such an object, got {optimizer!r}"
    )


def with_updates(cls: type, changes: dict[str, Any]) -> type:
    """``cls.with_updates(**changes)`` for any buildable base (a :class:`BuiltPolicy` or a
    value-based learner): a subclass of ``cls`` with the named functions, ``name`` or
    ``defaults`` replaced; a name the base does not take is an error listing those it does."""
    known = (*cls.builder_functions, *cls.builder_options)
    unknown = sorted(set(changes) - set(known))
    if unknown:
        raise TypeError(
            f"{cls.name}.with_updates: unknown name(s) {unknown}; known: {sorted(known)}"
        )
    changes = dict(changes)
    given = changes.pop("defaults", {})
    if not isinstance(given, Mapping):
        raise TypeError(f"{cls.name}.with_updates: defaults must be a mapping, got {given!r}")
    defaults = {**cls.defaults, **given}
    name = changes.pop("name", cls.name)
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"{cls.name}.with_updates: name must be an identifier, got {name!r}")
    return _make_class(name, cls, defaults, changes)


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
    optimizer (e.g. :class:`~rlkit.learners.actor_critic.common.OffPolicyActorCritic`)."""
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


def _make_class(
    name: str,
    base: type,
    defaults: dict[str, Any],
    functions: dict[str, Any],
    doc: str | None = None,
) -> type:
    for key, fn in functions.items():
        if key == "optimizer":
            continue
        if fn is None and key in base.builder_required:
            raise TypeError(f"build_policy({name!r}): {key} is required")
        if key == "loss_fn" and isinstance(fn, Mapping):  # several losses, one optimizer each
            if not fn:
                raise TypeError(f"build_policy({name!r}): loss_fn must not be an empty dict")
            for loss_name, one in fn.items():
                check_callable(
                    f"build_policy({name!r})", f"loss_fn[{loss_name!r}]", one, _SIGNATURES[key]
                )
            continue
        if fn is not None:
            check_callable(f"build_policy({name!r})", key, fn, _SIGNATURES[key])
    namespace: dict[str, Any] = {key: _as_class_attribute(key, fn) for key, fn in functions.items()}
    namespace.update(
        name=name,
        defaults=MappingProxyType(dict(defaults)),
        __module__=_module_of(functions.get("loss_fn"), base),
        __doc__=doc or f"The {name} policy built by rk.build_policy (see rlkit.learners.builder).",
    )
    return type(name, (base,), namespace)


def _module_of(loss_fn: Any, base: type) -> str:
    if isinstance(loss_fn, Mapping):
        loss_fn = next(iter(loss_fn.values()))
    return getattr(loss_fn, "__module__", base.__module__)


def _as_class_attribute(key: str, fn: Any) -> Any:
    if key not in FUNCTION_NAMES or fn is None:
        return fn
    if isinstance(fn, Mapping):  # several losses: a read-only dict of plain functions
        return MappingProxyType(dict(fn))
    return staticmethod(fn)


# ---- the learning step ----


def learn(policy: BuiltPolicy, trajectory: RolloutTrajectory) -> None:
    """Learn from a full rollout in the documented order (module docstring), then clear it.
    A policy whose optimizer is an ``rk.optimizers`` module tree learns with
    :func:`~rlkit.learners.module_step.learn_with_module` (the loss and the KL as closures the
    tree evaluates as often as it needs)."""
    if isinstance(policy.optimizer, OptimizerModule):
        learn_with_module(policy, trajectory)
        return
    cls = type(policy)
    batch = Batch({k: np.array(v) for k, v in trajectory.batch().items()})
    if cls.postprocess_fn is not None:
        batch = cls.postprocess_fn(policy, batch)
        if not isinstance(batch, Mapping):
            raise TypeError(
                f"{cls.name}: postprocess_fn {fn_name(cls.postprocess_fn)} must return the "
                f"batch (a dict), got {type(batch).__name__}"
            )
    batch = Batch(batch)
    batch.owner = f"{cls.name}: the batch after postprocess_fn"
    if hasattr(policy.optimizer, "learning_rate") and "lr" in policy.config:
        policy.optimizer.learning_rate = float(policy.hp("lr"))
    flat = flatten(batch, policy.device)
    diagnostics = _optimize(policy, flat)
    policy.updates += 1
    stats = dict(diagnostics)
    if "lr" in policy.config:
        stats["learning_rate"] = float(policy.hp("lr"))
    if cls.stats_fn is not None:
        stats.update({k: float(v) for k, v in cls.stats_fn(policy, batch).items()})
    policy.stats = stats
    trajectory.clear()


def _optimize(policy: BuiltPolicy, flat: Batch) -> dict[str, float]:
    cls = type(policy)
    n = len(next(iter(flat.values())))
    batch_size = policy.config["batch_size"] or n
    target_kl = policy.config["target_kl"]
    sums: dict[str, float] = {}
    count = 0
    fns = {} if cls.gradients_fn is None else {"fn_gradients": cls.gradients_fn}
    for epoch in range(policy.config["n_epochs"]):
        order = policy.rng.permutation(n) if batch_size < n else None
        for start in range(0, n, batch_size):
            if order is None:  # one minibatch: the whole batch (a mean does not need shuffling)
                minibatch = flat
            else:
                index = torch.as_tensor(order[start : start + batch_size])
                minibatch = Batch({k: v[index] for k, v in flat.items()})
                minibatch.owner = flat.owner
            loss, info = _checked_loss(policy, minibatch, epoch, start // batch_size)
            kl = info.get("approx_kl")
            if target_kl is not None and kl is not None and kl > 1.5 * target_kl:
                sums["early_stop_epoch"] = float(epoch)
                return _means(sums, count)
            result = policy.optimizer.step(policy.params, lambda loss=loss: loss, **fns)
            policy.gradient_steps += 1
            count += 1
            reported = {
                "loss": getattr(result, "loss", math.nan),
                "grad_norm": getattr(result, "grad_norm", math.nan),
                **info,
            }
            for key, value in reported.items():
                sums[key] = sums.get(key, 0.0) + float(value)
    return _means(sums, count)


def _means(sums: dict[str, float], count: int) -> dict[str, float]:
    return {k: (v if k == "early_stop_epoch" else v / max(count, 1)) for k, v in sums.items()}


def _checked_loss(
    policy: BuiltPolicy, minibatch: Batch, epoch: int, index: int
) -> tuple[torch.Tensor, dict[str, float]]:
    cls = type(policy)
    out = cls.loss_fn(policy, policy.model, policy.dist_class, minibatch)
    loss, info = out if isinstance(out, tuple) else (out, {})
    where_ = (
        f"at update {policy.updates + 1} (epoch {epoch}, minibatch {index}, gradient step "
        f"{policy.gradient_steps + 1})"
    )
    name = fn_name(cls.loss_fn)
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        shape = tuple(loss.shape) if isinstance(loss, torch.Tensor) else type(loss).__name__
        raise ValueError(
            f"{cls.name}: loss_fn {name} must return a scalar tensor, got {shape} {where_}"
        )
    if not math.isfinite(loss.item()):
        raise FloatingPointError(
            f"{cls.name}: loss_fn {name} returned a non-finite loss {loss.item()} {where_}"
        )
    return loss.reshape(()), {k: float(v) for k, v in info.items()}


# ---- PostAct: count transitions, learn when the rollout is full ----
@update.dispatch
def _(
    policy: BuiltPolicy,
    trajectory: RolloutTrajectory,
    env: AnyEnv,
    stage: PostActStage,
    /,
):
    policy.transitions += trajectory.n_envs
    if trajectory.full:
        learn(policy, trajectory)


# ---- statistics: the last learning step's ----
@statistics.dispatch
def _(policy: BuiltPolicy, /):
    return dict(policy.stats)
