"""DQN-family recipes on classic-control tasks.

The ``DQN_*`` and ``QRDQN_CartPole`` recipes use rl-baselines3-zoo's tuned hyperparameters with
Stable-Baselines3's semantics: the first ``learning_starts`` actions are uniformly random
(``RandomWarmupEpsilonGreedy``), epsilon decays linearly from 1 over the first
``exploration_fraction`` of the steps (counted from the first step, warm-up included), training
starts after ``learning_starts`` steps and then takes ``gradient_steps`` gradient steps every
``train_freq`` steps (``InsertSampleRatioController``), the target network is hard-synced every
``target_update_interval`` *environment* steps (before that step's gradient steps), Huber loss,
Adam, gradient norm clipped at 10 (DQN), ReLU MLPs with torch's default initialisation, and
truncation (the time limit) bootstraps while termination does not.

Known deviation: with ``learning_starts=0`` (Acrobot) Stable-Baselines3 trains from step 4 on
batches drawn with replacement from fewer transitions than the batch size; here training starts
once the replay holds one batch (128 transitions).

Model selection, as rl-baselines3-zoo trains with an ``EvalCallback``: every 10% of the run the
greedy policy plays 5 episodes on a separate environment, and the run ends with the policy that
evaluated best (``rk.EvaluationHook(..., restore_best=True)``, ties going to the later policy).
DQN's greedy performance on CartPole swings between 500 and about 100 from one evaluation to
the next late in training, so the final parameters are a lottery; the kept ones are not.

Every generator (environment, explorer, replay sampler, network initialisation) is derived from
the recipe's ``seed`` with ``numpy.random.SeedSequence``; the network is initialised from a local
``torch.Generator`` (``q_network(..., seed=...)``), so nothing depends on torch's global random
state. Recipes accept ``total_steps=`` (shortened runs scale the exploration schedule with it) and
``device=`` (``"cpu"`` by default, ``"cuda"`` where a GPU exists).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch

import rlkit as rk
from rlkit.approximators.neural import q_network
from rlkit.core.checks import non_negative_int
from rlkit.core.seeding import int_seed, spawn_seeds

__all__ = [
    "ZooConfig",
    "CARTPOLE",
    "ACROBOT",
    "MOUNTAIN_CAR",
    "RandomWarmupEpsilonGreedy",
    "adam",
    "build_replay_agent",
    "best_policy_evaluation",
]


class RandomWarmupEpsilonGreedy(rk.EpsilonGreedyExplorer):
    """Epsilon-greedy whose first ``random_steps`` calls act uniformly at random (epsilon 1),
    while the schedule itself still counts from the first call: Stable-Baselines3's
    ``learning_starts`` warm-up (``OffPolicyAlgorithm._sample_action``), during which actions are
    sampled from the action space whatever the epsilon schedule says.

    Example:
        >>> e = RandomWarmupEpsilonGreedy(
        ...     0.1, random_steps=5, kind="linear", decay_steps=10, seed=0)
        >>> [round(e.epsilon_at(t), 2) for t in (0, 4, 5, 10)]
        [1.0, 1.0, 0.55, 0.1]
    """

    def __init__(self, epsilon: float = 0.1, *, random_steps: int = 0, **kwargs: Any) -> None:
        super().__init__(epsilon, **kwargs)
        self.random_steps = non_negative_int(
            "RandomWarmupEpsilonGreedy", "random_steps", random_steps
        )

    def __repr__(self) -> str:
        base = super().__repr__().removeprefix("EpsilonGreedyExplorer(")
        return f"{type(self).__name__}({base[:-1]}, random_steps={self.random_steps})"

    def epsilon_at(self, step: int) -> float:
        """Epsilon after ``step`` calls: 1 during the first ``random_steps`` calls."""
        return 1.0 if step < self.random_steps else super().epsilon_at(step)


@dataclass(frozen=True)
class ZooConfig:
    """Hyperparameters in rl-baselines3-zoo's names (``train_freq`` in steps)."""

    env_id: str
    total_steps: int
    learning_rate: float
    batch_size: int
    buffer_size: int
    learning_starts: int
    gamma: float
    target_update_interval: int
    train_freq: int
    gradient_steps: int
    exploration_fraction: float
    exploration_final_eps: float
    hidden: tuple[int, ...] = (256, 256)
    max_grad_norm: float | None = 10.0
    adam_eps: float = 1e-8

    @property
    def n_gradient_steps(self) -> int:
        """How many gradient steps a run of ``total_steps`` takes."""
        trains = self.total_steps // self.train_freq - self.learning_starts // self.train_freq
        return max(trains, 0) * self.gradient_steps


