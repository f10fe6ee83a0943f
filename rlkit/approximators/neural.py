"""Neural-network approximators (torch): ``NeuralNetworkApproximator`` and ``TargetNetwork``.

A ``NeuralNetworkApproximator`` holds a torch module, its trainable parameters and their
optimizer module tree (``approximator.module``, an ``rk.optimizers`` tree: ``GradientDescent``
over the given torch optimizer, in a ``ClippedStep`` when gradients are clipped); a learner
steps that tree on a loss closure (:meth:`NeuralNetworkApproximator.step`). A ``TargetNetwork``
is a frozen copy of a network, refreshed by hard synchronisation every ``sync_every`` updates or
by Polyak averaging.
``q_network`` builds the MLP (optionally with a dueling head) that DQN-family learners expect for
a given observation and action space, initialised from a local ``torch.Generator`` so that no
global random state is read or changed.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from ..core.checks import exactly_one_of, finite_float, optional_positive_int
from ..core.dispatch import statistics
from ..core.interfaces import AbstractApproximator
from ..optimizers.base import OptimizerModule, StepResult
from ..optimizers.clipped import ClippedStep
from ..optimizers.gradient import GradientDescent

__all__ = [
    "NeuralNetworkApproximator",
    "TargetNetwork",
    "DuelingHead",
    "q_network",
    "mlp",
    "resolve_device",
    "torch_generator",
    "clone_tensors",
]

OptimizerLike = torch.optim.Optimizer | Callable[[Iterable[nn.Parameter]], torch.optim.Optimizer]
SchedulerLike = Any  # an LRScheduler, or a callable optimizer -> LRScheduler


def resolve_device(device: str | torch.device, owner: str = "NeuralNetworkApproximator"):
    """``torch.device`` for ``device``: ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"auto"`` (CUDA when
    available, else CPU) or a ``torch.device``. Asking for CUDA without a GPU is an error."""
    if isinstance(device, str) and device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as e:
        raise ValueError(
            f"{owner}: device must be 'cpu', 'cuda', 'cuda:N', 'auto' or a torch.device, "
            f"got {device!r}"
        ) from e
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            f"{owner}: device {device!r} was requested but torch.cuda.is_available() is False; "
            f"use device='cpu' (the default) or 'auto'"
        )
    return resolved


def torch_generator(seed: int | np.random.SeedSequence | None) -> torch.Generator:
    """A CPU ``torch.Generator`` seeded from an int or a numpy ``SeedSequence`` (None: seed 0)."""
    if isinstance(seed, np.random.SeedSequence):
        seed = int(seed.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
    generator = torch.Generator()
    generator.manual_seed(0 if seed is None else int(seed))
    return generator


def clone_tensors(tree: Any) -> Any:
    """A copy of nested dicts/lists/tuples in which every tensor is detached and cloned.

    ``state_dict`` results alias live tensors that training changes in place; cloning makes a
    saved state a snapshot.
    """
    if isinstance(tree, torch.Tensor):
        return tree.detach().clone()
    if isinstance(tree, dict):
        return {k: clone_tensors(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [clone_tensors(v) for v in tree]
    if isinstance(tree, tuple):
        return tuple(clone_tensors(v) for v in tree)
    return copy.deepcopy(tree)


class NeuralNetworkApproximator(AbstractApproximator):
    """A torch module with its parameters and their optimizer module tree: ``approximator(x)``
    is the forward pass, ``approximator.step(fn_loss)`` one step of ``approximator.module``.

    Args:
        model: the ``torch.nn.Module``; it is moved to ``device``.
        optimizer: an optimizer over ``model``'s parameters, or a callable
            ``params -> optimizer`` (e.g. ``lambda p: torch.optim.Adam(p, lr=1e-3)``), which is
            called after the model moved to ``device``.
        device: ``"cpu"`` (default), ``"cuda"``, ``"cuda:N"``, ``"auto"`` or a ``torch.device``.
        max_grad_norm: clip the global gradient norm to this value (None: no clipping).
        lr_scheduler: a ``torch.optim.lr_scheduler.LRScheduler`` of ``optimizer`` or a callable
            ``optimizer -> scheduler``; stepped after every optimiser step.

    Attributes:
        module: the optimizer module tree, ``GradientDescent.wrap(optimizer, lr_scheduler=...)``
            (wrapped in ``ClippedStep(..., max_grad_norm, on="gradient")`` when clipping);
            ``rk.explain`` shows it.
        parameters: the model's parameters that require gradients (what ``module`` steps).
        optimizer, lr_scheduler: the torch optimizer and scheduler inside ``module``.

    ``statistics(approximator)`` reports the learning rate and the gradient norm of the last step
    (before clipping). ``state_dict`` holds the model, optimizer and scheduler states.

    Example:
        >>> import torch, rlkit as rk
        >>> net = torch.nn.Linear(4, 2)
        >>> approx = rk.NeuralNetworkApproximator(net, lambda p: torch.optim.SGD(p, lr=0.1),
        ...                                       max_grad_norm=10.0)
        >>> approx.module.to_spec()["type"], approx.module.inner.optimizer is approx.optimizer
        ('clipped_step', True)
        >>> loss = approx(torch.ones(3, 4)).pow(2).mean()
        >>> result = approx.step(lambda: loss)
        >>> approx.updates, result.loss == loss.item()
        (1, True)
    """

    def __init__(
        self,
        model: nn.Module,
        optimizer: OptimizerLike,
        *,
        device: str | torch.device = "cpu",
        max_grad_norm: float | None = None,
        lr_scheduler: SchedulerLike = None,
    ) -> None:
        name = type(self).__name__
        if not isinstance(model, nn.Module):
            raise TypeError(f"{name}: model must be a torch.nn.Module, got {type(model).__name__}")
        if max_grad_norm is not None:
            finite_float(name, "max_grad_norm", max_grad_norm, low=0, low_open=True)
        self.device = resolve_device(device, name)
        self.model = model.to(self.device)
        self.optimizer = _make_optimizer(optimizer, self.model, name)
        self.lr_scheduler = _make_scheduler(lr_scheduler, self.optimizer, name)
        self.max_grad_norm = None if max_grad_norm is None else float(max_grad_norm)
        self.parameters = [p for p in self.model.parameters() if p.requires_grad]
        gradient = GradientDescent.wrap(
            self.optimizer, lr_scheduler=self.lr_scheduler, keep_deltas=False
        )
        self.module: OptimizerModule = (
            gradient
            if max_grad_norm is None
            else ClippedStep(gradient, self.max_grad_norm, on="gradient")
        )
        self.updates = 0
        self._grad_norm: float | None = None

    def __repr__(self) -> str:
        return (
            f"NeuralNetworkApproximator({type(self.model).__name__}, "
            f"{type(self.optimizer).__name__}, device={str(self.device)!r})"
        )

    def __call__(self, x: Any) -> torch.Tensor:
        return self.model(x)

    def step(self, fn_loss: Callable[[], torch.Tensor]) -> StepResult:
        """One step of :attr:`module` on :attr:`parameters` over the loss closure ``fn_loss``
        (gradients cleared, back-propagated, clipped, the optimizer and the learning-rate
        schedule stepped: all inside the module tree); counts it in ``updates``."""
        result = self.module.step(self.parameters, fn_loss)
        self._grad_norm = result.grad_norm
        self.updates += 1
        return result

    @property
    def lr(self) -> float:
        """The learning rate of the first parameter group."""
        return float(self.optimizer.param_groups[0]["lr"])

    def grad_norm(self) -> float:
        """Global gradient norm of the last step (before clipping); nan before the first step."""
        if self._grad_norm is not None:
            return self._grad_norm
        grads = [p.grad for p in self.parameters if p.grad is not None]
        if not grads:
            return math.nan
        return float(nn.utils.get_total_norm(grads))

    def state_dict(self) -> dict[str, Any]:
        """Model, optimizer and scheduler states (tensors cloned), the update counter and the
        gradient norm of the last step (so statistics read the same after a resume)."""
        return {
            "model": clone_tensors(self.model.state_dict()),
            "optimizer": clone_tensors(self.optimizer.state_dict()),
            "lr_scheduler": None if self.lr_scheduler is None else self.lr_scheduler.state_dict(),
            "updates": self.updates,
            "grad_norm": self.grad_norm(),  # reported by rk.statistics until the next step
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved."""
        self.model.load_state_dict(state["model"])
        # the optimizer keeps the tensors it is given: give it copies, not the caller's
        self.optimizer.load_state_dict(clone_tensors(state["optimizer"]))
        if self.lr_scheduler is not None and state.get("lr_scheduler") is not None:
            self.lr_scheduler.load_state_dict(copy.deepcopy(state["lr_scheduler"]))
        self.updates = int(state["updates"])
        grad_norm = state.get("grad_norm")  # absent in checkpoints of rlkit <= 0.1
        self._grad_norm = None if grad_norm is None else float(grad_norm)


