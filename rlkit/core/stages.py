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
    """Base class of the stages. ``method_name`` is the hook method called at this stage.

    Example:
        >>> import rlkit as rk
        >>> [stage.method_name for stage in (rk.PRE_EPISODE_STAGE, rk.POST_EPISODE_STAGE)]
        ['pre_episode', 'post_episode']
        >>> isinstance(rk.POST_ACT_STAGE, rk.AbstractStage)
        True
    """

    __slots__ = ()
    name: str = ""
    method_name: str = ""
    constant: str = ""

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self) -> str:
        return self.constant


class PreExperimentStage(AbstractStage):
    """Announced once, before the first episode.

    Example:
        >>> import rlkit as rk
        >>> rk.PRE_EXPERIMENT_STAGE, rk.PreExperimentStage.method_name
        (PreExperiment, 'pre_experiment')
    """

    __slots__ = ()
    name, method_name, constant = "PreExperiment", "pre_experiment", "PRE_EXPERIMENT_STAGE"


class PreEpisodeStage(AbstractStage):
    """Announced after ``env.reset()``, before the first action of an episode.

    Example:
        >>> import rlkit as rk
        >>> rk.PRE_EPISODE_STAGE, rk.PreEpisodeStage.method_name
        (PreEpisode, 'pre_episode')
    """

    __slots__ = ()
    name, method_name, constant = "PreEpisode", "pre_episode", "PRE_EPISODE_STAGE"


class PreActStage(AbstractStage):
    """Announced after the policy chose an action and before the env performs it.

    Hooks get the action too: ``hook.pre_act(policy, env, action)``.

    Example:
        >>> import rlkit as rk
        >>> rk.PRE_ACT_STAGE, rk.PreActStage.method_name
        (PreAct, 'pre_act')
    """

    __slots__ = ()
    name, method_name, constant = "PreAct", "pre_act", "PRE_ACT_STAGE"


class PostActStage(AbstractStage):
    """Announced after the env performed the action (reward and next state are available).

    Example:
        >>> import rlkit as rk
        >>> rk.POST_ACT_STAGE, rk.PostActStage.method_name
        (PostAct, 'post_act')
    """

    __slots__ = ()
    name, method_name, constant = "PostAct", "post_act", "POST_ACT_STAGE"


class PostEpisodeStage(AbstractStage):
    """Announced after the last step of a finished (terminated or truncated) episode.

    Example:
        >>> import rlkit as rk
        >>> rk.POST_EPISODE_STAGE, rk.PostEpisodeStage.method_name
        (PostEpisode, 'post_episode')
    """

    __slots__ = ()
    name, method_name, constant = "PostEpisode", "post_episode", "POST_EPISODE_STAGE"


class PostExperimentStage(AbstractStage):
    """Announced once when the run ends, also when it ends with an exception.

    Example:
        >>> import rlkit as rk
        >>> rk.POST_EXPERIMENT_STAGE, rk.PostExperimentStage.method_name
        (PostExperiment, 'post_experiment')
    """

    __slots__ = ()
    name, method_name, constant = "PostExperiment", "post_experiment", "POST_EXPERIMENT_STAGE"


PRE_EXPERIMENT_STAGE = PreExperimentStage()
"""The PreExperiment stage, the one instance of :class:`PreExperimentStage`.

Example:
    >>> import rlkit as rk
    >>> rk.PRE_EXPERIMENT_STAGE, isinstance(rk.PRE_EXPERIMENT_STAGE, rk.PreExperimentStage)
    (PreExperiment, True)
"""
PRE_EPISODE_STAGE = PreEpisodeStage()
"""The PreEpisode stage, the one instance of :class:`PreEpisodeStage`.

Example:
    >>> import rlkit as rk
    >>> rk.PRE_EPISODE_STAGE, isinstance(rk.PRE_EPISODE_STAGE, rk.PreEpisodeStage)
    (PreEpisode, True)
"""
PRE_ACT_STAGE = PreActStage()
"""The PreAct stage, the one instance of :class:`PreActStage`.

Example:
    >>> import rlkit as rk
    >>> rk.PRE_ACT_STAGE, isinstance(rk.PRE_ACT_STAGE, rk.PreActStage)
    (PreAct, True)
"""
POST_ACT_STAGE = PostActStage()
"""The PostAct stage, the one instance of :class:`PostActStage`.

Example:
    >>> import rlkit as rk
    >>> rk.POST_ACT_STAGE, isinstance(rk.POST_ACT_STAGE, rk.PostActStage)
    (PostAct, True)
"""
POST_EPISODE_STAGE = PostEpisodeStage()
"""The PostEpisode stage, the one instance of :class:`PostEpisodeStage`.

Example:
    >>> import rlkit as rk
    >>> rk.POST_EPISODE_STAGE, isinstance(rk.POST_EPISODE_STAGE, rk.PostEpisodeStage)
    (PostEpisode, True)
"""
POST_EXPERIMENT_STAGE = PostExperimentStage()
"""The PostExperiment stage, the one instance of :class:`PostExperimentStage`.

Example:
    >>> import rlkit as rk
    >>> rk.POST_EXPERIMENT_STAGE, isinstance(rk.POST_EXPERIMENT_STAGE, rk.PostExperimentStage)
    (PostExperiment, True)
"""

#: The stages in the order the run loop announces them within one step of an episode.
STAGES = (
    PRE_EXPERIMENT_STAGE,
    PRE_EPISODE_STAGE,
    PRE_ACT_STAGE,
    POST_ACT_STAGE,
    POST_EPISODE_STAGE,
    POST_EXPERIMENT_STAGE,
)
