"""Small envs with structured observations for the encoder tests: a Dict CartPole whose keys
flatten to CartPole's own observation, a Tuple one, ..., and small uint8 image frames
(``PixelMatch``)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np


class DictCartPole(gym.ObservationWrapper):
    """CartPole-v1 with observations ``{"cart": [x, x_dot], "pole": [theta, theta_dot]}``:
    gymnasium's Dict sorts the keys (cart, pole), so flattening gives CartPole's vector."""

    def __init__(self, env: gym.Env | None = None) -> None:
        super().__init__(env if env is not None else gym.make("CartPole-v1"))
        low, high = self.env.observation_space.low, self.env.observation_space.high
        self.observation_space = gym.spaces.Dict(
            {
                "pole": gym.spaces.Box(low[2:], high[2:], dtype=np.float32),
                "cart": gym.spaces.Box(low[:2], high[:2], dtype=np.float32),
            }
        )

    def observation(self, observation: np.ndarray) -> dict[str, np.ndarray]:
        return {"cart": observation[:2], "pole": observation[2:]}


class TupleCartPole(gym.ObservationWrapper):
    """CartPole-v1 with observations ``(x, (x_dot, [theta, theta_dot]))``, nested."""

    def __init__(self) -> None:
        super().__init__(gym.make("CartPole-v1"))
        low, high = self.env.observation_space.low, self.env.observation_space.high
        box = gym.spaces.Box
        self.observation_space = gym.spaces.Tuple(
            [
                box(low[:1], high[:1], dtype=np.float32),
                gym.spaces.Dict(
                    {"v": box(low[1:2], high[1:2], dtype=np.float32),
                     "w": box(low[2:], high[2:], dtype=np.float32)}
                ),
            ]
        )

    def observation(self, observation: np.ndarray):
        return (observation[:1], {"v": observation[1:2], "w": observation[2:]})


class WrongKeys(gym.ObservationWrapper):
    """A Dict CartPole whose observations carry another key than its space says."""

    def __init__(self) -> None:
        super().__init__(DictCartPole())

    def observation(self, observation):
        return {"cart": observation["cart"], "pole_angle": observation["pole"]}


class DictPendulum(gym.ObservationWrapper):
    """Pendulum-v1 with observations ``{"cos_sin": [cos, sin], "speed": [theta_dot]}`` (sorted
    keys: flattening gives Pendulum's own vector)."""

    def __init__(self) -> None:
        super().__init__(gym.make("Pendulum-v1"))
        low, high = self.env.observation_space.low, self.env.observation_space.high
        self.observation_space = gym.spaces.Dict(
            {
                "speed": gym.spaces.Box(low[2:], high[2:], dtype=np.float32),
                "cos_sin": gym.spaces.Box(low[:2], high[:2], dtype=np.float32),
            }
        )

    def observation(self, observation: np.ndarray) -> dict[str, np.ndarray]:
        return {"cos_sin": observation[:2], "speed": observation[2:]}


class DictCartPoleNoVel(gym.ObservationWrapper):
    """``rlkit/CartPoleNoVel-v1`` (cart position, pole angle) with observations
    ``{"cart": [x], "pole": [theta]}``: sorted keys flatten to the task's own vector."""

    def __init__(self) -> None:
        super().__init__(gym.make("rlkit/CartPoleNoVel-v1"))
        low, high = self.env.observation_space.low, self.env.observation_space.high
        self.observation_space = gym.spaces.Dict(
            {
                "pole": gym.spaces.Box(low[1:], high[1:], dtype=np.float32),
                "cart": gym.spaces.Box(low[:1], high[:1], dtype=np.float32),
            }
        )

    def observation(self, observation: np.ndarray) -> dict[str, np.ndarray]:
        return {"cart": observation[:1], "pole": observation[1:]}


class BoxBitFlipping(gym.ObservationWrapper):
    """rlkit/BitFlipping-v0 (continuous actions) with float32 Box goals, which VecNormalize
    normalises (it takes Box keys only)."""

    def __init__(self) -> None:
        super().__init__(gym.make("rlkit/BitFlipping-v0", n_bits=4, continuous=True))
        box = gym.spaces.Box(0.0, 1.0, (4,), np.float32)
        self.observation_space = gym.spaces.Dict(
            {"observation": box, "achieved_goal": box, "desired_goal": box}
        )

    def observation(self, observation):
        return {k: np.asarray(v, np.float32) for k, v in observation.items()}

    def compute_reward(self, achieved, desired, info):
        return self.env.unwrapped.compute_reward(achieved, desired, info)



class PixelMatch(gym.Env):
    """Small ``uint8`` frames ``(C, H, W)``: each frame's brightness names one action (its
    class, drawn by the env's generator), plus noise drawn from the observation space (seeded by
    ``rk.GymEnv(..., seed=s)``, rlkit/envs/space_seeds.py); the reward is 1 for the frame's
    action, so the best action depends on the frame. Episodes are truncated after ``length``
    steps."""

    def __init__(self, shape=(3, 6, 6), n_actions: int = 3, length: int = 20) -> None:
        self.observation_space = gym.spaces.Box(0, 255, shape, np.uint8)
        self.action_space = gym.spaces.Discrete(n_actions)
        self.length, self._t, self._class = length, 0, 0

    def _next(self) -> np.ndarray:
        self._class = int(self.np_random.integers(self.action_space.n))
        level = self._class * (192 // max(self.action_space.n - 1, 1))
        return (self.observation_space.sample() // 4 + level).astype(np.uint8)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self._t = 0
        return self._next(), {}

    def step(self, action):
        reward = float(int(action) == self._class)
        self._t += 1
        return self._next(), reward, False, self._t >= self.length, {}
