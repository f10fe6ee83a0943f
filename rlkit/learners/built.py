"""The base of the policies ``rk.build_policy`` compiles (:class:`BuiltPolicy`) and the class
machinery behind ``build_policy`` and ``with_updates`` (RLlib's policy builder, without mixins).

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

plus an ``optimizer``: an ``rk.optimizers`` module tree, or a callable ``config -> tree`` (the
tree is then built from the hyperparameters, and its ``GradientDescent`` learning rates follow
``lr``); and ``defaults``, the hyperparameters (numbers or ``Schedule`` objects, whose counters
are the policy's environment transitions).

What a policy learns from one batch is ``update(policy, batch)`` (the default one is in
:mod:`rlkit.learners.update`: ``postprocess_fn`` -> one step of the optimizer tree over
``loss_fn`` -> ``stats_fn`` -> ``rk.statistics``); when it learns is its driver's business (the
on-policy driver, :mod:`rlkit.learners.drivers.on_policy`: when the
:class:`~rlkit.RolloutTrajectory` is full). An algorithm whose order differs writes its own
``update(policy: X, batch: Batch)`` beside its losses.

Example:
    >>> import rlkit as rk
    >>> policy = rk.PPO(rk.GymEnv("CartPole-v1", seed=0), seed=0, n_steps=64, batch_size=32)
    >>> print(policy.optimizer.describe())  # doctest: +NORMALIZE_WHITESPACE
    MultiStep(num_steps=10, minibatch_size=32, seed=0): wraps: repeats the inner module's step
      optimizer:
        ClippedStep(max_norm=0.5, on='gradient'): wraps: clips the gradient the inner module
        steps with
          optimizer:
            GradientDescent(optimizer='adam', lr=0.0003, eps=1e-05, fused=True,
            keep_deltas=False): computes its own step
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
import torch
from plum import Signature

from ..approximators.neural import resolve_device
from ..core.checks import optional_positive_int, positive_int
from ..core.dispatch import PlanStep, resolve, statistics, update, where
from ..core.seeding import spawn_seeds
from ..core.stages import POST_ACT_STAGE, PRE_ACT_STAGE, AbstractStage
from ..core.state import generator_state, require_keys, set_generator_state, state_count
from ..optimizers import ClippedStep, GradientDescent, MultiStep, OptimizerModule
from ..policies.agent import Agent
from ..policies.distributions import distribution_for
from ..policies.spaces import check_env_fits
from ..policies.stochastic import StochasticPolicy, is_vector_env
from ..schedules import Schedule
from ..trajectories.rollout import RolloutTrajectory
from .batch import Batch, fn_name
from .compiled import compile_mode, compiled, plain_tree, refuse_compile
from .function_checks import check_dict_result, check_model_outputs, check_signature
from .hyperparameters import check_hyperparameters, check_minibatches, reads_hidden

__all__ = [
    "BuiltPolicy",
    "UnknownHyperparameterError",
    "Batch",
    "FUNCTION_NAMES",
    "gradient_tree",
    "reseed_modules",
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
_LEARNING_FUNCTIONS = ("postprocess_fn", "loss_fn", "gradients_fn", "stats_fn")
# hyperparameters every built policy has (an algorithm's defaults may change them)
_COMMON_DEFAULTS = {"n_steps": 1, "n_epochs": 1, "batch_size": None, "target_kl": None}


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


class UnknownHyperparameterError(KeyError):
    """``policy.hp(name)`` with a name the policy does not have: the message names the policy,
    the name, the closest known name (``difflib``) and every known one."""

    def __init__(self, owner: str, name: Any, known: Mapping[str, Any]) -> None:
        names = sorted(known)
        close = difflib.get_close_matches(str(name), names, n=1, cutoff=0.5)
        hint = f"; did you mean {close[0]!r}?" if close else ";"
        self.message = f"{owner} has no hyperparameter {name!r}{hint} known: {names}"
        super().__init__(self.message)

    def __str__(self) -> str:  # a KeyError would show the message in quotes
        return self.message


class BuiltPolicy(StochasticPolicy):
    """Base class of the policies :func:`build_policy` makes (see the module docstring).

    ``Built(env, seed=0, **config)``: the spaces come from ``env`` (or give ``state_space=`` and
    ``action_space=``); ``config`` overrides the class's ``defaults`` (an unknown name is an
    error listing the known ones). ``Built.agent(env, seed=0, **config)`` pairs a new policy with
    the :class:`~rlkit.RolloutTrajectory` it learns from.

    Example:
        >>> import rlkit as rk
        >>> policy = rk.PPO(rk.GymEnv("CartPole-v1"), seed=0, lr=1e-3)
        >>> isinstance(policy, rk.BuiltPolicy), policy.hp("lr"), policy.hp("n_steps")
        (True, 0.001, 2048)
        >>> env = rk.GymEnv("CartPole-v1", seed=0)
        >>> env.reset()
        >>> policy(env) in (0, 1)
        True
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

    #: the generators a policy derives from its seed, in order (a base may add its own)
    seed_names: tuple[str, ...] = ("model", "sample", "shuffle")

    def __init__(
        self,
        env: Any = None,
        *,
        state_space: Any = None,
        action_space: Any = None,
        seed: int | np.random.SeedSequence = 0,
        device: str | torch.device = "cpu",
        compile: bool | str = False,  # noqa: A002 - the documented name (docs/how-to/speed.md)
        **config: Any,
    ) -> None:
        owner = type(self).name
        state_space, action_space = spaces_and_config(self, env, state_space, action_space, config)
        self.check_config(owner, action_space, env)
        device = resolve_device(device, owner)
        seeds = dict(zip(self.seed_names, spawn_seeds(seed, len(self.seed_names)), strict=True))
        dist_class = self.distribution_class(action_space)
        model = type(self).model_fn(
            state_space, action_space, dist_class, self.config, seeds["model"]
        )
        self.check_model(owner, model)
        super().__init__(
            model.to(device), action_space, dist_class=dist_class, seed=seeds["sample"],
            device=device,
        )  # fmt: skip
        self.state_space = state_space
        # rk.VecNormalize's statistics (live, frozen here): predict and greedy evaluations on
        # raw envs normalise with them, rk.save keeps them (rlkit/policies/normalized.py)
        self.observation_normalizer = getattr(env, "observation_normalizer", None)
        self.seeds = seeds
        self.rng = np.random.default_rng(seeds["shuffle"])
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = self.make_optimizer(owner)
        self.compile_mode = compile_mode(owner, compile, device)
        if self.compile_mode is not None:
            self.check_compilable(owner)
        self.loss_fns = self.compiled_losses()
        self.acting_model = compiled(self.model, self.compile_mode)
        self.transitions = 0  # environment transitions seen (the schedules' clock)
        self.updates = 0  # learning steps (one per full rollout)
        self.gradient_steps = 0
        self.stats: dict[str, float] = {}

    # ---- what a base may change in construction ----
    def check_config(self, owner: str, action_space: Any, env: Any) -> None:
        """Refuse bad hyperparameters (``self.config``) naming ``owner``."""
        positive_int(owner, "n_steps", self.config["n_steps"])
        positive_int(owner, "n_epochs", self.config["n_epochs"])
        optional_positive_int(owner, "batch_size", self.config["batch_size"])
        checked = self.config
        if not reads_hidden(type(self).model_fn):  # a user's model gives hidden its own meaning
            checked = {k: v for k, v in checked.items() if k != "hidden"}
        check_hyperparameters(owner, checked)
        check_minibatches(owner, self.config, _n_envs(env))

    def distribution_class(self, action_space: Any) -> Any:
        """The action distribution's class handed to ``model_fn`` (``rk.distribution_for``)."""
        return distribution_for(action_space)

    def check_model(self, owner: str, model: Any) -> None:
        """Refuse what ``model_fn`` returned unless it is a ``torch.nn.Module``."""
        if not isinstance(model, torch.nn.Module):
            raise TypeError(
                f"{owner}: model_fn {fn_name(type(self).model_fn)} must return a "
                f"torch.nn.Module, got {type(model).__name__}: {model!r:.80}"
            )

    def make_optimizer(self, owner: str) -> OptimizerModule:
        """The optimizer module tree (:func:`make_tree`), its generators seeded from the
        policy's; a tree given as such (not built from the hyperparameters) leaves epochs and
        minibatches to its own ``MultiStep``."""
        spec = type(self).optimizer
        tree, self.lr_driven = make_tree(spec, self.config, owner)
        if not self.lr_driven:
            check_tree_config(owner, self.config, tree)
        if isinstance(tree, OptimizerModule):
            reseed_modules(tree, self.rng)
        return tree

    def check_compilable(self, owner: str) -> None:
        """Refuse ``compile=True`` unless the optimizer tree only takes gradient steps (a
        compiled loss serves one evaluation and back-propagation per step)."""
        if not plain_tree(self.optimizer):
            refuse_compile(
                owner, "its optimizer evaluates the loss in other ways than one gradient step "
                "(a natural gradient, a line search, evolutionary perturbations)",
            )  # fmt: skip

    def compiled_losses(self) -> Any:
        """``loss_fn`` (a dict of them: each), compiled when ``compile=True``."""
        fns = type(self).loss_fn
        if isinstance(fns, Mapping):
            return {name: compiled(fn, self.compile_mode) for name, fn in fns.items()}
        return compiled(fns, self.compile_mode)

    def distribution(self, obs: torch.Tensor, mask: Any = None) -> Any:
        """The action distribution for a batch of observations, from the acting forward pass
        (compiled when ``compile=True``)."""
        return self.dist_class.from_inputs(self.acting_model(obs), self.action_space, mask)

    def __repr__(self) -> str:
        return f"{type(self).name}({self.dist_class.__name__})"

    @classmethod
    def agent(cls, env: Any, *, seed: int = 0, **config: Any) -> Agent:
        """A new policy for ``env`` and the rollout it learns from, as an ``rk.Agent``
        (``uint8`` image observations: the policies of ``actor_critic_model`` put a CNN first,
        docs/how-to/images.md)."""
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
        """The hyperparameter ``name`` now (a schedule's value at the policy's transitions); an
        unknown name is an :class:`UnknownHyperparameterError` (a ``KeyError``) naming the
        policy, the name, the closest known name and all of them.

        Example:
            >>> import rlkit as rk
            >>> policy = rk.PPO(rk.GymEnv("CartPole-v1"), n_steps=64, batch_size=32)
            >>> policy.hp("n_steps")
            64
            >>> policy.hp("n_step")  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            rlkit.learners.built.UnknownHyperparameterError: PPO has no hyperparameter 'n_step'; did you mean 'n_steps'? known: [...]
        """  # noqa: E501
        try:
            value = self.config[name]
        except KeyError:
            raise UnknownHyperparameterError(type(self).name, name, self.config) from None
        if isinstance(value, Schedule):
            value.t = self.transitions
            return value.value
        return value

    def extra_action_out(self, obs, dist, actions):
        fn = type(self).extra_action_out_fn
        if fn is None:
            return {}
        out = fn(self, self.model, dist, obs, actions)
        return out if isinstance(out, dict) else check_dict_result(
            type(self).name, "extra_action_out_fn", fn, out
        )

    # ---- what rk.explain shows ----
    @classmethod
    def describe(cls) -> str:
        """The algorithm as ``rk.explain(rk.PPO)`` prints it: its ``update(X, Batch)`` method,
        the pure functions it calls and the optimizer tree(s) its defaults build, each module
        with its settings and whether it wraps or computes the step."""
        lines = [f"{cls.name}: update({cls.name}, Batch)  [{update_where(cls)}]"]
        for key in FUNCTION_NAMES:
            fns = getattr(cls, key)
            named = fns.items() if isinstance(fns, Mapping) else [(None, fns)]
            for name, fn in named:
                if fn is not None:
                    label = key if name is None else f"{key}[{name!r}]"
                    lines.append(f"  {label} = {fn_name(fn)}  [{where(fn)}]")
        specs = cls.optimizer
        if not isinstance(specs, Mapping):
            specs = {"optimizer": specs}
        config = copy.deepcopy(dict(cls.defaults))
        for name, spec in specs.items():
            tree, _ = make_tree(spec, config, cls.name)
            describe = getattr(tree, "describe", None)
            text = describe() if callable(describe) else repr(tree)
            lines.append(f"  {name} (built from the defaults):")
            lines.extend(f"    {line}" for line in text.splitlines())
        return "\n".join(lines)

    # ---- what rk.explain shows for the learning step ----
    def plan(self, env: Any) -> dict[AbstractStage, list[PlanStep]]:
        cls = type(self)
        check_env_fits(cls.name, self.state_space, self.action_space, env)
        check_model_outputs(self)  # one forward pass: the model fits the spaces
        functions = [(key, getattr(cls, key)) for key in _LEARNING_FUNCTIONS]
        plan = {POST_ACT_STAGE: describe_update(self, functions, {"optimizer": self.optimizer})}
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
        optimizer_state = upgraded_optimizer_state(owner, self.optimizer, state["optimizer"])
        super().load_state_dict(state)
        self.optimizer.load_state_dict(optimizer_state)
        for key, schedule_state in state["schedules"].items():
            self.config[key].load_state_dict(schedule_state)
        set_generator_state(self.rng, state["rng"])
        self.transitions = state_count(owner, state, "transitions")
        self.updates = state_count(owner, state, "updates")
        self.gradient_steps = state_count(owner, state, "gradient_steps")