# rl-baselines3-zoo hyperparams/dqn.yml
CARTPOLE = ZooConfig(
    env_id="CartPole-v1",
    total_steps=50_000,
    learning_rate=2.3e-3,
    batch_size=64,
    buffer_size=100_000,
    learning_starts=1000,
    gamma=0.99,
    target_update_interval=10,
    train_freq=256,
    gradient_steps=128,
    exploration_fraction=0.16,
    exploration_final_eps=0.04,
)
ACROBOT = ZooConfig(
    env_id="Acrobot-v1",
    total_steps=100_000,
    learning_rate=6.3e-4,
    batch_size=128,
    buffer_size=50_000,
    learning_starts=0,
    gamma=0.99,
    target_update_interval=250,
    train_freq=4,
    gradient_steps=4,  # zoo: -1, i.e. as many as environment steps collected (train_freq)
    exploration_fraction=0.12,
    exploration_final_eps=0.1,
)
MOUNTAIN_CAR = ZooConfig(
    env_id="MountainCar-v0",
    total_steps=120_000,
    learning_rate=4e-3,
    batch_size=128,
    buffer_size=10_000,
    learning_starts=1000,
    gamma=0.98,
    target_update_interval=600,
    train_freq=16,
    gradient_steps=8,
    exploration_fraction=0.2,
    exploration_final_eps=0.07,
)


def adam(params: Any, lr: float, eps: float = 1e-8) -> torch.optim.Optimizer:
    """Adam, fused into one kernel per step where torch supports it (the same algorithm as
    ``torch.optim.Adam``'s default implementation, about twice as fast for small networks)."""
    params = list(params)
    try:
        return torch.optim.Adam(params, lr=lr, eps=eps, fused=True)
    except (RuntimeError, TypeError, ValueError):  # an older torch or an unsupported device
        return torch.optim.Adam(params, lr=lr, eps=eps)


