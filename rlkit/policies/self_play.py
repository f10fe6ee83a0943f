"""``SelfPlay``: a learning policy against frozen past copies of itself
(docs/how-to/multi-agent.md)."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.checks import positive_int
from ..core.dispatch import PlanStep, where
from ..core.interfaces import AbstractPolicy
from ..core.multiagent import AbstractMultiAgentPolicy
from ..core.stages import POST_EPISODE_STAGE, POST_EXPERIMENT_STAGE, PRE_EPISODE_STAGE, STAGES
from ..core.state import generator_state, get_state, require_keys, set_generator_state, set_state
from .multi_agent import UnknownAgentError

__all__ = ["SelfPlay"]


class SelfPlay(AbstractMultiAgentPolicy):
    """A learning policy plays one seat of every episode; the other seats are played by frozen
    past copies of it, drawn uniformly from a pool (as in AlphaStar's and OpenAI Five's
    self-play, and RLlib's self-play examples).

    * Seats: the learner plays ``agents[k % len(agents)]`` in episode ``k`` (every seat in
      turn); each other seat draws a copy from the pool with the policy's own generator.
    * Pool: starts with a copy of the learner as built; every ``refresh_every`` finished
      episodes a copy of the learner as it is now joins it, and the oldest copy leaves when
      there are more than ``pool_size``. A copy is a deep copy of the acting policy (an
      ``rk.Agent``'s policy), frozen: it only acts, it never records or learns.

    Only the learner's seat sees the stages (records and learns). Checkpoints save the learner,
    every copy of the pool, the counters, the seating and the generator.

    Example:
        >>> import rlkit as rk
        >>> from pettingzoo.classic import tictactoe_v3
        >>> env = rk.PettingZooEnv(tictactoe_v3.env(), seed=0)
        >>> learner = rk.RandomPolicy(seed=0)
        >>> policy = rk.SelfPlay(learner, env.agents, pool_size=2, refresh_every=5, seed=0)
        >>> hook = rk.run(policy, env, rk.StopAfterNEpisodes(20))
        >>> policy.episodes, len(policy.pool)
        (20, 2)
    """

    def __init__(
        self,
        learner: AbstractPolicy,
        agents: Sequence,
        *,
        pool_size: int = 5,
        refresh_every: int = 100,
        seed: int | np.random.SeedSequence | np.random.Generator | None = None,
    ) -> None:
        if not isinstance(learner, AbstractPolicy):
            raise TypeError(
                f"SelfPlay: learner must be an rk.AbstractPolicy, got {type(learner).__name__}: "
                f"{learner!r:.80}"
            )
        agents = tuple(agents)
        if len(agents) < 2 or len(set(agents)) != len(agents):
            raise ValueError(
                f"SelfPlay: agents must be two or more distinct agents of the env, got "
                f"{list(agents)}"
            )
        self.learner = learner
        self.agents = agents
        self.pool_size = positive_int("SelfPlay", "pool_size", pool_size)
        self.refresh_every = positive_int("SelfPlay", "refresh_every", refresh_every)
        self.rng = np.random.default_rng(seed)
        self.pool: list[AbstractPolicy] = [self._frozen()]
        self.episodes = 0
        self.seating: dict[Any, int] = {}  # agent -> index in the pool; the learner's seat: -1
        self._ended = 0  # seats whose PostEpisode came this episode
        self._seats = {agent: _Seat(self, agent) for agent in agents}

    def __repr__(self) -> str:
        return (
            f"SelfPlay({self.learner!r}, {list(self.agents)}, pool_size={self.pool_size}, "
            f"refresh_every={self.refresh_every})"
        )

    def policy_of(self, agent: Any) -> AbstractPolicy:
        try:
            return self._seats[agent]
        except KeyError:
            raise UnknownAgentError(
                f"SelfPlay: no seat for agent {agent!r}; its agents are {list(self.agents)}"
            ) from None

    @property
    def learner_seat(self) -> Any:
        """The agent the learner plays in the current (or next) episode."""
        return self.agents[self.episodes % len(self.agents)]

    def occupant(self, agent: Any) -> AbstractPolicy:
        """The policy playing ``agent``'s seat now: the learner or a copy from the pool."""
        if not self.seating:
            self._seat()
        index = self.seating[agent]
        return self.learner if index < 0 else self.pool[index]

    # ---- the episode's seating and the pool's refresh ----
    def _seat(self) -> None:
        learner_seat = self.learner_seat
        self.seating = {
            agent: -1 if agent == learner_seat else int(self.rng.integers(len(self.pool)))
            for agent in self.agents
        }

    def _begin(self) -> None:
        if not self.seating:
            self._seat()

    def _end(self) -> None:
        self._ended += 1
        if self._ended < len(self.agents):
            return
        self._ended = 0
        self.episodes += 1
        self.seating = {}
        if self.episodes % self.refresh_every == 0:
            self.pool.append(self._frozen())
            if len(self.pool) > self.pool_size:
                self.pool.pop(0)

    def _frozen(self) -> AbstractPolicy:
        acting = getattr(self.learner, "policy", self.learner)  # an Agent acts with its policy
        return copy.deepcopy(acting)

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """The learner's state, every pooled copy's, the counters, seating and generator."""
        return {
            "learner": get_state(self.learner),
            "pool": [get_state(p) for p in self.pool],
            "episodes": self.episodes,
            "seating": dict(self.seating),
            "ended": self._ended,
            "rng": generator_state(self.rng),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict` (the pool's copies are rebuilt from the learner)."""
        require_keys("SelfPlay", state, "learner", "pool", "episodes", "seating", "ended", "rng")
        set_state(self.learner, state["learner"])
        pool = []
        for saved in state["pool"]:
            frozen = self._frozen()
            set_state(frozen, saved)
            pool.append(frozen)
        self.pool = pool
        self.episodes = int(state["episodes"])
        self.seating = {agent: int(i) for agent, i in state["seating"].items()}
        self._ended = int(state["ended"])
        set_generator_state(self.rng, state["rng"])


class _Seat(AbstractPolicy):
    """One agent's seat of a ``SelfPlay``: acts with its occupant; the learner's stage calls
    (planned with this seat's view) run only while the learner sits here."""

    def __init__(self, owner: SelfPlay, agent: Any) -> None:
        self.owner = owner
        self.agent = agent

    def __repr__(self) -> str:
        return f"SelfPlay seat {self.agent!r}"

    def act(self, env: Any) -> Any:
        return self.owner.occupant(self.agent).act(env)

    def plan(self, env: Any) -> dict:
        owner, agent = self.owner, self.agent
        learner_plan = owner.learner.plan(env)
        first = agent == owner.agents[0]
        plan: dict = {}
        for stage in STAGES:
            if stage is POST_EXPERIMENT_STAGE or stage.method_name == "pre_experiment":
                steps = list(learner_plan.get(stage, ())) if first else []  # once per run
            else:
                steps = [_when_seated(owner, agent, s) for s in learner_plan.get(stage, ())]
            if stage is PRE_EPISODE_STAGE:
                steps.insert(0, PlanStep(owner._begin, "SelfPlay._begin", where(SelfPlay._begin)))
            if stage is POST_EPISODE_STAGE:
                steps.append(PlanStep(owner._end, "SelfPlay._end", where(SelfPlay._end)))
            if steps:
                plan[stage] = steps
        return plan


def _when_seated(owner: SelfPlay, agent: Any, step: PlanStep) -> PlanStep:
    call = step.call

    def if_learner_seated(*action: Any) -> Any:
        if owner.seating.get(agent, 0) < 0:
            return call(*action)
        return None

    name = f"{step.name} (when the learner sits at {agent!r})"
    return PlanStep(if_learner_seated, name, step.where)