def upgraded_optimizer_state(owner: str, tree: Any, saved: Any) -> Any:
    """``saved``, or, for a state saved by rlkit 0.1 before the learning pipeline (a
    ``GradientStep``'s ``{"torch_optimizer", "learning_rate"}``), the state of ``tree`` with
    that torch optimizer state in its one ``GradientDescent`` module (the same optimizer: the
    policy's gradient step was that torch optimizer). A tree with several ``GradientDescent``
    modules cannot take such a state: refused, naming the version."""
    if not (isinstance(saved, dict) and "torch_optimizer" in saved):
        return saved
    nodes = list(_gradient_descents(tree))
    if len(nodes) != 1:
        raise ValueError(
            f"{owner}.load_state_dict: the optimizer state was saved by rlkit 0.1 (a single "
            f"GradientStep) and this policy's optimizer {tree!r} has {len(nodes)} "
            f"GradientDescent modules; it cannot be loaded"
        )
    path = nodes[0]
    state = tree.state_dict()
    node = state
    for name in path:
        node = node["children"][name]
    node["own"] = {"optimizer": copy.deepcopy(saved["torch_optimizer"])}
    return state


def _gradient_descents(tree: Any, path: tuple[str, ...] = ()):
    """The paths (child names from the root) of the ``GradientDescent`` modules of ``tree``."""
    if isinstance(tree, GradientDescent):
        yield path
    children = getattr(tree, "children", None)
    for name, child in (children() if callable(children) else {}).items():
        yield from _gradient_descents(child, (*path, name))


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


