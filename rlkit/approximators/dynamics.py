"""``rk.EnsembleDynamicsModel``: a learned model of an environment's dynamics, the approximator
MBPO and PETS plan and learn with (``rlkit/learners/model_based/``; docs/how-to/model-based.md).

An ensemble of probabilistic MLPs (:class:`~rlkit.approximators.ensemble.ProbabilisticEnsemble`,
one batched module) maps the normalised ``(state, action)`` to a Gaussian over the reward and
the change of state ``next_state - state`` (only the change when a known ``reward_fn`` is
given). Training follows MBPO's ``BNN.train`` (Janner et al. 2019):

* the transitions are shuffled (the model's own generator) and a held-out split
  (``holdout_ratio``, at most ``max_holdout`` transitions) is kept aside; the inputs are
  standardised with the mean and standard deviation of the training split;
* every member trains on its own bootstrap of the training split, reshuffled each epoch, in
  minibatches of ``batch_size``, with the Gaussian NLL and the log-variance bound regulariser
  (:func:`~rlkit.approximators.ensemble.gaussian_nll`) plus MBPO's L2 weight decay per layer,
  one step of the optimizer module (an ``rk.optimizers.GradientDescent`` Adam, kept across
  fits) per minibatch;
* after each epoch, each member's held-out MSE; a member improves when its MSE falls by more
  than 1% of its best, and its parameters are snapshotted; training stops when no member has
  improved for ``max_epochs_since_update`` epochs (or after ``max_epochs``), and every member
  gets back its best snapshot;
* the ``n_elites`` members with the lowest held-out MSE are the elites: predictions use them.

Predictions sample the Gaussian of one member per row (:meth:`EnsembleDynamicsModel.sample`,
MBPO's random elite per transition, or PETS' trajectory sampling TS-∞ with a fixed member
per particle: :meth:`EnsembleDynamicsModel.sample_grouped`). The next state is the state plus
the sampled change; the reward is the sampled one or ``reward_fn(state, action, next_state)``;
the episode ends where ``termination_fn(state, action, next_state)`` says so (none: it never
ends, as for Pendulum; MBPO and mbrl-lib give the termination as a known function too). The
functions take and return torch tensors of a batch (actions in the ``Box`` bounds, as the
environment receives them).

Example:
    >>> import numpy as np, rlkit as rk
    >>> env = rk.GymEnv("Pendulum-v1", seed=0)
    >>> model = rk.EnsembleDynamicsModel(env.state_space, env.action_space, ensemble_size=3,
    ...                                  n_elites=2, hidden=(16,), max_epochs=2, seed=0)
    >>> rng = np.random.default_rng(0)
    >>> s, a = rng.normal(size=(100, 3)), rng.uniform(-2, 2, size=(100, 1))
    >>> stats = model.fit(dict(state=s, action=a, reward=-s[:, 0], next_state=s + 0.1 * a))
    >>> len(model.elites), model((s[:2], a[:2]))[0].shape
    (2, (2, 3))
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import torch

from ..core.checks import (
    ArgumentTypeError,
    check_callable,
    finite_float,
    optional_positive_int,
    positive_int,
)
from ..core.interfaces import AbstractApproximator
from ..core.seeding import int_seed, spawn_seeds
from ..core.state import generator_state, require_keys, set_generator_state
from ..optimizers.gradient import GradientDescent
from .ensemble import ProbabilisticEnsemble, SelectedMembers, gaussian_nll
from .neural import resolve_device

__all__ = ["EnsembleDynamicsModel", "check_model_fn", "mbpo_weight_decays", "select_elites"]

_FN_CALL = "{name}(state, action, next_state) -> tensor of one value per row"


def check_model_fn(owner: str, name: str, fn: Any) -> Any:
    """``fn`` (or None) if it can be called as ``fn(state, action, next_state)``; else a
    ``TypeError`` naming ``owner``, the function, its signature and the call it must accept.

    Example:
        >>> check_model_fn("EnsembleDynamicsModel", "reward_fn", lambda s, a: 0.0)
        Traceback (most recent call last):
        ...
        TypeError: EnsembleDynamicsModel: reward_fn <lambda>(s, a) cannot be called as reward_fn(state, action, next_state) -> tensor of one value per row: too many positional arguments
    """  # noqa: E501
    if fn is None:
        return None
    call = _FN_CALL.format(name=name)
    check_callable(owner, name, fn, call)
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without a readable signature
        return fn
    try:
        signature.bind("state", "action", "next_state")
    except TypeError as error:
        fn_name = getattr(fn, "__name__", type(fn).__name__)
        raise TypeError(
            f"{owner}: {name} {fn_name}{signature} cannot be called as {call}: {error}"
        ) from None
    return fn


def select_elites(holdout_mse: Sequence[float], n_elites: int) -> list[int]:
    """The indices of the ``n_elites`` members with the lowest held-out error, in increasing
    order (ties: the lower index; MBPO's ``_model_inds``).

    Example:
        >>> select_elites([0.3, 0.1, 0.9, 0.2], 2)
        [1, 3]
    """
    return sorted(int(i) for i in np.argsort(np.asarray(holdout_mse), kind="stable")[:n_elites])


def mbpo_weight_decays(n_layers: int) -> list[float]:
    """MBPO's L2 coefficients per layer (``[2.5e-5, 5e-5, 7.5e-5, 7.5e-5, 1e-4]`` for its four
    hidden layers and the head); for other depths, evenly spaced from 2.5e-5 to 1e-4.

    Example:
        >>> mbpo_weight_decays(2)
        [2.5e-05, 0.0001]
    """
    if n_layers == 5:
        return [2.5e-5, 5e-5, 7.5e-5, 7.5e-5, 1e-4]
    return [float(v) for v in np.linspace(2.5e-5, 1e-4, n_layers)]


def _box_size(owner: str, name: str, space: Any) -> int:
    shape = getattr(space, "shape", None)
    if shape is None or len(shape) != 1 or getattr(space, "dtype", None) is None:
        raise TypeError(
            f"{owner}: {name} must be a flat gymnasium Box (a vector of numbers), got {space!r}"
        )
    return int(shape[0])


class EnsembleDynamicsModel(AbstractApproximator):
    """A probabilistic ensemble dynamics model (see the module docstring).

    Args:
        state_space: the environment's observation space, a flat ``Box``.
        action_space: its action space, a flat ``Box``.
        ensemble_size: members (MBPO: 7; PETS: 5).
        n_elites: the best members by held-out error that predictions use (MBPO: 5); at most
            ``ensemble_size``.
        hidden: hidden layer sizes (MBPO: four of 200).
        lr: Adam's learning rate.
        weight_decay: L2 coefficients per layer (hidden layers, then the head), or None for
            MBPO's (:func:`mbpo_weight_decays`).
        batch_size: the minibatch of each member's gradient step.
        holdout_ratio: the share of the transitions held out (at most ``max_holdout``).
        max_holdout: the most transitions held out.
        max_epochs_since_update: early stopping's patience, in epochs.
        max_epochs: a cap on the epochs of one fit (None: until early stopping).
        reward_fn: a known reward ``fn(state, action, next_state)`` of torch batches (a float
            per row), or None: the reward is learned.
        termination_fn: a known termination ``fn(state, action, next_state)`` (a bool per
            row), or None: episodes never end.
        seed: the initialisation and the data shuffling derive from it.
        device: torch's device.

    Example:
        >>> import rlkit as rk
        >>> env = rk.GymEnv("Pendulum-v1")
        >>> rk.EnsembleDynamicsModel(env.state_space, env.action_space, ensemble_size=3)
        Traceback (most recent call last):
        ...
        ValueError: EnsembleDynamicsModel: ensemble_size 3 is below n_elites 5; the elites are chosen among the members (give ensemble_size >= n_elites)
    """  # noqa: E501

    def __init__(
        self,
        state_space: Any,
        action_space: Any,
        *,
        ensemble_size: int = 7,
        n_elites: int = 5,
        hidden: Sequence[int] = (200, 200, 200, 200),
        lr: float = 1e-3,
        weight_decay: Sequence[float] | None = None,
        batch_size: int = 256,
        holdout_ratio: float = 0.2,
        max_holdout: int = 5000,
        max_epochs_since_update: int = 5,
        max_epochs: int | None = None,
        reward_fn: Callable[..., Any] | None = None,
        termination_fn: Callable[..., Any] | None = None,
        seed: int | np.random.SeedSequence = 0,
        device: str | torch.device = "cpu",
    ) -> None:
        owner = "EnsembleDynamicsModel"
        self.n_obs = _box_size(owner, "state_space", state_space)
        self.n_act = _box_size(owner, "action_space", action_space)
        positive_int(owner, "ensemble_size", ensemble_size)
        positive_int(owner, "n_elites", n_elites)
        if ensemble_size < n_elites:
            raise ValueError(
                f"{owner}: ensemble_size {ensemble_size} is below n_elites {n_elites}; the "
                f"elites are chosen among the members (give ensemble_size >= n_elites)"
            )
        hidden = tuple(hidden) if isinstance(hidden, (list, tuple)) else hidden
        if (
            not isinstance(hidden, tuple)
            or not hidden
            or not all(isinstance(h, int) and not isinstance(h, bool) and h > 0 for h in hidden)
        ):
            raise ValueError(
                f"{owner}: hidden must be a non-empty tuple of positive ints, got {hidden!r}"
            )
        finite_float(owner, "lr", lr, low=0, low_open=True)
        positive_int(owner, "batch_size", batch_size)
        finite_float(owner, "holdout_ratio", holdout_ratio, low=0, high=1, low_open=True)
        if holdout_ratio >= 1:
            raise ValueError(f"{owner}: holdout_ratio must be below 1, got {holdout_ratio!r}")
        positive_int(owner, "max_holdout", max_holdout)
        positive_int(owner, "max_epochs_since_update", max_epochs_since_update)
        optional_positive_int(owner, "max_epochs", max_epochs)
        decays = mbpo_weight_decays(len(hidden) + 1) if weight_decay is None else weight_decay
        if not isinstance(decays, (list, tuple)) or len(decays) != len(hidden) + 1:
            raise ArgumentTypeError(
                f"{owner}: weight_decay must be None or one number per layer "
                f"({len(hidden) + 1}: the hidden layers and the head), got {weight_decay!r}"
            )
        for d in decays:
            finite_float(owner, "weight_decay", d, low=0)
        self.reward_fn = check_model_fn(owner, "reward_fn", reward_fn)
        self.termination_fn = check_model_fn(owner, "termination_fn", termination_fn)
        self.ensemble_size, self.n_elites, self.hidden = int(ensemble_size), int(n_elites), hidden
        self.lr, self.weight_decay = float(lr), [float(d) for d in decays]
        self.batch_size, self.holdout_ratio = int(batch_size), float(holdout_ratio)
        self.max_holdout, self.max_epochs = int(max_holdout), max_epochs
        self.max_epochs_since_update = int(max_epochs_since_update)
        self.learned_reward = reward_fn is None
        self.device = resolve_device(device, owner)
        init_seed, shuffle_seed = spawn_seeds(seed, 2)
        init = torch.Generator().manual_seed(int_seed(init_seed))
        self.n_out = self.n_obs + (1 if self.learned_reward else 0)
        self.network = ProbabilisticEnsemble(
            ensemble_size, self.n_obs + self.n_act, self.n_out, hidden, generator=init
        ).to(self.device)
        self.rng = np.random.default_rng(shuffle_seed)
        self.optimizer = GradientDescent("adam", lr=self.lr, keep_deltas=False)
        self.input_mean = torch.zeros(self.n_obs + self.n_act, device=self.device)
        self.input_std = torch.ones(self.n_obs + self.n_act, device=self.device)
        self.elites = list(range(self.n_elites))
        self.holdout_mse = [float("nan")] * self.ensemble_size
        self.fits = 0

    def __repr__(self) -> str:
        return (
            f"EnsembleDynamicsModel(ensemble_size={self.ensemble_size}, n_elites={self.n_elites}, "
            f"hidden={self.hidden}, learned_reward={self.learned_reward})"
        )

    # ---- the network on normalised inputs ----
    def _inputs(self, state: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        x = torch.cat([state, action], dim=-1)
        return (x - self.input_mean) / self.input_std

    def forward(
        self, state: torch.Tensor, action: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Every member's Gaussian ``(mean, logvar)``, ``(E, B, n_out)``, for ``state``
        ``(B, n_obs)`` and ``action`` ``(B, n_act)`` (the same batch for each member), or for
        ``(E, B, ...)`` batches (one per member)."""
        x = self._inputs(state, action)
        if x.dim() == 2:
            x = x.expand(self.ensemble_size, *x.shape)
        return self.network(x)

    def _outcome(
        self, state: torch.Tensor, action: torch.Tensor, out: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(next_state, reward, terminated)`` from a sampled output row of the network."""
        if self.learned_reward:
            reward, delta = out[..., 0], out[..., 1:]
        else:
            delta = out
        next_state = state + delta
        if not self.learned_reward:
            reward = (
                torch.as_tensor(self.reward_fn(state, action, next_state))
                .reshape(next_state.shape[:-1])
                .to(next_state)
            )
        if self.termination_fn is None:
            terminated = torch.zeros(next_state.shape[:-1], dtype=torch.bool, device=state.device)
        else:
            terminated = (
                torch.as_tensor(self.termination_fn(state, action, next_state))
                .reshape(next_state.shape[:-1])
                .to(device=state.device, dtype=torch.bool)
            )
        return next_state, reward, terminated

    @torch.no_grad()
    def sample(
        self,
        state: torch.Tensor,
        action: torch.Tensor,
        generator: torch.Generator,
        *,
        deterministic: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One model step for a batch ``(B, n_obs)``, ``(B, n_act)``: each row's member is an
        elite drawn uniformly with ``generator`` (MBPO's ``_random_inds``), its Gaussian
        sampled (``deterministic``: its mean). Returns ``(next_state, reward, terminated)``.

        Example:
            >>> import torch, rlkit as rk
            >>> env = rk.GymEnv("Pendulum-v1")
            >>> m = rk.EnsembleDynamicsModel(env.state_space, env.action_space, hidden=(8,))
            >>> s, r, d = m.sample(torch.zeros(4, 3), torch.zeros(4, 1), torch.Generator())
            >>> s.shape, r.shape, d.tolist()
            (torch.Size([4, 3]), torch.Size([4]), [False, False, False, False])
        """
        elites = torch.as_tensor(self.elites, device=self.device)
        x = self._inputs(state, action).expand(len(elites), *state.shape[:-1], -1)
        mean, logvar = self.network(x, elites)
        pick = torch.randint(len(elites), (state.shape[0],), generator=generator).to(self.device)
        rows = torch.arange(state.shape[0], device=self.device)
        mean, logvar = mean[pick, rows], logvar[pick, rows]
        if not deterministic:
            noise = torch.randn(mean.shape, generator=generator).to(self.device)
            mean = mean + noise * torch.exp(0.5 * logvar)
        return self._outcome(state, action, mean)

    def elite_network(self) -> SelectedMembers:
        """The elites of the network with their weights gathered once
        (:class:`~rlkit.approximators.ensemble.SelectedMembers`), for the many steps of one
        rollout (:meth:`sample_grouped`'s ``elites``); select again after a fit.

        Example:
            >>> import torch, rlkit as rk
            >>> env = rk.GymEnv("Pendulum-v1")
            >>> m = rk.EnsembleDynamicsModel(env.state_space, env.action_space, ensemble_size=7,
            ...                              hidden=(8,))
            >>> m.elite_network()(torch.zeros(5, 2, 4))[0].shape
            torch.Size([5, 2, 4])
        """
        return self.network.select(torch.as_tensor(self.elites, device=self.device))

    @torch.no_grad()
    def sample_grouped(
        self,
        state: torch.Tensor,
        action: torch.Tensor,
        generator: torch.Generator,
        *,
        elites: SelectedMembers | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One model step for particles grouped by elite, ``(n_elites, P, n_obs)`` and
        ``(n_elites, P, n_act)``: group ``i`` always steps with elite ``i`` (PETS' trajectory
        sampling TS-∞, a fixed member per particle), its Gaussian sampled with ``generator``.
        ``elites``: :meth:`elite_network`, gathered once by a caller that steps many times
        (the same result; None gathers it here).

        Example:
            >>> import torch, rlkit as rk
            >>> env = rk.GymEnv("Pendulum-v1")
            >>> m = rk.EnsembleDynamicsModel(env.state_space, env.action_space, ensemble_size=5,
            ...                              hidden=(8,))
            >>> m.sample_grouped(torch.zeros(5, 2, 3), torch.zeros(5, 2, 1),
            ...                  torch.Generator())[0].shape
            torch.Size([5, 2, 3])
        """
        network = self.elite_network() if elites is None else elites
        mean, logvar = network(self._inputs(state, action))
        noise = torch.randn(mean.shape, generator=generator).to(self.device)
        return self._outcome(state, action, mean + noise * torch.exp(0.5 * logvar))

    def __call__(self, x: Any) -> tuple[np.ndarray, np.ndarray]:
        """The elites' mean prediction for ``x = (state, action)`` (numpy batches): the
        expected next state and reward, as numpy arrays."""
        state, action = x
        s = torch.as_tensor(np.asarray(state, dtype=np.float32), device=self.device)
        a = torch.as_tensor(np.asarray(action, dtype=np.float32), device=self.device)
        with torch.no_grad():
            mean, _ = self.forward(s, a)
            out = mean[torch.as_tensor(self.elites, device=self.device)].mean(0)
            next_state, reward, _ = self._outcome(s, a, out)
        return next_state.cpu().numpy(), reward.cpu().numpy()

    # ---- training ----
    def targets(self, state: Any, reward: Any, next_state: Any) -> np.ndarray:
        """What the network learns: ``[reward, next_state - state]`` (only the change when the
        reward is known)."""
        delta = np.asarray(next_state, np.float32) - np.asarray(state, np.float32)
        if not self.learned_reward:
            return delta
        return np.concatenate([np.asarray(reward, np.float32).reshape(-1, 1), delta], axis=1)

    def loss(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """The training loss on normalised inputs ``x`` and targets ``y``, ``(E, B, ...)``:
        :func:`~rlkit.approximators.ensemble.gaussian_nll` plus the L2 weight decay."""
        net = self.network
        mean, logvar = net(x)
        loss = gaussian_nll(mean, logvar, y, net.min_logvar, net.max_logvar)
        layers = [*net.hidden, net.head]
        for decay, layer in zip(self.weight_decay, layers, strict=True):
            loss = loss + decay * 0.5 * layer.weight.pow(2).sum()
        return loss

    def fit(self, data: Any) -> dict[str, float]:
        """Train on every transition of ``data`` (an ``rk.CircularArraySARTTrajectory`` or a
        mapping of arrays ``state``, ``action``, ``reward``, ``next_state``) until early
        stopping (module docstring); choose the elites. Returns the training's statistics:
        ``model_epochs``, ``model_holdout_mse`` (the elites' mean), ``model_train_loss``."""
        owner = "EnsembleDynamicsModel.fit"
        state, action, reward, next_state = _arrays(owner, data)
        n = len(state)
        if n < 2:
            raise ValueError(f"{owner}: needs at least 2 transitions (one held out), got {n}")
        inputs = np.concatenate([state, action], axis=1).astype(np.float32)
        targets = self.targets(state, reward, next_state)
        order = self.rng.permutation(n)
        n_holdout = max(1, min(int(n * self.holdout_ratio), self.max_holdout))
        if n_holdout >= n:
            n_holdout = n - 1
        hold, train = order[:n_holdout], order[n_holdout:]
        device = self.device
        x_train = torch.as_tensor(inputs[train], device=device)
        self.input_mean = x_train.mean(0)
        std = x_train.std(0, unbiased=False)
        self.input_std = torch.where(std < 1e-12, torch.ones_like(std), std)
        x_train = (x_train - self.input_mean) / self.input_std
        y_train = torch.as_tensor(targets[train], device=device)
        x_hold = (torch.as_tensor(inputs[hold], device=device) - self.input_mean) / self.input_std
        y_hold = torch.as_tensor(targets[hold], device=device)
        x_hold = x_hold.expand(self.ensemble_size, *x_hold.shape)
        return self._train(x_train, y_train, x_hold, y_hold)

    def _holdout(self, x_hold: torch.Tensor, y_hold: torch.Tensor) -> np.ndarray:
        with torch.no_grad():
            mean, _ = self.network(x_hold)
            return (mean - y_hold).pow(2).mean(dim=(1, 2)).cpu().numpy().astype(np.float64)

    def _train(self, x_train, y_train, x_hold, y_hold) -> dict[str, float]:
        e, n_train = self.ensemble_size, len(x_train)
        best = self._holdout(x_hold, y_hold)
        snapshot = _copy_params(self.network)
        bootstrap = self.rng.integers(n_train, size=(e, n_train))
        epochs, since_update, last_loss = 0, 0, float("nan")
        params = list(self.network.parameters())
        while True:
            rows = np.arange(e)[:, None]
            bootstrap = bootstrap[rows, np.argsort(self.rng.random((e, n_train)), axis=1)]
            losses = []
            for start in range(0, n_train, self.batch_size):
                idx = torch.as_tensor(bootstrap[:, start : start + self.batch_size])
                x, y = x_train[idx], y_train[idx]
                losses.append(self.optimizer.step(params, lambda x=x, y=y: self.loss(x, y)).loss)
            last_loss = float(np.mean(losses))
            epochs += 1
            current = self._holdout(x_hold, y_hold)
            improved = (best - current) / np.maximum(best, 1e-12) > 0.01
            if improved.any():
                best = np.where(improved, current, best)
                _copy_members(snapshot, self.network, np.flatnonzero(improved))
                since_update = 0
            else:
                since_update += 1
            if since_update >= self.max_epochs_since_update or (
                self.max_epochs is not None and epochs >= self.max_epochs
            ):
                break
        _restore_members(self.network, snapshot)
        self.holdout_mse = [float(v) for v in self._holdout(x_hold, y_hold)]
        self.elites = select_elites(self.holdout_mse, self.n_elites)
        self.fits += 1
        elite_mse = float(np.mean([self.holdout_mse[i] for i in self.elites]))
        return {
            "model_epochs": float(epochs),
            "model_holdout_mse": elite_mse,
            "model_train_loss": last_loss,
        }

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """Parameters, the optimizer module, the normalisation, the elites, the generator."""
        return {
            "network": {k: v.detach().clone() for k, v in self.network.state_dict().items()},
            "optimizer": self.optimizer.state_dict(),
            "input_mean": self.input_mean.clone(),
            "input_std": self.input_std.clone(),
            "elites": list(self.elites),
            "holdout_mse": list(self.holdout_mse),
            "rng": generator_state(self.rng),
            "fits": self.fits,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved."""
        owner = "EnsembleDynamicsModel"
        require_keys(
            owner, state, "network", "optimizer", "input_mean", "input_std", "elites", "rng"
        )
        own = self.network.state_dict()
        for key, tensor in own.items():
            saved = state["network"].get(key)
            if saved is None or tuple(saved.shape) != tuple(tensor.shape):
                raise ValueError(
                    f"{owner}: the checkpoint's network does not match this model's at {key} "
                    f"(saved {None if saved is None else tuple(saved.shape)}, this model "
                    f"{tuple(tensor.shape)}); make the model with the checkpoint's settings"
                )
        self.network.load_state_dict(state["network"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.input_mean = state["input_mean"].clone().to(self.device)
        self.input_std = state["input_std"].clone().to(self.device)
        self.elites = [int(i) for i in state["elites"]]
        self.holdout_mse = [float(v) for v in state.get("holdout_mse", self.holdout_mse)]
        set_generator_state(self.rng, state["rng"])
        self.fits = int(state.get("fits", 0))


def _arrays(owner: str, data: Any) -> tuple[np.ndarray, ...]:
    """``(state, action, reward, next_state)`` of a replay (oldest first) or a mapping."""
    if isinstance(data, Mapping):
        try:
            parts = [np.asarray(data[k]) for k in ("state", "action", "reward", "next_state")]
        except KeyError as error:
            raise KeyError(
                f"{owner}: the data lacks {error}; expected the keys state, action, "
                f"reward, next_state"
            ) from None
    elif all(hasattr(data, k) for k in ("state", "action", "reward", "next_state")) and hasattr(
        data, "ordered_indices"
    ):
        idx = data.ordered_indices()
        parts = [
            np.asarray(getattr(data, k)[idx]) for k in ("state", "action", "reward", "next_state")
        ]
    else:
        raise TypeError(
            f"{owner}: data must be an rk.CircularArraySARTTrajectory or a mapping of arrays "
            f"state, action, reward, next_state, got {type(data).__name__}"
        )
    state, action, reward, next_state = parts
    n = len(state)
    state = state.reshape(n, -1).astype(np.float32)
    action = action.reshape(n, -1).astype(np.float32)
    return (
        state,
        action,
        reward.reshape(n).astype(np.float32),
        next_state.reshape(n, -1).astype(np.float32),
    )


def _copy_params(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


def _copy_members(snapshot: dict[str, torch.Tensor], module: torch.nn.Module, members) -> None:
    """Copy the per-member rows (first dimension = ensemble) of ``module`` into ``snapshot``."""
    idx = torch.as_tensor(members, dtype=torch.long)
    for key, value in module.state_dict().items():
        if key.endswith(("weight", "bias")):
            snapshot[key][idx] = value.detach()[idx]


def _restore_members(module: torch.nn.Module, snapshot: dict[str, torch.Tensor]) -> None:
    """Every member's best parameters back (the shared log-variance bounds stay as trained)."""
    with torch.no_grad():
        for key, value in module.state_dict().items():
            if key.endswith(("weight", "bias")):
                value.copy_(snapshot[key])
