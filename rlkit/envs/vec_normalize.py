"""``VecNormalize``: a vector env whose observations are normalised by their running mean and
variance and whose rewards are scaled by the running standard deviation of the discounted
return, with Stable-Baselines3's ``VecNormalize`` semantics (docs/how-to/normalization.md).

The statistics are shared by all sub-envs and updated here, in the main process, from the
batch of sub-env observations of each step, whatever the backend of the wrapped env (sync,
subprocess, Ray): every backend gives the same numbers. After each ``act`` (when ``training``):

* ``obs_rms.update(inner.state)`` (the observations the policy acts on next: reset ones where
  an episode just ended, as SB3's auto-reset observations), then ``state`` and ``final_state``
  (the real final observations where an episode ended) are
  ``clip((obs - mean) / sqrt(var + epsilon), -clip_obs, clip_obs)`` as float32;
* ``returns = returns * gamma + reward``; ``ret_rms.update(returns)``; ``reward`` is
  ``clip(reward / sqrt(ret_rms.var + epsilon), -clip_reward, clip_reward)`` (float32 values, as
  SB3's); ``returns`` is zeroed where an episode ended;
* ``original_reward`` (and ``original_state``, ``original_final_state``; their space
  ``original_state_space``) are the wrapped env's unnormalised values: hooks that report
  returns read ``original_reward``, ``rk.DatasetRecorder`` records them all.

``training=False`` freezes the statistics (normalising still applies), as SB3's
``training`` flag. ``Dict`` observations are normalised per key (``norm_obs_keys``, default
every key; each a ``Box``).

A policy built on this env (``rk.PPO(env)``, ``rk.RecurrentPPO.agent(env)``, ...) keeps the
env's :class:`~rlkit.envs.observation_normalizer.ObservationNormalizer` as
``policy.observation_normalizer``: ``policy.predict(raw_obs)``, greedy evaluations on a raw env
(``rk.EvaluationHook``, ``rk.evaluate``: SB3's ``sync_envs_normalization``) and ``rk.save``
use the training statistics, frozen. Learners that learn from replay (DQN family, SAC, TD3,
DDPG, HER) work on it as in SB3: the replay stores the raw transitions
(rlkit/envs/vec_normalize_replay.py) and each sampled batch is normalised with the statistics
as they are at sampling time (:meth:`normalize_obs`, :meth:`normalize_reward`; the off-policy
driver, rlkit/learners/drivers/off_policy.py).

Checkpoints (``state_dict``): the wrapped env's state, the statistics, the return
accumulators and the current arrays: a run killed and resumed continues bit for bit.

Example:
    >>> import rlkit as rk
    >>> env = rk.VecNormalize(rk.VectorGymEnv("CartPole-v1", 4, seed=0), gamma=0.98)
    >>> env.reset(); env.act([0, 1, 0, 1])
    >>> env.state.dtype, env.obs_rms.count, env.original_reward.tolist()
    (dtype('float32'), 8.0001, [1.0, 1.0, 1.0, 1.0])
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np

from ..core.checks import instance_of
from ..core.interfaces import AbstractVectorEnv
from ..core.state import require_keys
from .observation_normalizer import ObservationNormalizer
from .running_mean_std import RunningMeanStd

__all__ = ["VecNormalize"]


class VecNormalize(AbstractVectorEnv):
    """``venv`` with normalised observations and scaled rewards (see the module docstring).

    Args:
        venv: the vector env to wrap (an ``rk.AbstractVectorEnv``, e.g. ``rk.VectorGymEnv``).
        training: update the statistics (False: frozen, e.g. for evaluation).
        norm_obs: normalise the observations (a ``Box`` or ``Dict`` of ``Box`` space).
        norm_reward: scale the rewards by the running std of the discounted return.
        clip_obs: normalised observations are clipped to ``[-clip_obs, clip_obs]`` (> 0).
        clip_reward: scaled rewards are clipped to ``[-clip_reward, clip_reward]`` (> 0).
        gamma: the discount of the running return, in ``[0, 1)`` (the learner's: the zoo
            passes its ``gamma``).
        epsilon: added to the variances (> 0).
        norm_obs_keys: the keys of a ``Dict`` observation to normalise (default: all).

    Example:
        >>> import rlkit as rk
        >>> env = rk.VecNormalize(rk.VectorGymEnv("CartPole-v1", 2, seed=0))
        >>> agent = rk.PPO.agent(env, seed=0, n_steps=16, batch_size=32)
        >>> hook = rk.run(agent, env, rk.StopAfterNSteps(64), rk.TotalRewardPerEpisode())
        >>> agent.policy.observation_normalizer is env.observation_normalizer
        True
        >>> env.close()
    """

    done: Any = None  # plain attributes, kept current in reset/act
    original_reward: Any = None
    normalizes = True  # replay stores raw transitions, normalised at sample time

    def __init__(
        self,
        venv: AbstractVectorEnv,
        *,
        training: bool = True,
        norm_obs: bool = True,
        norm_reward: bool = True,
        clip_obs: float = 10.0,
        clip_reward: float = 10.0,
        gamma: float = 0.99,
        epsilon: float = 1e-8,
        norm_obs_keys: list[str] | None = None,
    ) -> None:
        if not isinstance(venv, AbstractVectorEnv):
            raise TypeError(
                f"VecNormalize: venv must be an rk.AbstractVectorEnv (e.g. "
                f"rk.VectorGymEnv('CartPole-v1', 8)), got {type(venv).__name__}: {venv!r:.80}"
            )
        if isinstance(venv, VecNormalize):
            raise TypeError(f"VecNormalize: {venv!r} is normalised already; wrap it once")
        self.env = venv
        self.n_envs = venv.n_envs
        self.action_space = venv.action_space
        self.training = bool(training)
        self.norm_obs = bool(norm_obs)
        self.norm_reward = bool(norm_reward)
        self.clip_obs = _positive("clip_obs", clip_obs)
        self.clip_reward = _positive("clip_reward", clip_reward)
        self.epsilon = _positive("epsilon", epsilon)
        self.gamma = _discount(gamma)
        self.norm_obs_keys = _obs_keys(venv.state_space, norm_obs_keys) if norm_obs else None
        self.original_state_space = venv.state_space  # what original_state holds
        self.state_space = (
            _normalized_space(venv.state_space, self.norm_obs_keys, self.clip_obs)
            if self.norm_obs
            else venv.state_space
        )
        self.obs_rms: Any = None
        self.observation_normalizer: ObservationNormalizer | None = None
        if self.norm_obs:
            space = venv.state_space
            if self.norm_obs_keys is None:
                self.obs_rms = RunningMeanStd(shape=space.shape)
            else:
                self.obs_rms = {k: RunningMeanStd(shape=space[k].shape) for k in self.norm_obs_keys}
            self.observation_normalizer = ObservationNormalizer(
                self.obs_rms, self.clip_obs, self.epsilon
            )
        self.ret_rms = RunningMeanStd(shape=())
        self.returns = np.zeros(self.n_envs)
        self.needs_reset = True
        self.reward = np.zeros(self.n_envs)
        self.original_reward = np.zeros(self.n_envs)
        self.is_terminated = np.zeros(self.n_envs, bool)
        self.is_truncated = np.zeros(self.n_envs, bool)
        self.done = np.zeros(self.n_envs, bool)
        self.original_state: Any = None
        self.original_final_state: Any = None

    def __repr__(self) -> str:
        return f"VecNormalize({self.env!r})"

    def __getattr__(self, name: str) -> Any:
        """The wrapped env's attributes (``seeds``, ``backend``, ``name``, ...)."""
        if name.startswith("_") or "env" not in self.__dict__:
            raise AttributeError(name)
        return getattr(self.__dict__["env"], name)

    @property
    def legal_action_mask(self) -> np.ndarray | None:
        return self.env.legal_action_mask

    @property
    def final_legal_action_mask(self) -> np.ndarray | None:
        return getattr(self.env, "final_legal_action_mask", None)

    # ---- stepping ----
    def reset(self, seed: Any = None) -> None:
        """Reset every sub-env (and the running returns); the reset observations update the
        observation statistics when training."""
        self.env.reset(seed)
        self.returns = np.zeros(self.n_envs)
        self._observe()
        self.reward = np.zeros(self.n_envs)
        self.original_reward = np.zeros(self.n_envs)
        self.needs_reset = False

    def act(self, actions: Any) -> None:
        """Step the wrapped env, update the statistics (when training), normalise."""
        if self.needs_reset:
            raise RuntimeError(f"{self!r}: call reset() before act()")
        env = self.env
        env.act(actions)
        self._observe()
        reward = np.asarray(env.reward, dtype=np.float64)
        self.original_reward = reward
        if self.training:
            self.returns = self.returns * self.gamma + reward
            self.ret_rms.update(self.returns)
        self.reward = self.normalize_reward(reward)
        self.returns[self.done] = 0.0

    def _observe(self) -> None:
        """The wrapped env's observations and flags, normalised (statistics first)."""
        env = self.env
        self.original_state, self.original_final_state = env.state, env.final_state
        self.is_terminated = np.asarray(env.is_terminated, dtype=bool)
        self.is_truncated = np.asarray(env.is_truncated, dtype=bool)
        self.done = self.is_terminated | self.is_truncated
        if self.training and self.norm_obs:
            if isinstance(self.obs_rms, dict):
                for key, rms in self.obs_rms.items():
                    rms.update(env.state[key])
            else:
                self.obs_rms.update(env.state)
        self.state = self.normalize_obs(env.state)
        self.final_state = self.normalize_obs(env.final_state)

    def normalize_obs(self, obs: Any) -> Any:
        """``obs`` (one or a batch) normalised with the current statistics (not updated)."""
        if self.observation_normalizer is None:
            return obs
        return self.observation_normalizer(obs)

    def normalize_reward(self, reward: Any) -> np.ndarray:
        """``reward`` scaled by the return's running std and clipped (not updated); float32
        values in a float64 array (SB3 casts to float32)."""
        reward = np.asarray(reward, dtype=np.float64)
        if self.norm_reward:
            scale = np.sqrt(self.ret_rms.var + self.epsilon)
            reward = np.clip(reward / scale, -self.clip_reward, self.clip_reward)
        return reward.astype(np.float32).astype(np.float64)

    def close(self) -> None:
        """Close the wrapped env."""
        self.env.close()

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """The wrapped env's state, the statistics, the running returns, the current arrays."""
        return {
            "env": self.env.state_dict(),
            "training": self.training,
            "norm_obs": self.norm_obs,
            "norm_obs_keys": self.norm_obs_keys,
            "obs_rms": _rms_state(self.obs_rms),
            "ret_rms": self.ret_rms.state_dict(),
            "returns": self.returns.copy(),
            "needs_reset": bool(self.needs_reset),
            "state": _copy(self.state),
            "final_state": _copy(self.final_state),
            "original_state": _copy(self.original_state),
            "original_final_state": _copy(self.original_final_state),
            "reward": np.array(self.reward, dtype=np.float64),
            "original_reward": np.array(self.original_reward, dtype=np.float64),
            "is_terminated": np.array(self.is_terminated, dtype=bool),
            "is_truncated": np.array(self.is_truncated, dtype=bool),
        }

    def check_state_dict(self, state: dict[str, Any]) -> None:
        """Raise ``ValueError`` if ``state`` does not fit this env; change nothing."""
        require_keys(
            f"{self!r}", state, "env", "norm_obs", "norm_obs_keys", "obs_rms", "ret_rms",
            "returns", "state",
        )  # fmt: skip
        keys = state["norm_obs_keys"]
        saved = (bool(state["norm_obs"]), None if keys is None else [str(k) for k in keys])
        if saved != (self.norm_obs, self.norm_obs_keys):
            raise ValueError(
                f"{self!r}.load_state_dict: the checkpoint's observation statistics "
                f"({_described(*saved)}) do not fit this env's "
                f"({_described(self.norm_obs, self.norm_obs_keys)})"
            )
        if np.shape(state["returns"]) != (self.n_envs,):
            raise ValueError(
                f"{self!r}.load_state_dict: the checkpoint has {np.shape(state['returns'])} "
                f"running returns, this env {self.n_envs} sub-envs"
            )
        check = getattr(self.env, "check_state_dict", None)
        if callable(check):
            check(state["env"])

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved (the statistics in place: a policy's
        reference to them stays current)."""
        self.check_state_dict(state)
        self.env.load_state_dict(state["env"])
        self.training = bool(state["training"])
        saved = state["obs_rms"]
        if isinstance(self.obs_rms, dict):
            for key, rms in self.obs_rms.items():
                rms.load_state_dict(saved[key])
        elif self.obs_rms is not None:
            self.obs_rms.load_state_dict(saved)
        self.ret_rms.load_state_dict(state["ret_rms"])
        self.returns = np.array(state["returns"], dtype=np.float64)
        self.needs_reset = bool(state["needs_reset"])
        self.state = _copy(state["state"])
        self.final_state = _copy(state["final_state"])
        self.original_state = _copy(state["original_state"])
        self.original_final_state = _copy(state["original_final_state"])
        self.reward = np.array(state["reward"], dtype=np.float64)
        self.original_reward = np.array(state["original_reward"], dtype=np.float64)
        self.is_terminated = np.array(state["is_terminated"], dtype=bool)
        self.is_truncated = np.array(state["is_truncated"], dtype=bool)
        self.done = self.is_terminated | self.is_truncated


# ---- construction checks ----
def _positive(name: str, value: Any) -> float:
    instance_of("VecNormalize", name, value, (int, float), "a positive number")
    if isinstance(value, bool) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"VecNormalize: {name} must be a positive number, got {value!r}")
    return float(value)


def _discount(gamma: Any) -> float:
    instance_of("VecNormalize", "gamma", gamma, (int, float), "a number in [0, 1)")
    if isinstance(gamma, bool) or not 0.0 <= gamma < 1.0:
        raise ValueError(
            f"VecNormalize: gamma (the discount of the running return) must be in [0, 1), "
            f"got {gamma!r}"
        )
    return float(gamma)


def _obs_keys(space: Any, keys: list[str] | None) -> list[str] | None:
    """The keys of a ``Dict`` space to normalise (None for a ``Box``); anything else refused
    naming the space or the key."""
    if isinstance(space, gym.spaces.Box):
        if keys is not None:
            raise ValueError(
                f"VecNormalize: norm_obs_keys={keys!r} is for Dict observation spaces; the "
                f"observations are {space}"
            )
        return None
    if not isinstance(space, gym.spaces.Dict):
        raise ValueError(
            f"VecNormalize: norm_obs=True needs a Box or Dict observation space, got {space}; "
            f"pass norm_obs=False to scale the rewards only"
        )
    keys = list(space.spaces) if keys is None else list(keys)
    for key in keys:
        if key not in space.spaces:
            raise ValueError(
                f"VecNormalize: norm_obs_keys names {key!r}, not a key of the observation "
                f"space (keys {list(space.spaces)})"
            )
        if not isinstance(space.spaces[key], gym.spaces.Box):
            raise ValueError(
                f"VecNormalize: observation key {key!r} is {space.spaces[key]}, not a Box; "
                f"name the Box keys to normalise with norm_obs_keys"
            )
    return keys


def _normalized_space(space: Any, keys: list[str] | None, clip: float) -> Any:
    """The observation space the policy sees: as the wrapped env's, except that an integer
    ``Box`` (an image) normalised becomes a float32 ``Box`` in ``[-clip, clip]`` (as SB3)."""

    def box(sub: gym.spaces.Box) -> gym.spaces.Box:
        if np.issubdtype(sub.dtype, np.floating):
            return sub
        return gym.spaces.Box(-clip, clip, sub.shape, np.float32)

    if isinstance(space, gym.spaces.Box):
        return box(space) if keys is None else space
    if keys is None:
        return space
    return gym.spaces.Dict({k: box(s) if k in keys else s for k, s in space.spaces.items()})


def _rms_state(rms: Any) -> Any:
    if rms is None:
        return None
    if isinstance(rms, dict):
        return {k: v.state_dict() for k, v in rms.items()}
    return rms.state_dict()


def _described(norm_obs: bool, keys: Any) -> str:
    if not norm_obs:
        return "none: norm_obs=False"
    return "one Box" if keys is None else f"Dict keys {list(keys)}"


def _copy(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _copy(v) for k, v in x.items()}
    return None if x is None else np.array(x)


# a replay on this env records the raw transitions (registered with the env's class)
from . import vec_normalize_replay as _replay  # noqa: E402, F401
