"""``SeedBlocksReplay``: one replay buffer per seed of a
:class:`~rlkit.envs.seed_blocks.SeedBlocksEnv` (many seeds in one process, docs/how-to/speed.md).

Each seed's replay (an ``rk.CircularArraySARTTrajectory``, as its single run builds it) records
the transitions of its own block of sub-envs only, so it holds, slot by slot, what the replay of
the seed's single run holds, and the seed's sampler draws from it as it would alone.

Example:
    >>> import rlkit as rk
    >>> env = rk.SeedBlocksEnv([rk.VectorGymEnv("CartPole-v1", 2, seed=s) for s in (0, 1)], [0, 1])
    >>> replay = SeedBlocksReplay(
    ...     [rk.CircularArraySARTTrajectory(100, env.state_space, env.action_space) for _ in "ab"])
    >>> _ = rk.run(rk.Agent(rk.RandomPolicy(seed=0), replay), env, rk.StopAfterNSteps(20))
    >>> [len(r) for r in replay.replays], len(replay)
    ([10, 10], 10)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...core.dispatch import update
from ...core.interfaces import AbstractPolicy, AbstractTrajectory, AbstractVectorEnv
from ...core.stages import PostActStage, PreActStage
from ...core.state import require_keys
from ...trajectories.circular import CircularArraySARTTrajectory

__all__ = ["SeedBlocksReplay"]


class SeedBlocksReplay(AbstractTrajectory):
    """The replays ``replays`` (one ``rk.CircularArraySARTTrajectory`` per seed, the same
    capacity and layout), replay ``i`` recording block ``i`` of a ``SeedBlocksEnv`` (module
    docstring). ``len(replay)`` is the number of transitions each seed's replay holds.

    Example:
        >>> import rlkit as rk
        >>> env = rk.GymEnv("CartPole-v1")
        >>> replay = rk.SeedBlocksReplay(
        ...     [rk.CircularArraySARTTrajectory(50, env.state_space, env.action_space)] * 1)
        >>> replay.capacity, replay.n_seeds
        (50, 1)
    """

    def __init__(self, replays: Sequence[CircularArraySARTTrajectory]) -> None:
        replays = list(replays)
        if not replays or not all(isinstance(r, CircularArraySARTTrajectory) for r in replays):
            raise TypeError(
                f"SeedBlocksReplay: replays must be a non-empty list of "
                f"rk.CircularArraySARTTrajectory (one per seed), got {replays!r:.120}"
            )
        if any(type(r) is not CircularArraySARTTrajectory for r in replays):
            raise TypeError(
                f"SeedBlocksReplay: prioritized or other replay kinds are not supported with many "
                f"seeds, got {sorted({type(r).__name__ for r in replays})}; expected "
                f"rk.CircularArraySARTTrajectory"
            )
        first = replays[0]
        for r in replays[1:]:
            if (r.capacity, r.state_shape, r.action_shape) != (
                first.capacity,
                first.state_shape,
                first.action_shape,
            ):
                raise ValueError(
                    f"SeedBlocksReplay: every seed's replay must have the same capacity and "
                    f"shapes, got {r!r} and {first!r}"
                )
        if len({id(r) for r in replays}) != len(replays):
            raise ValueError("SeedBlocksReplay: each seed needs its own replay (one object each)")
        self.replays = replays
        self.n_seeds = len(replays)
        self.capacity = first.capacity

    def __repr__(self) -> str:
        return f"SeedBlocksReplay({self.n_seeds} x {self.replays[0]!r})"

    def __len__(self) -> int:
        return len(self.replays[0])

    def blocks(self, env: AbstractVectorEnv) -> list[slice]:
        """The rows of ``env`` (a ``SeedBlocksEnv``) each seed's replay records."""
        block = getattr(env, "block", None)
        if block is None or env.n_envs != block * self.n_seeds:
            raise ValueError(
                f"SeedBlocksReplay: records a SeedBlocksEnv of {self.n_seeds} seeds, got {env!r}"
            )
        return [slice(i * block, (i + 1) * block) for i in range(self.n_seeds)]

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """Every seed's replay state."""
        return {"replays": [r.state_dict() for r in self.replays]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved."""
        require_keys("SeedBlocksReplay", state, "replays")
        if len(state["replays"]) != self.n_seeds:
            raise ValueError(
                f"SeedBlocksReplay: the checkpoint holds {len(state['replays'])} replays, this "
                f"trajectory {self.n_seeds}"
            )
        for replay, saved in zip(self.replays, state["replays"], strict=True):
            replay.load_state_dict(saved)


# ---- PreAct: each seed's states and actions, into its own replay ----
@update.dispatch
def _(
    trajectory: SeedBlocksReplay,
    policy: AbstractPolicy,
    env: AbstractVectorEnv,
    stage: PreActStage,
    actions: object,
    /,
):
    state, actions = env.state, np.asarray(actions)
    for replay, rows in zip(trajectory.replays, trajectory.blocks(env), strict=True):
        replay.begin_transitions(state[rows], actions[rows])


# ---- PostAct: each seed's rewards, flags and next states ----
@update.dispatch
def _(
    trajectory: SeedBlocksReplay,
    policy: AbstractPolicy,
    env: AbstractVectorEnv,
    stage: PostActStage,
    /,
):
    reward, terminated, truncated = env.reward, env.is_terminated, env.is_truncated
    final = env.final_state
    for replay, rows in zip(trajectory.replays, trajectory.blocks(env), strict=True):
        replay.end_transitions(reward[rows], terminated[rows], truncated[rows], final[rows])
