"""``EvaluationHook``: evaluate the greedy policy on its own environment every N steps or
episodes of a run."""

from __future__ import annotations

import copy
import math
from typing import Any, NamedTuple

import numpy as np

from ..core.checks import exactly_one_of, optional_positive_int, positive_int
from ..core.dispatch import greedy
from ..core.interfaces import AbstractEnv, AbstractHook
from .evaluate import evaluate

__all__ = ["EvaluationHook", "EvaluationRecord"]


class EvaluationRecord(NamedTuple):
    """One evaluation: after ``step`` training environment steps, the greedy policy's mean and
    standard deviation of the return over the evaluation episodes."""

    step: int
    mean: float
    std: float


class EvaluationHook(AbstractHook):
    """Every ``every_n_steps`` environment steps (or ``every_n_episodes`` finished episodes) of
    the training run, run ``rk.evaluate(policy, env, n_episodes, seed=...)`` (the greedy version
    of the policy) on this hook's own ``env`` and record ``(step, mean, std)`` in ``results``.

    The evaluation uses a separate environment and a seed drawn from the hook's own generator
    (derived from ``seed``), so it does not change the training run: the same seed gives the same
    training returns with or without this hook. ``rk.greedy`` shares the learner with the training
    policy but gives the evaluated policy its own explorer; a policy that has no greedy form
    (``rk.greedy`` returns it unchanged, e.g. ``rk.RandomPolicy``) is evaluated as a deep copy, so
    its generator is not advanced. Frequencies count training environment steps or finished
    episodes, never hook calls.

    With ``keep_best=True`` the hook keeps a copy of the parameters that scored best:
    ``best_state`` is a deep copy of ``policy.state_dict()`` (for an ``rk.Agent``, of its inner
    policy: learner, approximator and explorer, not the trajectory), ``best_mean`` its mean return
    and ``best_step`` when it was reached. An evaluation that equals the best replaces it: of
    policies that score alike the one trained longer is kept (on a task with a capped return,
    such as CartPole's 500, many evaluations tie). Restore them with
    ``agent.policy.load_state_dict(hook.best_state)``, or let the hook do it:

    With ``restore_best=True`` (which implies ``keep_best``) the hook loads ``best_state`` into
    the policy when the run ends (PostExperiment), as Keras' ``restore_best_weights`` and
    rl-baselines3-zoo's best model do: the run ends with the policy that evaluated best, and
    ``restored_step`` says which. The whole policy goes back (parameters, optimizer, counters,
    explorer schedule), the trajectory and environment do not; a run continued afterwards
    continues from the restored policy, so ``run(n1)`` then ``run(n2)`` no longer equals
    ``run(n1 + n2)``.

    With a vector training env (``rk.VectorGymEnv``) steps count transitions (``n_envs`` per
    step) and episodes every sub-env's finished episodes; a step that passes a due count
    evaluates once. The evaluation env is a single env. A policy trained in ``rk.VecNormalize``
    normalises the raw observations of the evaluation env itself, with the training statistics,
    frozen (Stable-Baselines3's ``sync_envs_normalization``; docs/how-to/normalization.md); the
    returns recorded are raw.

    Args:
        env: the evaluation environment, not the one the run trains in.
        every_n_steps: evaluate after every this many training environment steps, or
        every_n_episodes: after every this many finished training episodes (give exactly one).
        n_episodes: evaluation episodes per evaluation.
        seed: seed of the hook's generator (int, ``SeedSequence`` or ``Generator``).
        keep_best: keep a copy of the best parameters.
        restore_best: load the best parameters into the policy when the run ends.

    Example:
        >>> import rlkit as rk
        >>> hook = rk.EvaluationHook(rk.GymEnv("CartPole-v1"), every_n_steps=100, n_episodes=2,
        ...                          seed=0)
        >>> _ = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
        ...            rk.StopAfterNSteps(300), hook)
        >>> [r.step for r in hook.results]
        [100, 200, 300]
    """

    def __init__(
        self,
        env: AbstractEnv,
        *,
        every_n_steps: int | None = None,
        every_n_episodes: int | None = None,
        n_episodes: int = 10,
        seed: int | np.random.SeedSequence | np.random.Generator | None = None,
        keep_best: bool = False,
        restore_best: bool = False,
    ) -> None:
        if not isinstance(env, AbstractEnv):
            raise TypeError(
                f"EvaluationHook: env must be an rk.AbstractEnv (wrap gymnasium envs with "
                f"rk.GymEnv), got {type(env).__name__}: {env!r}"
            )
        exactly_one_of(
            "EvaluationHook", every_n_steps=every_n_steps, every_n_episodes=every_n_episodes
        )
        every_n_steps = optional_positive_int("EvaluationHook", "every_n_steps", every_n_steps)
        every_n_episodes = optional_positive_int(
            "EvaluationHook", "every_n_episodes", every_n_episodes
        )
        n_episodes = positive_int("EvaluationHook", "n_episodes", n_episodes)
        self.env = env
        self.every_n_steps = every_n_steps
        self.every_n_episodes = every_n_episodes
        self.n_episodes = n_episodes
        self.restore_best = bool(restore_best)
        self.keep_best = bool(keep_best) or self.restore_best
        self.restored_step: int | None = None
        self.rng = np.random.default_rng(seed)
        self.total_steps = 0
        self.episodes = 0
        self.results: list[EvaluationRecord] = []
        self.best_mean = -math.inf
        self.best_step: int | None = None
        self.best_state: dict[str, Any] | None = None
        self._next_step = every_n_steps if every_n_steps is not None else math.inf
        self._next_episode = every_n_episodes if every_n_episodes is not None else math.inf

    def __repr__(self) -> str:
        every = (
            f"every_n_steps={self.every_n_steps}"
            if self.every_n_steps is not None
            else f"every_n_episodes={self.every_n_episodes}"
        )
        best = ", restore_best=True" if self.restore_best else ", keep_best=True" * self.keep_best
        return f"EvaluationHook({self.env!r}, {every}, n_episodes={self.n_episodes}{best})"

    # ---- PreExperiment: check what the run gives us ----
    def pre_experiment(self, policy: Any, env: Any) -> None:
        if env is self.env:
            raise ValueError(
                f"EvaluationHook: the evaluation env {env!r} is the training env; give the hook "
                f"its own environment, e.g. rk.GymEnv('CartPole-v1')"
            )
        if self.keep_best and not callable(getattr(_parameters_owner(policy), "state_dict", None)):
            raise TypeError(
                f"EvaluationHook: keep_best=True needs a policy with state_dict(), got "
                f"{type(_parameters_owner(policy)).__name__}"
            )

    # ---- PostAct: evaluate every N training steps ----
    def post_act(self, policy: Any, env: Any) -> None:
        self.total_steps += 1
        if self.total_steps >= self._next_step:
            self._next_step += self.every_n_steps
            self.evaluate(policy)

    # ---- PostEpisode: evaluate every N finished episodes ----
    def post_episode(self, policy: Any, env: Any) -> None:
        self.episodes += 1
        if self.episodes >= self._next_episode:
            self._next_episode += self.every_n_episodes
            self.evaluate(policy)

    # ---- vector envs: a step counts n_envs transitions and each finished sub-env episode;
    # one evaluation per step at most (when the step passed the next due count) ----
    def vector_post_act(self, policy: Any, env: Any) -> None:
        self.total_steps += env.n_envs
        self.episodes += int(env.done.sum())
        due = False
        while self.total_steps >= self._next_step:
            self._next_step += self.every_n_steps
            due = True
        while self.episodes >= self._next_episode:
            self._next_episode += self.every_n_episodes
            due = True
        if due:
            self.evaluate(policy)

    vector_post_episode = None

    # ---- PostExperiment: end with the best policy ----
    def post_experiment(self, policy: Any, env: Any) -> None:
        if self.restore_best and self.best_state is not None:
            _parameters_owner(policy).load_state_dict(copy.deepcopy(self.best_state))
            self.restored_step = self.best_step

    def evaluate(self, policy: Any) -> EvaluationRecord:
        """Evaluate ``policy`` now, record the result (and keep the best parameters)."""
        seed = int(self.rng.integers(2**31 - 1))
        result = evaluate(_evaluated(policy), self.env, self.n_episodes, seed=seed)
        record = EvaluationRecord(self.total_steps, float(result.mean), float(result.std))
        self.results.append(record)
        if self.keep_best and record.mean >= self.best_mean:
            self.best_mean = record.mean
            self.best_step = record.step
            self.best_state = copy.deepcopy(_parameters_owner(policy).state_dict())
        return record

    # ---- checkpoint protocol ----
    def state_dict(self) -> dict[str, Any]:
        """Counters, the generator, the results and the best parameters."""
        return {
            "total_steps": self.total_steps,
            "episodes": self.episodes,
            "rng": self.rng.bit_generator.state,
            "results": [list(r) for r in self.results],
            "best_mean": None if math.isinf(self.best_mean) else self.best_mean,
            "best_step": self.best_step,
            "best_state": self.best_state,
            "restored_step": self.restored_step,
            "next_step": None if math.isinf(self._next_step) else int(self._next_step),
            "next_episode": None if math.isinf(self._next_episode) else int(self._next_episode),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved (call it between runs)."""
        self.total_steps = int(state["total_steps"])
        self.episodes = int(state["episodes"])
        self.rng.bit_generator.state = state["rng"]
        self.results = [
            EvaluationRecord(int(s), float(m), float(d)) for s, m, d in state["results"]
        ]
        best = state["best_mean"]
        self.best_mean = -math.inf if best is None else float(best)
        self.best_step = None if state["best_step"] is None else int(state["best_step"])
        self.best_state = state["best_state"]
        restored = state.get("restored_step")  # absent from checkpoints of rlkit < 0.2
        self.restored_step = None if restored is None else int(restored)
        self._next_step = math.inf if state["next_step"] is None else int(state["next_step"])
        self._next_episode = (
            math.inf if state["next_episode"] is None else int(state["next_episode"])
        )


def _evaluated(policy: Any) -> Any:
    """What to evaluate so that the training policy's own state is left alone.

    ``rk.greedy`` gives a new greedy policy where one exists (sharing the learner, with its own
    explorer and generator); a policy without a greedy form is returned as it is, and acting with
    it would draw from the training run's generators, so it is evaluated as a copy.
    """
    evaluated = greedy(policy)
    if evaluated is policy or evaluated is getattr(policy, "policy", None):
        return copy.deepcopy(evaluated)
    return evaluated


def _parameters_owner(policy: Any) -> Any:
    """The object whose ``state_dict`` holds the parameters: an Agent's inner policy (the
    ``policy`` a wrapper holds), else the policy itself."""
    return getattr(policy, "policy", policy)