def _make_optimizer(optimizer: OptimizerLike, model: nn.Module, owner: str):
    if not isinstance(optimizer, torch.optim.Optimizer):
        if not callable(optimizer):
            raise TypeError(
                f"{owner}: optimizer must be a torch.optim.Optimizer or a callable "
                f"params -> Optimizer, got {type(optimizer).__name__}: {optimizer!r}"
            )
        optimizer = optimizer(model.parameters())
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise TypeError(
                f"{owner}: the optimizer factory returned "
                f"{type(optimizer).__name__}, not a torch.optim.Optimizer"
            )
    mine = {id(p) for p in model.parameters()}
    theirs = [p for group in optimizer.param_groups for p in group["params"]]
    if not theirs or any(id(p) not in mine for p in theirs):
        raise ValueError(
            f"{owner}: the optimizer must optimise the model's own parameters; build it from "
            f"model.parameters() (or pass a callable params -> Optimizer)"
        )
    return optimizer


def _make_scheduler(scheduler: SchedulerLike, optimizer: torch.optim.Optimizer, owner: str):
    if scheduler is None:
        return None
    if not isinstance(scheduler, torch.optim.lr_scheduler.LRScheduler):
        if not callable(scheduler):
            raise TypeError(
                f"{owner}: lr_scheduler must be an LRScheduler or a callable optimizer -> "
                f"LRScheduler, got {type(scheduler).__name__}: {scheduler!r}"
            )
        scheduler = scheduler(optimizer)
    if getattr(scheduler, "optimizer", None) is not optimizer:
        raise ValueError(f"{owner}: lr_scheduler must schedule the approximator's optimizer")
    return scheduler


