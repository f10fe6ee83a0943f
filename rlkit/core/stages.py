"""The six stages the run loop announces.

Each stage is a singleton instance of its own class, so methods can dispatch on the stage type
(``stage: PostActStage``) and the run loop can use the instance (``POST_ACT_STAGE``). Stages pickle
by reference: unpickling returns the same singleton.

Example:
    >>> import rlkit as rk
    >>> rk.POST_ACT_STAGE
    PostAct
    >>> isinstance(rk.POST_ACT_STAGE, rk.PostActStage)
    True
"""

from __future__ import annotations

__all__ = [
    "AbstractStage",
    "PreExperimentStage",
    "PreEpisodeStage",
    "PreActStage",
    "PostActStage",
    "PostEpisodeStage",
    "PostExperimentStage",
    "PRE_EXPERIMENT_STAGE",
    "PRE_EPISODE_STAGE",
    "PRE_ACT_STAGE",
    "POST_ACT_STAGE",
    "POST_EPISODE_STAGE",
    "POST_EXPERIMENT_STAGE",
    "STAGES",
]


class AbstractStage:
    """Base class of the stages. ``method_name`` is the hook method called at this stage."""

    __slots__ = ()
    name: str = ""
    method_name: str = ""
    constant: str = ""

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self) -> str:
        return self.constant


class PreExperimentStage(AbstractStage):
    """Announced once, before the first episode."""

    __slots__ = ()
    name, method_name, constant = "PreExperiment", "pre_experiment", "PRE_EXPERIMENT_STAGE"


class PreEpisodeStage(AbstractStage):
    """Announced after ``env.reset()``, before the first action of an episode."""

    __slots__ = ()
    name, method_name, constant = "PreEpisode", "pre_episode", "PRE_EPISODE_STAGE"


class PreActStage(AbstractStage):
    """Announced after the policy chose an action and before the env performs it."""

    __slots__ = ()
    name, method_name, constant = "PreAct", "pre_act", "PRE_ACT_STAGE"


class PostActStage(AbstractStage):
    """Announced after the env performed the action (reward and next state are available)."""

    __slots__ = ()
    name, method_name, constant = "PostAct", "post_act", "POST_ACT_STAGE"


class PostEpisodeStage(AbstractStage):
    """Announced after the last step of a finished (terminated or truncated) episode."""

    __slots__ = ()
    name, method_name, constant = "PostEpisode", "post_episode", "POST_EPISODE_STAGE"


class PostExperimentStage(AbstractStage):
    """Announced once when the run ends, also when it ends with an exception."""

    __slots__ = ()
    name, method_name, constant = "PostExperiment", "post_experiment", "POST_EXPERIMENT_STAGE"


PRE_EXPERIMENT_STAGE = PreExperimentStage()
PRE_EPISODE_STAGE = PreEpisodeStage()
PRE_ACT_STAGE = PreActStage()
POST_ACT_STAGE = PostActStage()
POST_EPISODE_STAGE = PostEpisodeStage()
POST_EXPERIMENT_STAGE = PostExperimentStage()

#: The stages in the order the run loop announces them within one step of an episode.
STAGES = (
    PRE_EXPERIMENT_STAGE,
    PRE_EPISODE_STAGE,
    PRE_ACT_STAGE,
    POST_ACT_STAGE,
    POST_EPISODE_STAGE,
    POST_EXPERIMENT_STAGE,
)
