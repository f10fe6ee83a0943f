"""Networks of the distributional learners (``C51Learner``, ``IQNLearner``, ``RainbowLearner``):
noisy linear layers, a categorical (C51) Q-network with an optional dueling head, and IQN's
implicit quantile network.

Every network is initialised from a local ``torch.Generator`` (``seed``), as ``q_network``:
nothing reads or changes torch's global random state. Noisy layers draw their noise only when
told to (:func:`reset_noise` with a generator the learner owns), so a run is reproducible from
its seed and a checkpoint holds the current noise (a buffer of each layer).

Example:
    >>> import gymnasium as gym, torch
    >>> net = categorical_network(gym.spaces.Box(-1, 1, (4,)), gym.spaces.Discrete(2), (32,),
    ...                           n_atoms=51, dueling=True, noisy=True, seed=0)
    >>> net(torch.zeros(3, 4)).shape  # 51 atoms x 2 actions, atom-major
    torch.Size([3, 102])
"""

from __future__ import annotations

import contextlib
import copy
import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from ..core.checks import finite_float, positive_int
from .neural import _default_init, image_body, mlp, torch_generator

__all__ = [
    "NoisyLinear",
    "CategoricalDuelingHead",
    "IQNNetwork",
    "CategoricalExpectation",
    "mean_network",
    "categorical_network",
    "iqn_network",
    "EncodedIQNNetwork",
    "observation_encoder",
    "reset_noise",
    "noisy_layers",
    "noise_off",
    "check_support",
]


def check_support(owner: str, n_atoms: Any, v_min: Any, v_max: Any) -> tuple[int, float, float]:
    """``(n_atoms, v_min, v_max)`` of a categorical support, or ``ValueError`` naming ``owner``:
    at least 2 atoms, finite bounds with ``v_min < v_max``.

    Example:
        >>> check_support("C51Learner", 51, -10, 10)
        (51, -10.0, 10.0)
        >>> check_support("C51Learner", 51, 10, -10)
        Traceback (most recent call last):
        ...
        ValueError: C51Learner: the support needs v_min < v_max, got v_min=10.0, v_max=-10.0
    """
    n_atoms = positive_int(owner, "n_atoms", n_atoms)
    if n_atoms < 2:
        raise ValueError(
            f"{owner}: n_atoms must be at least 2 (the support's atoms from v_min to v_max), "
            f"got {n_atoms}"
        )
    v_min = finite_float(owner, "v_min", v_min)
    v_max = finite_float(owner, "v_max", v_max)
    if not v_min < v_max:
        raise ValueError(
            f"{owner}: the support needs v_min < v_max, got v_min={v_min}, v_max={v_max}"
        )
    return n_atoms, float(v_min), float(v_max)


