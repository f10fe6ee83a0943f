"""What the DQN family shares: the batch -> tensor conversion, the n-step target, the checks, and
``ValueBasedLearner``, the base class that runs the gradient steps the replay controller asks for.

A learner of the family (``BasicDQNLearner``, ``DQNLearner``, ``PrioritizedDQNLearner``,
``QRDQNLearner``) is made by ``rk.build_policy(name, loss_fn=..., base=...)`` with a base class
derived from :class:`ValueBasedLearner` (its constructor and options): it says how a sampled
batch becomes a loss, a pure ``loss_fn(policy, model, dist_class, batch)`` (``dist_class`` is
None; ``batch`` a :class:`TensorBatch`) returning the loss or ``(loss, info)`` with ``info["q"]``
and ``info["target"]`` the detached ``Q(s, a)`` and targets (for the statistics and priority
updates), and how network outputs become Q-values (``_q_values``). Its dispatched ``update``
methods live in its own module, grouped by stage; ``Learner.with_updates(loss_fn=...)`` makes a
variant.

One gradient step (:meth:`ValueBasedLearner.gradient_step`): ``sampler.sample(trajectory)`` ->
:func:`to_tensors` -> ``loss_fn`` -> a finiteness check -> ``approximator.optimise(loss)``.
At PostAct a learner counts one environment step (a target network counting environment steps
is updated then), then takes ``controller.step()`` gradient steps (warm-up, every k steps, g
steps; :meth:`ValueBasedLearner.train`), drawing the g batches at once where the steps cannot
change what is sampled. The target network (an ``rk.TargetNetwork``, the frozen copy) is stepped
by an ``rk.optimizers.Synchronization`` module, ``learner.target_sync``.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ...approximators.neural import NeuralNetworkApproximator, TargetNetwork, clone_tensors
from ...core.checks import check_gamma
from ...core.dispatch import PlanStep, statistics, update
from ...core.interfaces import AbstractEnv, AbstractLearner, AbstractVectorEnv
from ...core.stages import POST_ACT_STAGE, AbstractStage, PostActStage, PreExperimentStage
from ...core.state import state_or_none
from ...optimizers.synchronization import Synchronization
from ...trajectories.circular import CircularArraySARTTrajectory
from ..batch import fn_name
from ..built import describe_step, with_updates

__all__ = [
    "TensorBatch",
    "to_tensors",
    "n_step_target",
    "ValueBasedLearner",
    "NonFiniteLossError",
    "loss_function",
    "fast_forward",
]


class NonFiniteLossError(FloatingPointError):
    """A learner's loss became nan or inf; training stops before the parameters are changed."""


# ---- the batch -> tensor conversion ----
@dataclass
class TensorBatch:
    """A sampled batch as tensors on the learner's device.

    ``discount`` is ``gamma ** n`` per sample (n-step samplers report how many steps each sample
    used), ``weights`` the importance weights of a prioritized sample (None otherwise);
    ``indices`` stays a numpy array (for priority updates).
    """

    state: torch.Tensor
    action: torch.Tensor
    reward: torch.Tensor
    terminal: torch.Tensor
    next_state: torch.Tensor
    discount: torch.Tensor | float
    weights: torch.Tensor | None
    indices: np.ndarray | None

    def split(self, size: int) -> list[TensorBatch]:
        """Consecutive batches of ``size`` rows: views of this batch's tensors, not copies.

        Example:
            >>> import numpy as np, torch
            >>> b = to_tensors({"state": np.arange(8, dtype=np.float32).reshape(4, 2),
            ...                 "action": np.zeros(4, np.int64), "reward": np.zeros(4),
            ...                 "terminal": np.zeros(4, bool), "next_state": np.zeros((4, 2))},
            ...                gamma=0.9, device=torch.device("cpu"))
            >>> [part.state[:, 0].tolist() for part in b.split(2)]
            [[0.0, 2.0], [4.0, 6.0]]
        """
        rows = self.state.shape[0]
        return [
            TensorBatch(**{f.name: _rows(getattr(self, f.name), i, i + size) for f in fields(self)})
            for i in range(0, rows, size)
        ]


