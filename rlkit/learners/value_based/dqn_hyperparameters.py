"""The hyperparameters of the DQN-family one-liners (``rk.DQN.agent(env, **hyperparameters)``,
:mod:`.agents`): one frozen dataclass per algorithm, Stable-Baselines3's defaults (DQN) or
SB3-contrib's (QR-DQN), in the names the recipes use (``lr`` for SB3's ``learning_rate``,
``hidden`` for its ``net_arch``).

:meth:`DQNHyperparameters.of` makes one from keyword arguments: an unknown name is a
``TypeError`` naming the algorithm, the name, the closest known name and every known one; a bad
value is a ``ValueError`` (or ``TypeError``) naming the algorithm, the hyperparameter, what was
expected and the value.

Example:
    >>> hp = DQNHyperparameters.of("DQN", {"lr": 1e-3, "hidden": [32]})
    >>> hp.lr, hp.hidden, hp.buffer_size, hp.target_update_interval
    (0.001, (32,), 1000000, 10000)
    >>> DQNHyperparameters.of("DQN", {"learning_rate": 1e-3})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: DQN has no hyperparameter 'learning_rate'; did you mean 'lr'? known: [...]
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ...core import checks
from ...trajectories.her import HER
from ..hyperparameters import hidden_sizes

__all__ = [
    "ValueBasedHyperparameters",
    "DQNHyperparameters",
    "QRDQNHyperparameters",
    "PrioritizedDQNHyperparameters",
    "C51Hyperparameters",
    "IQNHyperparameters",
    "RainbowHyperparameters",
    "unknown_hyperparameter",
]

_LOSSES = ("huber", "mse")


def unknown_hyperparameter(owner: str, name: str, known: list[str], aliases: Mapping) -> TypeError:
    """The error for a hyperparameter ``owner`` does not have: the closest known name (an alias
    of Stable-Baselines3's, ``aliases``, first), then every known one.

    Example:
        >>> print(unknown_hyperparameter("DQN", "hiden", ["hidden", "lr"], {}))
        DQN has no hyperparameter 'hiden'; did you mean 'hidden'? known: ['hidden', 'lr']
    """
    close = aliases.get(name)
    if close is None:
        matches = difflib.get_close_matches(str(name), known, n=1, cutoff=0.5)
        close = matches[0] if matches else None
    hint = f"; did you mean {close!r}?" if close else ";"
    return TypeError(f"{owner} has no hyperparameter {name!r}{hint} known: {sorted(known)}")


@dataclass(frozen=True)
class ValueBasedHyperparameters:
    """What every DQN-family one-liner takes, Stable-Baselines3's DQN defaults
    (``stable_baselines3.DQN``).

    ``total_steps`` is the run's length the schedules are fractions of (SB3's
    ``learn(total_timesteps)``): epsilon decays over ``exploration_fraction * total_steps``
    steps. ``tau`` is SB3's: 1 is a hard copy every ``target_update_interval`` steps; a
    ``tau`` below 1 (Polyak averaging) needs ``target_update_interval=1``. ``adam_eps`` is
    Adam's epsilon and ``n_step`` the n of n-step returns. ``cnn`` names the CNN body of
    image observations (None: the Nature CNN for frames of 36x36 or more, MinAtar's below;
    docs/how-to/images.md). ``legal_action_masks``: whether the
    replay keeps the next states' legal-action masks, so that the target's max ranges over the
    legal actions only (docs/how-to/action-masks.md); None (the default) keeps them when the
    env exposes masks (``action_masks()`` or ``info["action_mask"]``), False opts out.

    Example:
        >>> hp = ValueBasedHyperparameters(total_steps=10_000)
        >>> hp.exploration_fraction * hp.total_steps, hp.n_gradient_steps  # (10000 // 4 - 25)
        (1000.0, 2475)
    """

    total_steps: int = 1_000_000
    lr: float = 1e-4
    buffer_size: int = 1_000_000
    learning_starts: int = 100
    batch_size: int = 32
    tau: float = 1.0
    gamma: float = 0.99
    train_freq: int = 4
    gradient_steps: int = 1
    target_update_interval: int = 10_000
    exploration_fraction: float = 0.1
    exploration_initial_eps: float = 1.0
    exploration_final_eps: float = 0.05
    max_grad_norm: float | None = 10.0
    hidden: tuple[int, ...] = (64, 64)
    adam_eps: float = 1e-8
    n_step: int = 1
    device: str = "cpu"
    legal_action_masks: bool | None = None
    #: the CNN body for image observations (``"nature"`` or ``"minatar"``; None: chosen by the
    #: frame size, ``rlkit.approximators.cnn.image_cnn``; docs/how-to/images.md)
    cnn: str | None = None
    #: hindsight experience replay: an ``rk.HER(strategy, n_sampled_goal)`` whose strategy and
    #: ratio the agent's sampler takes (None: uniform replay; docs/how-to/observations.md)
    her: Any = None

    #: Stable-Baselines3's names for ours: an unknown name says which one it meant
    ALIASES: ClassVar[dict[str, str]] = {
        "learning_rate": "lr",
        "net_arch": "hidden",
        "n_timesteps": "total_steps",
        "total_timesteps": "total_steps",
    }

    @classmethod
    def of(cls, owner: str, overrides: Mapping[str, Any]) -> ValueBasedHyperparameters:
        """The defaults with ``overrides``, checked (module docstring)."""
        known = [f.name for f in dataclasses.fields(cls)]
        for name in overrides:
            if name not in known:
                raise unknown_hyperparameter(owner, name, known, cls.ALIASES)
        hp = cls(**overrides)
        if "hidden" in overrides:
            hp = dataclasses.replace(hp, hidden=hidden_sizes(owner, hp.hidden))
        hp.check(owner)
        return hp

    @property
    def n_gradient_steps(self) -> int:
        """How many gradient steps a run of ``total_steps`` takes."""
        trains = self.total_steps // self.train_freq - self.learning_starts // self.train_freq
        return max(trains, 0) * self.gradient_steps

    def check(self, owner: str) -> None:
        """Refuse values no run can use, naming ``owner`` and the hyperparameter."""
        for name in ("total_steps", "batch_size", "buffer_size", "target_update_interval",
                     "train_freq", "gradient_steps", "n_step"):  # fmt: skip
            checks.positive_int(owner, name, getattr(self, name))
        checks.non_negative_int(owner, "learning_starts", self.learning_starts)
        checks.finite_float(owner, "lr", self.lr, low=0.0, low_open=True)
        checks.finite_float(owner, "adam_eps", self.adam_eps, low=0.0, low_open=True)
        for name in ("gamma", "exploration_fraction", "exploration_initial_eps",
                     "exploration_final_eps"):  # fmt: skip
            checks.unit_interval(owner, name, getattr(self, name))
        checks.finite_float(owner, "tau", self.tau, low=0.0, high=1.0, low_open=True)
        if self.tau != 1.0 and self.target_update_interval != 1:
            raise ValueError(
                f"{owner}: tau={self.tau!r} (Polyak averaging) averages at every environment "
                f"step, so target_update_interval must be 1, got "
                f"{self.target_update_interval!r}; use tau=1.0 for a hard copy every "
                f"target_update_interval steps"
            )
        if self.max_grad_norm is not None:
            checks.finite_float(owner, "max_grad_norm", self.max_grad_norm, low=0.0,
                                low_open=True)  # fmt: skip
        hidden_sizes(owner, self.hidden)
        checks.instance_of(owner, "device", self.device, str, "a torch device name such as 'cpu'")
        if self.legal_action_masks is not None:
            checks.instance_of(owner, "legal_action_masks", self.legal_action_masks, bool,
                               "True, False or None (from the env)")  # fmt: skip
        _check_her(owner, self.her, self.n_step)
        _check_cnn(owner, self.cnn)


def _check_cnn(owner: str, cnn: Any) -> None:
    """``cnn`` is None or the name of a CNN body (``rlkit/approximators/cnn.py``)."""
    from ...approximators.cnn import CNN_NAMES

    if cnn is not None and cnn not in CNN_NAMES:
        raise ValueError(
            f"{owner}: cnn must be None (chosen by the frame size) or one of "
            f"{list(CNN_NAMES)}, got {cnn!r}"
        )


def _check_her(owner: str, her: Any, n_step: int) -> None:
    """``her`` is None or an ``rk.HER``, and then ``n_step`` is 1."""
    if her is None:
        return
    checks.instance_of(owner, "her", her, HER, "None or an rk.HER(strategy, n_sampled_goal)")
    if n_step != 1:
        raise ValueError(
            f"{owner}: her={her!r} relabels one-step transitions, so n_step must be 1, got "
            f"n_step={n_step!r}"
        )


def _check_double_and_compile(owner: str, double: Any, compile: Any) -> None:  # noqa: A002
    checks.instance_of(owner, "double", double, bool, "True or False")
    checks.instance_of(owner, "compile", compile, (bool, str), "True, False or a compile mode")


@dataclass(frozen=True)
class DQNHyperparameters(ValueBasedHyperparameters):
    """DQN's hyperparameters: :class:`ValueBasedHyperparameters` (Stable-Baselines3's defaults)
    and ``double`` (double Q-learning, off), ``loss`` (``"huber"``, SB3's, or ``"mse"``) and
    ``compile`` (``torch.compile`` the loss and the acting forward pass, off).

    Example:
        >>> hp = DQNHyperparameters.of("DQN", {"hidden": 128, "double": True})
        >>> hp.hidden, hp.double, hp.loss, hp.lr
        ((128,), True, 'huber', 0.0001)
    """

    double: bool = False
    loss: str = "huber"
    compile: bool = False

    def check(self, owner: str) -> None:
        """:meth:`ValueBasedHyperparameters.check`, ``double``, ``loss`` and ``compile``."""
        super().check(owner)
        _check_double_and_compile(owner, self.double, self.compile)
        if self.loss not in _LOSSES:
            raise ValueError(f"{owner}: loss must be one of {_LOSSES}, got {self.loss!r}")


@dataclass(frozen=True)
class QRDQNHyperparameters(ValueBasedHyperparameters):
    """QR-DQN's hyperparameters, SB3-contrib's defaults (``sb3_contrib.QRDQN``, version 2.3 and
    later): 200 quantiles, rate 5e-5, epsilon 1 -> 0.01 over 0.5% of the run, no gradient
    clipping and Adam's epsilon ``0.01 / batch_size`` (``adam_eps=None``, the default).

    Example:
        >>> hp = QRDQNHyperparameters(batch_size=64)
        >>> hp.n_quantiles, hp.lr, hp.max_grad_norm, hp.adam_eps
        (200, 5e-05, None, 0.00015625)
    """

    lr: float = 5e-5
    exploration_fraction: float = 0.005
    exploration_final_eps: float = 0.01
    max_grad_norm: float | None = None
    adam_eps: float | None = None
    n_quantiles: int = 200
    kappa: float = 1.0
    double: bool = False
    compile: bool = False

    def __post_init__(self) -> None:
        # SB3-contrib's Adam epsilon, 0.01 / batch_size, unless given (a bad batch_size is
        # left for check() to name)
        if self.adam_eps is None and checks.is_int(self.batch_size) and self.batch_size > 0:
            object.__setattr__(self, "adam_eps", 0.01 / self.batch_size)

    def check(self, owner: str) -> None:
        """:meth:`ValueBasedHyperparameters.check`, ``n_quantiles``, ``kappa`` (the quantile
        Huber loss's threshold), ``double`` and ``compile``."""
        super().check(owner)
        _check_double_and_compile(owner, self.double, self.compile)
        checks.positive_int(owner, "n_quantiles", self.n_quantiles)
        checks.finite_float(owner, "kappa", self.kappa, low=0.0, low_open=True)


@dataclass(frozen=True)
class PrioritizedDQNHyperparameters(DQNHyperparameters):
    """Prioritized-replay double DQN's hyperparameters: DQN's (Stable-Baselines3's defaults)
    with ``double=True`` and the replay's ``alpha`` (0.6), ``beta`` (0.4) and ``beta_end`` (1,
    reached at the run's last gradient step), Schaul et al. (2016), as the
    ``PrioritizedDQN_CartPole`` recipe.

    Example:
        >>> hp = PrioritizedDQNHyperparameters()
        >>> hp.double, hp.alpha, hp.beta, hp.beta_end
        (True, 0.6, 0.4, 1.0)
    """

    double: bool = True
    alpha: float = 0.6
    beta: float = 0.4
    beta_end: float = 1.0

    def check(self, owner: str) -> None:
        """:meth:`DQNHyperparameters.check`, ``alpha``, ``beta`` and ``beta_end``."""
        super().check(owner)
        checks.finite_float(owner, "alpha", self.alpha, low=0.0)
        checks.unit_interval(owner, "beta", self.beta)
        checks.unit_interval(owner, "beta_end", self.beta_end)


def _check_support(owner: str, n_atoms: Any, v_min: Any, v_max: Any) -> None:
    from ...approximators.distributional import check_support

    check_support(owner, n_atoms, v_min, v_max)


@dataclass(frozen=True)
class C51Hyperparameters(ValueBasedHyperparameters):
    """C51's hyperparameters (Bellemare et al. 2017): DQN's (Stable-Baselines3's defaults), the
    support, ``n_atoms`` 51 on ``[v_min, v_max] = [-100, 100]`` (CleanRL's classic-control
    support, the ``C51_CartPole`` recipe's; returns of CartPole and Acrobot with ``gamma``
    0.99 lie within it), and ``double``.

    Example:
        >>> C51Hyperparameters.of("C51", {"v_max": 10.0, "v_min": -10.0}).n_atoms
        51
    """

    n_atoms: int = 51
    v_min: float = -100.0
    v_max: float = 100.0
    double: bool = False

    def check(self, owner: str) -> None:
        """:meth:`ValueBasedHyperparameters.check`, the support and ``double``."""
        super().check(owner)
        _check_support(owner, self.n_atoms, self.v_min, self.v_max)
        checks.instance_of(owner, "double", self.double, bool, "True or False")


@dataclass(frozen=True)
class IQNHyperparameters(ValueBasedHyperparameters):
    """IQN's hyperparameters (Dabney et al. 2018, Dopamine's): DQN's (Stable-Baselines3's
    defaults) and ``n_tau`` = ``n_tau_target`` = 64 sampled fractions, ``n_acting`` = 32
    fixed acting fractions, ``n_cos`` = 64 cosines, ``kappa`` = 1, ``double``.

    Example:
        >>> hp = IQNHyperparameters()
        >>> hp.n_tau, hp.n_tau_target, hp.n_acting, hp.n_cos, hp.kappa
        (64, 64, 32, 64, 1.0)
    """

    n_tau: int = 64
    n_tau_target: int = 64
    n_acting: int = 32
    n_cos: int = 64
    kappa: float = 1.0
    double: bool = False

    def check(self, owner: str) -> None:
        """:meth:`ValueBasedHyperparameters.check`, the fractions, ``kappa`` and ``double``."""
        super().check(owner)
        for name in ("n_tau", "n_tau_target", "n_acting", "n_cos"):
            checks.positive_int(owner, name, getattr(self, name))
        checks.finite_float(owner, "kappa", self.kappa, low=0.0, low_open=True)
        checks.instance_of(owner, "double", self.double, bool, "True or False")


@dataclass(frozen=True)
class RainbowHyperparameters(C51Hyperparameters):
    """Rainbow's hyperparameters (Hessel et al. 2018): C51's support, ``double`` on, a dueling
    head with noisy streams (``sigma0`` 0.5), ``n_step`` 3, prioritized replay (``alpha``
    0.5, ``beta`` 0.4 -> ``beta_end`` 1 over the run's gradient steps) and no epsilon-greedy
    after the random warm-up (``exploration_initial_eps`` = ``exploration_final_eps`` = 0: the
    noisy layers explore, as Dopamine), the ``Rainbow_CartPole`` recipe's; the rest DQN's
    (Stable-Baselines3's defaults).

    Example:
        >>> hp = RainbowHyperparameters()
        >>> hp.double, hp.n_step, hp.alpha, hp.exploration_final_eps
        (True, 3, 0.5, 0.0)
    """

    n_step: int = 3
    exploration_initial_eps: float = 0.0
    exploration_final_eps: float = 0.0
    double: bool = True
    sigma0: float = 0.5
    alpha: float = 0.5
    beta: float = 0.4
    beta_end: float = 1.0

    def check(self, owner: str) -> None:
        """:meth:`C51Hyperparameters.check`, ``sigma0`` and the replay's priorities."""
        super().check(owner)
        checks.finite_float(owner, "sigma0", self.sigma0, low=0.0)
        checks.finite_float(owner, "alpha", self.alpha, low=0.0)
        checks.unit_interval(owner, "beta", self.beta)
        checks.unit_interval(owner, "beta_end", self.beta_end)