# ---- noisy linear layers (Fortunato et al. 2018, factorised Gaussian noise) ----
class NoisyLinear(nn.Module):
    """A linear layer with learned factorised Gaussian noise on its weights and bias:
    ``w = mu_w + sigma_w * (f(eps_out) f(eps_in)^T)``, ``b = mu_b + sigma_b * f(eps_out)``,
    ``f(x) = sign(x) sqrt(|x|)`` (Fortunato et al. 2018, "Noisy Networks for Exploration").

    Initialisation as in the paper: ``mu ~ U(-1/sqrt(in), 1/sqrt(in))``, ``sigma = sigma0 /
    sqrt(in)``. The noise ``eps_in``, ``eps_out`` is held in buffers (saved in checkpoints) and
    changes only in :meth:`reset_noise`, from the generator given; the layer starts without
    noise (zeros). In eval mode (``module.eval()``, or inside :func:`noise_off`) the layer is the
    mean ``mu`` (greedy acting, saved policies, ONNX export).

    Example:
        >>> import torch
        >>> layer = NoisyLinear(3, 2, generator=torch.Generator().manual_seed(0))
        >>> x = torch.ones(1, 3)
        >>> layer.reset_noise(torch.Generator().manual_seed(1))
        >>> noisy = layer(x)
        >>> with noise_off(layer):
        ...     mean = layer(x)
        >>> bool(torch.equal(mean, x @ layer.weight_mu.T + layer.bias_mu)), noisy.shape
        (True, torch.Size([1, 2]))
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        sigma0: float = 0.5,
        *,
        generator: torch.Generator | None = None,
        device: Any = None,
    ) -> None:
        super().__init__()
        self.in_features = positive_int("NoisyLinear", "in_features", in_features)
        self.out_features = positive_int("NoisyLinear", "out_features", out_features)
        self.sigma0 = finite_float("NoisyLinear", "sigma0", sigma0, low=0)
        kw = {"device": device, "dtype": torch.float32}
        self.weight_mu = nn.Parameter(torch.empty(out_features, in_features, **kw))
        self.weight_sigma = nn.Parameter(torch.empty(out_features, in_features, **kw))
        self.bias_mu = nn.Parameter(torch.empty(out_features, **kw))
        self.bias_sigma = nn.Parameter(torch.empty(out_features, **kw))
        self.register_buffer("eps_in", torch.zeros(in_features, **kw))
        self.register_buffer("eps_out", torch.zeros(out_features, **kw))
        self.reset_parameters(generator)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, " \
               f"sigma0={self.sigma0}"  # fmt: skip

    @torch.no_grad()
    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """The paper's initialisation (from ``generator``)."""
        bound = 1.0 / math.sqrt(self.in_features)
        self.weight_mu.uniform_(-bound, bound, generator=generator)
        self.bias_mu.uniform_(-bound, bound, generator=generator)
        self.weight_sigma.fill_(self.sigma0 * bound)
        self.bias_sigma.fill_(self.sigma0 * bound)

    @torch.no_grad()
    def reset_noise(self, generator: torch.Generator) -> None:
        """Draw new noise ``eps_in``, ``eps_out`` (standard normal, then ``f``) from
        ``generator``."""
        x = torch.randn(self.in_features + self.out_features, generator=generator,
                        device=generator.device)  # fmt: skip
        x = (x.sign() * x.abs().sqrt()).to(self.eps_in.device)
        self.eps_in.copy_(x[: self.in_features])
        self.eps_out.copy_(x[self.in_features :])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training:
            return nn.functional.linear(x, self.weight_mu, self.bias_mu)
        weight = self.weight_mu + self.weight_sigma * torch.outer(self.eps_out, self.eps_in)
        bias = self.bias_mu + self.bias_sigma * self.eps_out
        return nn.functional.linear(x, weight, bias)


def reset_noise(model: nn.Module, generator: torch.Generator) -> None:
    """New noise in every :class:`NoisyLinear` of ``model``, in module order, from ``generator``.

    Example:
        >>> import torch
        >>> layer = NoisyLinear(2, 2)
        >>> reset_noise(torch.nn.Sequential(layer), torch.Generator().manual_seed(0))
        >>> bool(layer.eps_in.abs().sum() > 0)
        True
    """
    for module in noisy_layers(model):
        module.reset_noise(generator)


def noisy_layers(model: nn.Module) -> list[NoisyLinear]:
    """The :class:`NoisyLinear` layers of ``model``, in module order.

    Example:
        >>> len(noisy_layers(torch.nn.Sequential(NoisyLinear(2, 2), torch.nn.ReLU())))
        1
    """
    return [m for m in model.modules() if isinstance(m, NoisyLinear)]


@contextlib.contextmanager
def noise_off(model: nn.Module) -> Iterator[nn.Module]:
    """Within the block every :class:`NoisyLinear` of ``model`` is its mean (eval mode); the
    modes are restored afterwards.

    Example:
        >>> import torch
        >>> layer = NoisyLinear(2, 1)
        >>> with noise_off(layer):
        ...     layer.training
        False
        >>> layer.training
        True
    """
    layers = [m for m in model.modules() if isinstance(m, NoisyLinear)]
    modes = [m.training for m in layers]
    for m in layers:
        m.training = False
    try:
        yield model
    finally:
        for m, mode in zip(layers, modes, strict=True):
            m.training = mode