def _rows(value: Any, start: int, stop: int) -> Any:
    """``value[start:stop]`` for per-row arrays and tensors; scalars and None unchanged."""
    return value if value is None or isinstance(value, float) else value[start:stop]


def to_tensors(sample: dict[str, Any], gamma: float, device: torch.device) -> TensorBatch:
    """Convert a sampler's dict of numpy arrays to a :class:`TensorBatch`.

    On the CPU, float32 states and int64 actions are shared with numpy, not copied.

    Example:
        >>> import numpy as np, torch
        >>> b = to_tensors({"state": np.zeros((2, 3), np.float32), "action": np.array([0, 1]),
        ...                 "reward": np.ones(2), "terminal": np.array([False, True]),
        ...                 "next_state": np.zeros((2, 3), np.float32), "n": np.array([1, 2])},
        ...                gamma=0.5, device=torch.device("cpu"))
        >>> b.discount.tolist(), b.terminal.tolist()
        ([0.5, 0.25], [0.0, 1.0])
    """
    n = sample.get("n")
    if n is None:
        discount: torch.Tensor | float = gamma
    else:
        discount = _tensor(np.power(gamma, n, dtype=np.float32), torch.float32, device)
    weights = sample.get("weights")
    return TensorBatch(
        state=_tensor(sample["state"], torch.float32, device),
        action=_tensor(sample["action"], torch.int64, device),
        reward=_tensor(sample["reward"], torch.float32, device),
        terminal=_tensor(sample["terminal"], torch.float32, device),
        next_state=_tensor(sample["next_state"], torch.float32, device),
        discount=discount,
        weights=None if weights is None else _tensor(weights, torch.float32, device),
        indices=sample.get("indices"),
    )