@statistics.dispatch
def _(approximator: NeuralNetworkApproximator, /):
    return {"lr": approximator.lr, "grad_norm": approximator.grad_norm()}


class TargetNetwork(AbstractApproximator):
    """A frozen copy of a network that follows it slowly: ``target(x)`` evaluates the copy.

    Call :meth:`update` once per update unit (a learner decides which: environment steps or
    gradient steps); the DQN-family learners step it with an ``rk.optimizers.Synchronization``
    module of the same settings instead (``learner.target_sync``), keeping ``updates`` equal to
    its step count. With ``sync_every=n`` every n-th update copies the weights (a hard sync);
    with ``tau`` every update moves them by Polyak averaging, ``target <- (1 - tau) * target +
    tau * source`` (buffers are copied). Give exactly one of the two.

    Args:
        network: a ``torch.nn.Module`` or a :class:`NeuralNetworkApproximator` (its model).
        sync_every: hard sync every this many updates.
        tau: Polyak coefficient in (0, 1].

    Example:
        >>> import torch, rlkit as rk
        >>> net = torch.nn.Linear(2, 1)
        >>> target = rk.TargetNetwork(net, sync_every=2)
        >>> with torch.no_grad():
        ...     _ = net.weight.add_(1.0)
        >>> target.update(), target.update()
        (False, True)
        >>> bool(torch.equal(target.model.weight, net.weight))
        True
    """

    def __init__(
        self,
        network: nn.Module | NeuralNetworkApproximator,
        *,
        sync_every: int | None = None,
        tau: float | None = None,
    ) -> None:
        source = network.model if isinstance(network, NeuralNetworkApproximator) else network
        if not isinstance(source, nn.Module):
            raise TypeError(
                f"TargetNetwork: network must be a torch.nn.Module or a "
                f"NeuralNetworkApproximator, got {type(network).__name__}"
            )
        exactly_one_of("TargetNetwork", sync_every=sync_every, tau=tau)
        sync_every = optional_positive_int("TargetNetwork", "sync_every", sync_every)
        if tau is not None:
            finite_float("TargetNetwork", "tau", tau, low=0, high=1, low_open=True)
        self.source = source
        self.sync_every = sync_every
        self.tau = None if tau is None else float(tau)
        self.model = copy.deepcopy(source)
        self.model.requires_grad_(False)
        self.updates = 0
        self._pairs = _matching_tensors(self.model, self.source)

    def __repr__(self) -> str:
        how = f"sync_every={self.sync_every}" if self.tau is None else f"tau={self.tau}"
        return f"TargetNetwork({type(self.source).__name__}, {how})"

    def __call__(self, x: Any) -> torch.Tensor:
        return self.model(x)

    def update(self) -> bool:
        """Count one update; sync (hard) or average (Polyak) as configured. True if the weights
        changed."""
        self.updates += 1
        if self.tau is not None:
            self.polyak(self.tau)
            return True
        if self.updates % self.sync_every == 0:
            self.sync()
            return True
        return False

    @torch.no_grad()
    def sync(self) -> None:
        """Copy the source's parameters and buffers into the target now."""
        params, buffers = self._pairs
        for t, s in params + buffers:
            t.copy_(s)

    @torch.no_grad()
    def polyak(self, tau: float) -> None:
        """``target <- (1 - tau) * target + tau * source`` for parameters; buffers are copied."""
        params, buffers = self._pairs
        if params:
            torch._foreach_lerp_([t for t, _ in params], [s for _, s in params], tau)
        for t, s in buffers:
            t.copy_(s)

    def state_dict(self) -> dict[str, Any]:
        """The target's weights (cloned) and the update counter."""
        return {"model": clone_tensors(self.model.state_dict()), "updates": self.updates}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved."""
        self.model.load_state_dict(state["model"])
        self.updates = int(state["updates"])


def _matching_tensors(target: nn.Module, source: nn.Module):
    params = list(zip(target.parameters(), source.parameters(), strict=True))
    buffers = [
        (t, s)
        for t, s in zip(target.buffers(), source.buffers(), strict=True)
        if t.is_floating_point() or t.dtype == s.dtype
    ]
    return params, buffers


# ---- building networks for value-based learners ----
class DuelingHead(nn.Module):
    """Dueling Q head (Wang et al. 2016): ``Q = V + A - mean(A)`` from a shared feature vector.

    Example:
        >>> import torch
        >>> head = DuelingHead(8, 3)
        >>> head(torch.zeros(5, 8)).shape
        torch.Size([5, 3])
    """

    def __init__(self, in_features: int, n_actions: int, device: Any = None) -> None:
        super().__init__()
        self.value = nn.Linear(in_features, 1, device=device)
        self.advantage = nn.Linear(in_features, n_actions, device=device)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        advantage = self.advantage(features)
        return self.value(features) + advantage - advantage.mean(dim=-1, keepdim=True)


def mlp(
    in_features: int,
    out_features: int,
    hidden: Sequence[int] = (64, 64),
    *,
    activation: Callable[[], nn.Module] = nn.ReLU,
    dueling: bool = False,
    seed: int | np.random.SeedSequence | None = 0,
) -> nn.Sequential:
    """A multi-layer perceptron ``in -> hidden... -> out`` (a dueling head when ``dueling``).

    Weights are initialised like torch's default ``nn.Linear`` init, but from a local
    ``torch.Generator`` seeded with ``seed``: the network is reproducible and torch's global
    random state is neither read nor changed.
    """
    sizes = [int(in_features), *(int(h) for h in hidden)]
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        layers += [nn.Linear(a, b, device="meta"), activation()]
    head = (
        DuelingHead(sizes[-1], out_features, device="meta")
        if dueling
        else nn.Linear(sizes[-1], out_features, device="meta")
    )
    model = nn.Sequential(*layers, head).to_empty(device="cpu")
    generator = torch_generator(seed)
    for module in model.modules():
        if isinstance(module, nn.Linear):
            _default_init(module, generator)
    return model


@torch.no_grad()
def _default_init(layer: nn.Linear, generator: torch.Generator) -> None:
    # torch's nn.Linear.reset_parameters, with an explicit generator
    nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)
    if layer.bias is not None:
        bound = 1 / math.sqrt(layer.in_features) if layer.in_features > 0 else 0
        nn.init.uniform_(layer.bias, -bound, bound, generator=generator)


def q_network(
    state_space: Any,
    action_space: Any,
    hidden: Sequence[int] = (64, 64),
    *,
    dueling: bool = False,
    n_quantiles: int | None = None,
    activation: Callable[[], nn.Module] = nn.ReLU,
    seed: int | np.random.SeedSequence | None = 0,
    cnn: str | None = None,
) -> nn.Module:
    """An MLP mapping observations of a ``Box`` ``state_space`` to one value per action of a
    ``Discrete`` ``action_space`` (``n_quantiles`` values per action, flattened quantile-major,
    for :class:`~rlkit.QRDQNLearner`). Multi-dimensional observations are flattened. Other
    observation spaces (``Discrete``, ``MultiBinary``, ``MultiDiscrete``, ``Dict``, ``Tuple``)
    go through their encoder first (``rlkit/approximators/encoders``, ``cnn`` naming the
    body of image keys); such a network takes batches only.

    With ``cnn`` (``"nature"``: Mnih et al. 2015; ``"minatar"``: Young & Tian 2019) the
    observations are ``uint8`` images ``(C, H, W)`` and the network is that CNN body
    (``rlkit/approximators/cnn.py``: pixels scaled to [0, 1] inside) followed by the MLP of
    ``hidden`` (the papers' ``(512,)`` and ``(128,)``); the body and the head are initialised
    from two children of ``seed``. An image space without ``cnn`` is refused: an MLP on raw
    pixels is almost certainly a mistake.

    Example:
        >>> import gymnasium as gym, numpy as np, torch
        >>> net = q_network(gym.spaces.Box(-1, 1, (4,)), gym.spaces.Discrete(2), (32, 32),
        ...                 dueling=True, seed=1)
        >>> net(torch.zeros(4)).shape
        torch.Size([2])
        >>> frames = gym.spaces.Box(0, 255, (4, 84, 84), np.uint8)
        >>> cnn = q_network(frames, gym.spaces.Discrete(6), (512,), cnn="nature", seed=1)
        >>> cnn(torch.zeros(2, 4, 84, 84, dtype=torch.uint8)).shape
        torch.Size([2, 6])
    """
    import gymnasium as gym

    from .cnn import CNN_NAMES, is_image_space

    if not isinstance(action_space, gym.spaces.Discrete):
        raise TypeError(f"q_network: action_space must be gymnasium Discrete, got {action_space}")
    n_quantiles = optional_positive_int("q_network", "n_quantiles", n_quantiles)
    if dueling and n_quantiles is not None:
        raise ValueError("q_network: dueling heads are not supported with n_quantiles")
    n_out = int(action_space.n) * (n_quantiles or 1)
    if not isinstance(state_space, gym.spaces.Box) or state_space.shape == ():
        return _encoded_q_network(state_space, n_out, hidden, cnn, dueling, activation, seed)
    shape = state_space.shape
    if cnn is not None:
        return _cnn_q_network(state_space, n_out, hidden, cnn, dueling, activation, seed)
    if is_image_space(state_space):
        raise ValueError(
            f"q_network: the observations are uint8 images of shape {tuple(shape)} "
            f"({state_space}), but the model asked for is an MLP (hidden={tuple(hidden)}) on "
            f"raw pixels; give cnn= one of {list(CNN_NAMES)} (e.g. cnn='nature' for Atari "
            f"frames, cnn='minatar' for MinAtar) for a CNN that scales the pixels to [0, 1]"
        )
    body = mlp(
        int(np.prod(shape)), n_out, hidden, activation=activation, dueling=dueling, seed=seed
    )
    if len(shape) > 1:
        return nn.Sequential(nn.Flatten(start_dim=-len(shape)), *body)
    return body


def _encoded_q_network(
    state_space: Any,
    n_out: int,
    hidden: Sequence[int],
    cnn: str | None,
    dueling: bool,
    activation: Callable[[], nn.Module],
    seed: int | np.random.SeedSequence | None,
) -> nn.Module:
    """The encoder of ``state_space`` (``rlkit/approximators/encoders``: ``Discrete``
    one-hot, ``Dict``/``Tuple`` concatenated, ...) then ``mlp(features, n_out, hidden)``
    initialised from ``seed`` as the MLP of a ``Box`` is (an encoder of ``Box`` keys has no
    parameters, so a ``Dict`` of them gives the weights of the flattened observation's MLP)."""
    from .encoders import encoder_for

    try:
        encoder = encoder_for(state_space, cnn=cnn, seed=seed)
    except TypeError as error:
        raise TypeError(f"q_network: {error}") from None
    head = mlp(
        encoder.n_features, n_out, hidden, activation=activation, dueling=dueling, seed=seed
    )
    return nn.Sequential(encoder, *head)


def image_body(
    state_space: Any, cnn: str, seed: int | np.random.SeedSequence | None
) -> tuple[nn.Module, np.random.SeedSequence]:
    """``ImageEncoder(state_space, cnn)`` initialised from the first of the two children
    ``seed.spawn(2)`` would give (without changing the caller's ``SeedSequence``), and the
    second child, for the layers after it.

    Example:
        >>> import gymnasium as gym
        >>> space = gym.spaces.Box(0, 255, (4, 10, 10), np.uint8)
        >>> body, head_seed = image_body(space, "minatar", 0)
        >>> body.n_features, head_seed.spawn_key
        (1024, (1,))
    """
    from .cnn import ImageEncoder

    if not isinstance(seed, np.random.SeedSequence):
        seed = np.random.SeedSequence(0 if seed is None else int(seed))
    body_seed, head_seed = (
        np.random.SeedSequence(
            seed.entropy, spawn_key=(*seed.spawn_key, i), pool_size=seed.pool_size
        )
        for i in range(2)
    )
    return ImageEncoder(state_space, cnn, seed=body_seed), head_seed


def _cnn_q_network(
    state_space: Any,
    n_out: int,
    hidden: Sequence[int],
    cnn: str,
    dueling: bool,
    activation: Callable[[], nn.Module],
    seed: int | np.random.SeedSequence | None,
) -> nn.Module:
    """``ImageEncoder(cnn)`` then ``mlp(features, n_out, hidden)``, one seed child each."""
    encoder, head_seed = image_body(state_space, cnn, seed)
    head = mlp(
        encoder.n_features, n_out, hidden, activation=activation, dueling=dueling, seed=head_seed
    )
    net = nn.Sequential(encoder, *head)
    net.pixel_input = True  # the learners hand it uint8 observations as they are
    return net