def mean_network(model: nn.Module) -> nn.Module:
    """A copy of ``model`` in which every :class:`NoisyLinear` is an ``nn.Linear`` holding its
    mean (``mu``): the deterministic network, for saved and exported policies.

    Example:
        >>> import torch
        >>> net = torch.nn.Sequential(NoisyLinear(2, 3), torch.nn.ReLU(), NoisyLinear(3, 1))
        >>> copy_ = mean_network(net)
        >>> [type(m).__name__ for m in copy_]
        ['Linear', 'ReLU', 'Linear']
        >>> with noise_off(net):
        ...     bool(torch.equal(copy_(torch.ones(1, 2)), net(torch.ones(1, 2))))
        True
    """
    if isinstance(model, NoisyLinear):
        return _mean_linear(model)
    result = copy.deepcopy(model)
    for name, child in list(result.named_children()):
        setattr(result, name, mean_network(child))
    return result


def _mean_linear(layer: NoisyLinear) -> nn.Linear:
    linear = nn.Linear(layer.in_features, layer.out_features, device=layer.weight_mu.device)
    with torch.no_grad():
        linear.weight.copy_(layer.weight_mu)
        linear.bias.copy_(layer.bias_mu)
    return linear


# ---- C51 / Rainbow: a categorical Q-network ----
class CategoricalDuelingHead(nn.Module):
    """Dueling head of a categorical network (Wang et al. 2016, as in Rainbow): the logits of
    action ``a`` at atom ``z`` are ``V(z) + A(z, a) - mean_a A(z, a)``; the output is
    ``(..., n_atoms * n_actions)``, atom-major. With ``noisy`` the two streams are
    :class:`NoisyLinear` layers (``sigma0``).

    Example:
        >>> import torch
        >>> head = CategoricalDuelingHead(8, 3, 5)
        >>> head(torch.zeros(2, 8)).shape
        torch.Size([2, 15])
    """

    def __init__(
        self,
        in_features: int,
        n_actions: int,
        n_atoms: int,
        *,
        noisy: bool = False,
        sigma0: float = 0.5,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        self.n_actions, self.n_atoms = int(n_actions), int(n_atoms)
        if noisy:
            self.value = NoisyLinear(in_features, n_atoms, sigma0, generator=generator)
            self.advantage = NoisyLinear(
                in_features, n_atoms * n_actions, sigma0, generator=generator
            )
        else:
            self.value = nn.Linear(in_features, n_atoms)
            self.advantage = nn.Linear(in_features, n_atoms * n_actions)
            if generator is not None:
                _default_init(self.value, generator)
                _default_init(self.advantage, generator)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        value = self.value(features).unsqueeze(-1)  # (..., Z, 1)
        advantage = self.advantage(features).unflatten(-1, (self.n_atoms, self.n_actions))
        logits = value + advantage - advantage.mean(dim=-1, keepdim=True)
        return logits.flatten(-2)


class CategoricalExpectation(nn.Module):
    """The expected value per action of categorical logits ``(..., n_atoms * n_actions)``
    (atom-major) on the support ``linspace(v_min, v_max, n_atoms)``: ``sum_i softmax_i z_i``.
    Appended to a categorical network, it makes a Q-network (saved policies).

    Example:
        >>> import torch
        >>> head = CategoricalExpectation(2, 0.0, 1.0)
        >>> head(torch.tensor([[0.0, 0.0, 0.0, 100.0]])).tolist()  # action 1: all mass at 1
        [[0.5, 1.0]]
    """

    def __init__(self, n_atoms: int, v_min: float, v_max: float) -> None:
        super().__init__()
        self.n_atoms, self.v_min, self.v_max = check_support(
            "CategoricalExpectation", n_atoms, v_min, v_max
        )
        self.register_buffer("support", torch.linspace(self.v_min, self.v_max, self.n_atoms))

    def extra_repr(self) -> str:
        return f"n_atoms={self.n_atoms}, v_min={self.v_min}, v_max={self.v_max}"

    def forward(self, logits: torch.Tensor) -> torch.Tensor:
        probs = torch.softmax(logits.unflatten(-1, (self.n_atoms, -1)), dim=-2)
        return (probs * self.support.unsqueeze(-1)).sum(dim=-2)


def categorical_network(
    state_space: Any,
    action_space: Any,
    hidden: Sequence[int] = (64, 64),
    *,
    n_atoms: int = 51,
    dueling: bool = False,
    noisy: bool = False,
    sigma0: float = 0.5,
    seed: int | np.random.SeedSequence | None = 0,
    cnn: str | None = None,
) -> nn.Sequential:
    """A ReLU MLP from observations of a ``Box`` space to the logits of ``n_atoms`` atoms per
    action of a ``Discrete`` space, ``(..., n_atoms * n_actions)`` atom-major (what
    :class:`~rlkit.C51Learner` and :class:`~rlkit.RainbowLearner` read). ``dueling``: a
    :class:`CategoricalDuelingHead`; ``noisy``: its streams (or the output layer) are
    :class:`NoisyLinear` layers with ``sigma0``; the hidden layers stay deterministic, as in
    Tianshou's CartPole Rainbow (Dopamine's Atari Rainbow makes every dense layer noisy).

    Other observation spaces (``Discrete``, ``MultiBinary``, ``MultiDiscrete``, ``Dict``,
    ``Tuple``) go through their encoder first, as in ``q_network``
    (``rlkit/approximators/encoders``; ``cnn`` names the CNN body of image keys; None:
    chosen by their frame size); such a network takes batches only. An encoder of ``Box``
    keys has no parameters, so a ``Dict`` of them gives the weights of the flattened
    observation's network.
    With ``cnn`` (``"nature"`` or ``"minatar"``) a ``Box`` of ``uint8`` images ``(C, H, W)``
    goes through that CNN body (``rlkit/approximators/cnn.py``, pixels scaled inside, the
    learners hand it ``uint8`` batches), then the layers above; the body and the rest are
    initialised from two children of ``seed``, as in ``q_network(..., cnn=...)``.

    Example:
        >>> import gymnasium as gym, torch
        >>> net = categorical_network(gym.spaces.Box(-1, 1, (4,)), gym.spaces.Discrete(2),
        ...                           (16,), n_atoms=11, seed=0)
        >>> net(torch.zeros(4)).shape
        torch.Size([22])
        >>> import numpy as np
        >>> minatar = gym.spaces.Box(0, 1, (4, 10, 10), np.uint8)
        >>> cnn = categorical_network(minatar, gym.spaces.Discrete(3), (128,), n_atoms=51,
        ...                           dueling=True, noisy=True, cnn="minatar", seed=0)
        >>> cnn(torch.zeros(2, 4, 10, 10, dtype=torch.uint8)).shape
        torch.Size([2, 153])
    """
    import gymnasium as gym

    owner = "categorical_network"
    if not isinstance(action_space, gym.spaces.Discrete):
        raise TypeError(f"{owner}: action_space must be gymnasium Discrete, got {action_space}")
    n_atoms = check_support(owner, n_atoms, 0.0, 1.0)[0]
    n_actions = int(action_space.n)
    image = cnn is not None and isinstance(state_space, gym.spaces.Box) and state_space.shape != ()
    if image:  # the CNN body from the seed's first child, the rest from its second
        encoder, seed = _image_body(owner, state_space, cnn, seed)
    else:
        encoder = observation_encoder(owner, state_space, cnn, seed)
    generator = torch_generator(seed)
    if encoder is not None:
        sizes = [int(encoder.n_features), *(int(h) for h in hidden)]
        layers: list[nn.Module] = [encoder]
    else:
        shape = state_space.shape
        sizes = [int(np.prod(shape)), *(int(h) for h in hidden)]
        layers = [nn.Flatten(start_dim=-len(shape))] if len(shape) > 1 else []
    if len(sizes) > 1:  # the deterministic hidden layers (torch's init, their own seed)
        body = mlp(sizes[0], sizes[-1], tuple(sizes[1:-1]), seed=_child_seed(generator))
        layers += [*body, nn.ReLU()]
    if dueling:
        layers.append(
            CategoricalDuelingHead(
                sizes[-1], n_actions, n_atoms, noisy=noisy, sigma0=sigma0, generator=generator
            )
        )
    elif noisy:
        layers.append(NoisyLinear(sizes[-1], n_atoms * n_actions, sigma0, generator=generator))
    else:
        out = nn.Linear(sizes[-1], n_atoms * n_actions)
        _default_init(out, generator)
        layers.append(out)
    net = nn.Sequential(*layers)
    if image:
        net.pixel_input = True  # the learners hand it uint8 observations as they are
    return net


def _image_body(
    owner: str, state_space: Any, cnn: str, seed: int | np.random.SeedSequence | None
) -> tuple[nn.Module, np.random.SeedSequence]:
    """:func:`~rlkit.approximators.neural.image_body` (seeded as ``q_network(..., cnn=...)``
    seeds its body), refused naming ``owner`` on non-image observations."""
    from .cnn import is_image_space

    if not is_image_space(state_space):
        raise ValueError(
            f"{owner}: cnn={cnn!r} needs image observations (a uint8 Box of shape "
            f"(C, H, W), channels first), got {state_space}; leave cnn=None for an MLP"
        )
    return image_body(state_space, cnn, seed)


def observation_encoder(
    owner: str, state_space: Any, cnn: str | None, seed: int | np.random.SeedSequence | None
) -> nn.Module | None:
    """None for observations of a ``Box`` space of at least one dimension (flattened by the
    network, as always), else the encoder of ``state_space`` that ``q_network`` puts first
    (:func:`rlkit.encoder_for`: ``Discrete`` one-hot, ``Dict``/``Tuple`` concatenated, image
    keys through the ``cnn`` body, or the one their frame size fits when None); a space no
    encoder takes is a ``TypeError`` naming ``owner``.

    Example:
        >>> import gymnasium as gym
        >>> observation_encoder("iqn_network", gym.spaces.Box(-1, 1, (3,)), None, 0) is None
        True
        >>> observation_encoder("iqn_network", gym.spaces.Discrete(5), None, 0).n_features
        5
    """
    import gymnasium as gym

    from .encoders import encoder_for

    if isinstance(state_space, gym.spaces.Box) and state_space.shape != ():
        return None
    try:
        return encoder_for(state_space, cnn=cnn, seed=seed)
    except TypeError as error:
        raise TypeError(f"{owner}: {error}") from None


def _child_seed(generator: torch.Generator) -> int:
    """A seed drawn from ``generator`` (for a part of a network with its own generator)."""
    return int(torch.randint(2**62, (1,), generator=generator))


# ---- IQN: the implicit quantile network ----
class IQNNetwork(nn.Module):
    """IQN's network (Dabney et al. 2018, "Implicit Quantile Networks"): ``Z_tau(s, a) =
    f(psi(s) * phi(tau))_a`` with ``psi`` a ReLU MLP of ``hidden`` layers, ``phi(tau) =
    ReLU(W cos(pi i tau) + b)`` (``i = 0 .. n_cos - 1``) and ``f`` a linear layer to the
    actions (Tianshou's layout; Dopamine's Atari network has one more dense layer in ``f``,
    whose cost grows with the number of fractions).

    :meth:`quantiles` evaluates it at given fractions ``(B, N)`` -> ``(B, N, n_actions)``.
    Called on observations alone it gives the quantiles at ``n_acting`` fixed fractions
    ``(2k + 1) / 2 n_acting``, flattened quantile-major ``(..., n_acting * n_actions)``: their
    mean per action is the Q-value the learner acts on (a midpoint estimate of the expectation,
    deterministic; Dopamine averages ``K = 32`` random fractions instead).

    Example:
        >>> import torch
        >>> net = IQNNetwork(4, 2, (16,), n_cos=8, n_acting=4)
        >>> net(torch.zeros(4)).shape, net.quantiles(torch.zeros(3, 4), torch.rand(3, 5)).shape
        (torch.Size([8]), torch.Size([3, 5, 2]))
    """

    def __init__(
        self,
        in_features: int,
        n_actions: int,
        hidden: Sequence[int] = (64, 64),
        *,
        n_cos: int = 64,
        n_acting: int = 32,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        owner = "IQNNetwork"
        self.in_features = positive_int(owner, "in_features", in_features)
        self.n_actions = positive_int(owner, "n_actions", n_actions)
        self.hidden = tuple(positive_int(owner, "hidden", h) for h in hidden)
        if not self.hidden:
            raise ValueError(f"{owner}: hidden needs at least one layer (the embedding's width)")
        self.n_cos = positive_int(owner, "n_cos", n_cos)
        self.n_acting = positive_int(owner, "n_acting", n_acting)
        width = self.hidden[-1]
        seed = 0 if generator is None else _child_seed(generator)
        self.psi = nn.Sequential(*mlp(self.in_features, width, self.hidden[:-1], seed=seed),
                                 nn.ReLU())
        self.phi = nn.Linear(self.n_cos, width)
        self.f_out = nn.Linear(width, self.n_actions)
        init = torch_generator(seed + 1)
        for layer in (self.phi, self.f_out):
            _default_init(layer, init)
        self.register_buffer("frequencies", torch.arange(self.n_cos, dtype=torch.float32) * math.pi)
        fractions = (torch.arange(self.n_acting, dtype=torch.float32) + 0.5) / self.n_acting
        self.register_buffer("acting_fractions", fractions)

    def extra_repr(self) -> str:
        return f"n_cos={self.n_cos}, n_acting={self.n_acting}"

    def quantiles(self, obs: torch.Tensor, taus: torch.Tensor) -> torch.Tensor:
        """The return quantiles at fractions ``taus`` ``(B, N)`` of a batch ``obs`` ``(B, d)``:
        ``(B, N, n_actions)``."""
        return self._quantiles_of(obs.flatten(1), taus)

    def _quantiles_of(self, x: torch.Tensor, taus: torch.Tensor) -> torch.Tensor:
        """The quantiles of flat inputs ``x`` ``(B, in_features)``."""
        features = self.psi(x)  # (B, H)
        embedding = torch.relu(self.phi(torch.cos(taus.unsqueeze(-1) * self.frequencies)))
        return self.f_out(features.unsqueeze(1) * embedding)  # (B, N, n_actions)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        single = obs.dim() == 1
        batch = obs.unsqueeze(0) if single else obs.flatten(0, -2) if obs.dim() > 2 else obs
        taus = self.acting_fractions.expand(batch.shape[0], -1)
        out = self.quantiles(batch, taus).flatten(1)  # (B, n_acting * n_actions)
        return out[0] if single else out


class EncodedIQNNetwork(IQNNetwork):
    """An :class:`IQNNetwork` whose observations go through ``encoder`` first (an encoder by
    space, ``rlkit/approximators/encoders``: ``Dict``/``Tuple`` observations as dicts of
    tensors by key, ``Discrete`` ones as indices, ...): ``psi`` reads the encoder's
    ``n_features``. It takes batches only. The MLPs are initialised from ``generator`` as
    the :class:`IQNNetwork` of ``n_features`` inputs is, so an encoder without parameters
    (``Box`` keys) gives the weights of the flattened observation's network.

    Example:
        >>> import gymnasium as gym, torch
        >>> from rlkit.approximators.encoders import encoder_for
        >>> space = gym.spaces.Dict({"a": gym.spaces.Box(-1, 1, (2,)), "k": gym.spaces.Discrete(3)})
        >>> net = EncodedIQNNetwork(encoder_for(space), 2, (8,), n_cos=4, n_acting=4)
        >>> obs = {"a": torch.zeros(5, 2), "k": torch.ones(5)}
        >>> net(obs).shape, net.quantiles(obs, torch.rand(5, 3)).shape
        (torch.Size([5, 8]), torch.Size([5, 3, 2]))
    """

    def __init__(
        self,
        encoder: nn.Module,
        n_actions: int,
        hidden: Sequence[int] = (64, 64),
        *,
        n_cos: int = 64,
        n_acting: int = 32,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__(
            encoder.n_features, n_actions, hidden, n_cos=n_cos, n_acting=n_acting,
            generator=generator,
        )  # fmt: skip
        self.encoder = encoder

    def quantiles(self, obs: Any, taus: torch.Tensor) -> torch.Tensor:
        """The return quantiles at fractions ``taus`` ``(B, N)`` of a batch of observations:
        ``(B, N, n_actions)``."""
        return self._quantiles_of(self.encoder(obs), taus)

    def forward(self, obs: Any) -> torch.Tensor:
        x = self.encoder(obs)  # (B, n_features); a CNN body also takes one image (C, H, W)
        single = x.dim() == 1
        x = x.unsqueeze(0) if single else x
        taus = self.acting_fractions.expand(x.shape[0], -1)
        out = self._quantiles_of(x, taus).flatten(1)  # (B, n_acting * n_actions)
        return out[0] if single else out


def iqn_network(
    state_space: Any,
    action_space: Any,
    hidden: Sequence[int] = (64, 64),
    *,
    n_cos: int = 64,
    n_acting: int = 32,
    seed: int | np.random.SeedSequence | None = 0,
    cnn: str | None = None,
) -> IQNNetwork:
    """An :class:`IQNNetwork` for a ``Box`` observation space (flat observations) and a
    ``Discrete`` action space, initialised from ``seed``. Other observation spaces
    (``Discrete``, ``MultiBinary``, ``MultiDiscrete``, ``Dict``, ``Tuple``) give an
    :class:`EncodedIQNNetwork` whose encoder is ``q_network``'s
    (:func:`observation_encoder`; ``cnn`` names the CNN body of image keys). With ``cnn``, a
    ``Box`` of ``uint8`` images ``(C, H, W)`` gives an :class:`EncodedIQNNetwork` on that CNN
    body (``rlkit/approximators/cnn.py``), the body and the rest initialised from two children
    of ``seed``, as ``categorical_network(..., cnn=...)``.

    Example:
        >>> import gymnasium as gym, torch
        >>> net = iqn_network(gym.spaces.Box(-1, 1, (4,)), gym.spaces.Discrete(2), (16,))
        >>> net(torch.zeros(5, 4)).shape  # 32 acting fractions x 2 actions
        torch.Size([5, 64])
    """
    import gymnasium as gym

    owner = "iqn_network"
    if not isinstance(action_space, gym.spaces.Discrete):
        raise TypeError(f"{owner}: action_space must be gymnasium Discrete, got {action_space}")
    if cnn is not None and isinstance(state_space, gym.spaces.Box) and state_space.shape != ():
        body, head_seed = _image_body(owner, state_space, cnn, seed)
        net = EncodedIQNNetwork(
            body, int(action_space.n), hidden, n_cos=n_cos, n_acting=n_acting,
            generator=torch_generator(head_seed),
        )  # fmt: skip
        net.pixel_input = True  # the learners hand it uint8 observations as they are
        return net
    encoder = observation_encoder(owner, state_space, cnn, seed)
    kwargs = {"n_cos": n_cos, "n_acting": n_acting, "generator": torch_generator(seed)}
    if encoder is not None:
        return EncodedIQNNetwork(encoder, int(action_space.n), hidden, **kwargs)
    if len(state_space.shape) != 1:
        raise TypeError(
            f"{owner}: state_space must be a gymnasium Box of flat observations (or a space an "
            f"encoder takes: Discrete, MultiBinary, MultiDiscrete, Dict, Tuple), got "
            f"{state_space}"
        )
    return IQNNetwork(int(state_space.shape[0]), int(action_space.n), hidden, **kwargs)