def _tensor(array: Any, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    if type(array) is np.ndarray and array.dtype == np.bool_:
        array = array.view(np.uint8)  # bool -> float through uint8 (torch converts it once)
    return torch.as_tensor(array, device=device).to(dtype)


# ---- acting: one forward pass without module overhead ----
def fast_forward(model: torch.nn.Module):
    """A function computing ``model(x)`` for acting.

    For an ``nn.Sequential`` of only ``nn.Linear`` and ``nn.ReLU`` layers without hooks (what
    ``q_network`` builds) it calls ``F.linear``/``torch.relu`` on the layers' parameters directly,
    skipping ``nn.Module.__call__`` (about 40% of a small network's single-state forward pass).
    The parameters are read at every call, so training and ``load_state_dict`` are seen; hooks
    registered on the model afterwards are not (they run in training forward passes only).
    Any other model is called as it is.
    """
    if type(model) is not torch.nn.Sequential or _has_hooks(model):
        return model
    steps: list[tuple[torch.Tensor, torch.Tensor | None] | None] = []
    for layer in model:
        if type(layer) is torch.nn.Linear and not _has_hooks(layer):
            steps.append((layer.weight, layer.bias))
        elif type(layer) is torch.nn.ReLU and not _has_hooks(layer):
            steps.append(None)
        else:
            return model
    linear, relu = F.linear, torch.relu

    def forward(x: torch.Tensor) -> torch.Tensor:
        for step in steps:
            x = relu(x) if step is None else linear(x, step[0], step[1])
        return x

    return forward


def _has_hooks(module: torch.nn.Module) -> bool:
    return bool(module._forward_hooks or module._forward_pre_hooks)


# ---- the n-step target ----
def n_step_target(
    reward: torch.Tensor,
    terminal: torch.Tensor,
    discount: torch.Tensor | float,
    next_value: torch.Tensor,
) -> torch.Tensor:
    """``reward + (1 - terminal) * gamma**n * next_value``: bootstrap unless the window ended in
    a termination (truncation bootstraps). ``reward`` is the discounted n-step sum.

    Broadcasts: ``next_value`` may carry trailing dimensions (quantiles) when the others are
    given with matching trailing singleton dimensions.

    Example:
        >>> import torch
        >>> n_step_target(torch.tensor([1.0, 1.0]), torch.tensor([0.0, 1.0]), 0.5,
        ...               torch.tensor([4.0, 4.0])).tolist()
        [3.0, 1.0]
    """
    return reward + (1.0 - terminal) * discount * next_value


# ---- checks ----
_LOSSES = {"huber": F.smooth_l1_loss, "mse": F.mse_loss}


def loss_function(owner: str, loss: str):
    """The elementwise-mean regression loss named ``loss``: ``"huber"`` (smooth L1 with
    ``beta=1``, as in DQN) or ``"mse"``. Call it with ``reduction="none"`` for weighted losses."""
    if loss not in _LOSSES:
        raise ValueError(f"{owner}: loss must be one of {tuple(_LOSSES)}, got {loss!r}")
    return _LOSSES[loss]


def _check_sampler(owner: str, sampler: Any, gamma: float) -> Any:
    if not callable(getattr(sampler, "sample", None)):
        raise TypeError(
            f"{owner}: sampler must have a sample(trajectory) method (e.g. rk.BatchSampler(64) "
            f"or rk.NStepBatchSampler(64, n=3, gamma=0.99)), got {type(sampler).__name__}"
        )
    sampler_gamma = getattr(sampler, "gamma", None)
    if sampler_gamma is not None and not math.isclose(float(sampler_gamma), gamma):
        raise ValueError(
            f"{owner}: the sampler discounts n-step rewards with gamma={sampler_gamma}, but the "
            f"learner's gamma is {gamma}; use the same gamma for both"
        )
    return sampler


def _check_controller(owner: str, controller: Any) -> Any:
    if not callable(getattr(controller, "step", None)):
        raise TypeError(
            f"{owner}: controller must have a step() -> int method (e.g. "
            f"rk.InsertSampleRatioController(warmup_steps=1000, update_every=4, n_updates=1)), "
            f"got {type(controller).__name__}"
        )
    return controller


def _draws_batches(sampler: Any) -> bool:
    """Whether ``sampler.sample(trajectory, n_batches)`` draws several batches of
    ``sampler.batch_size`` rows at once (rlkit's samplers do; a custom one may not)."""
    try:
        parameters = inspect.signature(sampler.sample).parameters
    except (TypeError, ValueError):
        return False
    return "n_batches" in parameters and isinstance(getattr(sampler, "batch_size", None), int)


_TARGET_UPDATE_ON = ("env_step", "gradient_step")
# about how many bytes of observations a learner draws ahead at once (see ValueBasedLearner.train)
_AHEAD_BYTES = 8 << 20


# ---- the base class ----
class ValueBasedLearner(AbstractLearner):
    """Base of the DQN family: a :class:`NeuralNetworkApproximator` trained from replay.

    A learner is ``rk.build_policy(name, loss_fn=..., base=<a subclass of this>)`` (see the
    module docstring for ``loss_fn``); the base gives the constructor and, when the network
    does not output one value per action, ``_q_values(outputs)`` and ``outputs_per_action``.
    The network is the approximator given to the constructor, so the builder takes no
    ``model_fn`` (nor ``optimizer``: the approximator's) for this base.

    ``learner(env)`` returns the Q-values of ``env.state`` as a numpy array: one forward pass
    under ``torch.no_grad``.
    """

    outputs_per_action = 1
    #: whether a round's batches may be drawn before its first gradient step (False when the
    #: gradient steps change what is sampled, as priority updates do)
    samples_ahead = True
    #: hard-sync interval of the target network built when none is given (None: no target)
    default_target_sync: int | None = None
    # ---- what rk.build_policy / with_updates may set (see rlkit.learners.builder) ----
    name = "ValueBasedLearner"
    defaults: Mapping[str, Any] = MappingProxyType({})
    loss_fn = None
    builder_functions = ("loss_fn",)
    builder_required = ("loss_fn",)
    builder_options = ("name",)

    def __init__(
        self,
        approximator: NeuralNetworkApproximator,
        *,
        sampler: Any,
        controller: Any,
        gamma: float = 0.99,
        target: TargetNetwork | None = None,
        target_update_on: str = "env_step",
    ) -> None:
        name = type(self).__name__
        if not isinstance(approximator, NeuralNetworkApproximator):
            raise TypeError(
                f"{name}: approximator must be an rk.NeuralNetworkApproximator, got "
                f"{type(approximator).__name__}: {approximator!r}"
            )
        if target is None and self.default_target_sync is not None:
            target = TargetNetwork(approximator, sync_every=self.default_target_sync)
        if target is not None:
            if not isinstance(target, TargetNetwork):
                raise TypeError(
                    f"{name}: target must be an rk.TargetNetwork, got {type(target).__name__}"
                )
            if target.source is not approximator.model:
                raise ValueError(
                    f"{name}: the target network must follow the approximator's model; build it "
                    f"with rk.TargetNetwork(approximator, ...)"
                )
        if target_update_on not in _TARGET_UPDATE_ON:
            raise ValueError(
                f"{name}: target_update_on must be one of {_TARGET_UPDATE_ON}, got "
                f"{target_update_on!r}"
            )
        self.approximator = approximator
        self.model = approximator.model
        self.device = approximator.device
        self.gamma = check_gamma(name, gamma)
        self.sampler = _check_sampler(name, sampler, self.gamma)
        self.controller = _check_controller(name, controller)
        self.target = target
        self.target_sync = (
            None
            if target is None
            else Synchronization(
                self.model, every=target.sync_every, tau=target.tau, keep_deltas=False
            )
        )
        self.target_update_on = target_update_on
        self._target_per_env_step = target is not None and target_update_on == "env_step"
        self._target_per_gradient_step = target is not None and target_update_on == "gradient_step"
        self._cpu = self.device.type == "cpu"
        self._sampler_draws_batches = _draws_batches(self.sampler)
        self._act_forward = fast_forward(self.model)
        self.env_steps = 0
        self.gradient_steps = 0
        self.loss = math.nan
        self._last_q: torch.Tensor | None = None
        self._last_target: torch.Tensor | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.approximator!r}, gamma={self.gamma})"

    @classmethod
    def with_updates(cls, **changes: Any) -> type[ValueBasedLearner]:
        """A new learner class (a subclass of this one, with the same constructor) with
        ``loss_fn`` or ``name`` replaced; anything else is an error listing what can be."""
        return with_updates(cls, changes)

    # ---- what rk.explain shows for the learning step ----
    def plan(self, env: Any) -> dict[AbstractStage, list[PlanStep]]:
        """The functions the PostAct method calls (shown by ``rk.explain``; they do nothing
        themselves)."""
        loss_fn = type(self).loss_fn
        steps = [
            describe_step("  gradient steps (as the controller grants) with:", type(self).train),
            describe_step(f"    loss_fn = {fn_name(loss_fn)}", loss_fn),
        ]
        if self.target_sync is not None:
            label = f"    target network: {self.target_sync!r} per {self.target_update_on}"
            steps.append(describe_step(label, type(self).update_target))
        return {POST_ACT_STAGE: steps}

    # ---- acting: Q-values of the current state ----
    def __call__(self, env: AbstractEnv) -> np.ndarray:
        with torch.inference_mode():
            x = torch.as_tensor(env.state, dtype=torch.float32, device=self.device)
            q = self._q_values(self._act_forward(x))
        return q.numpy() if self._cpu else q.cpu().numpy()

    def _q_values(self, outputs: torch.Tensor) -> torch.Tensor:
        """Q-values from network outputs (the identity here)."""
        return outputs

    # ---- PreExperiment: check the network against the environment ----
    def check(self, env: AbstractEnv) -> None:
        """Raise if the network's output does not fit ``env``'s action space (or its input
        ``env``'s observations). Called when a run starts."""
        import gymnasium as gym

        name = type(self).__name__
        space = env.action_space
        if not isinstance(space, gym.spaces.Discrete):
            raise TypeError(f"{name}: needs a Discrete action space, got {space}")
        shape = getattr(env.state_space, "shape", None)
        if shape is None:
            raise TypeError(
                f"{name}: needs array observations (a Box space), got {env.state_space}"
            )
        probe = torch.zeros((1, *shape), dtype=torch.float32, device=self.device)
        try:
            with torch.no_grad():
                out = self.model(probe)
        except Exception as e:  # noqa: BLE001 - re-raised with context
            raise ValueError(
                f"{name}: the approximator's model cannot evaluate a batch of observations of "
                f"shape {tuple(shape)} from {env.state_space}: {e}"
            ) from e
        expected = int(space.n) * self.outputs_per_action
        got = int(out[0].numel())
        if got != expected:
            per = (
                f" ({space.n} actions x {self.outputs_per_action} outputs each)"
                if self.outputs_per_action > 1
                else ""
            )
            raise ValueError(
                f"{name}: the approximator outputs {got} values per state, but the action space "
                f"{space} needs {expected}{per}"
            )

    # ---- PostAct: the gradient steps the controller asks for ----
    def learn(self, trajectory: Any) -> None:
        """One environment step happened: count it (and update the target network per step),
        then take ``controller.step()`` gradient steps on batches from ``trajectory``.

        The order is Stable-Baselines3's: at a step where both happen, the target network is
        synced first and the gradient steps then use the fresh copy."""
        self.env_steps += 1
        if self._target_per_env_step:
            self.update_target()
        n_steps = self.controller.step()
        if n_steps:
            self.train(trajectory, n_steps)

    def learn_batch(self, trajectory: Any, n_transitions: int) -> None:
        """A vector env's step recorded ``n_transitions`` transitions (one per sub-env): count
        each as an environment step (the target network and the controller advance once per
        transition), then take all the gradient steps the controller granted for them.

        So schedules are in transitions, as with a single env: ``learning_starts``,
        ``train_freq`` and the target interval count transitions, and the ratio of gradient
        steps to transitions is the single env's. (Stable-Baselines3 counts ``train_freq`` in
        vector-env steps, i.e. trains ``n_envs`` times less per transition.)"""
        granted = 0
        for _ in range(n_transitions):
            self.env_steps += 1
            if self._target_per_env_step:
                self.update_target()
            granted += self.controller.step()
        if granted:
            self.train(trajectory, granted)

    def train(self, trajectory: Any, n_steps: int) -> None:
        """Take ``n_steps`` gradient steps on batches from ``trajectory``.

        When the gradient steps cannot change what is sampled (``samples_ahead``, and a sampler
        whose ``sample`` takes ``n_batches``), the batches are drawn ahead, up to about
        ``_AHEAD_BYTES`` of observations at a time, converted to tensors once and sliced: the
        same batches, in the same order, as one draw per step, without the per-step cost of
        gathering from the replay and converting (about 50 us per step for a batch of 64)."""
        if not (self.samples_ahead and self._sampler_draws_batches):
            for _ in range(n_steps):
                self.gradient_step(trajectory)
            return
        row_bytes = 2 * trajectory.state[0].nbytes + 64  # states, next states, the rest
        per_draw = max(1, _AHEAD_BYTES // (row_bytes * self.sampler.batch_size))
        while n_steps:
            k = min(per_draw, n_steps)
            sample = self.sampler.sample(trajectory, k)
            batches = to_tensors(sample, self.gamma, self.device).split(self.sampler.batch_size)
            for batch in batches:
                self._optimise(batch, trajectory)
            n_steps -= k

    def gradient_step(self, trajectory: Any) -> None:
        """Sample a batch, compute the loss, check it is finite, optimise."""
        sample = self.sampler.sample(trajectory)
        self._optimise(to_tensors(sample, self.gamma, self.device), trajectory)

    def _optimise(self, batch: TensorBatch, trajectory: Any) -> None:
        """Compute the loss on ``batch``, check it is finite, take one optimiser step."""
        loss = self._loss(batch)
        value = loss.item()
        if not math.isfinite(value):
            raise NonFiniteLossError(
                f"{type(self).__name__}: non-finite loss {value} at gradient step "
                f"{self.gradient_steps + 1} (environment step {self.env_steps}); training "
                f"stopped before the update. Lower the learning rate, clip gradients "
                f"(max_grad_norm=) or check the rewards and observations for nan/inf."
            )
        self.approximator.optimise(loss)
        self.loss = value
        self.gradient_steps += 1
        self._after_step(trajectory, batch)
        if self._target_per_gradient_step:
            self.update_target()

    def update_target(self) -> None:
        """One update unit passed: step ``target_sync`` on the target network's copy (a hard
        sync when due, or Polyak averaging); ``target.updates`` counts the steps."""
        self.target_sync.step(self.target.model)
        self.target.updates = self.target_sync.steps

    def _loss(self, batch: TensorBatch) -> torch.Tensor:
        """``loss_fn(self, model, None, batch)``; keeps its ``info["q"]``/``["target"]``."""
        loss_fn = type(self).loss_fn
        if loss_fn is None:
            raise TypeError(
                f"{type(self).__name__}: no loss_fn; make learners with "
                f"rk.build_policy(name, loss_fn=..., base={type(self).__name__})"
            )
        out = loss_fn(self, self.model, None, batch)
        loss, info = out if isinstance(out, tuple) else (out, {})
        self._last_q, self._last_target = info.get("q"), info.get("target")
        return loss

    def _after_step(self, trajectory: Any, batch: TensorBatch) -> None:
        """Called after each optimiser step (prioritized replay updates priorities here)."""

    # ---- statistics and checkpoints ----
    def statistics(self) -> dict[str, float]:
        q, y = self._last_q, self._last_target
        return {
            "loss": self.loss,
            "q_mean": math.nan if q is None else float(q.mean()),
            "td_error": math.nan if q is None else float((y - q).abs().mean()),
            "lr": self.approximator.lr,
            "gradient_steps": float(self.gradient_steps),
        }

    def state_dict(self) -> dict[str, Any]:
        """Networks, optimizer, target, sampler, controller and counters."""
        return {
            "approximator": self.approximator.state_dict(),
            "target": None if self.target is None else self.target.state_dict(),
            "target_sync": None if self.target_sync is None else self.target_sync.state_dict(),
            "sampler": state_or_none(self.sampler),
            "controller": state_or_none(self.controller),
            "env_steps": self.env_steps,
            "gradient_steps": self.gradient_steps,
            "loss": self.loss,
            "last_q": clone_tensors(self._last_q),
            "last_target": clone_tensors(self._last_target),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved."""
        name = type(self).__name__
        if (state.get("target") is None) != (self.target is None):
            raise ValueError(
                f"{name}: checkpoint {'has no' if state.get('target') is None else 'has a'} "
                f"target network, this learner {'has one' if self.target else 'has none'}"
            )
        self.approximator.load_state_dict(state["approximator"])
        if self.target is not None:
            self.target.load_state_dict(state["target"])
            if state.get("target_sync") is not None:
                self.target_sync.load_state_dict(state["target_sync"])
            else:  # a checkpoint from before target_sync: the target counted its updates
                self.target_sync.steps = self.target.updates
            self.target.updates = self.target_sync.steps
        _load_state(self.sampler, state.get("sampler"), name, "sampler")
        _load_state(self.controller, state.get("controller"), name, "controller")
        self.env_steps = int(state["env_steps"])
        self.gradient_steps = int(state["gradient_steps"])
        self.loss = float(state["loss"])
        self._last_q = clone_tensors(state.get("last_q"))
        self._last_target = clone_tensors(state.get("last_target"))


def _load_state(obj: Any, state: Any, owner: str, part: str) -> None:
    if state is None:
        return
    method = getattr(obj, "load_state_dict", None)
    if not callable(method):
        raise ValueError(
            f"{owner}: the checkpoint has a {part} state but the {part} "
            f"{type(obj).__name__} cannot load one"
        )
    method(state)


@statistics.dispatch
def _(learner: ValueBasedLearner, /):
    return learner.statistics()


# ---- PreExperiment: the network must fit the environment (all DQN-family learners) ----
@update.dispatch
def _(
    learner: ValueBasedLearner,
    trajectory: CircularArraySARTTrajectory,
    env: AbstractEnv | AbstractVectorEnv,
    stage: PreExperimentStage,
    /,
):
    learner.check(env)


# ---- PostAct: the gradient steps the replay controller asks for (``learn``: sample, loss,
# optimise, target update); each learner of the family has its own in its module, these serve
# a learner built on ValueBasedLearner directly ----
@update.dispatch
def _(
    learner: ValueBasedLearner,
    trajectory: CircularArraySARTTrajectory,
    env: AbstractEnv,
    stage: PostActStage,
    /,
):
    learner.learn(trajectory)


# ---- PostAct with a vector env: one transition per sub-env was recorded ----
@update.dispatch
def _(
    learner: ValueBasedLearner,
    trajectory: CircularArraySARTTrajectory,
    env: AbstractVectorEnv,
    stage: PostActStage,
    /,
):
    learner.learn_batch(trajectory, env.n_envs)
