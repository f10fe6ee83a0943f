"""The actor-critic network of Stable-Baselines3's ``MlpPolicy``: separate policy and value
MLPs (64-64, tanh by default), orthogonal initialisation (gain sqrt(2) for hidden layers, 0.01
for the action head, 1 for the value head, zero biases) and, for ``Box`` actions, a
state-independent ``log_std`` parameter (initially 0). Initialised from a local
``torch.Generator``, so torch's global random state is neither read nor changed.

Example:
    >>> import gymnasium as gym, torch
    >>> from rlkit.policies.distributions import Categorical
    >>> net = actor_critic_model(gym.spaces.Box(-1, 1, (4,)), gym.spaces.Discrete(2),
    ...                          Categorical, {}, 0)
    >>> net(torch.zeros(3, 4)).shape, net.value(torch.zeros(3, 4)).shape
    (torch.Size([3, 2]), torch.Size([3]))
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ...policies.distributions import DiagGaussian
from ..hyperparameters import hidden_sizes, layers_from_hidden

__all__ = [
    "ActorCritic",
    "actor_critic_model",
    "observation_size",
    "observation_encoder",
    "orthogonal_encoder",
]

_ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}


def _mlp(sizes: Sequence[int], activation: type[nn.Module]) -> list[nn.Module]:
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        layers += [nn.Linear(a, b, device="meta"), activation()]
    return layers


class ActorCritic(nn.Module):
    """``forward(obs)``: the action distribution's inputs; ``value(obs)``: state values."""

    def __init__(
        self,
        n_obs: int,
        n_dist_inputs: int,
        hidden: Sequence[int] = (64, 64),
        *,
        activation: str = "tanh",
        gaussian_actions: int = 0,
        log_std_init: float = 0.0,
        seed: int = 0,
        encoder: nn.Module | None = None,
    ) -> None:
        super().__init__()
        act = _ACTIVATIONS[activation]
        sizes = [n_obs, *hidden]
        n_head = n_dist_inputs - gaussian_actions if gaussian_actions else n_dist_inputs
        # built on the meta device and initialised below: no global random state is used
        self.pi = nn.Sequential(*_mlp(sizes, act), nn.Linear(sizes[-1], n_head, device="meta"))
        self.vf = nn.Sequential(*_mlp(sizes, act), nn.Linear(sizes[-1], 1, device="meta"))
        self.to_empty(device="cpu")
        self.log_std = (
            nn.Parameter(torch.full((gaussian_actions,), float(log_std_init)))
            if gaussian_actions
            else None
        )
        generator = torch.Generator().manual_seed(int(seed))
        with torch.no_grad():
            for net, head_gain in ((self.pi, 0.01), (self.vf, 1.0)):
                linears = [m for m in net if isinstance(m, nn.Linear)]
                for i, layer in enumerate(linears):
                    gain = head_gain if i == len(linears) - 1 else math.sqrt(2)
                    nn.init.orthogonal_(layer.weight, gain=gain, generator=generator)
                    layer.bias.zero_()
        # a structured (Dict, Tuple) or Discrete observation's encoder, shared by both MLPs
        # (Stable-Baselines3's shared features extractor); None: a Box, flattened
        self.encoder = encoder
        if encoder is not None:
            orthogonal_encoder(encoder, generator)
        self._activation = torch.tanh if activation == "tanh" else torch.relu
        self._linears = {
            name: tuple(m for m in net if isinstance(m, nn.Linear))
            for name, net in (("pi", self.pi), ("vf", self.vf))
        }

    def _mlp_forward(self, name: str, x: torch.Tensor) -> torch.Tensor:
        """The MLP ``name`` by ``F.linear`` and the activation: the same arithmetic as
        calling its ``nn.Sequential``, without the module-call overhead (most of the cost of
        acting, for networks this small). The weights are read at each call, so
        ``torch.func.functional_call`` and ``load_state_dict(assign=True)`` work."""
        linears = self._linears[name]
        last = len(linears) - 1
        for i, m in enumerate(linears):
            x = F.linear(x, m.weight, m.bias)
            if i < last:
                x = self._activation(x)
        return x

    def features(self, obs: Any) -> torch.Tensor:
        """The MLPs' input: the encoder's features, or a ``Box`` observation flattened."""
        return obs.flatten(1) if self.encoder is None else self.encoder(obs)

    def forward(self, obs: Any) -> torch.Tensor:
        out = self._mlp_forward("pi", self.features(obs))
        if self.log_std is None:
            return out
        return torch.cat([out, self.log_std.expand_as(out)], dim=-1)

    def value(self, obs: Any) -> torch.Tensor:
        return self._mlp_forward("vf", self.features(obs)).squeeze(-1)


def orthogonal_encoder(encoder: nn.Module, generator: torch.Generator) -> None:
    """Stable-Baselines3's initialisation of a features extractor: orthogonal weights of gain
    sqrt(2) and zero biases for its convolutions and linear layers (image keys), drawn from
    ``generator`` after the MLPs' (an encoder without parameters draws nothing)."""
    with torch.no_grad():
        for layer in encoder.modules():
            if isinstance(layer, (nn.Conv2d, nn.Linear)):
                nn.init.orthogonal_(layer.weight, gain=math.sqrt(2), generator=generator)
                layer.bias.zero_()


