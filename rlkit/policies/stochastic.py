"""``StochasticPolicy``: a policy that acts by sampling an action distribution.

A torch ``model`` maps a batch of observations to the inputs of an action distribution
(:mod:`rlkit.policies.distributions`); the policy samples it with its own ``torch.Generator``.
It works on single environments (one observation) and vector environments (``env.n_envs``
observations). ``Box`` actions are clipped to the space when stepping the environment, but the
unclipped sample is what the trajectory stores (its log-probability is the one learned from),
as Stable-Baselines3 does. Whatever else the policy computed while acting (values,
log-probabilities: ``extra_action_out``) is kept in ``last_extras`` for the trajectory.

``rk.greedy(policy)`` is the deterministic form (the distribution's mode) used for evaluation.

The recording methods of :class:`~rlkit.RolloutTrajectory` for stochastic policies are here:
PreAct writes the state, the unclipped action and the extras; PostAct the reward, the flags and
the final state (for a vector env ``env.final_state``; for a single env ``env.state``, which is
the real final observation after the last step of an episode). A policy that cannot act because
an observation holds nan or inf says which one, from which env and sub-env
(:mod:`rlkit.policies.non_finite`).
"""

from __future__ import annotations

from typing import Any, Union

import gymnasium as gym
import numpy as np
import torch

from ..core.dispatch import PlanStep, greedy, update
from ..core.interfaces import AbstractEnv, AbstractPolicy, AbstractVectorEnv
from ..core.stages import AbstractStage, PostActStage, PreActStage
from ..core.state import get_state, require_keys, set_state
from ..trajectories.rollout import RolloutTrajectory
from .distributions import ActionDistribution, distribution_for
from .non_finite import cannot_act
from .normalized import normalized_batch, normalized_state
from .observations import all_finite, flat_rows, is_structured, observation_tensor, one_row
from .predict import mask_batch, observation_batch, predicted_draw, single_or_batch
from .spaces import check_env_fits

__all__ = ["StochasticPolicy", "DeterministicPolicy", "is_vector_env", "batch_view"]

# methods of this module take single and vector environments alike
AnyEnv = Union[AbstractEnv, AbstractVectorEnv]  # noqa: UP007 - a runtime type for plum


def is_vector_env(env: Any) -> bool:
    """Whether ``env`` is a vector environment (it has ``n_envs`` sub-environments)."""
    return getattr(env, "is_vector", False)


def batch_view(env: Any, name: str) -> Any:
    """``getattr(env, name)`` with a leading env dimension (of 1 for a single env); a
    ``Dict``/``Tuple`` observation as a dict of such arrays."""
    value = getattr(env, name)
    if is_structured(value):
        if is_vector_env(env):
            return dict(enumerate(value)) if isinstance(value, tuple) else value
        return one_row(value)
    value = np.asarray(value)
    return value if is_vector_env(env) else value[None]