def build_replay_agent(
    config: ZooConfig,
    seed: int,
    *,
    kind: str = "dqn",
    device: str = "cpu",
    double: bool = False,
    n_step: int = 1,
    dueling: bool = False,
    n_quantiles: int = 10,
    exploration: str = "linear",
    random_warmup: bool = True,
    learner_kwargs: dict[str, Any] | None = None,
) -> tuple[rk.Agent, rk.GymEnv]:
    """The agent and environment of a replay-based recipe: ``kind`` is ``"basic"``, ``"dqn"``,
    ``"prioritized"`` or ``"qrdqn"``. Epsilon decays from 1 to ``exploration_final_eps``,
    linearly over ``exploration_fraction * total_steps`` steps (``exploration="linear"``) or
    exponentially with that time constant (``"exp"``); with ``random_warmup`` the first
    ``learning_starts`` actions are uniformly random (Stable-Baselines3). Every generator comes
    from ``seed``."""
    env_seed, explorer_seed, sampler_seed, net_seed = spawn_seeds(seed, 4)
    env = rk.GymEnv(config.env_id, seed=int_seed(env_seed))
    net = q_network(
        env.state_space,
        env.action_space,
        config.hidden,
        dueling=dueling,
        n_quantiles=n_quantiles if kind == "qrdqn" else None,
        seed=net_seed,
    )
    lr, eps = config.learning_rate, config.adam_eps
    approximator = rk.NeuralNetworkApproximator(
        net,
        lambda params: adam(params, lr=lr, eps=eps),
        device=device,
        max_grad_norm=config.max_grad_norm,
    )
    if n_step > 1:
        sampler = rk.NStepBatchSampler(config.batch_size, n_step, config.gamma, seed=sampler_seed)
    else:
        sampler = rk.BatchSampler(config.batch_size, seed=sampler_seed)
    # learning starts once the replay holds a batch (SB3 would sample a batch with replacement
    # from fewer transitions; this only matters for Acrobot's learning_starts=0)
    controller = rk.InsertSampleRatioController(
        max(config.learning_starts, config.batch_size), config.train_freq, config.gradient_steps
    )
    common = dict(sampler=sampler, controller=controller, gamma=config.gamma)
    common.update(learner_kwargs or {})
    target = rk.TargetNetwork(approximator, sync_every=config.target_update_interval)
    trajectory_kwargs: dict[str, Any] = {}
    if kind == "basic":
        learner = rk.BasicDQNLearner(approximator, **common)
    elif kind == "dqn":
        learner = rk.DQNLearner(approximator, target=target, double=double, **common)
    elif kind == "prioritized":
        learner = rk.PrioritizedDQNLearner(approximator, target=target, double=double, **common)
        trajectory_kwargs = dict(
            alpha=0.6, beta=0.4, beta_end=1.0, beta_steps=max(config.n_gradient_steps, 1)
        )
    elif kind == "qrdqn":
        learner = rk.QRDQNLearner(
            approximator, n_quantiles=n_quantiles, target=target, double=double, **common
        )
    else:
        raise ValueError(f"build_replay_agent: unknown kind {kind!r}")
    trajectory_class = (
        rk.PrioritizedCircularArraySARTTrajectory
        if kind == "prioritized"
        else rk.CircularArraySARTTrajectory
    )
    trajectory = trajectory_class(
        config.buffer_size,
        env.state_space,
        env.action_space,
        **trajectory_kwargs,
    )
    explorer = RandomWarmupEpsilonGreedy(
        config.exploration_final_eps,
        random_steps=config.learning_starts if random_warmup else 0,
        kind=exploration,
        epsilon_start=1.0,
        decay_steps=max(int(config.exploration_fraction * config.total_steps), 1),
        seed=explorer_seed,
    )
    return rk.Agent(rk.QBasedPolicy(learner, explorer), trajectory), env


EVAL_EPISODES = 5  # rl-baselines3-zoo's default n_eval_episodes


