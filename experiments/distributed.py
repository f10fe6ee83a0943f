"""Actor-learner recipes (``rk.distributed.ActorLearner``, docs/how-to/scale-out.md): Ape-X and
IMPALA on CartPole-v1, each with ``n_actors`` actors on the ``backend`` ("local": in-process,
lock-step, deterministic; "ray": one Ray actor each), ``--set n_actors=4 --set backend=ray``.

* ``ApeX_CartPole`` (Horgan et al. 2018, scaled down to CartPole): double DQN on 3-step
  returns from a prioritized replay (alpha 0.6, beta 0.4 -> 1) whose initial priorities the
  actors compute (one-step TD errors with their own copy; Ape-X uses the n-step error), actor
  ``i`` acting epsilon-greedily with ``0.4 ** (1 + 7 i / (N - 1))``; the learner's schedule is
  DQN_CartPole's (rl-baselines3-zoo: 128 gradient steps of batch 64 every 256 transitions
  after 1000, Adam 2.3e-3, MLP 256-256, target synced every 10 transitions), counted in the
  actors' transitions, so the ratio of gradient steps to transitions does not change with
  ``n_actors``; the actors get the weights every ``sync_every`` gradient steps. Model
  selection as the DQN recipes (experiments/dqn.py): the best evaluated policy is kept.
* ``IMPALA_CartPole`` (Espeholt et al. 2018): ``rk.IMPALA`` (A2C's loss on V-trace targets,
  rho_bar = c_bar = 1) with RMSprop, rollouts of ``n_steps`` per actor, weights sent after
  every update (``sync_every=1``): the actors act one rollout ahead of the learner, so each
  rollout is one update old, which V-trace corrects.

Every generator derives from the recipe's ``seed`` (``numpy.random.SeedSequence``).

Example:
    >>> import rlkit as rk
    >>> exp = rk.make_experiment("IMPALA_CartPole", seed=0, total_steps=128, n_actors=2)
    >>> hook = rk.run(exp); exp.env.close()
    >>> exp.policy.policy.updates
    2
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, ClassVar

import rlkit as rk
from rlkit.core import checks
from rlkit.core.seeding import spawn_seeds

from .dqn import CARTPOLE, DQNParams, RecipeSeeds, best_policy_evaluation, q_approximator
from .params import check_device, check_hidden

__all__ = ["ApeXParams", "IMPALAParams", "APEX_CARTPOLE", "IMPALA_CARTPOLE"]

_BACKENDS = ("local", "ray")


def _check_split(owner: str, p: Any) -> None:
    checks.positive_int(owner, "n_actors", p.n_actors)
    checks.positive_int(owner, "sync_every", p.sync_every)
    if p.backend not in _BACKENDS:
        raise ValueError(f"{owner}: backend must be one of {_BACKENDS}, got {p.backend!r}")


@dataclass(frozen=True)
class ApeXParams(DQNParams):
    """Ape-X's hyperparameters: DQN's (:class:`~rlkit.experiments.dqn.DQNParams`, the learner)
    plus the split's: ``n_actors``, ``backend``, ``sync_every`` (gradient steps between weight
    sends), ``rollout_length`` (steps per actor per send), ``epsilon`` and ``alpha`` (the
    actors' epsilons), and the prioritized replay's ``per_alpha`` and ``per_beta``.

    Example:
        >>> APEX_CARTPOLE.n_actors, APEX_CARTPOLE.n_step
        (2, 3)
    """

    n_actors: int = 2
    backend: str = "local"
    sync_every: int = 64
    rollout_length: int = 50
    epsilon: float = 0.4
    alpha: float = 7.0
    per_alpha: float = 0.6
    per_beta: float = 0.4

    def check(self, owner: str) -> None:
        super().check(owner)
        _check_split(owner, self)
        checks.positive_int(owner, "rollout_length", self.rollout_length)
        checks.unit_interval(owner, "epsilon", self.epsilon)
        checks.finite_float(owner, "alpha", self.alpha, low=0.0)
        checks.finite_float(owner, "per_alpha", self.per_alpha, low=0.0)
        checks.unit_interval(owner, "per_beta", self.per_beta)


APEX_CARTPOLE = ApeXParams(**{**CARTPOLE.__dict__, "n_step": 3})


@dataclass(frozen=True)
class IMPALAParams:
    """IMPALA's hyperparameters (``rk.IMPALA``'s names) and the split's.

    Example:
        >>> IMPALA_CARTPOLE.n_steps, IMPALA_CARTPOLE.sync_every
        (32, 1)
    """

    total_steps: int = 200_000
    n_actors: int = 2
    backend: str = "local"
    sync_every: int = 1
    n_steps: int = 32
    lr: float = 1e-3
    gamma: float = 0.99
    ent_coef: float = 0.0
    vf_coef: float = 0.5
    max_grad_norm: float | None = 0.5
    rho_bar: float = 1.0
    c_bar: float = 1.0
    hidden: tuple[int, ...] = (64, 64)
    device: str = "cpu"

    run_fields: ClassVar[tuple[str, ...]] = (
        "total_steps", "n_actors", "backend", "sync_every", "device",
    )  # fmt: skip

    def check(self, owner: str) -> None:
        """Refuse values no run can use, naming ``owner`` and the parameter."""
        from rlkit.learners.hyperparameters import check_hyperparameters

        checks.positive_int(owner, "total_steps", self.total_steps)
        checks.positive_int(owner, "n_steps", self.n_steps)
        _check_split(owner, self)
        check_hidden(owner, self.hidden)
        check_device(owner, self.device)
        check_hyperparameters(owner, self.config())

    def config(self) -> dict[str, Any]:
        """The hyperparameters ``rk.IMPALA`` takes."""
        return {k: v for k, v in self.__dict__.items() if k not in self.run_fields}


IMPALA_CARTPOLE = IMPALAParams()


def _env_fn() -> Any:
    return functools.partial(rk.GymEnv, "CartPole-v1")


@rk.experiment
def ApeX_CartPole(seed: int = 0, p: ApeXParams = APEX_CARTPOLE) -> rk.Experiment:
    """Ape-X (prioritized double DQN, n_actors actors, per-actor epsilon) on CartPole-v1."""
    s = RecipeSeeds.of(seed)
    env_fn = _env_fn()
    probe = env_fn()
    q = q_approximator(probe, p, s.network)
    learner = rk.PrioritizedDQNLearner(
        q,
        target=rk.TargetNetwork(q, sync_every=p.target_update_interval),
        double=True,
        sampler=rk.NStepBatchSampler(p.batch_size, p.n_step, p.gamma, seed=s.sampler),
        controller=rk.InsertSampleRatioController(
            max(p.learning_starts, p.batch_size), p.train_freq, p.gradient_steps
        ),
        gamma=p.gamma,
    )
    replay = rk.PrioritizedCircularArraySARTTrajectory(
        p.buffer_size, probe.state_space, probe.action_space, alpha=p.per_alpha,
        beta=p.per_beta, beta_end=1.0, beta_steps=max(p.n_gradient_steps, 1),
    )  # fmt: skip
    agent = rk.Agent(rk.QBasedPolicy(learner, rk.GreedyExplorer()), replay)
    split = rk.distributed.ActorLearner(
        agent, env_fn, p.n_actors, backend=p.backend, sync_every=p.sync_every,
        rollout_length=p.rollout_length, seed=s.explorer, epsilon=p.epsilon, alpha=p.alpha,
    )  # fmt: skip
    return rk.Experiment(
        policy=agent,
        env=split,
        stop_condition=rk.StopAfterNSteps(p.total_steps),
        hook=rk.TotalRewardPerEpisode() + best_policy_evaluation("CartPole-v1", p, s.evaluation),
        threads=1,
    )


@rk.experiment
def IMPALA_CartPole(seed: int = 0, p: IMPALAParams = IMPALA_CARTPOLE) -> rk.Experiment:
    """IMPALA (V-trace, n_actors actors one rollout ahead of the learner) on CartPole-v1."""
    actor_seed, policy_seed = spawn_seeds(seed, 2)
    env_fn = _env_fn()
    policy = rk.IMPALA(env_fn(), seed=policy_seed, device=p.device, **p.config())
    agent = rk.Agent(policy, rk.RolloutTrajectory(p.n_steps, p.n_actors))
    split = rk.distributed.ActorLearner(
        agent, env_fn, p.n_actors, backend=p.backend, sync_every=p.sync_every, seed=actor_seed
    )
    return rk.Experiment(
        policy=agent,
        env=split,
        stop_condition=rk.StopAfterNSteps(p.total_steps),
        hook=rk.TotalRewardPerEpisode(),
        threads=1,
    )
