"""Replay on ``rk.VecNormalize`` records the raw transitions (docs/how-to/normalization.md).

Stable-Baselines3's off-policy algorithms store what the wrapped env gave, unnormalised
(``OffPolicyAlgorithm._store_transition``: ``get_original_obs()``, ``get_original_reward()``),
and normalise each batch when it is sampled, with the statistics as they are then: the replay
never holds observations normalised by statistics that have drifted since. These recording
methods are the replay's (``rk.CircularArraySARTTrajectory`` and its subclasses) on a
``VecNormalize`` env: the same as on any vector env (rlkit/trajectories/circular.py), except
that they read ``original_state``, ``original_reward`` and ``original_final_state`` (the real
final observations where an episode ended, unnormalised: exact, where SB3 unnormalises the
normalised terminal observation). The off-policy driver normalises the batches
(rlkit/learners/drivers/off_policy.py).

Example:
    >>> import rlkit as rk
    >>> env = rk.VecNormalize(rk.VectorGymEnv("CartPole-v1", 2, seed=0))
    >>> t = rk.CircularArraySARTTrajectory(100, env.state_space, env.action_space)
    >>> _ = rk.run(rk.Agent(rk.RandomPolicy(seed=0), t), env, rk.StopAfterNSteps(10))
    >>> t.reward[:4].tolist(), env.reward.tolist()  # raw in the replay; the env's scaled
    ([1.0, 1.0, 1.0, 1.0], [0.7250322699546814, 0.7250322699546814])
"""

from __future__ import annotations

from ..core.dispatch import update
from ..core.interfaces import AbstractPolicy
from ..core.stages import PostActStage, PreActStage
from ..trajectories.circular import CircularArraySARTTrajectory, _final_masks
from .vec_normalize import VecNormalize

__all__: list[str] = []


# ---- PreAct: the raw states of the batch and the actions ----
@update.dispatch
def _(
    trajectory: CircularArraySARTTrajectory,
    policy: AbstractPolicy,
    env: VecNormalize,
    stage: PreActStage,
    actions: object,
    /,
):
    trajectory.begin_transitions(env.original_state, actions)


# ---- PostAct: the raw rewards, the flags and the raw next states (the real final ones) ----
@update.dispatch
def _(
    trajectory: CircularArraySARTTrajectory,
    policy: AbstractPolicy,
    env: VecNormalize,
    stage: PostActStage,
    /,
):
    if trajectory.next_legal_action_mask is not None:
        trajectory.write_next_masks(_final_masks(env), batch=True)
    trajectory.end_transitions(
        env.original_reward, env.is_terminated, env.is_truncated, env.original_final_state
    )
