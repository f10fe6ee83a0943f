"""``QBasedPolicy(learner, explorer)``: act on a learner's action values through an explorer."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.spaces import Discrete

from ..core.dispatch import forward, greedy, update
from ..core.interfaces import (
    AbstractEnv,
    AbstractLearner,
    AbstractOfflineEnv,
    AbstractPolicy,
    AbstractTrajectory,
    AbstractVectorEnv,
)
from ..core.stages import AbstractStage
from ..core.state import get_state
from .explorers import AbstractExplorer, EpsilonGreedyExplorer, GreedyExplorer
from .normalized import normalized_batch, normalized_state
from .predict import mask_batch, masked_argmax, observation_batch, single_or_batch

__all__ = ["QBasedPolicy", "check_spaces", "deterministic_learner"]


class QBasedPolicy(AbstractPolicy):
    """Choose ``explorer(learner(env), env.legal_action_mask)``; learning goes to the learner.

    ``learner(env)`` gives the action values of the current state; the explorer turns them into
    an action, honouring the env's legal-action mask. ``update(policy, trajectory, env, stage)``
    is forwarded to ``update(learner, trajectory, env, stage)`` (resolved once by the call plan,
    so ``rk.explain`` shows the learner's own methods).

    With a vector env ``learner(env)`` gives one row of values per sub-env (a neural learner:
    one forward pass for the batch) and ``explorer.batch`` one action per row.

    Learners that need the behaviour policy's action probabilities (Expected SARSA, SARSA
    bootstrapping at truncation) have an attribute ``explorer``; when it is None, the policy sets
    it to its own explorer.

    Example:
        >>> import numpy as np
        >>> import rlkit as rk
        >>> class Fixed(rk.AbstractLearner):
        ...     def __call__(self, env):
        ...         return np.array([0.0, 1.0, 0.0, 0.0])
        >>> policy = rk.QBasedPolicy(Fixed(), rk.EpsilonGreedyExplorer(0.0, seed=0))
        >>> env = rk.GymEnv("CliffWalking-v1", seed=0); env.reset()
        >>> policy(env)
        1
    """

    #: an ``rk.VecNormalize``'s observation statistics (``rk.DQN.agent(env)`` on one; ``rk.load``
    #: of such a policy), frozen here: ``predict`` and acting on a raw env normalise with them,
    #: ``rk.save`` keeps them (rlkit/policies/normalized.py)
    observation_normalizer: Any = None

    def __init__(self, learner: AbstractLearner, explorer: AbstractExplorer) -> None:
        if not isinstance(learner, AbstractLearner):
            raise TypeError(
                f"QBasedPolicy: learner must be an rk.AbstractLearner, got "
                f"{type(learner).__name__}: {learner!r}"
            )
        if not isinstance(explorer, AbstractExplorer):
            raise TypeError(
                f"QBasedPolicy: explorer must be an rk.AbstractExplorer (e.g. "
                f"rk.EpsilonGreedyExplorer(0.1)), got {type(explorer).__name__}: {explorer!r}"
            )
        self.learner = learner
        self.explorer = explorer
        if hasattr(learner, "explorer") and learner.explorer is None:
            learner.explorer = explorer

    def __repr__(self) -> str:
        return f"QBasedPolicy({self.learner!r}, {self.explorer!r})"

    def act(self, env: Any) -> Any:
        if self.observation_normalizer is not None:  # raw obs: rlkit/policies/normalized.py
            env = NormalizedView.of(self, env)
        if getattr(env, "is_vector", False):  # one row of values per sub-env
            return self.explorer.batch(self.learner(env), env.legal_action_mask)
        n_actions = self._lazy_actions()
        if n_actions is not None and env.legal_action_mask is None:
            # the values only for a greedy action: the same actions, the same draws
            learner = self.learner
            return self.explorer.act_lazily(lambda: learner(env), n_actions)
        values = self.learner(env)
        return self.explorer(values, env.legal_action_mask)

    def _lazy_actions(self) -> int | None:
        """The number of actions when acting may skip the learner's values on exploring steps
        (an ``rk.EpsilonGreedyExplorer``, and a learner whose ``learner(env)`` is a pure
        function of the state, ``pure_values``, checked against a ``Discrete`` action space
        from 0: the DQN family after its start-of-run check); None otherwise."""
        if type(self.explorer) is not EpsilonGreedyExplorer:
            return None
        learner = self.learner
        space = getattr(learner, "action_space", None)
        if not getattr(learner, "pure_values", False) or type(space) is not Discrete:
            return None
        return int(space.n) if int(space.start) == 0 else None

    def plan(self, env: Any) -> dict:
        """Nothing to call at the stages (learning is the learner's, through an Agent); checks
        at plan time that the learner's approximator fits the env's spaces (a table sized
        with integers on a Box state space fails here, not at the first step)."""
        check_spaces(self.learner, env, with_actions=True)
        return super().plan(env)

    def prob(self, env: Any) -> np.ndarray:
        """The probability of each action in ``env``'s current state (does not change the
        explorer)."""
        return self.explorer.prob(self.learner(env), env.legal_action_mask)

    # ---- predict: actions for plain numpy observations (SB3's model.predict) ----
    def predict(
        self, obs: Any, deterministic: bool = True, action_masks: Any = None
    ) -> np.ndarray:
        """The actions for one observation or a batch (see :mod:`rlkit.policies.predict`).

        ``deterministic``: the first maximal legal action (``numpy.argmax``'s tie-break, as
        SB3's DQN and the ONNX export; ``rk.greedy`` breaks ties at random instead). Otherwise
        a draw from ``explorer.prob`` (epsilon-greedy with the explorer's current epsilon) made
        with a generator of ``predict``'s own, so the explorer's schedule and generator, and
        thus a training run, are not changed. ``action_masks``: legal actions, ``(n_actions,)``
        or ``(n, n_actions)`` booleans.

        Example:
            >>> import numpy as np, rlkit as rk
            >>> env = rk.GymEnv("CliffWalking-v1", seed=0)
            >>> q = rk.TabularQApproximator(env.state_space, env.action_space)
            >>> q.table[5] = [0.0, 2.0, 1.0, 0.0]
            >>> policy = rk.QBasedPolicy(rk.TDLearner(q, method="qlearning"),
            ...                          rk.EpsilonGreedyExplorer(0.1, seed=0))
            >>> policy.predict(5), policy.predict(np.array([5, 5])).tolist()
            (array(1), [1, 1])
        """
        owner = type(self).__name__
        batch, single = observation_batch(owner, obs, observation_space(self))
        batch = normalized_batch(self, batch)  # rk.VecNormalize's statistics, frozen
        values = self.values(batch, deterministic=deterministic)
        masks = mask_batch(owner, action_masks, len(batch), values.shape[-1])
        if deterministic:
            actions = masked_argmax(values, masks)
        else:
            rng = self.__dict__.setdefault("_predict_rng", np.random.default_rng(0))
            actions = np.array(
                [
                    rng.choice(len(row), p=self.explorer.prob(row, None if m is None else m))
                    for row, m in zip(values, [None] * len(values) if masks is None else masks,
                                      strict=True)
                ],
                dtype=np.int64,
            )
        return single_or_batch(actions, single)

    def values(self, batch: np.ndarray, deterministic: bool = False) -> np.ndarray:
        """The learner's action values ``(n, n_actions)`` for a batch of observations, computed
        as when acting (``learner(env)`` on a view holding them): one forward pass for a
        neural learner, one call per row for others. ``deterministic``: the learner's
        deterministic form (:func:`deterministic_learner`: noisy layers at their means)."""
        learner = deterministic_learner(self.learner) if deterministic else self.learner
        if hasattr(self.learner, "model"):  # neural: a batch as a vector env's states
            return np.asarray(learner(ObservationView(batch, vector=True)))
        return np.stack([np.asarray(learner(ObservationView(o))) for o in batch])

    def state_dict(self) -> dict[str, Any]:
        """The learner's and the explorer's state, for checkpoints."""
        return {"learner": get_state(self.learner), "explorer": self.explorer.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a state saved by :meth:`state_dict`."""
        self.learner.load_state_dict(state["learner"])
        self.explorer.load_state_dict(state["explorer"])


class NormalizedView:
    """``env`` as a Q-based policy with an observation normaliser reads it where the env gives
    raw observations (a greedy evaluation, ``rlkit enjoy``): ``state`` normalised with the
    policy's statistics; the rest (``is_vector``, ``n_envs``, ``legal_action_mask``) the
    env's. Where the env normalises itself (the training ``rk.VecNormalize``), the env.

    Example:
        >>> import numpy as np
        >>> class P: observation_normalizer = staticmethod(lambda obs: obs * 0)
        >>> class RawEnv: state, legal_action_mask = np.ones(2), None
        >>> view = NormalizedView.of(P(), RawEnv())
        >>> view.state.tolist(), view.legal_action_mask
        ([0.0, 0.0], None)
    """

    def __init__(self, env: Any, state: Any) -> None:
        self.env = env
        self.state = state

    @classmethod
    def of(cls, policy: Any, env: Any) -> Any:
        """``env`` itself, or a view of it with normalised observations."""
        state = normalized_state(policy, env, env.state)
        return env if state is env.state else cls(env, state)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or "env" not in self.__dict__:
            raise AttributeError(name)
        return getattr(self.__dict__["env"], name)


class ObservationView:
    """What a learner reads when computing action values: ``state`` (and ``is_vector``,
    ``n_envs``), without an environment (``QBasedPolicy.predict``)."""

    legal_action_mask = None

    def __init__(self, state: Any, *, vector: bool = False) -> None:
        self.state = state.item() if not vector and np.ndim(state) == 0 else state
        self.is_vector = vector
        self.n_envs = len(state) if vector else 1


def observation_space(policy: QBasedPolicy) -> Any:
    """The observation space a Q-based policy acts on: its own ``state_space`` (loaded
    policies), its learner's (recorded when a neural learner first runs), or a tabular
    approximator's ``Discrete(n_states)``; refused when unknown."""
    import gymnasium as gym

    for owner in (policy, policy.learner):
        space = getattr(owner, "state_space", None)
        if space is not None:
            return space
    table = getattr(getattr(policy.learner, "approximator", None), "table", None)
    if isinstance(table, np.ndarray) and table.ndim == 2:
        return gym.spaces.Discrete(table.shape[0])
    raise ValueError(
        f"{type(policy).__name__}.predict: the observation space of {policy.learner!r} is not "
        f"known; run the policy once (rk.run) or load it with rk.load"
    )


def deterministic_learner(learner: Any) -> Any:
    """The form of ``learner`` that greedy and deterministic acting read: its
    ``deterministic()`` where it has one (``RainbowLearner``: noisy layers at their means),
    else the learner itself.

    Example:
        >>> import numpy as np, rlkit as rk
        >>> class Fixed(rk.AbstractLearner):
        ...     def __call__(self, env):
        ...         return np.zeros(2)
        >>> learner = Fixed()
        >>> deterministic_learner(learner) is learner
        True
    """
    form = getattr(learner, "deterministic", None)
    return form() if callable(form) else learner


def check_spaces(learner: Any, env: Any, *, with_actions: bool) -> None:
    """``learner.approximator.check_spaces(state_space[, action_space])`` where it exists."""
    check = getattr(getattr(learner, "approximator", None), "check_spaces", None)
    if callable(check):
        state_space = getattr(env, "state_space", None)
        check(state_space, getattr(env, "action_space", None) if with_actions else None)


# ---- every stage: learning is the learner's ----
@update.dispatch
@forward("learner")
def _(
    policy: QBasedPolicy,
    trajectory: AbstractTrajectory,
    env: AbstractEnv | AbstractVectorEnv,
    stage: AbstractStage,
    /,
):
    return update(policy.learner, trajectory, env, stage)


# ---- offline runs: learning from a dataset is the learner's too ----
@update.dispatch
@forward("learner")
def _(policy: QBasedPolicy, env: AbstractOfflineEnv, stage: AbstractStage, /):
    return update(policy.learner, env, stage)


# ---- greedy: the same learner (shared, not copied; its deterministic form where it has one:
# noisy layers at their means) acting with a GreedyExplorer ----
@greedy.dispatch
def _(policy: QBasedPolicy, seed: object = None, /):
    evaluated = QBasedPolicy(
        deterministic_learner(policy.learner), GreedyExplorer(seed=0 if seed is None else seed)
    )
    evaluated.evaluation_only = True  # run alone without the "cannot learn" warning
    evaluated.observation_normalizer = policy.observation_normalizer
    return evaluated
