"""Hooks that call a function every n steps or episodes, or once at the end of a run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.checks import callable_name, check_callable, positive_int
from ..core.interfaces import AbstractHook
from ..core.stages import POST_EPISODE_STAGE, PRE_EPISODE_STAGE, AbstractStage
from ..core.state import require_keys, state_count

__all__ = ["DoEveryNSteps", "DoEveryNEpisodes", "DoOnExit"]


# ---- callbacks ----


class _EveryN(AbstractHook):
    """Counts calls of ``_tick`` in ``t`` and calls ``f(t, policy, env)`` at every ``n``-th;
    the count is the hook's checkpoint state."""

    def __init__(self, f: Callable[[int, Any, Any], Any], n: int = 1) -> None:
        name = type(self).__name__
        self.f = check_callable(name, "f", f, "f(t, policy, env)")
        self.n = positive_int(name, "n", n)
        self.t = 0

    def _tick(self, policy: Any, env: Any) -> None:
        self.t += 1
        if self.t % self.n == 0:
            self.f(self.t, policy, env)

    def state_dict(self) -> dict[str, Any]:
        return {"t": self.t}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        name = type(self).__name__
        require_keys(name, state, "t")
        self.t = state_count(name, state, "t")


class DoEveryNSteps(_EveryN):
    """Call ``f(t, policy, env)`` at PostAct of every ``n``-th environment step, where ``t`` is
    the number of steps this hook has seen (across runs).

    Example:
        >>> import rlkit as rk
        >>> seen = []
        >>> hook = rk.DoEveryNSteps(lambda t, policy, env: seen.append(t), n=4)
        >>> _ = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
        ...            rk.StopAfterNSteps(10), hook)
        >>> seen
        [4, 8]
    """

    post_act = _EveryN._tick

    def __repr__(self) -> str:
        return f"DoEveryNSteps({callable_name(self.f)}, n={self.n})"


class DoEveryNEpisodes(_EveryN):
    """Call ``f(t, policy, env)`` every ``n`` episodes, at ``stage``.

    At ``rk.POST_EPISODE_STAGE`` (the default) ``t`` counts finished episodes and ``f`` runs after
    episode ``n, 2n, ...`` finished; at ``rk.PRE_EPISODE_STAGE`` ``t`` counts started episodes
    and ``f`` runs after the reset of episode ``n, 2n, ...``. Counts continue across runs.

    Example:
        >>> import rlkit as rk
        >>> seen = []
        >>> hook = rk.DoEveryNEpisodes(lambda t, policy, env: seen.append(t), n=2)
        >>> _ = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
        ...            rk.StopAfterNEpisodes(5), hook)
        >>> seen
        [2, 4]
    """

    def __init__(
        self,
        f: Callable[[int, Any, Any], Any],
        n: int = 1,
        stage: AbstractStage = POST_EPISODE_STAGE,
    ) -> None:
        super().__init__(f, n)
        if stage is not PRE_EPISODE_STAGE and stage is not POST_EPISODE_STAGE:
            raise ValueError(
                f"DoEveryNEpisodes: stage must be rk.POST_EPISODE_STAGE or rk.PRE_EPISODE_STAGE, "
                f"got {stage!r}"
            )
        self.stage = stage
        # Only the chosen stage's method is overridden, so the call plan holds just that one.
        setattr(self, stage.method_name, self._tick)

    def __repr__(self) -> str:
        return f"DoEveryNEpisodes({callable_name(self.f)}, n={self.n}, stage={self.stage!r})"


class DoOnExit(AbstractHook):
    """Call ``f(policy, env)`` once at PostExperiment (also when the run ends with an exception).

    Example:
        >>> import rlkit as rk
        >>> hook = rk.DoOnExit(lambda policy, env: print("done:", env.done))
        >>> _ = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
        ...            rk.StopAfterNEpisodes(1), hook)
        done: True
    """

    def __init__(self, f: Callable[[Any, Any], Any]) -> None:
        self.f = check_callable("DoOnExit", "f", f, "f(policy, env)")

    def __repr__(self) -> str:
        return f"DoOnExit({callable_name(self.f)})"

    def post_experiment(self, policy: Any, env: Any) -> None:
        self.f(policy, env)

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        require_keys("DoOnExit", state)
