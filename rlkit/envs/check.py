"""``rk.check_env``: does a user's own environment work with rlkit? gymnasium's checker
(``gymnasium.utils.env_checker.check_env``) plus rlkit's own contract, in one call.

rlkit's contract (docs/architecture.md, the environments layer):

* spaces it supports: observations ``Box``, ``Discrete``, ``MultiDiscrete``, ``MultiBinary``
  or a ``Dict`` or ``Tuple`` of those; actions ``Discrete``, ``Box`` (finite bounds) or
  ``MultiDiscrete``. The report says which families of learners fit the spaces.
* seeding: ``reset(seed=s)`` and the same actions give the same observations, rewards and
  episode ends (rlkit's runs are reproducible from their seed, kill-and-resume included).
* observations of exactly the observation space's dtype and inside it (the replay buffers and
  networks store and read the space's dtype), finite numeric rewards.

Example:
    >>> import rlkit as rk
    >>> report = rk.check_env("CartPole-v1")
    >>> report.learners
    ('value-based (DQN family)', 'policy-gradient (VPG, A2C, PPO, TRPO, ES)')
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.utils.env_checker import check_env as gymnasium_check_env

__all__ = ["EnvCheckError", "EnvReport", "check_env"]

_OBSERVATIONS = (gym.spaces.Box, gym.spaces.Discrete, gym.spaces.MultiDiscrete,
                 gym.spaces.MultiBinary)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # gymnasium colours its warnings
_ACTIONS = (gym.spaces.Discrete, gym.spaces.Box, gym.spaces.MultiDiscrete)


class EnvCheckError(ValueError):
    """An environment breaks gymnasium's API or rlkit's contract; the message lists every
    problem found.

    Example:
        >>> issubclass(EnvCheckError, ValueError)
        True
    """


@dataclass(frozen=True)
class EnvReport:
    """What :func:`check_env` found: the env, its spaces, the families of rlkit learners that
    fit them, the steps it stepped twice, and gymnasium's warnings (not errors).

    Example:
        >>> EnvReport("MyEnv", "Discrete(3)", "Discrete(2)", ("tabular",), 10, ()).learners
        ('tabular',)
    """

    env: str
    observation_space: str
    action_space: str
    learners: tuple[str, ...]
    steps_checked: int
    warnings: tuple[str, ...]


def check_env(env: Any, *, n_steps: int = 200, seed: int = 0) -> EnvReport:
    """Check ``env`` (a gymnasium id, a ``gymnasium.Env`` or an ``rk.GymEnv``) with gymnasium's
    checker and rlkit's contract (module docstring); ``n_steps`` steps are taken twice from
    ``reset(seed=seed)`` with the same actions to check determinism.

    Returns an :class:`EnvReport`; raises :class:`EnvCheckError` listing every problem. The env
    is reset and stepped, not closed.

    Example:
        >>> import gymnasium as gym, rlkit as rk
        >>> rk.check_env(gym.make("FrozenLake-v1")).learners[0]
        'tabular'
    """
    gym_env = _gymnasium_env(env)
    name = _name(gym_env)
    problems: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            gymnasium_check_env(gym_env.unwrapped, skip_render_check=True, skip_close_check=True)
        except Exception as error:  # noqa: BLE001 - reported with the rest
            problems.append(f"gymnasium's check_env: {type(error).__name__}: {error}")
    problems += _space_problems(gym_env.observation_space, gym_env.action_space)
    steps = 0
    if not problems or not any(p.startswith(("observation space", "action space"))
                               for p in problems):
        steps, found = _run_twice(gym_env, n_steps, seed)
        problems += found
    if problems:
        raise EnvCheckError(
            f"check_env: {name} does not work with rlkit:\n" + "\n".join(f"- {p}" for p in problems)
        )
    return EnvReport(
        name,
        str(gym_env.observation_space),
        str(gym_env.action_space),
        _learners(gym_env.observation_space, gym_env.action_space),
        steps,
        tuple(dict.fromkeys(_ANSI.sub("", str(w.message)) for w in caught)),
    )


def _gymnasium_env(env: Any) -> gym.Env:
    if isinstance(env, str):
        return gym.make(env)
    inner = getattr(env, "env", None)  # rk.GymEnv
    if not isinstance(env, gym.Env) and isinstance(inner, gym.Env):
        return inner
    if not isinstance(env, gym.Env):
        raise TypeError(
            f"check_env: env must be a gymnasium id, a gymnasium.Env or an rk.GymEnv, got "
            f"{type(env).__name__}: {env!r}"
        )
    return env


def _name(env: gym.Env) -> str:
    spec = getattr(env, "spec", None)
    return spec.id if spec is not None else type(env.unwrapped).__name__


def _space_problems(observation: gym.Space, action: gym.Space) -> list[str]:
    problems = []
    if not all(isinstance(part, _OBSERVATIONS) for part in _parts(observation)):
        problems.append(
            f"observation space {observation}: rlkit supports Box, Discrete, MultiDiscrete, "
            f"MultiBinary or a Dict or Tuple of them"
        )
    if not isinstance(action, _ACTIONS):
        problems.append(
            f"action space {action}: rlkit supports Discrete, Box or MultiDiscrete actions"
        )
    elif isinstance(action, gym.spaces.Box) and not (
        np.all(np.isfinite(action.low)) and np.all(np.isfinite(action.high))
    ):
        problems.append(
            f"action space {action}: a Box of actions needs finite bounds (the continuous "
            f"learners scale their actions into them)"
        )
    return problems


def _parts(space: gym.Space) -> list[gym.Space]:
    if isinstance(space, gym.spaces.Dict):
        return list(space.spaces.values())
    if isinstance(space, gym.spaces.Tuple):
        return list(space.spaces)
    return [space]


def _learners(observation: gym.Space, action: gym.Space) -> tuple[str, ...]:
    """The families of rlkit learners whose networks or tables fit these spaces."""
    discrete_obs = all(isinstance(p, gym.spaces.Discrete) for p in _parts(observation))
    found = []
    if discrete_obs and isinstance(action, gym.spaces.Discrete):
        found.append("tabular")
    if isinstance(action, gym.spaces.Discrete):
        found.append("value-based (DQN family)")
    if isinstance(action, (gym.spaces.Discrete, gym.spaces.Box, gym.spaces.MultiDiscrete)):
        found.append("policy-gradient (VPG, A2C, PPO, TRPO, ES)")
    if isinstance(action, gym.spaces.Box):
        found.append("continuous actor-critic (SAC, TD3, DDPG)")
    return tuple(found)


def _run_twice(env: gym.Env, n_steps: int, seed: int) -> tuple[int, list[str]]:
    """Step ``env`` ``n_steps`` times from ``reset(seed=seed)`` twice with the same actions;
    the problems found (dtype, bounds, rewards, determinism)."""
    env.action_space.seed(seed)
    actions = [env.action_space.sample() for _ in range(n_steps)]
    first, problems = _trajectory(env, actions, seed)
    second, _ = _trajectory(env, actions, seed)
    if problems:
        return n_steps, problems
    for (where, a), (_, b) in zip(first, second, strict=False):
        if not _same(a, b):
            problems.append(
                f"not deterministic: reset(seed={seed}) and the same actions gave different "
                f"results at {where} ({a!r} then {b!r}); derive every random number from the "
                f"generator reset(seed=) seeds (self.np_random)"
            )
            break
    return n_steps, problems


def _trajectory(env: gym.Env, actions: list[Any], seed: int) -> tuple[list[Any], list[str]]:
    """``(where, what it returned)`` of each reset and step, and the problems found (it stops
    at the first step with a problem)."""
    obs, _ = env.reset(seed=seed)
    records: list[Any] = [(f"reset(seed={seed})", obs)]
    problems = _observation_problems(env.observation_space, obs, "reset")
    for t, action in enumerate(actions):
        if problems:
            break
        obs, reward, terminated, truncated, _ = env.step(action)
        records.append((f"step {t}", (obs, reward, terminated, truncated)))
        problems += _observation_problems(env.observation_space, obs, f"step {t}")
        if not (np.isscalar(reward) and np.isreal(reward) and np.isfinite(reward)):
            problems.append(f"step {t}: the reward must be a finite number, got {reward!r}")
        if terminated or truncated:
            obs, _ = env.reset()
            records.append((f"the reset after step {t}", obs))
    return records, problems


def _observation_problems(space: gym.Space, obs: Any, where: str) -> list[str]:
    if isinstance(space, gym.spaces.Dict):
        if not isinstance(obs, dict) or set(obs) != set(space.spaces):
            return [f"{where}: the observation must be a dict with keys {sorted(space.spaces)}"]
        return [
            problem
            for key, part in space.spaces.items()
            for problem in _observation_problems(part, obs[key], f"{where}, key {key!r}")
        ]
    if isinstance(space, gym.spaces.Tuple):
        if not isinstance(obs, tuple) or len(obs) != len(space.spaces):
            return [f"{where}: the observation must be a tuple of {len(space.spaces)} values"]
        return [
            problem
            for i, part in enumerate(space.spaces)
            for problem in _observation_problems(part, obs[i], f"{where}, item {i}")
        ]
    dtype = np.asarray(obs).dtype
    if space.dtype is not None and dtype != space.dtype:
        return [
            f"{where}: the observation's dtype is {dtype}, the observation space's "
            f"{space.dtype} (rlkit stores and reads the space's dtype: cast the observation, "
            f"e.g. with gymnasium.wrappers.DtypeObservation)"
        ]
    if not space.contains(obs):
        return [f"{where}: the observation {obs!r} is outside the observation space {space}"]
    return []


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    a, b = np.asarray(a), np.asarray(b)
    try:
        return bool(np.array_equal(a, b, equal_nan=True))
    except TypeError:  # equal_nan needs numbers
        return bool(np.array_equal(a, b))