def make_tree(spec: Any, config: dict[str, Any], owner: str) -> tuple[Any, bool]:
    """``(tree, built from the hyperparameters)``: a module tree given as such is copied; a
    callable ``config -> tree`` is called (its ``GradientDescent`` learning rates then follow the
    ``lr`` hyperparameter, schedules included)."""
    if isinstance(spec, OptimizerModule) or callable(getattr(spec, "step", None)):
        return copy.deepcopy(spec), False
    if callable(spec):
        made = spec(config)
        if callable(getattr(made, "step", None)):
            return made, True
        spec = made
    raise TypeError(
        f"{owner}: optimizer must be an rk.optimizers module tree (an object with "
        f"step(params, fn_loss, **fns)) or a callable config -> such a tree, got {spec!r}"
    )


def check_tree_config(owner: str, config: dict[str, Any], tree: Any) -> None:
    """A tree given as such does its own epochs and minibatches (``MultiStep``): the policy's
    ``n_epochs`` must be 1 and ``batch_size`` unset."""
    if config.get("n_epochs", 1) != 1 or config.get("batch_size") is not None:
        raise ValueError(
            f"{owner}: with an optimizer module ({type(tree).__name__}) epochs and minibatches "
            f"are the module's (MultiStep(inner, num_steps, minibatch_size)); n_epochs must be 1 "
            f"and batch_size None, got n_epochs={config.get('n_epochs')!r}, batch_size="
            f"{config.get('batch_size')!r}"
        )