class StochasticPolicy(AbstractPolicy):
    """Act by sampling ``dist_class.from_inputs(model(obs), action_space, mask)``.

    Args:
        model: a ``torch.nn.Module`` from a batch of observations to distribution inputs.
        action_space: the (single) environment's action space.
        dist_class: an :class:`ActionDistribution` subclass (default
            ``distribution_for(action_space)``).
        seed: seeds the sampling generator (an int or a ``numpy.random.SeedSequence``).
        device: where the model runs (``"cpu"``, ``"cuda"``). The sampling generator stays on
            the CPU whatever the device: the draws are made there and moved to the model, so a
            seed draws the same numbers on every device (the networks' arithmetic still
            differs between devices in rounding).

    Example:
        >>> import gymnasium as gym, torch, rlkit as rk
        >>> net = torch.nn.Linear(4, 2)
        >>> with torch.no_grad():
        ...     _ = net.weight.zero_(), net.bias.copy_(torch.tensor([0.0, 1.0]))
        >>> policy = rk.StochasticPolicy(net, gym.spaces.Discrete(2), seed=0)
        >>> env = rk.GymEnv("CartPole-v1", seed=0); env.reset()
        >>> policy(env) in (0, 1), rk.greedy(policy)(env)
        (True, 1)
    """

    def __init__(
        self,
        model: torch.nn.Module,
        action_space: Any,
        *,
        dist_class: type[ActionDistribution] | None = None,
        seed: int | np.random.SeedSequence | None = 0,
        device: str | torch.device = "cpu",
    ) -> None:
        if not isinstance(model, torch.nn.Module):
            raise TypeError(
                f"{type(self).__name__}: model must be a torch.nn.Module, got "
                f"{type(model).__name__}"
            )
        self.model = model
        self.action_space = action_space
        self.dist_class = dist_class if dist_class is not None else distribution_for(action_space)
        self.device = torch.device(device)
        self.generator = torch.Generator()
        if isinstance(seed, np.random.SeedSequence):
            seed = int(seed.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
        self.generator.manual_seed(0 if seed is None else int(seed))
        self.last_action: np.ndarray | None = None
        self.last_extras: dict[str, np.ndarray] = {}
        #: the training env's observation normaliser (``rk.VecNormalize``), or None
        self.observation_normalizer: Any = None
        self._clip = isinstance(action_space, gym.spaces.Box)
        self._cast = _narrower_dtype(action_space) if self._clip else None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.dist_class.__name__})"

    # ---- acting ----
    def observation_tensor(self, state: Any) -> Any:
        """A batch of observations as the model takes it: a float32 tensor, or dicts of them
        for a ``Dict``/``Tuple`` observation (:mod:`rlkit.policies.observations`)."""
        space = getattr(self, "state_space", None)
        return observation_tensor(type(self).__name__, state, self.device, space)

    def distribution(self, obs: torch.Tensor, mask: Any = None) -> ActionDistribution:
        """The action distribution for a batch of observations."""
        return self.dist_class.from_inputs(self.model(obs), self.action_space, mask)

    def extra_action_out(
        self, obs: torch.Tensor, dist: ActionDistribution, actions: torch.Tensor
    ) -> dict[str, torch.Tensor]:
        """What to store beside each action (none here; built policies add values and
        log-probabilities)."""
        return {}

    def act(self, env: Any) -> Any:
        vector = is_vector_env(env)
        space = getattr(self, "state_space", None)
        state = normalized_state(self, env, env.state)  # raw obs: rlkit/policies/normalized.py
        obs = self.observation_tensor(state if vector else one_row(state, space))
        mask = env.legal_action_mask
        if mask is not None and not vector:
            mask = np.asarray(mask)[None]
        with torch.no_grad():
            try:
                dist = self.distribution(obs, mask)
                actions = self.choose(dist)
            except (RuntimeError, ValueError) as error:  # torch's "probability tensor ..."
                if all_finite(obs):
                    raise
                raise cannot_act(_owner(self), flat_rows(obs), env, vector) from error
            extras = self.extra_action_out(obs, dist, actions)
        self.last_action = actions.cpu().numpy()
        if self._clip and not np.isfinite(self.last_action).all():  # a Gaussian's nan sample
            raise cannot_act(_owner(self), flat_rows(obs), env, vector)
        self.last_extras = {k: v.detach().cpu().numpy() for k, v in extras.items()}
        if mask is not None:  # learners rebuild the same distribution from the stored mask
            self.last_extras["legal_action_mask"] = np.asarray(mask, dtype=bool)
        return self.env_action(self.last_action, vector)

    def choose(self, dist: ActionDistribution) -> torch.Tensor:
        """Sample (the deterministic form takes the mode)."""
        return dist.sample(self.generator)

    def env_action(self, actions: np.ndarray, vector: bool) -> Any:
        """What the environment receives: Box actions clipped to the space; a single env's
        action without the batch dimension (a Python int for Discrete)."""
        if self._clip:
            actions = np.clip(actions, self.action_space.low, self.action_space.high)
            if self._cast is not None:  # an integer or float16 Box: the env's dtype
                actions = _cast(actions, self._cast)
        if vector:
            return actions
        action = actions[0]
        return action.item() if action.ndim == 0 else action

    # ---- predict: actions for plain numpy observations (SB3's model.predict) ----
    def predict(
        self, obs: Any, deterministic: bool = True, action_masks: Any = None
    ) -> np.ndarray:
        """The actions for one observation or a batch (see :mod:`rlkit.policies.predict`):
        the distribution's mode when ``deterministic``, else a sample drawn with a generator
        of ``predict``'s own (seeded 0; the policy's sampling generator, and so a training
        run, is not changed). ``Box`` actions are clipped to the space, as when acting.
        ``action_masks``: legal actions of a ``Discrete`` space. Needs ``self.state_space``
        (built and loaded policies have it).

        Example:
            >>> import rlkit as rk
            >>> policy = rk.PPO(rk.GymEnv("CartPole-v1", seed=0), seed=0)
            >>> policy.predict([0.0, 0.0, 0.0, 0.0]).shape, policy.predict([[0.0] * 4] * 3).shape
            ((), (3,))
        """
        owner = getattr(type(self), "name", type(self).__name__)
        space = getattr(self, "state_space", None)
        if space is None:
            raise ValueError(f"{owner}.predict: the policy has no state_space (observations)")
        batch, single = observation_batch(owner, obs, space)
        n_actions = getattr(self.action_space, "n", None)
        masks = mask_batch(owner, action_masks, len(batch), n_actions)
        with torch.no_grad():
            obs = self.observation_tensor(normalized_batch(self, batch))
            dist = self.distribution(obs, masks)
            actions = predicted_draw(self, dist, deterministic)
        return single_or_batch(self.env_actions(actions.cpu().numpy()), single)

    def env_actions(self, actions: np.ndarray) -> np.ndarray:
        """A batch of actions as the environment receives them (Box: clipped and cast)."""
        if self._clip:
            actions = np.clip(actions, self.action_space.low, self.action_space.high)
            if self._cast is not None:
                actions = _cast(actions, self._cast)
        return actions

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        return {
            "model": {k: v.detach().clone() for k, v in self.model.state_dict().items()},
            "generator": get_state(self.generator),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        require_keys(type(self).__name__, state, "model", "generator")
        self.model.load_state_dict(state["model"])
        set_state(self.generator, state["generator"])


def _owner(policy: Any) -> str:
    """A built policy's algorithm name (``PPO``), else the class's name."""
    name = getattr(type(policy), "name", None)
    return name if isinstance(name, str) else type(policy).__name__


def _narrower_dtype(space: gym.spaces.Box) -> np.dtype | None:
    """The dtype a ``Box``'s actions must be cast to for the env to accept them (integers, or a
    float narrower than the float32 samples); None when float32 samples fit as they are."""
    dtype = np.dtype(space.dtype)
    if dtype.kind in "iu" or (dtype.kind == "f" and dtype.itemsize < 4):
        return dtype
    return None


def _cast(actions: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return (np.rint(actions) if dtype.kind in "iu" else actions).astype(dtype)


class DeterministicPolicy(AbstractPolicy):
    """The greedy form of a :class:`StochasticPolicy`: acts with the distribution's mode
    (shares the model; stores nothing)."""

    def __init__(self, policy: StochasticPolicy) -> None:
        self.policy = policy

    def __repr__(self) -> str:
        return f"DeterministicPolicy({self.policy!r})"

    def plan(self, env: Any) -> dict[AbstractStage, list[PlanStep]]:
        state_space = getattr(self.policy, "state_space", None)  # built policies know theirs
        if state_space is not None:
            owner = f"rk.greedy({getattr(type(self.policy), 'name', type(self.policy).__name__)})"
            check_env_fits(owner, state_space, self.policy.action_space, env)
        return {}

    def act(self, env: Any) -> Any:
        policy = self.policy
        vector = is_vector_env(env)
        space = getattr(policy, "state_space", None)
        state = normalized_state(policy, env, env.state)  # raw obs: rlkit/policies/normalized.py
        obs = policy.observation_tensor(state if vector else one_row(state, space))
        mask = env.legal_action_mask
        if mask is not None and not vector:
            mask = np.asarray(mask)[None]
        if not all_finite(obs):  # a mode of nan logits is an arbitrary action
            raise cannot_act(f"rk.greedy({_owner(policy)})", flat_rows(obs), env, vector)
        with torch.no_grad():
            actions = policy.distribution(obs, mask).mode()
        return policy.env_action(actions.cpu().numpy(), vector)


# ---- greedy: the distribution's mode ----
@greedy.dispatch
def _(policy: StochasticPolicy, seed: object = None, /):
    return DeterministicPolicy(policy)


# ---- PreAct: record the state, the unclipped action and the extras ----
@update.dispatch
def _(
    trajectory: RolloutTrajectory,
    policy: StochasticPolicy,
    env: AnyEnv,
    stage: PreActStage,
    action: object,
    /,
):
    trajectory.write_action(batch_view(env, "state"), policy.last_action, policy.last_extras)


# ---- PostAct: record the outcome and the next (final) state ----
@update.dispatch
def _(
    trajectory: RolloutTrajectory,
    policy: StochasticPolicy,
    env: AnyEnv,
    stage: PostActStage,
    /,
):
    if is_vector_env(env):
        trajectory.write_outcome(env.reward, env.is_terminated, env.is_truncated, env.final_state)
    else:
        trajectory.write_outcome(
            [env.reward], [env.is_terminated], [env.is_truncated],
            one_row(env.state, getattr(policy, "state_space", None)),
        )  # fmt: skip
