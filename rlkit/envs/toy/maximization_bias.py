"""The maximization-bias MDP of Sutton & Barto, Example 6.7 (Figure 6.5)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from ...core.checks import finite_float, int_at_least, is_int
from ...core.interfaces import InvalidActionError
from ._common import Model, ModelEnv, check_render_mode

__all__ = ["MaximizationBiasEnv"]

A, B, TERMINAL = 0, 1, 2
LEFT, RIGHT = 0, 1


class MaximizationBiasEnv(ModelEnv):
    """Two states A and B where Q-learning overestimates the value of going left.

    Sutton & Barto (2018), Example 6.7 and Figure 6.5. Episodes start in A (state 0). In A two
    actions are legal: 0 (left) goes to B (state 1) and 1 (right) to the terminal state (2), both
    with reward 0. In B every one of the ``n_b_actions`` actions is legal and ends the episode
    with a reward drawn from ``N(mean, std**2)``: going left is worse on average (-0.1), yet
    Q-learning's max over the noisy estimates of B makes it look better at first.

    The action space is ``Discrete(n_b_actions)``; which actions are legal in the current state
    is given by ``info["action_mask"]`` (an ``np.int8`` array, as gymnasium's Taxi does) and by
    ``action_mask(state)``. In the terminal state every action is a legal no-op.

    By default the environment follows gymnasium's rule that every action of the action space can
    be stepped (``gymnasium.utils.env_checker.check_env`` relies on it): in A, every action other
    than 0 moves right. Through :class:`rlkit.GymEnv` an action outside the mask raises
    :class:`rlkit.InvalidActionError`, and so does the raw environment with ``strict=True``.

    The model ``P[s][a] = [(prob, next_state, reward, terminated)]`` has an entry for the legal
    actions of ``s`` only (``P[s].keys()`` is the legal set), and since B's rewards are random,
    ``P[B][a]`` holds their *expected* value ``mean``: dynamic programming on ``P`` gives the
    true values (``q(A, left) = mean``, ``q(A, right) = 0``).

    Args:
        n_b_actions: number of actions in B (>= 2; the book uses 10, "many").
        mean: mean reward of the actions in B.
        std: standard deviation of the rewards in B.
        strict: raise on illegal actions (True) or follow gymnasium's rule (False, the default).
        render_mode: None or ``"ansi"``.

    Example:
        >>> import gymnasium as gym
        >>> env = gym.make("rlkit/MaximizationBias-v0")
        >>> obs, info = env.reset(seed=0)
        >>> obs, info["action_mask"].tolist()
        (0, [1, 1, 0, 0, 0, 0, 0, 0, 0, 0])
        >>> env.step(0)[:3]                     # left: to B
        (1, 0.0, False)
        >>> obs, reward, terminated, truncated, info = env.step(7)
        >>> obs, terminated
        (2, True)
    """

    _tracks_reward = True

    def __init__(
        self,
        n_b_actions: int = 10,
        mean: float = -0.1,
        std: float = 1.0,
        strict: bool = False,
        render_mode: str | None = None,
    ) -> None:
        self.n_b_actions = int_at_least("MaximizationBiasEnv", "n_b_actions", n_b_actions, 2)
        self.mean = finite_float("MaximizationBiasEnv", "mean", mean)
        self.std = finite_float("MaximizationBiasEnv", "std", std, low=0)
        self.strict = bool(strict)
        self.render_mode = check_render_mode(self, render_mode)
        self.n_states = 3
        self.n_actions = self.n_b_actions
        self.observation_space = spaces.Discrete(3)
        self.action_space = spaces.Discrete(self.n_actions)
        self.start_state = A
        self.terminal_states = (TERMINAL,)
        self._masks = np.ones((3, self.n_actions), dtype=np.int8)
        self._masks[A, 2:] = 0
        self.P = self._build_model()
        self.s = A
        self.last_action: int | None = None
        self.last_reward = 0.0

    def _build_model(self) -> Model:
        everything = range(self.n_actions)
        return {
            A: {LEFT: [(1.0, B, 0.0, False)], RIGHT: [(1.0, TERMINAL, 0.0, True)]},
            B: {a: [(1.0, TERMINAL, self.mean, True)] for a in everything},
            TERMINAL: {a: [(1.0, TERMINAL, 0.0, True)] for a in everything},
        }

    def action_mask(self, state: int | None = None) -> np.ndarray:
        """The legal actions of ``state`` (default: the current one) as an ``np.int8`` mask."""
        state = self.s if state is None else state
        if not is_int(state) or not 0 <= state < 3:
            raise ValueError(
                f"MaximizationBiasEnv.action_mask: state must be 0 (A), 1 (B) or 2 (terminal), "
                f"got {state!r}"
            )
        return self._masks[state].copy()

    # ---- gymnasium API (reset, step: ModelEnv) ----

    def _info(self, s: int) -> dict[str, Any]:
        return {"action_mask": self._masks[s].copy()}

    def _outcome(self, action: Any) -> tuple[int, float, bool]:
        if not is_int(action) or not 0 <= action < self.n_actions:
            raise InvalidActionError(
                f"MaximizationBiasEnv: action {action!r} is outside the action space "
                f"{self.action_space}; expected an integer in [0, {self.n_actions})"
            )
        s = self.s
        if s == B:  # the random reward; P[B] holds its mean
            return TERMINAL, float(self.np_random.normal(self.mean, self.std)), True
        if s == A and action > RIGHT:
            if self.strict:
                raise InvalidActionError(
                    f"MaximizationBiasEnv: action {action!r} is illegal in state A; "
                    "expected 0 (left) or 1 (right) (see info['action_mask'])"
                )
            action = RIGHT
        _, nxt, reward, terminated = self.P[s][action][0]
        return nxt, reward, terminated

    def _render_ansi(self) -> str:
        line = f"T <- B <- A -> T   in {'ABT'[self.s]}"
        if self.last_action is not None:
            line += f"  (action {self.last_action}, reward {self.last_reward:+.3f})"
        return line + "\n"

    # ---- checkpoint protocol (state_dict, load_state_dict: ModelEnv) ----

    def _loaded_state(self, s: int) -> int:
        if s not in (A, B, TERMINAL):
            raise ValueError(f"MaximizationBiasEnv.load_state_dict: state {s} is not 0, 1 or 2")
        return s

