"""The LSTM actor-critic of sb3-contrib's ``RecurrentActorCriticPolicy`` (``MlpLstmPolicy``).

Observations (a ``Box`` flattened; images, ``uint8`` ``(C, H, W)``, through a CNN and a
``Linear`` to 512 features, sb3-contrib's ``CnnLstmPolicy``; a ``Dict``, ``Tuple``,
``Discrete``, ``MultiBinary`` or ``MultiDiscrete`` one through the encoder of its space,
rlkit/approximators/encoders, as the PPO family's models take them: sb3-contrib's
``MultiInputLstmPolicy`` with its ``CombinedExtractor``) go through an LSTM
(``lstm_hidden_size`` 256, ``n_lstm_layers`` 1 by
default), then through the policy and value MLPs (``hidden``, default (64, 64), ``activation``
tanh) and the heads. The critic has an LSTM of its own (``enable_critic_lstm=True``, the
default), or reads the actor's LSTM output without back-propagating into it
(``shared_lstm=True``), or neither (both False: a ``Linear`` from the observation to
``lstm_hidden_size`` features), as in sb3-contrib. With ``ortho_init`` (default True) the MLP
layers are orthogonal with gain sqrt(2), the action head 0.01, the value head 1, biases zero; the
LSTMs and the critic's ``Linear`` keep torch's default initialisation (uniform in
``+-1/sqrt(fan)``), as sb3-contrib leaves them; without ``ortho_init`` every layer has torch's
default. All of it is drawn from a local ``torch.Generator``: torch's global random state is
neither read nor changed.

The hidden state of ``n`` environments is one tensor of shape ``(n, n_states, n_lstm_layers,
lstm_hidden_size)``: ``h`` and ``c`` of the actor's LSTM, then of the critic's when it has one
(``n_states`` 4, else 2). :meth:`RecurrentActorCritic.step` acts on one observation per
environment, zeroing the state first where an episode starts (sb3-contrib's rule);
:meth:`RecurrentActorCritic.sequences` replays padded sequences from the state stored at their
first step. ``model(obs)`` and ``model.value(obs)`` are the first step of an episode (a zero
state): what a check of the model's outputs, or an observation without history, sees.

Example:
    >>> import gymnasium as gym, torch
    >>> from rlkit.policies.distributions import Categorical
    >>> net = recurrent_actor_critic_model(gym.spaces.Box(-1, 1, (2,)), gym.spaces.Discrete(2),
    ...                                    Categorical, {"lstm_hidden_size": 8}, 0)
    >>> state = net.initial_state(3)
    >>> logits, values, state = net.step(torch.zeros(3, 2), state, torch.ones(3, dtype=torch.bool))
    >>> logits.shape, values.shape, state.shape
    (torch.Size([3, 2]), torch.Size([3]), torch.Size([3, 4, 1, 8]))
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from ...core.checks import positive_int
from ...policies.distributions import DiagGaussian
from ...trajectories.structured import leading_length, map_leaves
from ..hyperparameters import hidden_sizes, layers_from_hidden
from .models import observation_encoder, observation_size, orthogonal_encoder

__all__ = ["RecurrentActorCritic", "recurrent_actor_critic_model"]

_ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU}
_META = "meta"


class RecurrentActorCritic(nn.Module):
    """LSTM, then MLPs, then heads (see the module docstring).

    Example:
        >>> net = RecurrentActorCritic(4, 2, lstm_hidden_size=16, shared_lstm=True,
        ...                            enable_critic_lstm=False)
        >>> net.n_states, net(torch.zeros(5, 4)).shape
        (2, torch.Size([5, 2]))
    """

    def __init__(
        self,
        n_obs: int,
        n_dist_inputs: int,
        hidden: Sequence[int] = (64, 64),
        *,
        lstm_hidden_size: int = 256,
        n_lstm_layers: int = 1,
        shared_lstm: bool = False,
        enable_critic_lstm: bool = True,
        activation: str = "tanh",
        ortho_init: bool = True,
        gaussian_actions: int = 0,
        log_std_init: float = 0.0,
        seed: int = 0,
        encoder: nn.Module | None = None,
    ) -> None:
        super().__init__()
        owner = "RecurrentActorCritic"
        flags = {"shared_lstm": shared_lstm, "enable_critic_lstm": enable_critic_lstm,
                 "ortho_init": ortho_init}  # fmt: skip
        for name, value in flags.items():
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{owner}: {name} must be True or False, got {value!r}")
        if shared_lstm and enable_critic_lstm:
            raise ValueError(
                f"{owner}: shared_lstm=True and enable_critic_lstm=True both give the critic an "
                f"LSTM; choose one (sb3-contrib's rule): shared_lstm=True with "
                f"enable_critic_lstm=False, or shared_lstm=False"
            )
        if activation not in _ACTIVATIONS:
            raise ValueError(
                f"{owner}: activation must be one of {sorted(_ACTIVATIONS)}, got {activation!r}"
            )
        self.hidden_size = positive_int(owner, "lstm_hidden_size", lstm_hidden_size)
        self.n_layers = positive_int(owner, "n_lstm_layers", n_lstm_layers)
        self.shared_lstm = bool(shared_lstm)
        self.enable_critic_lstm = bool(enable_critic_lstm)
        self.n_states = 4 if self.enable_critic_lstm else 2
        act = _ACTIVATIONS[activation]
        n_head = n_dist_inputs - gaussian_actions if gaussian_actions else n_dist_inputs
        self.lstm_actor = nn.LSTM(n_obs, self.hidden_size, num_layers=self.n_layers, device=_META)
        self.lstm_critic = (
            nn.LSTM(n_obs, self.hidden_size, num_layers=self.n_layers, device=_META)
            if self.enable_critic_lstm
            else None
        )
        self.critic = (
            nn.Linear(n_obs, self.hidden_size, device=_META)
            if not (self.enable_critic_lstm or self.shared_lstm)
            else None
        )
        sizes = [self.hidden_size, *hidden]
        self.mlp_pi = nn.Sequential(*_mlp(sizes, act))
        self.mlp_vf = nn.Sequential(*_mlp(sizes, act))
        self.action_net = nn.Linear(sizes[-1], n_head, device=_META)
        self.value_net = nn.Linear(sizes[-1], 1, device=_META)
        # built on the meta device, initialised below: no global random state is used
        self.to_empty(device="cpu")
        self.log_std = (
            nn.Parameter(torch.full((gaussian_actions,), float(log_std_init)))
            if gaussian_actions
            else None
        )
        # a structured (Dict, Tuple) or Discrete observation's encoder (``n_obs`` its width),
        # shared by the LSTMs (sb3-contrib's shared features extractor); None: a Box, flattened
        self.encoder = encoder
        self._initialise(torch.Generator().manual_seed(int(seed)), ortho_init)

    @torch.no_grad()
    def _initialise(self, generator: torch.Generator, ortho_init: bool) -> None:
        for lstm in (self.lstm_actor, self.lstm_critic):
            if lstm is not None:
                bound = 1.0 / math.sqrt(self.hidden_size)
                for p in lstm.parameters():
                    p.uniform_(-bound, bound, generator=generator)
        linears = [m for m in (*self.mlp_pi, *self.mlp_vf) if isinstance(m, nn.Linear)]
        heads = ((self.action_net, 0.01), (self.value_net, 1.0))
        if ortho_init:
            for layer, gain in [*((m, math.sqrt(2)) for m in linears), *heads]:
                nn.init.orthogonal_(layer.weight, gain=gain, generator=generator)
                layer.bias.zero_()
        else:
            for layer in [*linears, self.action_net, self.value_net]:
                _default_linear_init(layer, generator)
        if self.critic is not None:
            _default_linear_init(self.critic, generator)
        if self.encoder is not None and ortho_init:  # sb3's gain sqrt(2) for the extractor
            orthogonal_encoder(self.encoder, generator)

    # ---- the hidden state ----
    def initial_state(self, n: int, device: Any = None) -> torch.Tensor:
        """The zero hidden state of ``n`` environments, ``(n, n_states, layers, hidden)``."""
        return torch.zeros(n, self.n_states, self.n_layers, self.hidden_size, device=device)

    # ---- acting: one step per environment ----
    def step(
        self, obs: torch.Tensor, state: torch.Tensor, episode_start: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(distribution inputs, values, next state)`` for one observation per environment;
        the state is zeroed first where ``episode_start`` is True."""
        keep = (~episode_start.to(torch.bool)).to(state.dtype).view(-1, 1, 1, 1)
        inputs, values, state = self._run(self.features(obs).unsqueeze(0), state * keep)
        return inputs[0], values[0], state

    def values_after(self, obs: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        """The values of ``obs`` (one per environment) from ``state``, not reset: the value of
        the state an episode was cut in (truncation, the rollout's end), for bootstrapping."""
        return self._run(self.features(obs).unsqueeze(0), state, policy=False)[1][0]

    # ---- learning: padded sequences ----
    def sequences(
        self, obs: torch.Tensor, state: torch.Tensor, episode_start: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(distribution inputs, values)`` of shape ``(n_seq, length, ...)`` for sequences of
        observations ``(n_seq, length, ...)`` that start from ``state`` (``(n_seq, n_states,
        layers, hidden)``, zeroed where ``episode_start`` (``(n_seq,)``) is True) and never
        cross an episode start."""
        keep = (~episode_start.to(torch.bool)).to(state.dtype).view(-1, 1, 1, 1)
        if self.encoder is None:
            x = obs.flatten(2)
        else:  # the encoder takes rows: (n_seq * length, ...) per key, then back
            n_seq, length = next(_leaves(obs)).shape[:2]
            rows = map_leaves(lambda t: t.flatten(0, 1), obs)
            x = self.encoder(rows).reshape(n_seq, length, -1)
        x = x.transpose(0, 1)  # (length, n_seq, features): the LSTM's layout
        inputs, values, _ = self._run(x, state * keep)
        return inputs.transpose(0, 1), values.transpose(0, 1)

    # ---- a state-free step (the first of an episode) ----
    def forward(self, obs: Any) -> torch.Tensor:
        state = self.initial_state(leading_length(obs), next(_leaves(obs)).device)
        return self._run(self.features(obs).unsqueeze(0), state)[0][0]

    def value(self, obs: Any) -> torch.Tensor:
        state = self.initial_state(leading_length(obs), next(_leaves(obs)).device)
        return self.values_after(obs, state)

    def features(self, obs: Any) -> torch.Tensor:
        """The LSTMs' input for a batch of observations ``(n, ...)``: the encoder's features
        ``(n, n_features)``, or a ``Box`` observation flattened."""
        return obs.flatten(1) if self.encoder is None else self.encoder(obs)

    def _run(
        self, x: torch.Tensor, state: torch.Tensor, policy: bool = True
    ) -> tuple[Any, torch.Tensor, torch.Tensor]:
        """``x`` ``(T, n, features)`` from ``state``: distribution inputs ``(T, n, k)`` (None
        without ``policy``), values ``(T, n)`` and the state after the last step."""
        layers = state.permute(1, 2, 0, 3)  # (n_states, layers, n, hidden)
        pi_out, (pi_h, pi_c) = self.lstm_actor(x, (layers[0].contiguous(), layers[1].contiguous()))
        new = [pi_h, pi_c]
        if self.lstm_critic is not None:
            vf_in = (layers[2].contiguous(), layers[3].contiguous())
            vf_out, (vf_h, vf_c) = self.lstm_critic(x, vf_in)
            new += [vf_h, vf_c]
        elif self.shared_lstm:
            vf_out = pi_out.detach()
        else:
            vf_out = self.critic(x)
        values = self.value_net(self.mlp_vf(vf_out)).squeeze(-1)
        inputs = None
        if policy:
            inputs = self.action_net(self.mlp_pi(pi_out))
            if self.log_std is not None:
                inputs = torch.cat([inputs, self.log_std.expand_as(inputs)], dim=-1)
        return inputs, values, torch.stack(new).permute(2, 0, 1, 3)


def _leaves(obs: Any) -> Iterator[torch.Tensor]:
    """The tensors of an observation batch (one, or a dict's, nested)."""
    if isinstance(obs, dict):
        for value in obs.values():
            yield from _leaves(value)
    else:
        yield obs


def _mlp(sizes: Sequence[int], activation: type[nn.Module]) -> list[nn.Module]:
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        layers += [nn.Linear(a, b, device=_META), activation()]
    return layers


def _default_linear_init(layer: nn.Linear, generator: torch.Generator) -> None:
    """torch's default ``Linear`` initialisation (uniform in +-1/sqrt(fan_in)), from
    ``generator``."""
    bound = 1.0 / math.sqrt(layer.in_features)
    layer.weight.uniform_(-bound, bound, generator=generator)
    layer.bias.uniform_(-bound, bound, generator=generator)


@layers_from_hidden
def recurrent_actor_critic_model(
    state_space: Any, action_space: Any, dist_class: type, config: dict, seed: Any
) -> RecurrentActorCritic:
    """``model_fn`` of ``rk.RecurrentPPO``: a :class:`RecurrentActorCritic` sized for the
    spaces, with ``config`` keys ``lstm_hidden_size`` (256), ``n_lstm_layers`` (1),
    ``shared_lstm`` (False), ``enable_critic_lstm`` (True), ``hidden`` ((64, 64)),
    ``activation`` ("tanh"), ``ortho_init`` (True) and ``log_std_init`` (0.0). Observations
    other than a ``Box`` (``Dict``, ``Tuple``, ``Discrete``, ...) go through the encoder of
    their space (``observation_encoder``; image keys inside a ``Dict`` use ``config``'s
    ``cnn``, else the body their frame size fits).

    Example:
        >>> from rlkit.policies.distributions import Categorical
        >>> net = recurrent_actor_critic_model(gym.spaces.Box(-1, 1, (2,)),
        ...                                    gym.spaces.Discrete(2), Categorical, {}, 0)
        >>> net.hidden_size, net.n_states
        (256, 4)
    """
    if isinstance(seed, np.random.SeedSequence):
        seed = int(seed.generate_state(1, dtype=np.uint32)[0] >> 1)
    gaussian = issubclass(dist_class, DiagGaussian)
    n_actions = int(np.prod(action_space.shape)) if isinstance(action_space, gym.spaces.Box) else 0
    owner = "recurrent_actor_critic_model"
    encoder = _image_encoder(owner, state_space, config, seed) or observation_encoder(
        owner, state_space, config, seed
    )
    return RecurrentActorCritic(
        observation_size(owner, state_space) if encoder is None else encoder.n_features,
        dist_class.n_inputs(action_space),
        hidden_sizes("recurrent_actor_critic_model", config.get("hidden", (64, 64))),
        lstm_hidden_size=config.get("lstm_hidden_size", 256),
        n_lstm_layers=config.get("n_lstm_layers", 1),
        shared_lstm=config.get("shared_lstm", False),
        enable_critic_lstm=config.get("enable_critic_lstm", True),
        activation=config.get("activation", "tanh"),
        ortho_init=config.get("ortho_init", True),
        gaussian_actions=n_actions if gaussian else 0,
        log_std_init=config.get("log_std_init", 0.0),
        seed=seed,
        encoder=encoder,
    )


#: sb3-contrib's ``CnnLstmPolicy``: the ``NatureCNN`` extractor's ``features_dim``
IMAGE_LSTM_FEATURES = 512


def _image_encoder(owner: str, space: Any, config: dict, seed: Any) -> nn.Module | None:
    """sb3-contrib's ``CnnLstmPolicy`` extractor for image observations (``uint8`` ``(C, H,
    W)``): the CNN body ``config``'s ``cnn`` names, else the one the frame size fits
    (``rlkit.approximators.cnn.image_cnn``, which refuses frames it cannot take, naming the
    space), then a ``Linear`` to 512 units and a ReLU; None for observations that are not
    images (a ``cnn`` set for those is refused)."""
    from ...approximators.cnn import cnn_for
    from ...approximators.encoders.image import ImageKeyEncoder

    body = cnn_for(owner, space, config.get("cnn"))
    if body is None:
        return None
    return ImageKeyEncoder(space, body, features=IMAGE_LSTM_FEATURES, seed=seed)
