"""The k-armed bandit testbed of Sutton & Barto, Section 2.3 (and Exercise 2.5)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from ...core.checks import finite_float, is_int, positive_int
from ...core.interfaces import InvalidActionError
from ._common import ToyEnv, check_render_mode, rng_state, set_rng_state

__all__ = ["MultiArmBanditsEnv"]

_NAME = "MultiArmBanditsEnv"


class MultiArmBanditsEnv(ToyEnv):
    """A k-armed bandit: every episode is a single pull of one arm.

    Sutton & Barto (2018), Section 2.3 (the 10-armed testbed) and Exercise 2.5 (non-stationary).
    Stationary: the true action values ``q_star`` are drawn from ``N(mean, q_std**2)`` on a
    seeded reset (and on the first reset) and kept across later resets without a seed, so one
    "run" of the book (1000 pulls with fixed ``q_star``) is 1000 one-step episodes; the next run
    is ``reset(seed=another)``. Non-stationary (``stationary=False``): every ``q_star[a]`` starts
    at ``mean`` and takes an independent ``N(0, walk_std**2)`` step after every pull.

    A pull of arm ``a`` gives a reward from ``N(q_star[a], reward_std**2)`` and ends the episode
    (``terminated=True``). The observation is always 0 (``Discrete(1)``). ``info`` has
    ``"optimal_action"``: the arm with the highest ``q_star`` before the pull (the first one on
    ties), for "% optimal action" curves. There is no ``P`` model (the rewards are random).

    Args:
        k: number of arms (>= 1).
        stationary: False for the random-walk values of Exercise 2.5.
        walk_std: standard deviation of the random-walk steps (non-stationary only).
        mean: mean of the true values (stationary) or their common start (non-stationary).
        q_std: standard deviation of the true values around ``mean`` (stationary only).
        reward_std: standard deviation of a reward around ``q_star[a]``.
        render_mode: None or ``"ansi"``.

    Example:
        >>> import gymnasium as gym
        >>> env = gym.make("rlkit/MultiArmBandits-v0")
        >>> obs, info = env.reset(seed=0)            # one run: a fresh q_star
        >>> obs, reward, terminated, truncated, info = env.step(3)
        >>> terminated, info["optimal_action"] == int(env.unwrapped.q_star.argmax())
        (True, True)
        >>> obs, info = env.reset()                  # next pull of the same run
    """

    def __init__(
        self,
        k: int = 10,
        stationary: bool = True,
        walk_std: float = 0.01,
        mean: float = 0.0,
        q_std: float = 1.0,
        reward_std: float = 1.0,
        render_mode: str | None = None,
    ) -> None:
        self.k = positive_int(_NAME, "k", k)
        self.stationary = bool(stationary)
        self.walk_std = finite_float(_NAME, "walk_std", walk_std, low=0)
        self.q_std = finite_float(_NAME, "q_std", q_std, low=0)
        self.reward_std = finite_float(_NAME, "reward_std", reward_std, low=0)
        self.mean = finite_float(_NAME, "mean", mean)
        self.render_mode = check_render_mode(self, render_mode)
        self.n_states = 1
        self.n_actions = self.k
        self.observation_space = spaces.Discrete(1)
        self.action_space = spaces.Discrete(self.k)
        self.q_star: np.ndarray | None = None
        self.last_action: int | None = None
        self.last_reward: float | None = None

    # ---- gymnasium API ----

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[int, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None or self.q_star is None:
            self._draw_q_star()
        return 0, {}

    def _draw_q_star(self) -> None:
        if self.stationary:
            self.q_star = self.np_random.normal(self.mean, self.q_std, self.k)
        else:
            self.q_star = np.full(self.k, self.mean)
        self.last_action = self.last_reward = None

    def step(self, action: int) -> tuple[int, float, bool, bool, dict[str, Any]]:
        if not is_int(action) or not 0 <= action < self.k:
            raise InvalidActionError(
                f"MultiArmBanditsEnv: action {action!r} is outside the action space "
                f"{self.action_space}; expected an arm in [0, {self.k})"
            )
        if self.q_star is None:
            raise RuntimeError("MultiArmBanditsEnv: call reset() before step()")
        q_star = self.q_star
        optimal = int(q_star.argmax())
        reward = float(self.np_random.normal(q_star[action], self.reward_std))
        if not self.stationary:
            q_star += self.np_random.normal(0.0, self.walk_std, self.k)
        self.last_action, self.last_reward = int(action), reward
        return 0, reward, True, False, {"optimal_action": optimal}

    def _render_ansi(self) -> str:
        if self.q_star is None:
            return "q*: (not drawn yet: reset first)\n"
        values = " ".join(f"{q:+.2f}" for q in self.q_star)
        last = (
            ""
            if self.last_action is None
            else f"\npulled {self.last_action}: reward {self.last_reward:+.3f}"
        )
        return f"q*: {values}{last}\n"

    # ---- checkpoint protocol ----

    def state_dict(self) -> dict[str, Any]:
        """``q_star``, the last pull and the generator state."""
        return {
            "q_star": None if self.q_star is None else self.q_star.copy(),
            "last_action": self.last_action,
            "last_reward": self.last_reward,
            "rng": rng_state(self),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        q_star = state["q_star"]
        if q_star is not None:
            q_star = np.array(q_star, dtype=np.float64)
            if q_star.shape != (self.k,):
                raise ValueError(
                    f"MultiArmBanditsEnv.load_state_dict: q_star has shape {q_star.shape}, "
                    f"expected ({self.k},)"
                )
        self.q_star = q_star
        self.last_action = state["last_action"]
        self.last_reward = state["last_reward"]
        set_rng_state(self, state["rng"])

