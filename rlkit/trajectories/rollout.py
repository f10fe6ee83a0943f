"""``RolloutTrajectory``: the fixed-length batch of an on-policy learner (PPO, A2C, VPG).

It holds ``n_steps`` steps of ``n_envs`` environments in preallocated ``(n_steps, n_envs, ...)``
numpy arrays: the traces ``state``, ``action``, ``reward``, ``terminated``, ``truncated`` and
``final_state`` (the next state of each transition: the real final observation where the episode
ended at that step, so truncated episodes and the rollout's end can be bootstrapped), plus extra
traces an algorithm declares by writing them (values and log-probabilities at acting time).
Arrays are allocated at the first write, from the shapes and dtypes written.

A step is written in two halves: :meth:`write_action` at PreAct (state, action, extras), then
:meth:`write_outcome` at PostAct (reward, flags, final state). The trajectory is ``full`` after
``n_steps`` outcomes; the learner reads :meth:`batch` and calls :meth:`clear`.

Example:
    >>> import numpy as np
    >>> t = RolloutTrajectory(2, 3)
    >>> for _ in range(2):
    ...     t.write_action(np.zeros((3, 4)), np.zeros(3, dtype=int), {"value": np.ones(3)})
    ...     t.write_outcome(np.ones(3), np.zeros(3, bool), np.zeros(3, bool), np.zeros((3, 4)))
    >>> t.full, t.batch()["value"].shape
    (True, (2, 3))
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from ..core.checks import positive_int
from ..core.interfaces import AbstractTrajectory
from ..core.state import require_keys, state_count
from .structured import map_leaves

__all__ = ["RolloutTrajectory"]

_OUTCOME = ("reward", "terminated", "truncated", "final_state")


class RolloutTrajectory(AbstractTrajectory):
    """``n_steps`` steps of ``n_envs`` environments for on-policy learning (see the module).

    Example:
        >>> import rlkit as rk
        >>> env = rk.GymEnv("CartPole-v1", seed=0)
        >>> agent = rk.PPO.agent(env, seed=0, n_steps=64, batch_size=32)
        >>> type(agent.trajectory).__name__, agent.trajectory.n_steps
        ('RolloutTrajectory', 64)
        >>> hook = rk.run(agent, env, rk.StopAfterNSteps(100))
        >>> len(agent.trajectory), agent.policy.updates  # 64 steps learned from, 36 recorded
        (36, 1)
    """

    def __init__(self, n_steps: int, n_envs: int = 1) -> None:
        self.n_steps = positive_int("RolloutTrajectory", "n_steps", n_steps)
        self.n_envs = positive_int("RolloutTrajectory", "n_envs", n_envs)
        self.traces: dict[str, np.ndarray] = {}
        self.t = 0  # complete steps (action and outcome written)
        self._half = False  # the action of step t is written, its outcome not yet

    def __repr__(self) -> str:
        return f"RolloutTrajectory(n_steps={self.n_steps}, n_envs={self.n_envs})"

    def __len__(self) -> int:
        return self.t * self.n_envs

    @property
    def full(self) -> bool:
        """Whether ``n_steps`` complete steps are stored."""
        return self.t == self.n_steps

    def _write(self, name: str, value: Any, traces: dict[Any, Any] | None = None) -> None:
        traces = self.traces if traces is None else traces
        if isinstance(value, (Mapping, tuple)):  # a Dict/Tuple observation: arrays by key
            items = value.items() if isinstance(value, Mapping) else enumerate(value)
            sub = traces.setdefault(name, {})
            for key, part in items:
                self._write(key, part, sub)
            return
        value = np.asarray(value)
        array = traces.get(name)
        if array is None:
            if value.shape[:1] != (self.n_envs,):
                raise ValueError(
                    f"RolloutTrajectory: trace {name!r} got shape {value.shape}; expected a first "
                    f"dimension of n_envs={self.n_envs}"
                )
            array = np.zeros((self.n_steps, *value.shape), dtype=value.dtype)
            traces[name] = array
        array[self.t] = value

    def write_action(self, state: Any, action: Any, extras: dict[str, Any] | None = None) -> None:
        """PreAct half of step ``t``: the state acted on, the (unclipped) action, extras."""
        if self.full:
            raise RuntimeError(
                "RolloutTrajectory: full; the learner must read and clear it before more steps"
            )
        self._write("state", state)
        self._write("action", action)
        for name, value in (extras or {}).items():
            self._write(name, value)
        self._half = True

    def write_outcome(
        self, reward: Any, terminated: Any, truncated: Any, final_state: Any
    ) -> None:
        """PostAct half of step ``t``: reward, flags and the next (final) state."""
        if not self._half:
            raise RuntimeError("RolloutTrajectory: write_outcome without write_action first")
        for name, value in zip(_OUTCOME, (reward, terminated, truncated, final_state), strict=True):
            self._write(name, value)
        self._half = False
        self.t += 1

    def batch(self) -> dict[str, np.ndarray]:
        """The stored steps, ``(t, n_envs, ...)`` per trace (views, valid until :meth:`clear`)."""
        return {name: map_leaves(lambda a: a[: self.t], v) for name, v in self.traces.items()}

    def clear(self) -> None:
        """Forget the stored steps (the arrays are kept for the next rollout)."""
        self.t = 0
        self._half = False

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        return {
            "t": self.t,
            "half": self._half,
            "traces": {name: map_leaves(np.copy, v) for name, v in self.traces.items()},
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        require_keys("RolloutTrajectory", state, "t", "half", "traces")
        traces = {name: map_leaves(np.array, v) for name, v in state["traces"].items()}
        for name, array in _leaves(traces):  # a rollout of another size fails later, mid-run
            if array.shape[:2] != (self.n_steps, self.n_envs):
                raise ValueError(
                    f"RolloutTrajectory.load_state_dict: trace {name!r} holds n_steps x n_envs = "
                    f"{' x '.join(map(str, array.shape[:2]))}, this rollout "
                    f"{self.n_steps} x {self.n_envs}"
                )
        t = state_count("RolloutTrajectory", state, "t")
        if t > self.n_steps:
            raise ValueError(
                f"RolloutTrajectory.load_state_dict: t={t} exceeds n_steps={self.n_steps}"
            )
        self.t = t
        self._half = bool(state["half"])
        self.traces = traces


def _leaves(traces: Mapping[Any, Any], prefix: str = "") -> Iterator[tuple[str, np.ndarray]]:
    """``(name, array)`` of every trace, a Dict observation's as ``state/key``."""
    for name, value in traces.items():
        if isinstance(value, Mapping):
            yield from _leaves(value, f"{prefix}{name}/")
        else:
            yield f"{prefix}{name}", value