def initial_value(value: Any) -> float:
    """A hyperparameter's value at the start of a run: a number, or a ``Schedule``'s value at
    its clock's start (what a tree built from the hyperparameters starts with).

    Example:
        >>> import rlkit as rk
        >>> initial_value(rk.LinearSchedule(1e-3, 0.0, 100)), initial_value(3e-4)
        (0.001, 0.0003)
    """
    return float(value.value if isinstance(value, Schedule) else value)


def gradient_tree(gradient_descent: GradientDescent, config: dict[str, Any]) -> OptimizerModule:
    """The tree of a gradient-based policy built from its hyperparameters:
    ``gradient_descent``, wrapped in ``ClippedStep(on="gradient")`` when ``max_grad_norm`` is
    set, in ``MultiStep(n_epochs, minibatch_size=batch_size)`` when there are several epochs or
    minibatches.

    Example:
        >>> import rlkit as rk
        >>> gradient_tree(rk.optimizers.GradientDescent("adam"), {"max_grad_norm": 0.5,
        ...               "n_epochs": 10, "batch_size": 64})
        MultiStep(ClippedStep(GradientDescent(optimizer='adam'), max_norm=0.5, on='gradient'), num_steps=10, minibatch_size=64, seed=0)
    """  # noqa: E501
    tree: OptimizerModule = gradient_descent
    if config.get("max_grad_norm") is not None:
        tree = ClippedStep(tree, config["max_grad_norm"], on="gradient")
    if config.get("n_epochs", 1) != 1 or config.get("batch_size") is not None:
        tree = MultiStep(tree, config["n_epochs"], minibatch_size=config["batch_size"])
    return tree


