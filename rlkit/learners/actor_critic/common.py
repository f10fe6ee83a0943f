"""What DDPG, TD3 and SAC share: :class:`OffPolicyActorCritic`, the base class ``rk.build_policy``
compiles them onto (``base=``), with several losses each stepped by its own optimizer module
and target networks as ``rk.optimizers.Synchronization`` modules.

Acting (Stable-Baselines3's ``OffPolicyAlgorithm._sample_action``): while fewer than
``learning_starts`` transitions were seen, actions are uniform in the ``Box``; afterwards the
algorithm's :meth:`~OffPolicyActorCritic.explore` gives actions in the scaled space ``[-1, 1]``
(SAC samples its squashed Gaussian; DDPG and TD3 add their action noise and clip), which are
rescaled to the ``Box`` bounds for the environment. The replay
(:class:`~rlkit.CircularArraySARTTrajectory`) stores what the environment received; batches are
scaled back to ``[-1, 1]`` for the losses.

Construction is :class:`~rlkit.learners.built.BuiltPolicy`'s, through its hooks: the seed
gives the generators ``model``, ``sample`` (acting), ``train`` (the losses' noise), ``shuffle``
(warm-up actions and replay sampling) and ``noise`` (the action noise); ``check_config`` wants a
bounded ``Box`` and SB3's off-policy hyperparameters; ``make_optimizer`` makes one optimizer
module per loss (``self.optimizer``, a dict by loss name).

Learning is the off-policy driver's (:mod:`rlkit.learners.drivers.off_policy`), through the
base's protocol: :meth:`~OffPolicyActorCritic.due` counts the transitions (``n_envs`` per
step), restarts the action noise of sub-environments whose episode ended and, every
``train_freq`` steps once more than ``learning_starts`` transitions were seen, says
``gradient_steps`` gradient steps are due; :meth:`~OffPolicyActorCritic.batches` draws each
step's ``batch_size`` transitions uniformly (with replacement); the algorithm's
``update(policy, batch)`` (in its own file, beside its losses) calls
:meth:`~OffPolicyActorCritic.step_loss` for its losses in a fixed order and
:meth:`~OffPolicyActorCritic.sync_targets`; :meth:`~OffPolicyActorCritic.end_round` keeps the
means of what the updates returned as the statistics.

The model (``model_fn``'s result) is an :class:`ActorCriticModel`: ``actor``, ``critic``, the
target copies it has (``actor_target``, ``critic_target``, excluded from the gradients) and,
for SAC, ``log_ent_coef``; ``params_for(loss_name)`` names what each loss's optimizer moves.
Its ``state_dict`` holds them all, so a checkpoint restores the targets and the entropy
coefficient with the networks.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from ...core.checks import (
    ArgumentTypeError,
    check_gamma,
    finite_float,
    non_negative_int,
    positive_int,
)
from ...core.dispatch import PlanStep, greedy, statistics, update
from ...core.interfaces import AbstractPolicy
from ...core.stages import POST_ACT_STAGE, AbstractStage
from ...core.state import (
    generator_state,
    get_state,
    require_keys,
    set_generator_state,
    set_state,
    state_count,
)
from ...optimizers.finite import NonFiniteError
from ...optimizers.gradient import GradientDescent
from ...optimizers.synchronization import Synchronization
from ...policies.action_noise import ActionNoise
from ...policies.agent import Agent
from ...policies.normalized import normalized_batch, normalized_state
from ...policies.observations import is_structured, one_row
from ...policies.predict import mask_batch, observation_batch, single_or_batch
from ...policies.spaces import check_env_fits
from ...policies.stochastic import is_vector_env
from ...schedules import Schedule
from ...trajectories.circular import CircularArraySARTTrajectory
from ...trajectories.her import HER
from ...trajectories.samplers import normalize_batch
from ...trajectories.structured import leading_length, map_leaves
from ..batch import Batch
from ..built import BuiltPolicy, check_algorithm, describe_update
from ..compiled import compiled, plain_tree, refuse_compile
from ..hyperparameters import hidden_sizes, reads_hidden

__all__ = [
    "OffPolicyActorCritic",
    "adam",
    "ActorCriticModel",
    "OFF_POLICY_DEFAULTS",
    "check_continuous_space",
    "scale_action",
    "unscale_action",
    "polyak_pairs",
]

# Stable-Baselines3's OffPolicyAlgorithm defaults
OFF_POLICY_DEFAULTS = {
    "lr": 1e-3,
    "buffer_size": 1_000_000,
    "learning_starts": 100,
    "batch_size": 256,
    "tau": 0.005,
    "gamma": 0.99,
    "train_freq": 1,
    "gradient_steps": 1,
    "hidden": (256, 256),
}

_FIT = (
    "DDPG, TD3 and SAC need a continuous (Box) action space; for {space} use DQN, QRDQN or "
    "BasicDQN (Discrete), or PPO, A2C, VPG or TRPO (any space)"
)


def check_continuous_space(owner: str, space: Any, *, bounded: bool = True) -> gym.spaces.Box:
    """``space`` if it is a ``Box`` with finite bounds; otherwise a ``TypeError`` naming the
    space and the algorithms that fit it (or a ``ValueError`` for unbounded dimensions)."""
    if not isinstance(space, gym.spaces.Box):
        raise TypeError(f"{owner}: got the action space {space}; " + _FIT.format(space=space))
    if bounded and not (np.all(np.isfinite(space.low)) and np.all(np.isfinite(space.high))):
        raise ValueError(
            f"{owner}: the action space {space} has unbounded dimensions (low={space.low}, "
            f"high={space.high}); actions are squashed or clipped to [-1, 1] and rescaled to the "
            f"bounds, so every bound must be finite (wrap the env with "
            f"gymnasium.wrappers.RescaleAction or ClipAction)"
        )
    if bounded and not np.all(space.high > space.low):
        raise ValueError(
            f"{owner}: the action space {space} has dimensions with high <= low (low="
            f"{space.low}, high={space.high}); actions are rescaled from [-1, 1] to the bounds, "
            f"so every dimension needs low < high"
        )
    return space


def scale_action(space: gym.spaces.Box, action: Any) -> Any:
    """Actions in the ``Box`` bounds -> the scaled space ``[-1, 1]`` (SB3's ``scale_action``)."""
    low, high = space.low, space.high
    return 2.0 * ((action - low) / (high - low)) - 1.0


def unscale_action(space: gym.spaces.Box, scaled: Any) -> Any:
    """``[-1, 1]`` -> the ``Box`` bounds (SB3's ``unscale_action``)."""
    low, high = space.low, space.high
    return low + 0.5 * (scaled + 1.0) * (high - low)


# ---- the model ----


class ActorCriticModel(nn.Module):
    """``actor``, ``critic``, their targets where the algorithm has them, and ``log_ent_coef``
    (SAC's learned entropy coefficient) or None. ``forward(obs)`` is the deterministic action
    in ``[-1, 1]`` (``deterministic_fn(actor_output)`` turns the actor's output into it).

    Example:
        >>> import torch
        >>> m = ActorCriticModel(torch.nn.Linear(2, 1), torch.nn.Linear(3, 1),
        ...                      actor_target=True, critic_target=False)
        >>> m.params_for("actor") == list(m.actor.parameters()), len(polyak_pairs(m))
        (True, 1)
    """

    def __init__(
        self,
        actor: nn.Module,
        critic: nn.Module,
        *,
        actor_target: bool,
        critic_target: bool,
        log_ent_coef: float | None = None,
        deterministic_fn: Any = None,
    ) -> None:
        super().__init__()
        self.actor = actor
        self.critic = critic
        self.actor_target = _frozen_copy(actor) if actor_target else None
        self.critic_target = _frozen_copy(critic) if critic_target else None
        self.log_ent_coef = (
            None if log_ent_coef is None else nn.Parameter(torch.tensor([float(log_ent_coef)]))
        )
        self.deterministic_fn = deterministic_fn

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        out = self.actor(obs)
        return out if self.deterministic_fn is None else self.deterministic_fn(out)

    def params_for(self, loss_name: str) -> list[nn.Parameter]:
        """The parameters the optimizer of the loss ``loss_name`` moves."""
        if loss_name == "actor":
            return list(self.actor.parameters())
        if loss_name == "critic":
            return list(self.critic.parameters())
        if loss_name == "ent_coef" and self.log_ent_coef is not None:
            return [self.log_ent_coef]
        raise KeyError(f"ActorCriticModel: no parameters for a loss named {loss_name!r}")


def _frozen_copy(module: nn.Module) -> nn.Module:
    target = copy.deepcopy(module)
    for p in target.parameters():
        p.requires_grad_(False)
    return target


def _other_parameters(
    model: nn.Module, params: dict[str, list[nn.Parameter]]
) -> dict[str, list[nn.Parameter]]:
    """For each loss, the trainable parameters its optimizer does not move: they are frozen
    while the loss is back-propagated (the actor's loss goes through the critic, whose weight
    gradients Stable-Baselines3 computes and throws away)."""
    trainable = [p for p in model.parameters() if p.requires_grad]
    out = {}
    for name, own in params.items():
        ids = {id(p) for p in own}
        out[name] = [p for p in trainable if id(p) not in ids]
    return out


def polyak_pairs(model: ActorCriticModel) -> list[tuple[str, nn.Module, nn.Module]]:
    """``(name, target, source)`` of each target network of ``model``."""
    pairs = []
    if model.critic_target is not None:
        pairs.append(("critic_target", model.critic_target, model.critic))
    if model.actor_target is not None:
        pairs.append(("actor_target", model.actor_target, model.actor))
    return pairs


# ---- the policy ----


class OffPolicyActorCritic(BuiltPolicy):
    """Base of the built DDPG, TD3 and SAC policies (see the module docstring).

    ``Policy(env, seed=0, **config)``: ``config`` overrides the class's ``defaults``;
    ``Policy.agent(env, seed=0, **config)`` pairs a new policy with its replay
    (``buffer_size`` transitions). Subclasses define :meth:`explore`.
    """

    name = "OffPolicyActorCritic"

    #: the generators derived from the seed, in this order: the networks' initialisation,
    #: acting (``generator``), the losses' noise (``train_generator``), the warm-up actions and
    #: the replay sampling (``rng``), the action noise
    seed_names = ("model", "sample", "train", "shuffle", "noise")

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # BuiltPolicy's arguments
        super().__init__(*args, **kwargs)
        owner = type(self).name
        self.dist_class = None  # the algorithm's explore() acts, not a distribution class
        self.n_actions = int(np.prod(self.action_space.shape))
        self.train_generator = torch.Generator().manual_seed(_int(self.seeds["train"]))
        noise = self.config.get("action_noise")
        if noise is not None:
            if not isinstance(noise, ActionNoise):
                raise TypeError(
                    f"{owner}: action_noise must be an rk.GaussianActionNoise, "
                    f"rk.OrnsteinUhlenbeckActionNoise (an ActionNoise) or None, got {noise!r}"
                )
            _check_noise_size(owner, noise, self.n_actions)
            noise.seed(self.seeds["noise"])
        self.noise = noise
        self.params = {name: self.model.params_for(name) for name in self.optimizer}
        self.others = _other_parameters(self.model, self.params)
        tau = self.config["tau"]
        self.targets = {
            name: Synchronization(source, tau=tau, keep_deltas=False)
            for name, _, source in polyak_pairs(self.model)
        }
        self.target_modules = {name: target for name, target, _ in polyak_pairs(self.model)}
        self.steps = 0  # environment (vector) steps
        #: the actor that acts (compiled when compile=True; it shares the model's parameters)
        self.acting_actor = compiled(self.model.actor, self.compile_mode)
        # transitions (SB3's num_timesteps), updates (rounds of gradient steps) and
        # gradient_steps (SB3's _n_updates) are counted by BuiltPolicy

    # ---- construction hooks (BuiltPolicy.__init__ calls them) ----
    def check_config(self, owner: str, action_space: Any, env: Any) -> None:
        """A bounded ``Box`` action space and SB3's off-policy hyperparameters."""
        check_continuous_space(owner, action_space)
        c = self.config
        check_gamma(owner, c["gamma"])
        finite_float(owner, "tau", c["tau"], low=0, high=1, low_open=True)
        positive_int(owner, "batch_size", c["batch_size"])
        positive_int(owner, "buffer_size", c["buffer_size"])
        non_negative_int(owner, "learning_starts", c["learning_starts"])
        positive_int(owner, "train_freq", c["train_freq"])
        positive_int(owner, "gradient_steps", c["gradient_steps"])
        if isinstance(c["lr"], Schedule):
            raise ArgumentTypeError(
                f"{owner}: lr cannot be a Schedule (a constant learning rate), got {c['lr']!r}"
            )
        finite_float(owner, "lr", c["lr"], low=0, low_open=True)
        if reads_hidden(type(self).model_fn):  # a user's model gives hidden its own meaning
            hidden_sizes(owner, c["hidden"])

    def check_compilable(self, owner: str) -> None:
        """Refuse ``compile=True`` unless each loss's optimizer only takes gradient steps."""
        for name, tree in self.optimizer.items():
            if not plain_tree(tree):
                refuse_compile(owner, f"the optimizer of its {name} loss is not a gradient step")

    def distribution_class(self, action_space: Any) -> None:
        """None: the algorithm's :meth:`explore` acts (no action distribution class)."""
        return None

    def check_model(self, owner: str, model: Any) -> None:
        """Refuse what ``model_fn`` returned unless it is an :class:`ActorCriticModel`."""
        if not isinstance(model, ActorCriticModel):
            raise TypeError(f"{owner}: model_fn must return an ActorCriticModel, got {model!r}")

    def make_optimizer(self, owner: str) -> dict[str, Any]:
        """The optimizer module of each loss (``optimizer`` and ``loss_fn`` are dicts with the
        same names): a module given as such is copied, a callable ``config -> module`` called."""
        losses = type(self).loss_fn
        optimizers = type(self).optimizer
        if not isinstance(losses, Mapping) or not isinstance(optimizers, Mapping):
            raise TypeError(f"{owner}: loss_fn and optimizer must be dicts with the same names")
        if list(losses) != list(optimizers):
            raise TypeError(
                f"{owner}: loss_fn names {list(losses)} and optimizer names {list(optimizers)} "
                f"must be the same"
            )
        made = {}
        for name, spec in optimizers.items():
            if callable(getattr(spec, "step", None)):
                made[name] = copy.deepcopy(spec)
            elif callable(spec):
                made[name] = spec(self.config)
            else:
                raise TypeError(
                    f"{owner}: optimizer[{name!r}] must be an optimizer module or a callable "
                    f"config -> one, got {spec!r}"
                )
        return made

    @property
    def replay_batch_size(self) -> int:
        """The transitions drawn from the replay per gradient step (``batch_size``): the
        ``Agent`` refuses a replay that holds fewer (``rlkit/policies/agent.py``)."""
        return int(self.config["batch_size"])

    @property
    def optimizers(self) -> dict[str, Any]:
        """The optimizer module of each loss, by loss name (``self.optimizer``)."""
        return self.optimizer

    def __repr__(self) -> str:
        return f"{type(self).name}({self.action_space})"

    @classmethod
    def agent(cls, env: Any, *, seed: int = 0, her: HER | None = None, **config: Any) -> Agent:
        """A new policy for ``env`` and the replay it learns from, as an ``rk.Agent``;
        ``her=rk.HER(strategy, n_sampled_goal)``: its batches are drawn by a HER sampler of
        that strategy and ratio (``batch_size`` transitions, seeded from ``seed``) relabelling
        goals with ``env``'s ``compute_reward`` (docs/how-to/observations.md)."""
        if her is not None and not isinstance(her, HER):
            raise ArgumentTypeError(
                f"{cls.name}: her must be None or an rk.HER(strategy, n_sampled_goal), got "
                f"{her!r}"
            )
        policy = cls(env, seed=seed, **config)
        replay = CircularArraySARTTrajectory(
            policy.config["buffer_size"], env.state_space, env.action_space
        )
        if her is not None:  # its own generator: a child of the replay-sampling seed
            her_seed = policy.seeds["shuffle"].spawn(1)[0]
            policy.her = her.configured(
                batch_size=policy.config["batch_size"], seed=her_seed, env=env
            )
        return Agent(policy, replay)

    #: the HER sampler that draws the replay batches (``agent(env, her=...)``), else None
    her: HER | None = None

    # ---- acting ----
    def explore(self, obs: torch.Tensor) -> torch.Tensor:
        """Exploratory actions in ``[-1, 1]`` for a batch of observations."""
        raise NotImplementedError

    def act(self, env: Any) -> Any:
        vector = is_vector_env(env)
        state = normalized_state(self, env, env.state)  # raw obs: rlkit/policies/normalized.py
        if is_structured(state):  # a Dict/Tuple observation: tensors by key
            n = leading_length(state) if vector else 1
            obs = self.observation_tensor(state if vector else one_row(state, self.state_space))
        else:
            state = np.asarray(state)
            n = state.shape[0] if vector else 1
            obs = None
        if self.transitions < self.config["learning_starts"]:
            scaled = self.rng.uniform(-1.0, 1.0, size=(n, self.n_actions))
        else:
            if obs is None:
                obs = torch.as_tensor(state if vector else state[None], dtype=torch.float32)
                obs = obs.to(self.device)
            with torch.no_grad():
                scaled = self.explore(obs).cpu().numpy().astype(np.float64)
        return self._env_action(scaled, vector)

    #: whether ``predict(deterministic=False)`` samples (SAC's squashed Gaussian); DDPG's and
    #: TD3's stochastic predict is the deterministic action, as in SB3 (their action noise is
    #: a training device, not part of the policy)
    samples_in_predict = False

    def predict(self, obs: Any, deterministic: bool = True, action_masks: Any = None) -> np.ndarray:
        """The actions for one observation or a batch (see :mod:`rlkit.policies.predict`):
        ``model(obs)`` (the deterministic action in ``[-1, 1]``) rescaled to the ``Box`` and
        clipped, as ``rk.greedy(policy)`` acts; with ``deterministic=False`` SAC samples its
        squashed Gaussian (with a generator of ``predict``'s own). Warm-up (uniform actions
        before ``learning_starts``) is a training device and not applied. ``action_masks``
        must be None (a ``Box`` has no legal-action mask).

        Example:
            >>> import rlkit as rk
            >>> policy = rk.TD3(rk.GymEnv("Pendulum-v1", seed=0), seed=0)
            >>> policy.predict([1.0, 0.0, 0.0]).shape, policy.predict([[1.0, 0.0, 0.0]]).shape
            ((1,), (1, 1))
        """
        owner = type(self).name
        batch, single = observation_batch(owner, obs, self.state_space)
        mask_batch(owner, action_masks, len(batch), None)
        batch = normalized_batch(self, batch)  # rk.VecNormalize's statistics, frozen
        obs_t = (
            self.observation_tensor(batch)  # a Dict/Tuple observation: tensors by key
            if isinstance(batch, dict)
            else torch.as_tensor(batch, dtype=torch.float32, device=self.device)
        )
        with torch.no_grad():
            if deterministic or not self.samples_in_predict:
                scaled = self.model(obs_t)
            else:
                generator = self.__dict__.get("_predict_generator")
                if generator is None:
                    generator = self._predict_generator = torch.Generator().manual_seed(0)
                scaled = self.sample_scaled(obs_t, generator)
        space = self.action_space
        scaled = scaled.cpu().numpy().astype(np.float64).reshape(-1, *space.shape)
        actions = np.clip(unscale_action(space, scaled).astype(space.dtype), space.low, space.high)
        return single_or_batch(actions, single)

    def sample_scaled(self, obs: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """A stochastic action in ``[-1, 1]`` drawn with ``generator`` (SAC's)."""
        raise NotImplementedError

    def _env_action(self, scaled: np.ndarray, vector: bool) -> Any:
        space = self.action_space
        actions = unscale_action(space, scaled.reshape(-1, *space.shape)).astype(space.dtype)
        actions = np.clip(actions, space.low, space.high)
        self.last_action = actions
        return actions if vector else actions[0]

    # ---- the off-policy driver's protocol (rlkit.learners.drivers.off_policy) ----
    def due(self, env: Any) -> int:
        """Count the step (``n_envs`` transitions), restart the action noise of the
        sub-environments whose episode ended, and return the gradient steps due now:
        ``gradient_steps`` every ``train_freq`` steps once more than ``learning_starts``
        transitions were seen, else 0."""
        self.transitions += env.n_envs if is_vector_env(env) else 1
        self.steps += 1
        if self.noise is not None:
            done = np.logical_or(np.atleast_1d(env.is_terminated), np.atleast_1d(env.is_truncated))
            if done.any():
                self.noise.reset(np.flatnonzero(done))
        c = self.config
        if self.steps % c["train_freq"] == 0 and self.transitions > c["learning_starts"]:
            return c["gradient_steps"]
        return 0

    #: batches can be normalised at sample time (``rk.VecNormalize``; the off-policy driver)
    normalizes_replay = True

    def batches(
        self, replay: CircularArraySARTTrajectory, n: int, normalizer: Any = None
    ) -> Iterator[Batch]:
        """``n`` batches of ``batch_size`` transitions drawn uniformly with replacement (SB3's
        ``ReplayBuffer``), each drawn when the driver asks for it; as float tensors, ``action``
        scaled to ``[-1, 1]``, ``terminal`` as 0/1 (a truncated transition bootstraps).
        ``normalizer``: the ``rk.VecNormalize`` env whose current statistics normalise the raw
        transitions (:func:`rlkit.trajectories.samplers.normalize_batch`)."""
        if not len(replay):
            raise ValueError(
                f"{type(self).name}: the replay is empty at a learning step; the trajectory "
                f"records each transition before the policy learns (use an rk.Agent)"
            )
        for _ in range(n):
            yield self._replay_batch(replay, normalizer)

    def _replay_batch(self, replay: CircularArraySARTTrajectory, normalizer: Any = None) -> Batch:
        if self.her is not None:  # relabelled goals (rlkit/trajectories/her.py)
            s = self.her.sample(replay, normalizer=normalizer)
            return self._as_batch(
                s["state"], s["action"], s["reward"], s["terminal"], s["next_state"],
                "the HER batch",
            )  # fmt: skip
        n = len(replay)
        indices = self.rng.integers(n, size=self.config["batch_size"])
        oldest = replay.head - n
        if oldest:
            indices = (indices + oldest) % replay.capacity
        s = {
            "state": replay.state[indices],
            "reward": replay.reward[indices],
            "next_state": replay.next_state[indices],
        }
        s = normalize_batch(s, normalizer)
        return self._as_batch(
            s["state"],
            replay.action[indices],
            s["reward"],
            replay.terminal[indices],
            s["next_state"],
            "the replay batch",
        )

    def offline_batch(self, sample: Mapping[str, Any]) -> Batch:
        """A dataset's sample (the offline driver, ``rlkit/learners/drivers/offline.py``: numpy
        arrays ``state``, ``action`` in the ``Box`` bounds, ``reward``, ``terminal``,
        ``next_state``) as the batch ``update(policy, batch)`` reads: the replay batch's float
        tensors, ``action`` scaled to ``[-1, 1]``. Any off-policy actor-critic learns offline
        through it (SAC and TD3 too, without a conservative term)."""
        return self._as_batch(
            sample["state"],
            sample["action"],
            sample["reward"],
            sample["terminal"],
            sample["next_state"],
            "the dataset's batch",
        )

    def _as_batch(
        self,
        state: np.ndarray,
        action: np.ndarray,
        reward: np.ndarray,
        terminal: np.ndarray,
        next_state: np.ndarray,
        what: str,
    ) -> Batch:
        space = self.action_space
        device = self.device

        def tensor(array: np.ndarray) -> torch.Tensor:
            return torch.as_tensor(np.asarray(array, dtype=np.float32), device=device)

        batch = Batch(
            state=map_leaves(tensor, state),  # a Dict observation: tensors by key
            action=tensor(  # flat, as the networks give them (SB3 flattens Box actions too)
                scale_action(space, action.reshape(-1, *space.shape)).reshape(len(action), -1)
            ),
            reward=tensor(reward),
            terminal=tensor(terminal),
            next_state=map_leaves(tensor, next_state),
        )
        batch.owner = f"{type(self).name}: {what}"
        return batch

    def end_round(self, n: int, means: dict[str, float]) -> None:
        """After ``n`` gradient steps: count the round; the statistics are the means of what
        the updates returned, and the gradient steps so far."""
        self.updates += 1
        self.stats = {**means, "gradient_steps": float(self.gradient_steps)}

    # ---- what update(policy, batch) calls: one loss, one optimizer; the targets ----
    def step_loss(self, name: str, batch: Batch) -> dict[str, float]:
        """One step of the optimizer of loss ``name`` on ``batch``; the loss's diagnostics as
        floats (a loss may return them as tensors, read after the step: a ``float()`` inside a
        compiled loss would split its graph, rlkit/learners/compiled.py)."""
        fn = self.loss_fns[name]  # compiled when compile=True
        info: dict[str, float] = {}

        def fn_loss() -> torch.Tensor:
            out = fn(self, self.model, self.dist_class, batch)
            loss, extra = out if isinstance(out, tuple) else (out, {})
            info.update(extra)
            return loss

        others = self.others[name]
        for p in others:  # no gradients for what this loss's optimizer does not move
            p.requires_grad_(False)
        try:
            result = self.optimizer[name].step(self.params[name], fn_loss)
        except NonFiniteError as error:
            what = "loss" if error.what == "loss" else f"loss's {error.what}"
            raise error.restated(
                f"{type(self).name}: the {name} {what} is {error.value} at gradient step "
                f"{self.gradient_steps} (transition {self.transitions})",
                unchanged=f"the {name} parameters",
            ) from None
        finally:
            for p in others:
                p.requires_grad_(True)
        info[f"{name}_loss"] = result.loss
        return {key: float(value) for key, value in info.items()}

    def sync_targets(self) -> None:
        """Polyak-average every target network towards its source (``tau``)."""
        for name, target in self.target_modules.items():
            self.targets[name].step(target, None)

    # ---- what rk.explain shows under the driver ----
    def plan(self, env: Any) -> dict[AbstractStage, list[PlanStep]]:
        cls = type(self)
        check_env_fits(cls.name, self.state_space, self.action_space, env)
        functions = [  # a loss without an optimizer (SAC's fixed entropy coefficient) is not run
            (f"{name}_loss", fn) for name, fn in cls.loss_fn.items() if name in self.optimizer
        ]
        trees = {**self.optimizer, **self.targets}
        return {POST_ACT_STAGE: describe_update(self, functions, trees)}

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        return {
            "algorithm": type(self).name,
            "model": {k: v.detach().clone() for k, v in self.model.state_dict().items()},
            "optimizers": {k: opt.state_dict() for k, opt in self.optimizer.items()},
            "targets": {k: sync.state_dict() for k, sync in self.targets.items()},
            "generator": self.generator.get_state().clone(),
            "train_generator": self.train_generator.get_state().clone(),
            "rng": generator_state(self.rng),
            "noise": None if self.noise is None else get_state(self.noise),
            "transitions": self.transitions,
            "steps": self.steps,
            "updates": self.updates,
            "gradient_steps": self.gradient_steps,
            **({} if self.her is None else {"her": self.her.state_dict()}),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        owner = type(self).name
        require_keys(owner, state, "model", "optimizers", "targets", "generator", "rng", "noise")
        check_algorithm(owner, state)
        _check_model_state(owner, self.model, state["model"])
        if sorted(state["optimizers"]) != sorted(self.optimizer):
            raise ValueError(
                f"{owner}: checkpoint has optimizers {sorted(state['optimizers'])}, this policy "
                f"has {sorted(self.optimizer)}"
            )
        if (state["noise"] is None) != (self.noise is None):
            raise ValueError(f"{owner}: checkpoint and policy disagree on having action noise")
        if ("her" in state) != (self.her is not None):
            raise ValueError(
                f"{owner}: the checkpoint {'has' if 'her' in state else 'has no'} HER sampler, "
                f"this policy {'has' if self.her is not None else 'has none'} (her=)"
            )
        if self.her is not None:
            self.her.load_state_dict(state["her"])
        self.model.load_state_dict(state["model"])
        for name, opt in self.optimizer.items():
            opt.load_state_dict(state["optimizers"][name])
        for name, sync in self.targets.items():
            sync.load_state_dict(state["targets"][name])
        self.generator.set_state(state["generator"])
        self.train_generator.set_state(state["train_generator"])
        set_generator_state(self.rng, state["rng"])
        if self.noise is not None:
            set_state(self.noise, state["noise"])
        for key in ("transitions", "steps", "updates", "gradient_steps"):
            setattr(self, key, state_count(owner, state, key))


def _check_model_state(owner: str, model: nn.Module, saved: Any) -> None:
    """Refuse, before anything is loaded, a model state whose tensors' names or shapes differ
    from ``model``'s (torch's ``load_state_dict`` would copy the matching ones first), naming
    the differences (e.g. a learned entropy coefficient or CQL multiplier on one side only)."""
    own = model.state_dict()
    if not isinstance(saved, Mapping):
        raise TypeError(f"{owner}: the checkpoint's model state must be a dict, got {saved!r:.80}")
    missing, unexpected = sorted(set(own) - set(saved)), sorted(set(saved) - set(own))
    if missing or unexpected:
        raise ValueError(
            f"{owner}: the checkpoint's model does not match this policy's (missing {missing}, "
            f"unexpected {unexpected}); make the policy with the checkpoint's hyperparameters"
        )
    for key, tensor in own.items():
        shape = tuple(getattr(saved[key], "shape", ()))
        if shape != tuple(tensor.shape):
            raise ValueError(
                f"{owner}: the checkpoint's {key} has shape {shape}, this policy's "
                f"{tuple(tensor.shape)}; make the policy with the checkpoint's hyperparameters"
            )


def _check_noise_size(owner: str, noise: ActionNoise, n_actions: int) -> None:
    """Per-dimension ``sigma`` or ``mean`` of an action noise must have one value per action
    dimension (numpy broadcasting would otherwise act with the wrong number of actions)."""
    for name in ("sigma", "mean"):
        value = np.asarray(getattr(noise, name, 0.0))
        if value.ndim > 0 and value.size != n_actions:
            raise ValueError(
                f"{owner}: action_noise {noise!r} has a {name} of {value.size} values; expected "
                f"one number or one per action dimension ({n_actions})"
            )


def _int(seed: np.random.SeedSequence) -> int:
    return int(seed.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


# ---- what one batch teaches: each algorithm's own update(policy: X, batch: Batch) ----
@update.dispatch
def _(policy: OffPolicyActorCritic, batch: Batch, /):
    raise NotImplementedError(
        f"{type(policy).name}: a policy built on OffPolicyActorCritic needs its own "
        f"update(policy: {type(policy).name}, batch: Batch) stepping its losses (step_loss) and "
        f"targets (sync_targets) in its order, as SAC's and TD3's do"
    )


# ---- greedy: the deterministic actor, rescaled ----
class DeterministicActorPolicy(AbstractPolicy):
    """The greedy form of an :class:`OffPolicyActorCritic`: ``model(obs)`` (no noise, no
    sampling), rescaled to the ``Box`` bounds; shares the model."""

    def __init__(self, policy: OffPolicyActorCritic) -> None:
        self.policy = policy

    def __repr__(self) -> str:
        return f"DeterministicActorPolicy({self.policy!r})"

    def plan(self, env: Any) -> dict[AbstractStage, list[PlanStep]]:
        p = self.policy
        check_env_fits(f"rk.greedy({type(p).name})", p.state_space, p.action_space, env)
        return {}

    def act(self, env: Any) -> Any:
        p = self.policy
        vector = is_vector_env(env)
        state = normalized_state(p, env, env.state)  # raw obs: rlkit/policies/normalized.py
        if is_structured(state):  # a Dict/Tuple observation: tensors by key
            obs = p.observation_tensor(state if vector else one_row(state, p.state_space))
        else:
            state = np.asarray(state)
            obs = torch.as_tensor(state if vector else state[None], dtype=torch.float32)
            obs = obs.to(p.device)
        with torch.no_grad():
            scaled = p.model(obs).cpu().numpy().astype(np.float64)
        space = p.action_space
        actions = unscale_action(space, scaled.reshape(-1, *space.shape)).astype(space.dtype)
        actions = np.clip(actions, space.low, space.high)
        return actions if vector else actions[0]


@greedy.dispatch
def _(policy: OffPolicyActorCritic, seed: object = None, /):
    return DeterministicActorPolicy(policy)


# ---- statistics: the last training call's means ----
@statistics.dispatch
def _(policy: OffPolicyActorCritic, /):
    return {**policy.stats, "transitions": float(policy.transitions)}


def adam(config: dict[str, Any]) -> GradientDescent:
    """Adam with SB3's settings (eps 1e-8) at learning rate ``lr``, fused into one kernel per
    step where torch has one (the same algorithm, faster); the learner reads only the loss, so
    the parameters are not copied to report deltas."""
    return GradientDescent("adam", lr=config["lr"], fused=True, keep_deltas=False)


def mse(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Mean squared error (``F.mse_loss``)."""
    return torch.nn.functional.mse_loss(a, b)
