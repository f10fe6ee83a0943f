"""Image environments: Atari through ``ale-py`` and MinAtar through ``minatar``, wrapped the
way DQN-family papers and Stable-Baselines3 train on them. Both give ``uint8`` observations laid
out channels first, ``(C, H, W)`` (see ``rlkit/approximators/cnn.py``).

Atari (:func:`make_atari_env`): ``gym.make(id, frameskip=1)`` (the ALE's own skipping off),
then gymnasium's ``AtariPreprocessing`` (up to 30 no-op actions at reset, frame skip 4 with
the max of the last two frames, grayscale, 84x84), then Stable-Baselines3's ``AtariWrapper``
conventions: an episode ends at each lost life while the game goes on (``EpisodicLife``),
FIRE is pressed at reset in games that need it (``FireReset``), rewards are clipped to their
sign; then gymnasium's ``FrameStackObservation`` (4 frames, the first frame repeated at reset).
The emulator's state is saved in checkpoints (``AleState``).
``ALE/*-v5`` keeps the ALE's sticky actions (``repeat_action_probability=0.25``, Machado et al.
2018) unless given ``repeat_action_probability=0.0`` (the ``NoFrameskip-v4`` setting of the
DQN Nature paper and rl-baselines3-zoo).

MinAtar (:func:`make_minatar_env`): ``MinAtar/<Game>-v1`` (the minimal action set; minatar's
gymnasium registration), its ``(10, 10, C)`` boolean grid transposed to ``(C, 10, 10)``
``uint8`` (``ChannelsFirst``), checkpointable (``MinAtarState``); sticky actions (0.1) and
difficulty ramping as in Young & Tian (2019).

A missing package is a ``ModuleNotFoundError`` naming the exact pip command.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

__all__ = [
    "ATARI_HINT",
    "MINATAR_HINT",
    "AleState",
    "ChannelsFirst",
    "MinAtarState",
    "EpisodicLife",
    "FireReset",
    "make_atari_env",
    "make_minatar_env",
    "require_atari",
    "require_minatar",
]

ATARI_HINT = "pip install 'ale-py>=0.9' 'opencv-python-headless>=4.8'"
MINATAR_HINT = "pip install 'minatar>=1.0.15'"


def require_atari(what: str) -> Any:
    """Import ``ale_py`` (and OpenCV, which ``AtariPreprocessing`` resizes with) and register
    the ``ALE/*`` environments, or raise ``ModuleNotFoundError`` naming ``what`` and the exact
    pip command.

    Example:
        >>> require_atari("DQN_Pong").__name__
        'ale_py'
    """
    try:
        import ale_py
        import cv2  # noqa: F401 - gymnasium's AtariPreprocessing needs it
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            f"{what} needs the Atari emulator ale-py and OpenCV, which are not installed "
            f"({error.name} is missing): {ATARI_HINT}",
            name=error.name,
        ) from error
    gym.register_envs(ale_py)
    return ale_py


def require_minatar(what: str) -> Any:
    """Import ``minatar`` and register its ``MinAtar/*`` environments, or raise
    ``ModuleNotFoundError`` naming ``what`` and the exact pip command.

    Example:
        >>> require_minatar("DQN_MinAtarBreakout").__name__
        'minatar'
    """
    try:
        import minatar
        from minatar.gym import register_envs
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            f"{what} needs MinAtar, which is not installed ({error.name} is missing): "
            f"{MINATAR_HINT}",
            name=error.name,
        ) from error
    if "MinAtar/Breakout-v1" not in gym.registry:
        register_envs()
    return minatar


class EpisodicLife(gym.Wrapper):
    """End an episode (``terminated``) at each lost life, but reset the game only when it is
    over; otherwise ``reset`` takes one no-op step (Stable-Baselines3's ``EpisodicLifeEnv``,
    Mnih et al. 2015). ``info["game_over"]`` says which.

    Example:
        >>> import gymnasium as gym
        >>> env = EpisodicLife(gym.make("CartPole-v1"))  # no lives: episodes end as before
        >>> _ = env.reset(seed=0)
        >>> env.lives
        0
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.lives = 0
        self.game_over = True

    def _ale_lives(self) -> int:
        ale = getattr(self.env.unwrapped, "ale", None)
        return int(ale.lives()) if ale is not None else 0

    def step(self, action: Any):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.game_over = bool(terminated or truncated)
        lives = self._ale_lives()
        if 0 < lives < self.lives:
            terminated = True
        self.lives = lives
        return obs, reward, terminated, truncated, {**info, "game_over": self.game_over}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if self.game_over or seed is not None:
            obs, info = self.env.reset(seed=seed, options=options)
        else:  # a life was lost: go on with the same game
            obs, _, terminated, truncated, info = self.env.step(0)
            if terminated or truncated:
                obs, info = self.env.reset(options=options)
        self.game_over = False
        self.lives = self._ale_lives()
        return obs, info


class FireReset(gym.Wrapper):
    """Press FIRE (then action 2) after each reset, for games that wait for it (Breakout):
    Stable-Baselines3's ``FireResetEnv``.

    Example:
        >>> import gymnasium as gym
        >>> FireReset.needs_fire(gym.make("CartPole-v1"))
        False
    """

    @staticmethod
    def needs_fire(env: gym.Env) -> bool:
        """Whether the game's action 1 is FIRE (and it has at least 3 actions)."""
        meanings = getattr(env.unwrapped, "get_action_meanings", None)
        if meanings is None:
            return False
        names = meanings()
        return len(names) >= 3 and names[1] == "FIRE"

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self.env.reset(seed=seed, options=options)
        for action in (1, 2):
            obs, _, terminated, truncated, info = self.env.step(action)
            if terminated or truncated:
                obs, info = self.env.reset(options=options)
        return obs, info


class ChannelsFirst(gym.ObservationWrapper):
    """``(H, W, C)`` image observations (MinAtar's boolean grids, RGB frames) as
    ``(C, H, W)`` ``uint8``, the layout rlkit's CNNs read.

    Example:
        >>> import gymnasium as gym, numpy as np
        >>> class Grid(gym.Env):
        ...     observation_space = gym.spaces.Box(0, 1, (10, 10, 4), bool)
        ...     action_space = gym.spaces.Discrete(3)
        >>> ChannelsFirst(Grid()).observation_space
        Box(0, 1, (4, 10, 10), uint8)
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        space = env.observation_space
        if not (isinstance(space, gym.spaces.Box) and len(space.shape) == 3):
            raise ValueError(f"ChannelsFirst: needs (H, W, C) image observations, got {space}")
        low, high = (
            np.asarray(b).astype(np.uint8).transpose(2, 0, 1) for b in (space.low, space.high)
        )
        self.observation_space = gym.spaces.Box(low, high, dtype=np.uint8)

    def observation(self, observation: Any) -> np.ndarray:
        return np.ascontiguousarray(np.asarray(observation, np.uint8).transpose(2, 0, 1))


class AleState(gym.Wrapper):
    """Makes an Atari game checkpointable: ``state_dict()`` holds the emulator's state with its
    random generator (``ale.cloneState(include_rng=True)``, serialised to bytes),
    ``load_state_dict`` restores it, so a run resumed in the middle of an episode continues it
    exactly (the wrappers above keep plain data, which a ``GymEnv`` checkpoint saves).

    Example:
        >>> import gymnasium as gym
        >>> _ = require_atari("AleState")
        >>> env = AleState(gym.make("ALE/Pong-v5", frameskip=1))
        >>> _ = env.reset(seed=0)
        >>> saved = env.state_dict()
        >>> first = [env.step(2)[0] for _ in range(50)][-1]
        >>> env.load_state_dict(saved)
        >>> bool(([env.step(2)[0] for _ in range(50)][-1] == first).all())
        True
    """

    def state_dict(self) -> dict[str, Any]:
        """The emulator's state and random generator, as bytes (a ``uint8`` array)."""
        data = self.env.unwrapped.ale.cloneState(include_rng=True).__getstate__()
        return {"ale": np.frombuffer(data, np.uint8).copy()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved."""
        from ale_py import ALEState

        saved = ALEState.__new__(ALEState)
        saved.__setstate__(np.asarray(state["ale"], np.uint8).tobytes())
        self.env.unwrapped.ale.restoreState(saved)


class MinAtarState(gym.Wrapper):
    """Makes a MinAtar game checkpointable: ``state_dict()`` holds the game's variables and
    its ``numpy.random.RandomState`` (minatar keeps them in plain Python objects that a
    ``GymEnv`` checkpoint would not otherwise see), ``load_state_dict`` restores them, so a
    run resumed in the middle of an episode continues it exactly.

    Example:
        >>> env = MinAtarState(make_minatar_env("MinAtar/Breakout-v1").env)
        >>> _ = env.reset(seed=0)
        >>> saved = env.state_dict()
        >>> first = env.step(1)[0]
        >>> env.load_state_dict(saved)
        >>> bool((env.step(1)[0] == first).all())
        True
    """

    _CONFIG = ("channels", "action_map", "random")

    def _game(self) -> Any:
        return self.env.unwrapped.game

    def state_dict(self) -> dict[str, Any]:
        """The game's variables and random generators (plain data)."""
        import copy

        game = self._game()
        return {
            "last_action": int(game.last_action),
            "random": _random_state(game.random),
            "env_random": _random_state(game.env.random),
            "shared": game.env.random is game.random,
            "env": {
                k: copy.deepcopy(v) for k, v in vars(game.env).items() if k not in self._CONFIG
            },
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved."""
        import copy

        game = self._game()
        game.last_action = int(state["last_action"])
        game.random = _load_random_state(state["random"])
        game.env.random = (
            game.random if state["shared"] else _load_random_state(state["env_random"])
        )
        for key, value in state["env"].items():
            setattr(game.env, key, copy.deepcopy(value))


def _random_state(rng: np.random.RandomState) -> dict[str, Any]:
    name, keys, pos, has_gauss, cached = rng.get_state()
    return {
        "name": name,
        "keys": np.array(keys),
        "pos": int(pos),
        "has_gauss": int(has_gauss),
        "cached": float(cached),
    }


def _load_random_state(state: dict[str, Any]) -> np.random.RandomState:
    rng = np.random.RandomState()
    rng.set_state(
        (
            state["name"],
            np.asarray(state["keys"], np.uint32),
            int(state["pos"]),
            int(state["has_gauss"]),
            float(state["cached"]),
        )
    )
    return rng


def make_atari_env(
    env_id: str = "ALE/Pong-v5",
    *,
    frame_stack: int = 4,
    frame_skip: int = 4,
    screen_size: int = 84,
    noop_max: int = 30,
    episodic_life: bool = True,
    clip_reward: bool = True,
    **kwargs: Any,
) -> gym.Env:
    """An Atari game for DQN-family training (the module docstring lists the wrappers):
    observations ``(frame_stack, screen_size, screen_size)`` ``uint8``. ``episodic_life`` and
    ``clip_reward`` off give the game's own episodes and scores (for evaluation); ``kwargs``
    go to ``gym.make`` (e.g. ``repeat_action_probability=0.0``).

    Example:
        >>> env = make_atari_env("ALE/Pong-v5")
        >>> obs, _ = env.reset(seed=0)
        >>> obs.shape, obs.dtype, env.action_space
        ((4, 84, 84), dtype('uint8'), Discrete(6))
    """
    require_atari(f"make_atari_env({env_id!r})")
    from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation, TransformReward

    env = AleState(gym.make(env_id, frameskip=1, **kwargs))
    env = AtariPreprocessing(
        env,
        noop_max=noop_max,
        frame_skip=frame_skip,
        screen_size=screen_size,
        terminal_on_life_loss=False,
        grayscale_obs=True,
        scale_obs=False,
    )
    if episodic_life:
        env = EpisodicLife(env)
    if FireReset.needs_fire(env):
        env = FireReset(env)
    if clip_reward:
        env = TransformReward(env, lambda r: float(np.sign(r)))
    return FrameStackObservation(env, frame_stack)


def make_minatar_env(env_id: str = "MinAtar/Breakout-v1", **kwargs: Any) -> gym.Env:
    """A MinAtar game with ``(C, 10, 10)`` ``uint8`` observations; ``kwargs`` go to
    ``gym.make`` (e.g. ``sticky_action_prob=0.0``).

    Example:
        >>> env = make_minatar_env("MinAtar/Breakout-v1")
        >>> obs, _ = env.reset(seed=0)
        >>> obs.shape, obs.dtype, env.action_space
        ((4, 10, 10), dtype('uint8'), Discrete(3))
    """
    require_minatar(f"make_minatar_env({env_id!r})")
    return ChannelsFirst(MinAtarState(gym.make(env_id, **kwargs)))
