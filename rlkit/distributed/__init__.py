"""Scale-out: the actor-learner split (docs/how-to/scale-out.md).

``rk.distributed.ActorLearner(agent, env_fn, n_actors, backend="local" | "ray")``: actors with
their own copies of the policy act and send their experience to the learner, an ordinary
``rk.Agent`` (Ape-X for value-based learners, IMPALA's V-trace for on-policy ones).

Example:
    >>> import rlkit as rk
    >>> rk.distributed.apex_epsilons(2)
    [0.4, 0.0006553600000000003]
"""

from . import loop as _loop  # noqa: F401 - registers the actor-learner run loop
from .actor_learner import ActorLearner
from .backends import ActorError
from .exploration import apex_epsilons

__all__ = ["ActorLearner", "ActorError", "apex_epsilons"]
