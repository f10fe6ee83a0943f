"""The bit-flipping task (Andrychowicz et al. 2017, "Hindsight Experience Replay"): the goal
environment of the HER recipes (docs/how-to/observations.md)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from ...core.checks import positive_int
from ...core.interfaces import InvalidActionError
from ._common import ToyEnv, check_render_mode

__all__ = ["BitFlippingEnv"]


class BitFlippingEnv(ToyEnv):
    """``n_bits`` bits to flip until they equal the goal, all ones (Stable-Baselines3's
    ``BitFlippingEnv`` semantics), or a random goal each episode (``random_goal=True``, the
    HER paper's task): a goal-conditioned env with the gymnasium-robotics API.

    The observation is a dict ``{"observation", "achieved_goal", "desired_goal"}`` of
    ``MultiBinary(n_bits)`` arrays (int8): the bits, the bits again (the goal achieved is the
    state), and the goal (all ones, or with ``random_goal=True`` ``n_bits`` uniformly random
    bits drawn at each reset after the start). The start is ``n_bits`` uniformly random bits
    drawn from the env's generator (``reset(seed=...)`` seeds it). Actions:
    ``Discrete(n_bits)`` flips bit ``a``; with ``continuous=True``, ``Box(-1, 1, (n_bits,))``
    flips every bit whose action is above 0. The reward is 0 when the bits equal the goal and
    -1 otherwise; the episode terminates on success and is truncated after ``max_steps``
    steps (default ``n_bits``). ``compute_reward(achieved_goal, desired_goal, info)`` gives
    that reward for one goal pair or for a batch (arrays of shape ``(batch, n_bits)``: a
    ``(batch,)`` float32 array): what ``rk.HER`` calls to relabel transitions. Registered as
    ``rlkit/BitFlipping-v0``.

    Only a rare start is solved by random flips: with 15 bits an episode of 15 random flips
    almost never reaches all ones, so the reward is -1 nearly always (sparse). With the fixed
    goal, the starts that random flips do solve (a few bits from all ones) are always the same
    goal's, which plain DQN can learn from; with ``random_goal=True`` the goal changes every
    episode, so plain DQN has no such shortcut (the HER paper's contrast,
    docs/how-to/observations.md).

    Example:
        >>> import gymnasium as gym, numpy as np
        >>> env = gym.make("rlkit/BitFlipping-v0", n_bits=4)
        >>> obs, info = env.reset(seed=0)
        >>> sorted(obs), obs["desired_goal"].tolist()
        (['achieved_goal', 'desired_goal', 'observation'], [1, 1, 1, 1])
        >>> flips = [i for i in range(4) if obs["observation"][i] == 0]
        >>> for i in flips:
        ...     obs, reward, terminated, truncated, info = env.step(i)
        >>> reward, terminated, info["is_success"]
        (0.0, True, True)
        >>> env = gym.make("rlkit/BitFlipping-v0", n_bits=4, random_goal=True)
        >>> env.reset(seed=0)[0]["desired_goal"].tolist()
        [0, 0, 0, 0]
        >>> env.unwrapped.compute_reward(np.zeros((2, 4)), np.ones((2, 4)), {}).tolist()
        [-1.0, -1.0]
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        n_bits: int = 10,
        continuous: bool = False,
        max_steps: int | None = None,
        render_mode: str | None = None,
        random_goal: bool = False,
    ) -> None:
        name = type(self).__name__
        self.render_mode = check_render_mode(self, render_mode)
        self.n_bits = positive_int(name, "n_bits", n_bits)
        if not isinstance(continuous, (bool, np.bool_)):
            raise TypeError(f"{name}: continuous must be True or False, got {continuous!r}")
        self.continuous = bool(continuous)
        if not isinstance(random_goal, (bool, np.bool_)):
            raise TypeError(f"{name}: random_goal must be True or False, got {random_goal!r}")
        self.random_goal = bool(random_goal)
        self.max_steps = positive_int(
            name, "max_steps", self.n_bits if max_steps is None else max_steps
        )
        bits = spaces.MultiBinary(self.n_bits)
        self.observation_space = spaces.Dict(
            {"observation": bits, "achieved_goal": bits, "desired_goal": bits}
        )
        if self.continuous:
            self.action_space = spaces.Box(-1.0, 1.0, (self.n_bits,), np.float32)
        else:
            self.action_space = spaces.Discrete(self.n_bits)
        self.goal = np.ones(self.n_bits, np.int8)
        self.bits = np.zeros(self.n_bits, np.int8)
        self.current_step = 0

    def _obs(self) -> dict[str, np.ndarray]:
        return {
            "observation": self.bits.copy(),
            "achieved_goal": self.bits.copy(),
            "desired_goal": self.goal.copy(),
        }

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        self.bits = self.np_random.integers(0, 2, self.n_bits).astype(np.int8)
        if self.random_goal:
            self.goal = self.np_random.integers(0, 2, self.n_bits).astype(np.int8)
        self.current_step = 0
        return self._obs(), {}

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        self._flip(action)
        self.current_step += 1
        obs = self._obs()
        reward = float(self.compute_reward(obs["achieved_goal"], obs["desired_goal"], None))
        terminated = reward == 0.0
        truncated = self.current_step >= self.max_steps
        return obs, reward, terminated, truncated, {"is_success": terminated}

    def _flip(self, action: Any) -> None:
        if self.continuous:
            action = np.asarray(action)
            if action.shape != (self.n_bits,):
                raise InvalidActionError(
                    f"{type(self).__name__}: a continuous action must have shape "
                    f"({self.n_bits},), got {action!r}"
                )
            flip = action > 0
            self.bits[flip] = 1 - self.bits[flip]
            return
        if not self.action_space.contains(action):
            raise InvalidActionError(
                f"{type(self).__name__}: the action must be a bit index in 0..{self.n_bits - 1}, "
                f"got {action!r}"
            )
        self.bits[int(action)] = 1 - self.bits[int(action)]

    def compute_reward(self, achieved_goal: Any, desired_goal: Any, info: Any) -> Any:
        """0 where ``achieved_goal`` equals ``desired_goal`` (every bit), else -1: a float32
        scalar for one pair, a ``(batch,)`` array for arrays of shape ``(batch, n_bits)``.
        ``info`` is not read.

        Example:
            >>> import numpy as np
            >>> env = BitFlippingEnv(n_bits=3)
            >>> env.compute_reward(np.array([[1, 1, 1], [0, 1, 1]]), np.ones((2, 3)), None)
            array([ 0., -1.], dtype=float32)
        """
        achieved, desired = np.asarray(achieved_goal), np.asarray(desired_goal)
        if achieved.shape != desired.shape or achieved.shape[-1:] != (self.n_bits,):
            raise ValueError(
                f"{type(self).__name__}.compute_reward: achieved_goal {achieved.shape} and "
                f"desired_goal {desired.shape} must have the same shape, ending in "
                f"{self.n_bits} bits"
            )
        return np.where(np.any(achieved != desired, axis=-1), np.float32(-1), np.float32(0))

    def _render_ansi(self) -> str:
        return "".join(str(int(b)) for b in self.bits) + "\n"