def observation_encoder(owner: str, space: Any, config: dict, seed: Any) -> nn.Module | None:
    """The encoder of observations of ``space`` for an MLP (``rlkit/approximators/encoders``):
    None for a ``Box`` of at least one dimension (flattened by the model, as always), else
    the encoder of a ``Discrete``, ``MultiBinary``, ``MultiDiscrete``, ``Dict`` or ``Tuple``
    space (image keys inside a ``Dict`` use ``config``'s ``cnn``, else the body their frame
    size fits, ``rlkit.approximators.cnn.image_cnn``); a
    space without an encoder is refused naming ``owner``.

    Example:
        >>> import gymnasium as gym
        >>> observation_encoder("PPO", gym.spaces.Box(-1, 1, (4,)), {}, 0) is None
        True
        >>> observation_encoder("PPO", gym.spaces.Discrete(16), {}, 0).n_features
        16
    """
    from ...approximators.encoders import encoder_for

    if isinstance(space, gym.spaces.Box) and space.shape != ():
        return None
    try:
        return encoder_for(space, cnn=config.get("cnn"), seed=seed)
    except TypeError as error:
        raise TypeError(f"{owner}: {error}") from None


def observation_size(owner: str, space: Any) -> int:
    """The input size of an MLP on observations of ``space``: a ``Box`` (of any shape, flattened;
    integer dtypes such as images are fed as floats). Other spaces, and a ``Box`` of shape ``()``,
    are refused naming gymnasium's ``FlattenObservation`` wrapper, which makes a ``Box`` of them
    (``Discrete`` one-hot, ``Dict`` and ``Tuple`` concatenated, a scalar of shape ``(1,)``).

    Example:
        >>> observation_size("PPO", gym.spaces.Box(0, 255, (8, 8, 3)))
        192
    """
    if not isinstance(space, gym.spaces.Box) or space.shape == ():
        raise TypeError(
            f"{owner}: the observation space must be a Box of at least one dimension, got "
            f"{space}; wrap the env with gymnasium.wrappers.FlattenObservation (Discrete becomes "
            f"one-hot, Dict and Tuple are concatenated, a scalar Box gets shape (1,)), e.g. "
            f"rk.GymEnv(FlattenObservation(gymnasium.make(id)))"
        )
    return int(np.prod(space.shape))


@layers_from_hidden
def actor_critic_model(
    state_space: Any, action_space: Any, dist_class: type, config: dict, seed: Any
) -> ActorCritic:
    """``model_fn`` of the policy-gradient learners: an :class:`ActorCritic` sized for the
    spaces, with ``config`` keys ``hidden`` (default (64, 64)), ``activation`` ("tanh") and
    ``log_std_init`` (0.0). For image observations (``uint8`` ``(C, H, W)``),
    Stable-Baselines3's ``CnnPolicy`` network (``rlkit/learners/policy_gradient/cnn_models.py``)
    on ``config``'s ``cnn`` (``"nature"`` or ``"minatar"``; PPO and A2C take it), or, when it
    is None, on the body the frame size fits (``rlkit.approximators.cnn.image_cnn``)."""
    if isinstance(seed, np.random.SeedSequence):
        seed = int(seed.generate_state(1, dtype=np.uint32)[0] >> 1)
    gaussian = issubclass(dist_class, DiagGaussian)
    n_actions = int(np.prod(action_space.shape)) if isinstance(action_space, gym.spaces.Box) else 0
    encoder = observation_encoder("actor_critic_model", state_space, config, seed)
    cnn = None if encoder is not None else _checked_cnn(state_space, config)
    if cnn is not None:
        from .cnn_models import cnn_actor_critic

        return cnn_actor_critic(
            state_space,
            dist_class.n_inputs(action_space),
            {**config, "cnn": cnn},  # the body chosen (config's, or by the frame size)
            seed,
            gaussian_actions=n_actions if gaussian else 0,
            log_std_init=config.get("log_std_init", 0.0),
        )
    n_obs = (
        observation_size("actor_critic_model", state_space)
        if encoder is None
        else encoder.n_features
    )
    activation = config.get("activation", "tanh")
    if activation not in _ACTIVATIONS:
        raise ValueError(
            f"actor_critic_model: activation must be one of {sorted(_ACTIVATIONS)}, got "
            f"{activation!r}"
        )
    return ActorCritic(
        n_obs,
        dist_class.n_inputs(action_space),
        hidden_sizes("actor_critic_model", config.get("hidden", (64, 64))),
        activation=activation,
        gaussian_actions=n_actions if gaussian else 0,
        log_std_init=config.get("log_std_init", 0.0),
        seed=seed,
        encoder=encoder,
    )


def _checked_cnn(state_space: Any, config: dict) -> str | None:
    """The CNN body for an image space (``rlkit/approximators/cnn.py``: ``image_cnn``):
    ``config``'s ``cnn`` (PPO and A2C take it), else the one the frame size fits (the Nature
    CNN for 36x36 or more, MinAtar's below), as Stable-Baselines3's ``CnnPolicy``; None (an
    MLP) for other observations. Refuses an unknown name, frames too small or laid out
    ``(H, W, C)``, and a CNN for observations that are not images."""
    from ...approximators.cnn import cnn_for

    return cnn_for("actor_critic_model", state_space, config.get("cnn"))