def reseed_modules(module: OptimizerModule, rng: np.random.Generator) -> None:
    """Reseed every module of the tree that has a generator of its own (``Evolutionary``'s
    perturbations) from ``rng``, so a policy's seed decides them (``MultiStep`` shuffles with
    the policy's generator, passed to its ``step``)."""
    reseed = getattr(module, "reseed", None)
    if callable(reseed) and getattr(module, "learner_reseeds", True):
        reseed(int(rng.integers(2**31)))
    children = getattr(module, "children", None)
    for child in (children() if callable(children) else {}).values():
        reseed_modules(child, rng)


def update_where(cls: type) -> str:
    """``file:line`` of the ``update(cls, Batch)`` method (``?`` when there is none)."""
    try:
        impl, _ = update.resolve_method(Signature(cls, Batch))
    except LookupError:
        return "?"
    return where(impl)


def describe_update(
    policy: Any, functions: list[tuple[str, Any]], trees: dict[str, Any]
) -> list[PlanStep]:
    """What ``rk.explain`` shows under a learner's driver: ``update(X, Batch)`` with its file
    and line, then each pure function it calls, then each optimizer tree, one module a line."""
    method = resolve(update, policy, Batch())
    where_ = method.where if method is not None else "?"
    steps = [PlanStep(_nothing, f"  update({type(policy).__name__}, Batch)", where_)]
    for key, fn in functions:
        if fn is not None:
            steps.append(PlanStep(_nothing, f"    {key} = {fn_name(fn)}", where(fn)))
    for name, tree in trees.items():
        describe = getattr(tree, "describe", None)
        lines = describe().splitlines() if callable(describe) else [repr(tree)]
        steps.append(PlanStep(_nothing, f"    {name}: {lines[0]}", where(type(tree))))
        pad = " " * (len(name) + 2)
        steps.extend(PlanStep(_nothing, f"    {pad}{ln}", where(type(tree))) for ln in lines[1:])
    return steps


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
                check_signature(f"build_policy({name!r})", key, one, f"loss_fn[{loss_name!r}]")
            continue
        if fn is not None:
            check_signature(f"build_policy({name!r})", key, fn)
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
    return getattr(loss_fn, "__module__", None) or base.__module__


def _as_class_attribute(key: str, fn: Any) -> Any:
    if key not in FUNCTION_NAMES or fn is None:
        return fn
    if isinstance(fn, Mapping):  # several losses: a read-only dict of plain functions
        return MappingProxyType(dict(fn))
    return staticmethod(fn)


# ---- statistics: the last learning step's ----
@statistics.dispatch
def _(policy: BuiltPolicy, /):
    return dict(policy.stats)
