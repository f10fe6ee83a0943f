"""What the DQN family shares: the sample -> :class:`~rlkit.learners.batch.Batch` conversion,
the n-step target, the checks, :class:`ValueBasedLearner` (the base class) and the family's
learning rule, ``update(learner, batch)``.

A learner of the family (``BasicDQNLearner``, ``DQNLearner``, ``PrioritizedDQNLearner``,
``QRDQNLearner``) lives inside ``QBasedPolicy(learner, explorer)`` and is made by
``rk.build_policy(name, loss_fn=..., base=...)`` with a base class derived from
:class:`ValueBasedLearner` (its constructor and options). It says how a batch becomes a loss: a
pure ``loss_fn(policy, model, dist_class, batch)`` (``dist_class`` is None) returning the loss
or ``(loss, info)``, with ``info["q"]`` and ``info["target"]`` the detached ``Q(s, a)`` and
targets (for the statistics and priority updates). ``batch`` is a ``Batch`` of tensors on the
learner's device: ``state``, ``action``, ``reward``, ``terminal``, ``next_state``,
``discount`` (``gamma ** n``: a float, or a tensor per sample for n-step samplers), and for a
prioritized sample ``weights`` (read it with ``batch.get("weights")``) and ``indices``.
``Learner.with_updates(loss_fn=...)`` makes a variant.

When it learns is the off-policy driver's (:mod:`rlkit.learners.drivers.off_policy`, the one
PostAct method of every replay learner), through the protocol the base class gives:
:meth:`ValueBasedLearner.due` counts the environment steps (a target network counting them is
synced then, before that step's gradient steps, as in Stable-Baselines3) and returns the
gradient steps the replay controller grants; :meth:`ValueBasedLearner.batches` draws their
batches from the sampler (ahead, when the gradient steps cannot change what is sampled). What
it learns from one batch is ``update(learner, batch)`` (:func:`gradient_step`): ``loss_fn`` ->
a finiteness check -> one step of the approximator's optimizer module tree
(``approximator.module``) -> the counters -> the target network's ``Synchronization`` module
(``learner.target_sync``) when it counts gradient steps. A learner whose rule adds something
writes its own ``update`` in its own file (``PrioritizedDQNLearner`` puts the new priorities
in ``batch["priorities"]``, which the driver hands to the replay).

Example:
    >>> import torch, rlkit as rk
    >>> from rlkit.approximators.neural import q_network
    >>> from rlkit.core.dispatch import update
    >>> env = rk.GymEnv("CartPole-v1", seed=0)
    >>> approx = rk.NeuralNetworkApproximator(
    ...     q_network(env.state_space, env.action_space, (16,), seed=0),
    ...     lambda p: torch.optim.Adam(p, lr=1e-3))
    >>> learner = rk.DQNLearner(approx, sampler=rk.BatchSampler(8, seed=0),
    ...                         controller=rk.InsertSampleRatioController(20, 1, 1))
    >>> replay = rk.CircularArraySARTTrajectory(100, env.state_space, env.action_space)
    >>> agent = rk.Agent(rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.1, seed=0)),
    ...                  replay)
    >>> _ = rk.run(agent, env, rk.StopAfterNSteps(30))  # the driver learns at PostAct
    >>> batch = next(learner.batches(replay, 1))  # or by hand: one batch, one update
    >>> sorted(batch), update(learner, batch), learner.gradient_steps
    (['action', 'discount', 'indices', 'next_state', 'reward', 'state', 'terminal'], None, 11)
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ...approximators.neural import NeuralNetworkApproximator, TargetNetwork, clone_tensors
from ...core.checks import check_gamma
from ...core.dispatch import PlanStep, statistics, update
from ...core.interfaces import AbstractEnv, AbstractLearner, AbstractVectorEnv
from ...core.stages import POST_ACT_STAGE, AbstractStage, PreExperimentStage
from ...core.state import state_or_none
from ...optimizers.finite import NonFiniteError
from ...optimizers.synchronization import Synchronization
from ...policies.observations import one_row
from ...trajectories.circular import CircularArraySARTTrajectory
from ...trajectories.structured import is_structured_space
from ..batch import Batch
from ..built import describe_update, with_updates
from ..compiled import compile_mode, compiled, plain_tree, refuse_compile

__all__ = [
    "to_tensors",
    "observation_tensor",
    "gradient_step",
    "n_step_target",
    "ValueBasedLearner",
    "NonFiniteLossError",
    "loss_function",
    "fast_forward",
    "legal_next",
]


class NonFiniteLossError(NonFiniteError):
    """A learner's loss (or its gradient) became nan or inf; training stops before the
    parameters are changed (the optimizer module refused the step)."""


# ---- the sample -> batch conversion ----
def to_tensors(
    sample: Mapping[str, Any], gamma: float, device: torch.device, *, pixels: bool = False
) -> Batch:
    """A sampler's dict of numpy arrays as a :class:`~rlkit.learners.batch.Batch` of tensors on
    ``device``: ``state``, ``next_state``, ``reward``, ``terminal`` (float32), ``action``
    (int64), ``discount`` (``gamma`` when the sampler reports no step counts, else a float32
    tensor of ``gamma ** n`` per sample), ``weights`` (float32, a prioritized sample's
    importance weights), ``indices`` (numpy, for priority updates) and
    ``next_legal_action_mask`` (bool, from a replay that keeps masks) when the sample has them.

    On the CPU, float32 states and int64 actions are shared with numpy, not copied. With
    ``pixels`` (a network that scales images itself, ``rlkit/approximators/cnn.py``), ``uint8``
    observations stay ``uint8`` (a quarter of the bytes to move to the device).

    Example:
        >>> import numpy as np, torch
        >>> b = to_tensors({"state": np.zeros((2, 3), np.float32), "action": np.array([0, 1]),
        ...                 "reward": np.ones(2), "terminal": np.array([False, True]),
        ...                 "next_state": np.zeros((2, 3), np.float32), "n": np.array([1, 2])},
        ...                gamma=0.5, device=torch.device("cpu"))
        >>> b["discount"].tolist(), b["terminal"].tolist(), b.get("weights")
        ([0.5, 0.25], [0.0, 1.0], None)
        >>> [part["discount"].tolist() for part in b.split(1)]  # views of the rows
        [[0.5], [0.25]]
    """
    n = sample.get("n")
    if n is None:
        discount: torch.Tensor | float = gamma
    else:
        discount = _tensor(np.power(gamma, n, dtype=np.float32), torch.float32, device)
    batch = Batch(
        state=observation_tensor(sample["state"], device, pixels),
        action=_tensor(sample["action"], torch.int64, device),
        reward=_tensor(sample["reward"], torch.float32, device),
        terminal=_tensor(sample["terminal"], torch.float32, device),
        next_state=observation_tensor(sample["next_state"], device, pixels),
        discount=discount,
    )
    weights = sample.get("weights")
    if weights is not None:
        batch["weights"] = _tensor(weights, torch.float32, device)
    masks = sample.get("next_legal_action_mask")
    if masks is not None:  # a replay that keeps legal-action masks
        batch["next_legal_action_mask"] = torch.as_tensor(masks, device=device)
    indices = sample.get("indices")
    if indices is not None:
        batch["indices"] = indices
    return batch


def _nbytes(row: Any) -> int:
    """Bytes of one stored observation (a Dict observation's: of all its keys)."""
    if isinstance(row, Mapping):
        return sum(_nbytes(v) for v in row.values())
    return int(row.nbytes)


def probe_batch(space: Any, device: torch.device) -> Any:
    """A batch of one zero observation of ``space`` (nested dicts of tensors for a
    ``Dict``/``Tuple`` space), to check a network against an env's observations."""
    if is_structured_space(space):
        sub = space.spaces.items() if isinstance(space.spaces, Mapping) else enumerate(space)
        return {k: probe_batch(v, device) for k, v in sub}
    return torch.zeros((1, *space.shape), dtype=torch.float32, device=device)


def _is_encoded(model: Any) -> bool:
    from ...approximators.encoders import ENCODERS

    first = next(iter(model), None) if isinstance(model, torch.nn.Sequential) else model
    # an encoder first, or a network holding one (EncodedIQNNetwork)
    return isinstance(first, ENCODERS) or isinstance(getattr(model, "encoder", None), ENCODERS)


def observation_tensor(array: Any, device: torch.device, pixels: bool = False) -> torch.Tensor:
    """Observations as a tensor on ``device``: float32, or ``uint8`` kept as it is when
    ``pixels`` (the network scales the pixels itself).

    Example:
        >>> import numpy as np, torch
        >>> frames = np.zeros((2, 1, 3, 3), np.uint8)
        >>> observation_tensor(frames, torch.device("cpu"), pixels=True).dtype
        torch.uint8
        >>> observation_tensor(frames, torch.device("cpu")).dtype
        torch.float32
    """
    if type(array) is np.ndarray:  # the common case first (no abstract-class checks)
        if pixels and array.dtype == np.uint8:
            return torch.as_tensor(array, device=device)
        return _tensor(array, torch.float32, device)
    if type(array) is dict:  # a Dict observation's batch, as replays and samplers give it
        return {k: observation_tensor(v, device, pixels) for k, v in array.items()}
    if isinstance(array, (Mapping, tuple)):  # a Dict/Tuple observation: tensors by key
        items = array.items() if isinstance(array, Mapping) else enumerate(array)
        return {k: observation_tensor(v, device, pixels) for k, v in items}
    if pixels and getattr(array, "dtype", None) == np.uint8:
        return torch.as_tensor(array, device=device)
    return _tensor(array, torch.float32, device)


_NUMPY_DTYPES = {torch.float32: np.dtype(np.float32), torch.int64: np.dtype(np.int64)}


def _tensor(array: Any, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    if type(array) is np.ndarray:
        target = _NUMPY_DTYPES.get(dtype)
        cpu = getattr(device, "type", device) == "cpu"
        if target is not None and array.dtype != target and cpu:
            # converted by numpy (the same numbers as torch's .to, at a third of the cost for
            # a batch's int8/bool/float64 arrays, e.g. a Dict observation's keys)
            return torch.from_numpy(array.astype(target, order="C"))
        if array.dtype == np.bool_:
            array = array.view(np.uint8)  # bool -> float through uint8 (torch converts it once)
    return torch.as_tensor(array, device=device).to(dtype)


# ---- the target: the next state's legal actions only ----
def legal_next(values: torch.Tensor, batch: Batch) -> torch.Tensor:
    """``values`` (``(batch, n_actions)``, of the next states) with the actions that the batch's
    ``next_legal_action_mask`` marks illegal set to the lowest float, so that their max and
    argmax range over the legal actions only (sb3-contrib's masked target); ``values`` as they
    are when the batch has no masks. A row with no legal action (a terminal state, which does
    not bootstrap) is left as it is.

    Example:
        >>> import torch
        >>> from rlkit.learners.batch import Batch
        >>> batch = Batch(next_legal_action_mask=torch.tensor([[True, False, True]]))
        >>> legal_next(torch.tensor([[1.0, 5.0, 2.0]]), batch).max(1).values.tolist()
        [2.0]
    """
    mask = batch.get("next_legal_action_mask")
    if mask is None:
        return values
    mask = mask | ~mask.any(dim=1, keepdim=True)
    return values.masked_fill(~mask, torch.finfo(values.dtype).min)


# ---- acting: one forward pass without module overhead ----
def fast_forward(model: torch.nn.Module):
    """A function computing ``model(x)`` for acting.

    For an ``nn.Sequential`` of only ``nn.Linear`` and ``nn.ReLU`` layers without hooks (what
    ``q_network`` builds) it calls ``F.linear``/``torch.relu`` on the layers' parameters directly,
    skipping ``nn.Module.__call__`` (about 40% of a small network's single-state forward pass).
    The parameters are read at every call, so training and ``load_state_dict`` are seen; hooks
    registered on the model afterwards are not (they run in training forward passes only).
    Any other model is called as it is. The result is an object holding the parameters (not a
    closure), so ``copy.deepcopy`` or pickling of its owner gives a copy that acts with the
    copied model's parameters, not the original's.
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
    return _LinearReLUForward(tuple(steps))


class _LinearReLUForward:
    """``fast_forward``'s function: linear layers and ReLUs on the parameters it holds."""

    __slots__ = ("steps",)

    def __init__(self, steps: tuple[tuple[torch.Tensor, torch.Tensor | None] | None, ...]) -> None:
        self.steps = steps

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        linear, relu = F.linear, torch.relu
        for step in self.steps:
            x = relu(x) if step is None else linear(x, step[0], step[1])
        return x


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
# about how many bytes of observations a learner draws ahead at once (ValueBasedLearner.batches)
_AHEAD_BYTES = 8 << 20


# ---- the base class ----
class ValueBasedLearner(AbstractLearner):
    """Base of the DQN family: a :class:`NeuralNetworkApproximator` trained from replay.

    A learner is ``rk.build_policy(name, loss_fn=..., base=<a subclass of this>)`` (see the
    module docstring for ``loss_fn``); the base gives the constructor and, when the network
    does not output one value per action, ``_q_values(outputs)`` and ``outputs_per_action``.
    The network is the approximator given to the constructor, so the builder takes no
    ``model_fn`` (nor ``optimizer``: the approximator's module tree) for this base.

    ``learner(env)`` returns the Q-values of ``env.state`` as a numpy array: one forward pass
    under ``torch.no_grad``. The off-policy driver calls :meth:`due`, :meth:`batches` and
    :meth:`end_round`; ``update(learner, batch)`` learns from each batch.
    """

    outputs_per_action = 1
    #: ``learner(env)`` is a pure function of the state (no generator drawn, nothing
    #: counted): ``rk.QBasedPolicy`` with an epsilon-greedy explorer skips it on exploring
    #: steps (rlkit/policies/q_based.py); a subclass whose acting draws must set it False
    pure_values = True
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
        compile: bool | str = False,  # noqa: A002 - the documented name (docs/how-to/speed.md)
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
        #: the torch.compile mode (None: eager), rlkit/learners/compiled.py
        self.compile_mode = compile_mode(name, compile, self.device)
        if self.compile_mode is not None and not plain_tree(approximator.module):
            refuse_compile(name, "its approximator's optimizer is not a gradient step")
        loss_fn = type(self).loss_fn
        self._loss_fn = loss_fn if loss_fn is None else compiled(loss_fn, self.compile_mode)
        self._act_forward = (
            fast_forward(self.model)
            if self.compile_mode is None
            else compiled(self.model, self.compile_mode)
        )
        # a network that scales uint8 images itself gets them as uint8 (rlkit/approximators/cnn.py)
        self.pixels = bool(getattr(self.model, "pixel_input", False))
        # a network whose first module is an encoder by space (rlkit/approximators/encoders)
        # takes batches only: a single observation is acted on as a batch of one
        self._encoded = _is_encoded(self.model)
        self.state_space: Any = None  # set by check() when a run starts
        self.action_space: Any = None
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
        """What the off-policy driver calls for each batch (shown by ``rk.explain``; the steps
        do nothing themselves): ``update(X, Batch)``, its ``loss_fn`` and the optimizer and
        target-network module trees."""
        trees: dict[str, Any] = {"optimizer": self.approximator.module}
        if self.target_sync is not None:
            trees[f"target (per {self.target_update_on})"] = self.target_sync
        functions = [("loss_fn", type(self).loss_fn)]
        return {POST_ACT_STAGE: describe_update(self, functions, trees)}

    # ---- acting: Q-values of the current state ----
    def __call__(self, env: AbstractEnv) -> np.ndarray:
        with torch.inference_mode():
            state = env.state
            single = not getattr(env, "is_vector", False)
            if single and (isinstance(state, (Mapping, tuple)) or self._encoded):
                # an encoder by space takes batches: a single observation is a batch of one
                x = observation_tensor(one_row(state, self.state_space), self.device, self.pixels)
                q = self._q_values(self._act_forward(x))[0]
            else:
                x = observation_tensor(state, self.device, self.pixels)
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
        if shape is None and not is_structured_space(env.state_space):
            raise TypeError(
                f"{name}: needs array observations (a Box space, or a Dict or Tuple of "
                f"spaces), got {env.state_space}"
            )
        probe = probe_batch(env.state_space, self.device)
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
        # the spaces it was checked against: predict() and rk.save read them
        self.state_space, self.action_space = env.state_space, space

    # ---- the off-policy driver's protocol (rlkit.learners.drivers.off_policy) ----
    def due(self, env: AbstractEnv | AbstractVectorEnv) -> int:
        """An environment step happened: count each of its transitions (one per sub-env of a
        vector env) as an environment step, syncing a target network that counts them and
        stepping the controller once per transition; the gradient steps granted in all.

        The order is Stable-Baselines3's: at a step where both happen, the target network is
        synced first and the gradient steps then use the fresh copy. Schedules are in
        transitions, as with a single env: ``learning_starts``, ``train_freq`` and the target
        interval count transitions, and the ratio of gradient steps to transitions is the
        single env's. (Stable-Baselines3 counts ``train_freq`` in vector-env steps, i.e. trains
        ``n_envs`` times less per transition.)"""
        granted = 0
        for _ in range(env.n_envs if isinstance(env, AbstractVectorEnv) else 1):
            self.env_steps += 1
            if self._target_per_env_step:
                self.update_target()
            granted += self.controller.step()
        return granted

    @property
    def normalizes_replay(self) -> bool:
        """Whether batches can be normalised at sample time (``rk.VecNormalize``): the
        sampler's ``sample`` takes a ``normalizer`` (rlkit's samplers and ``rk.HER`` do)."""
        try:
            parameters = inspect.signature(self.sampler.sample).parameters
        except (TypeError, ValueError):
            return False
        return "normalizer" in parameters

    def batches(self, trajectory: Any, n: int, normalizer: Any = None) -> Iterator[Batch]:
        """The ``n`` batches of a round, drawn with ``sampler`` from ``trajectory`` as they are
        asked for: one draw per batch, each after the previous batch's update (which may have
        changed the priorities it samples by). ``normalizer``: the ``rk.VecNormalize`` env
        whose current statistics normalise the raw transitions (the off-policy driver's).

        When the gradient steps cannot change what is sampled (``samples_ahead``, and a sampler
        whose ``sample`` takes ``n_batches``), the batches are drawn ahead, up to about
        ``_AHEAD_BYTES`` of observations at a time, converted to tensors once and split: the
        same batches, in the same order, as one draw per step, without the per-step cost of
        gathering from the replay and converting (about 50 us per step for a batch of 64)."""
        extra = {} if normalizer is None else {"normalizer": normalizer}
        if not (self.samples_ahead and self._sampler_draws_batches):
            for _ in range(n):
                yield to_tensors(
                    self.sampler.sample(trajectory, **extra), self.gamma, self.device,
                    pixels=self.pixels,
                )  # fmt: skip
            return
        row_bytes = 2 * _nbytes(trajectory.state[0]) + 64  # states, next states, the rest
        per_draw = max(1, _AHEAD_BYTES // (row_bytes * self.sampler.batch_size))
        while n:
            k = min(per_draw, n)
            sample = self.sampler.sample(trajectory, k, **extra)
            batch = to_tensors(sample, self.gamma, self.device, pixels=self.pixels)
            if k == 1:  # the batch itself: what split would give, a view of all its rows
                yield batch
            else:
                yield from batch.split(self.sampler.batch_size)
            n -= k

    def offline_batch(self, sample: Mapping[str, Any]) -> Batch:
        """A dataset's sample (the offline driver, ``rlkit/learners/drivers/offline.py``) as
        the batch ``update(learner, batch)`` reads: :func:`to_tensors` with ``gamma``."""
        return to_tensors(sample, self.gamma, self.device, pixels=self.pixels)

    def end_round(self, n: int, infos: Mapping[str, float]) -> None:
        """A round of ``n`` updates ended: nothing to do (the statistics are kept by each
        update: the last loss, ``Q`` and targets)."""

    def update_target(self) -> None:
        """One update unit passed: step ``target_sync`` on the target network's copy (a hard
        sync when due, or Polyak averaging); ``target.updates`` counts the steps."""
        self.target_sync.step(self.target.model)
        self.target.updates = self.target_sync.steps

    def compute_loss(self, batch: Batch) -> tuple[torch.Tensor, Mapping[str, Any]]:
        """``loss_fn(self, model, None, batch)`` as ``(loss, info)``."""
        loss_fn = self._loss_fn  # type(self).loss_fn, compiled when compile=True
        if loss_fn is None:
            raise TypeError(
                f"{type(self).__name__}: no loss_fn; make learners with "
                f"rk.build_policy(name, loss_fn=..., base={type(self).__name__})"
            )
        out = loss_fn(self, self.model, None, batch)
        return out if isinstance(out, tuple) else (out, {})

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


# ---- learning from one batch (the off-policy driver calls it for each due gradient step) ----
def gradient_step(learner: ValueBasedLearner, batch: Batch) -> Mapping[str, Any]:
    """The family's rule for one batch: ``loss_fn`` -> one step of the approximator's
    optimizer module tree (whose finiteness check of the loss and gradient becomes a
    :class:`NonFiniteLossError` before anything changes) -> the counters -> the target
    network, when it counts gradient steps. Returns the ``info`` of ``loss_fn`` (``q``,
    ``target``: detached tensors)."""
    loss, info = learner.compute_loss(batch)
    learner._last_q, learner._last_target = info.get("q"), info.get("target")
    value = loss.item()
    try:
        learner.approximator.step(lambda: loss)
    except NonFiniteError as error:
        what = "loss" if error.what == "loss" else f"loss {value} with a {error.what}"
        raise error.restated(
            f"{type(learner).__name__}: non-finite {what} {error.value} at gradient step "
            f"{learner.gradient_steps + 1} (environment step {learner.env_steps}); training "
            f"stopped before the update. Lower the learning rate, clip gradients "
            f"(max_grad_norm=) or check the rewards and observations for nan/inf",
            NonFiniteLossError,
        ) from None
    learner.loss = value
    learner.gradient_steps += 1
    if learner._target_per_gradient_step:
        learner.update_target()
    return info


@update.dispatch
def _(learner: ValueBasedLearner, batch: Batch, /):
    gradient_step(learner, batch)
