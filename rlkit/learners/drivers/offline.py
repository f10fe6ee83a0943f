"""The offline driver (docs/how-to/offline-rl.md): every learner that learns from a dataset
learns through this one PostAct method, one gradient step per step of the offline run::

    batch = policy.offline_batch(env.sample())    the env's next sample, as the learner's Batch
    update(policy, batch)                          the algorithm's rule, in its own file

The protocol a learner provides to plug in (nothing else; no second driver):

* it is a :class:`~rlkit.BuiltPolicy` (``rk.build_policy(..., base=...)``: BC, and the
  off-policy actor-critics such as SAC/TD3-based CQL, IQL, TD3+BC) or a
  :class:`~rlkit.learners.value_based.common.ValueBasedLearner` (the DQN family inside
  ``rk.QBasedPolicy``: DiscreteCQL);
* it has ``offline_batch(sample) -> Batch``: the dataset's sample (a dict of numpy arrays:
  ``state``, ``action``, ``reward``, ``terminal`` (float32: terminations only; a truncated
  transition bootstraps), ``next_state``) as the batch its ``update(policy, batch)`` reads;
* it has ``update(policy: X, batch: Batch)`` (its own, or its base's).

PreExperiment checks the protocol and that the learner fits the dataset's spaces, naming both.
"""

from __future__ import annotations

from typing import Any

from ...core.dispatch import update
from ...core.interfaces import AbstractOfflineEnv
from ...core.stages import PostActStage, PreExperimentStage
from ...trajectories.structured import is_structured_space, structured
from ..built import BuiltPolicy
from ..value_based.common import ValueBasedLearner

__all__ = ["offline_step", "check_offline"]


def offline_step(policy: Any, env: AbstractOfflineEnv) -> None:
    """One gradient step: ``update(policy, policy.offline_batch(env.sample()))`` (a sample of
    ``Dict`` observations whose keys differ from the env's space is refused, naming both); a
    learner that keeps its diagnostics per round (``end_round(n, means)``, the off-policy
    actor-critics) gets this step's as a round of one."""
    sample = env.sample()
    space = env.state_space
    if is_structured_space(space):  # a Dict observation: the sample's keys must be the space's
        for key in ("state", "next_state"):
            if key in sample:
                structured(f"{env!r}: the sample's {key}", space, sample[key])
    info = update(policy, policy.offline_batch(sample))
    end_round = getattr(policy, "end_round", None)
    if end_round is not None:
        end_round(1, {k: float(v) for k, v in (info or {}).items()})


def check_offline(policy: Any, env: AbstractOfflineEnv) -> None:
    """Refuse a learner without ``offline_batch`` (it cannot read a dataset's sample)."""
    if not callable(getattr(policy, "offline_batch", None)):
        name = getattr(type(policy), "name", type(policy).__name__)
        raise TypeError(
            f"{name} cannot learn offline from {env!r}: it has no offline_batch(sample) method "
            f"turning the dataset's sample into its Batch (see rlkit/learners/drivers/offline.py); "
            f"offline algorithms: rk.BC, rk.DiscreteCQL"
        )


# ---- built policies (BC; SAC/TD3-based offline algorithms) ----
@update.dispatch
def _(policy: BuiltPolicy, env: AbstractOfflineEnv, stage: PreExperimentStage, /):
    check_offline(policy, env)


@update.dispatch
def _(policy: BuiltPolicy, env: AbstractOfflineEnv, stage: PostActStage, /):
    offline_step(policy, env)


# ---- the DQN family (inside QBasedPolicy, which forwards to its learner) ----
@update.dispatch
def _(learner: ValueBasedLearner, env: AbstractOfflineEnv, stage: PreExperimentStage, /):
    check_offline(learner, env)
    try:
        learner.check(env)
    except (TypeError, ValueError) as error:
        raise type(error)(
            f"{type(learner).__name__} does not fit the dataset of {env!r} (observations "
            f"{env.state_space}, actions {env.action_space}): {error}"
        ) from None


@update.dispatch
def _(learner: ValueBasedLearner, env: AbstractOfflineEnv, stage: PostActStage, /):
    offline_step(learner, env)