def best_policy_evaluation(config: ZooConfig, seed: int) -> rk.EvaluationHook:
    """The recipes' model selection, rl-baselines3-zoo's ``EvalCallback`` practice: every 10% of
    the run the greedy policy plays ``EVAL_EPISODES`` episodes on its own environment, and the
    run ends with the policy that evaluated best (``restore_best``; ties go to the later one).
    Its generator is the recipe seed's fifth child (the agent uses the first four), so the
    training run is the same with or without it."""
    return rk.EvaluationHook(
        rk.GymEnv(config.env_id),
        every_n_steps=max(config.total_steps // 10, 1),
        n_episodes=EVAL_EPISODES,
        seed=spawn_seeds(seed, 5)[4],
        restore_best=True,
    )


def _experiment(config: ZooConfig, seed: int, description: str, **kwargs: Any) -> rk.Experiment:
    agent, env = build_replay_agent(config, seed, **kwargs)
    return rk.Experiment(
        policy=agent,
        env=env,
        stop_condition=rk.StopAfterNSteps(config.total_steps),
        hook=rk.TotalRewardPerEpisode() + best_policy_evaluation(config, seed),
        description=description,
    )


def _config(base: ZooConfig, total_steps: int | None) -> ZooConfig:
    return base if total_steps is None else replace(base, total_steps=int(total_steps))


@rk.experiment
def DQN_CartPole(
    seed: int = 0, *, total_steps: int | None = None, device: str = "cpu"
) -> rk.Experiment:
    """DQN on CartPole-v1 with rl-baselines3-zoo's hyperparameters (50k steps, MLP 256-256)."""
    return _experiment(
        _config(CARTPOLE, total_steps), seed, _doc(DQN_CartPole), kind="dqn", device=device
    )


@rk.experiment
def DQN_Acrobot(
    seed: int = 0, *, total_steps: int | None = None, device: str = "cpu"
) -> rk.Experiment:
    """DQN on Acrobot-v1 with rl-baselines3-zoo's hyperparameters (100k steps, MLP 256-256)."""
    return _experiment(
        _config(ACROBOT, total_steps), seed, _doc(DQN_Acrobot), kind="dqn", device=device
    )


@rk.experiment
def DQN_MountainCar(
    seed: int = 0, *, total_steps: int | None = None, device: str = "cpu"
) -> rk.Experiment:
    """DQN on MountainCar-v0 with rl-baselines3-zoo's hyperparameters (120k steps)."""
    return _experiment(
        _config(MOUNTAIN_CAR, total_steps), seed, _doc(DQN_MountainCar), kind="dqn", device=device
    )


@rk.experiment
def PrioritizedDQN_CartPole(
    seed: int = 0, *, total_steps: int | None = None, device: str = "cpu"
) -> rk.Experiment:
    """Double DQN on prioritized replay (alpha 0.6, beta 0.4 -> 1) on CartPole-v1, zoo settings."""
    return _experiment(
        _config(CARTPOLE, total_steps),
        seed,
        _doc(PrioritizedDQN_CartPole),
        kind="prioritized",
        double=True,
        device=device,
    )


@rk.experiment
def QRDQN_CartPole(
    seed: int = 0, *, total_steps: int | None = None, device: str = "cpu"
) -> rk.Experiment:
    """QR-DQN (10 quantiles) on CartPole-v1 with rl-baselines3-zoo's (sb3-contrib) settings."""
    config = replace(_config(CARTPOLE, total_steps), max_grad_norm=None, adam_eps=0.01 / 32)
    return _experiment(config, seed, _doc(QRDQN_CartPole), kind="qrdqn", device=device)


# ReinforcementLearning.jl's JuliaRL_BasicDQN_CartPole: 10k steps, MLP 128-128, Adam 1e-3,
# batch 32, replay 1000, learning from step 100 on at every step, epsilon 1 -> 0.01 (exponential
# decay, time constant 500 steps = exploration_fraction * total_steps)
BASIC_CARTPOLE = ZooConfig(
    env_id="CartPole-v1",
    total_steps=10_000,
    learning_rate=1e-3,
    batch_size=32,
    buffer_size=1000,
    learning_starts=100,
    gamma=0.99,
    target_update_interval=1,
    train_freq=1,
    gradient_steps=1,
    exploration_fraction=0.05,
    exploration_final_eps=0.01,
    hidden=(128, 128),
    max_grad_norm=None,
)


@rk.experiment
def BasicDQN_CartPole(
    seed: int = 0, *, total_steps: int | None = None, device: str = "cpu"
) -> rk.Experiment:
    """Deep Q-learning without a target network on CartPole-v1 (10k steps, MLP 128-128)."""
    return _experiment(
        _config(BASIC_CARTPOLE, total_steps),
        seed,
        _doc(BasicDQN_CartPole),
        kind="basic",
        exploration="exp",
        random_warmup=False,  # ReinforcementLearning.jl's schedule: epsilon-greedy from step 1
        device=device,
    )


def _doc(fn: Any) -> str:
    return (fn.__doc__ or "").strip().splitlines()[0]


def greedy_mean(experiment: rk.Experiment, n_episodes: int = 20, seed: int = 10_000) -> float:
    """Greedy evaluation of a trained experiment's policy on a fresh environment."""
    env = rk.GymEnv(experiment.env.name)
    return rk.evaluate(experiment.policy, env, n_episodes, seed=np.random.SeedSequence(seed)).mean
