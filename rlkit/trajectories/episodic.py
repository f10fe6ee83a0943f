"""``VectorSARTTrajectory``: the transitions of the current episode (or last few) in lists."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.checks import positive_int
from ..core.dispatch import update
from ..core.interfaces import AbstractEnv, AbstractPolicy, AbstractTrajectory
from ..core.stages import PostActStage, PreActStage, PreEpisodeStage

__all__ = ["VectorSARTTrajectory"]

TRACES = ("state", "action", "reward", "terminal", "truncated", "next_state")


class VectorSARTTrajectory(AbstractTrajectory):
    """Transitions ``(state, action, reward, terminal, truncated, next_state)`` in Python lists.

    The traces are attributes of the same names; transition ``i`` is ``state[i], action[i], ...``.
    At PreAct the state and the chosen action are recorded, at PostAct the reward, the
    ``terminal``/``truncated`` flags and ``next_state`` (the real final observation at the end of an
    episode). At PreEpisode a new episode starts; only the last ``max_episodes`` episodes are kept.
    ``episode_start`` is the index of the first transition of the current episode.

    Example:
        >>> import rlkit as rk
        >>> t = rk.VectorSARTTrajectory()
        >>> agent = rk.Agent(rk.RandomPolicy(seed=0), t)
        >>> _ = rk.run(agent, rk.GymEnv("CliffWalking-v1", seed=0), rk.StopAfterNSteps(3))
        >>> len(t), t.state[0]
        (3, 36)
    """

    traces = TRACES

    def __init__(self, max_episodes: int = 1) -> None:
        self.max_episodes = positive_int("VectorSARTTrajectory", "max_episodes", max_episodes)
        self.clear()

    def __repr__(self) -> str:
        return f"VectorSARTTrajectory(max_episodes={self.max_episodes})"

    def __len__(self) -> int:
        return len(self.reward)

    def clear(self) -> None:
        """Forget every stored transition."""
        self.state: list[Any] = []
        self.action: list[Any] = []
        self.reward: list[float] = []
        self.terminal: list[bool] = []
        self.truncated: list[bool] = []
        self.next_state: list[Any] = []
        self.episode_starts: list[int] = [0]

    @property
    def episode_start(self) -> int:
        """Index of the first transition of the current episode."""
        return self.episode_starts[-1]

    def start_episode(self) -> None:
        """Begin a new episode, dropping the oldest when more than ``max_episodes`` are kept."""
        start = len(self.state)
        if start == self.episode_starts[-1]:
            return  # the current episode is still empty
        self.episode_starts.append(start)
        if len(self.episode_starts) > self.max_episodes:
            cut = self.episode_starts[-self.max_episodes]
            for name in TRACES:
                del getattr(self, name)[:cut]
            self.episode_starts = [s - cut for s in self.episode_starts[-self.max_episodes :]]

    def state_dict(self) -> dict[str, Any]:
        """The contents, for checkpoints (lists of plain values)."""
        return {
            "max_episodes": self.max_episodes,
            "episode_starts": list(self.episode_starts),
            **{name: list(getattr(self, name)) for name in TRACES},
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore contents saved by :meth:`state_dict`."""
        self.max_episodes = int(state["max_episodes"])
        self.episode_starts = [int(s) for s in state["episode_starts"]]
        for name in TRACES:
            setattr(self, name, list(state[name]))


def _own(x: Any) -> Any:
    """A copy of array observations (envs may reuse their buffers); other values as they are."""
    return x.copy() if type(x) is np.ndarray else x


# ---- PreEpisode: a new episode begins ----
@update.dispatch
def _(
    trajectory: VectorSARTTrajectory,
    policy: AbstractPolicy,
    env: AbstractEnv,
    stage: PreEpisodeStage,
    /,
):
    trajectory.start_episode()


# ---- PreAct: the state and the chosen action ----
@update.dispatch
def _(
    trajectory: VectorSARTTrajectory,
    policy: AbstractPolicy,
    env: AbstractEnv,
    stage: PreActStage,
    action: object,
    /,
):
    if len(trajectory.state) == len(trajectory.reward):
        trajectory.state.append(_own(env.state))
        trajectory.action.append(action)
    else:  # the last step never completed (env.act raised): replace its orphaned half
        trajectory.state[-1] = _own(env.state)
        trajectory.action[-1] = action


# ---- PostAct: what the action led to ----
@update.dispatch
def _(
    trajectory: VectorSARTTrajectory,
    policy: AbstractPolicy,
    env: AbstractEnv,
    stage: PostActStage,
    /,
):
    trajectory.reward.append(env.reward)
    trajectory.terminal.append(env.is_terminated)
    trajectory.truncated.append(env.is_truncated)
    trajectory.next_state.append(_own(env.state))
