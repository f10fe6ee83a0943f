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

The recipes build their agents with the library's one-liners, ``rk.DQN.agent(env, seed=seed,
**agent_hyperparameters(p))`` (``rk.PrioritizedDQN``, ``rk.QRDQN``;
``rlkit/learners/value_based/agents.py``), so the one-liner with a recipe's parameters on its
environment learns the recipe's parameters; ``BasicDQN_CartPole`` composes its agent from the
same parts (``rlkit/learners/value_based/agent_parts.py``).

Every generator (environment, explorer, replay sampler, network initialisation) is derived from
the recipe's ``seed`` with ``numpy.random.SeedSequence``; the network is initialised from a local
``torch.Generator`` (``q_network(..., seed=...)``), so nothing depends on torch's global random
state.

Each recipe's parameters are the fields of :class:`DQNParams` (``rk.make_experiment(name, seed,
total_steps=3000, lr=1e-3)``, ``rlkit run NAME --set lr=1e-3``; a shortened run scales the
exploration schedule with ``total_steps``; ``learning_rate``, the name of earlier versions, still
works with a warning); ``device`` is ``"cpu"`` by default,
``"cuda"`` where a GPU exists. The recipes run torch on one thread (``Experiment.threads``): for
these small MLPs more threads only add synchronisation. torch is imported when a recipe is built,
so the recipes are listed without it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar

import numpy as np

import rlkit as rk
from rlkit.core import checks
from rlkit.core.optional import require_torch
from rlkit.core.seeding import int_seed
from rlkit.learners.value_based.warmup_explorer import RandomWarmupEpsilonGreedy

from .params import check_device, check_hidden

__all__ = [
    "DQNParams",
    "CARTPOLE",
    "ACROBOT",
    "MOUNTAIN_CAR",
    "BASIC_CARTPOLE",
    "RandomWarmupEpsilonGreedy",
    "RecipeSeeds",
    "adam",
    "q_approximator",
    "replay_sampler",
    "zoo_controller",
    "zoo_explorer",
    "zoo_experiment",
    "best_policy_evaluation",
]


@dataclass(frozen=True)
class DQNParams:
    """Hyperparameters of a DQN-family recipe, in rl-baselines3-zoo's names (``train_freq`` in
    steps) but ``lr`` for its ``learning_rate``, the name every recipe uses. They are the
    recipe's parameters: ``make_experiment`` and ``rlkit run --set``
    override them and ``config.json`` records them.

    Example:
        >>> replace(CARTPOLE, total_steps=3000).n_gradient_steps  # (3000 // 256 - 3) * 128
        1024
    """

    total_steps: int
    lr: float  # rl-baselines3-zoo's learning_rate
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
    exploration_initial_eps: float = 1.0
    max_grad_norm: float | None = 10.0
    adam_eps: float = 1e-8
    n_step: int = 1  # n-step returns (1: one-step DQN, as Stable-Baselines3)
    device: str = "cpu"
    # sub-envs stepped together (rk.VectorGymEnv, sync backend) when > 1; every schedule above
    # counts transitions, so the ratio of gradient steps to transitions is the single env's
    n_envs: int = 1
    # torch.compile the loss and the acting forward pass (rlkit/learners/compiled.py)
    compile: bool = False

    #: former names, still accepted with a warning (``make_experiment``): old name -> new name
    RENAMED: ClassVar[dict[str, str]] = {"learning_rate": "lr"}

    @property
    def n_gradient_steps(self) -> int:
        """How many gradient steps a run of ``total_steps`` takes."""
        trains = self.total_steps // self.train_freq - self.learning_starts // self.train_freq
        return max(trains, 0) * self.gradient_steps

    def check(self, owner: str) -> None:
        """Refuse values no run can use, naming ``owner`` (the recipe) and the parameter."""
        for name in (
            "total_steps",
            "batch_size",
            "buffer_size",
            "target_update_interval",
            "train_freq",
            "gradient_steps",
            "n_step",
            "n_envs",
        ):
            checks.positive_int(owner, name, getattr(self, name))
        checks.non_negative_int(owner, "learning_starts", self.learning_starts)
        checks.finite_float(owner, "lr", self.lr, low=0.0, low_open=True)
        checks.finite_float(owner, "adam_eps", self.adam_eps, low=0.0, low_open=True)
        for name in ("gamma", "exploration_fraction", "exploration_initial_eps",
                     "exploration_final_eps"):
            checks.unit_interval(owner, name, getattr(self, name))
        if self.max_grad_norm is not None:
            checks.finite_float(owner, "max_grad_norm", self.max_grad_norm, low=0.0, low_open=True)
        check_hidden(owner, self.hidden)
        check_device(owner, self.device)


# rl-baselines3-zoo hyperparams/dqn.yml
CARTPOLE = DQNParams(
    total_steps=50_000,
    lr=2.3e-3,
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
ACROBOT = DQNParams(
    total_steps=100_000,
    lr=6.3e-4,
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
MOUNTAIN_CAR = DQNParams(
    total_steps=120_000,
    lr=4e-3,
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
# sb3-contrib's QR-DQN on CartPole: no gradient clipping, Adam eps 0.01 / batch size
QRDQN_CARTPOLE = replace(CARTPOLE, max_grad_norm=None, adam_eps=0.01 / 32)
# ReinforcementLearning.jl's JuliaRL_BasicDQN_CartPole: 10k steps, MLP 128-128, Adam 1e-3,
# batch 32, replay 1000, learning from step 100 on at every step, epsilon 1 -> 0.01 (exponential
# decay, time constant 500 steps = exploration_fraction * total_steps)
BASIC_CARTPOLE = DQNParams(
    total_steps=10_000,
    lr=1e-3,
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


# ---- shared builders ----


def _library() -> Any:
    """The library's DQN-family building blocks (``rlkit/learners/value_based/agent_parts.py``),
    imported when a recipe is built (they import torch)."""
    require_torch("the DQN-family recipes")
    from rlkit.learners.value_based import agent_parts

    return agent_parts


class RecipeSeeds:
    """The recipe seed's children, one per generator: environment, explorer, replay sampler,
    network initialisation, evaluation: the library's ``DQNSeeds``
    (``rlkit/learners/value_based/agent_parts.py``), so ``rk.DQN.agent(env, seed=seed)`` draws
    the recipe's generators.

    Example:
        >>> RecipeSeeds.of(0).env.spawn_key
        (0,)
    """

    @staticmethod
    def of(seed: int) -> Any:
        """The five children of ``seed`` (a ``DQNSeeds``)."""
        return _library().DQNSeeds.of(seed)


def gym_env(
    env_id: str, seed: np.random.SeedSequence, n_envs: int = 1
) -> rk.GymEnv | rk.VectorGymEnv:
    """The training environment, seeded from ``seed``: ``n_envs`` sub-envs of a
    ``rk.VectorGymEnv`` (sync backend; their seeds spawned from the same integer) when
    ``n_envs > 1``."""
    if n_envs == 1:
        return rk.GymEnv(env_id, seed=int_seed(seed))
    return rk.VectorGymEnv(env_id, n_envs, seed=int_seed(seed))


def adam(params: Any, lr: float, eps: float = 1e-8) -> Any:
    """Adam, fused where torch supports it (the library's ``agent_parts.adam``)."""
    return _library().adam(params, lr, eps)


def q_approximator(
    env: rk.AbstractEnv,
    p: DQNParams,
    seed: np.random.SeedSequence,
    *,
    n_quantiles: int | None = None,
) -> rk.NeuralNetworkApproximator:
    """A ReLU MLP of ``p.hidden`` layers (one value per action, or ``n_quantiles`` per action)
    initialised from ``seed``, trained by Adam with ``p``'s rate, epsilon and clipping (the
    library's ``agent_parts.q_approximator``, which ``rk.DQN.agent`` builds with)."""
    return _library().q_approximator(env, p, seed, n_quantiles=n_quantiles)


def replay_sampler(p: DQNParams, seed: np.random.SeedSequence) -> Any:
    """Batches of ``p.batch_size`` transitions (``p.n_step``-step returns when above 1): the
    library's ``agent_parts.replay_sampler``."""
    return _library().replay_sampler(p, seed)


def zoo_controller(p: DQNParams) -> rk.InsertSampleRatioController:
    """``p.gradient_steps`` gradient steps every ``p.train_freq`` steps once the replay holds
    ``p.learning_starts`` transitions and at least one batch (Stable-Baselines3 would sample a
    batch with replacement from fewer; this only matters for Acrobot's learning_starts=0): the
    library's ``agent_parts.replay_controller``."""
    return _library().replay_controller(p)


def zoo_explorer(
    p: DQNParams,
    seed: np.random.SeedSequence,
    *,
    schedule: str = "linear",
    random_warmup: bool = True,
) -> RandomWarmupEpsilonGreedy:
    """Epsilon from ``p.exploration_initial_eps`` (1) to ``p.exploration_final_eps``, linearly
    over ``exploration_fraction * total_steps`` steps (``schedule="linear"``) or exponentially
    with that time constant (``"exp"``); with ``random_warmup`` the first ``learning_starts``
    actions are uniformly random (Stable-Baselines3): the library's
    ``agent_parts.epsilon_explorer``."""
    return _library().epsilon_explorer(p, seed, schedule=schedule, random_warmup=random_warmup)


def agent_hyperparameters(p: DQNParams) -> dict[str, Any]:
    """The recipe's parameters as the one-line agents take them (``rk.DQN.agent(env, seed=seed,
    **agent_hyperparameters(p))``): every field but ``n_envs`` (the environment's).

    Example:
        >>> agent_hyperparameters(CARTPOLE)["target_update_interval"]
        10
    """
    return {f.name: getattr(p, f.name) for f in fields(DQNParams) if f.name != "n_envs"}


EVAL_EPISODES = 5  # rl-baselines3-zoo's default n_eval_episodes


def best_policy_evaluation(
    env_id: str, p: DQNParams, seed: np.random.SeedSequence
) -> rk.EvaluationHook:
    """The recipes' model selection, rl-baselines3-zoo's ``EvalCallback`` practice: every 10% of
    the run the greedy policy plays ``EVAL_EPISODES`` episodes on its own environment, and the
    run ends with the policy that evaluated best (``restore_best``; ties go to the later one).
    It has its own generator (``RecipeSeeds.evaluation``), so the training run is the same with
    or without it."""
    return rk.EvaluationHook(
        rk.GymEnv(env_id),
        every_n_steps=max(p.total_steps // 10, 1),
        n_episodes=EVAL_EPISODES,
        seed=seed,
        restore_best=True,
    )


def zoo_experiment(
    p: DQNParams, seeds: RecipeSeeds, env: rk.GymEnv | rk.VectorGymEnv, agent: rk.Agent
) -> rk.Experiment:
    """``agent`` trained on ``env`` for ``p.total_steps`` steps, recording episode returns and
    keeping the best evaluated policy, torch on one thread."""
    return rk.Experiment(
        policy=agent,
        env=env,
        stop_condition=rk.StopAfterNSteps(p.total_steps),
        hook=rk.TotalRewardPerEpisode() + best_policy_evaluation(env.name, p, seeds.evaluation),
        threads=1,
    )


# ---- recipes ----


@rk.experiment
def DQN_CartPole(
    seed: int = 0, p: DQNParams = CARTPOLE, seeds: list[int] | None = None
) -> rk.Experiment:
    """DQN on CartPole-v1 with rl-baselines3-zoo's hyperparameters (50k steps, MLP 256-256)."""
    if seeds is not None:
        return many_seeds_dqn("CartPole-v1", p, seeds, DQN_CartPole)
    return _one_line("DQN", "CartPole-v1", p, seed)


@rk.experiment
def DQN_Acrobot(seed: int = 0, p: DQNParams = ACROBOT) -> rk.Experiment:
    """DQN on Acrobot-v1 with rl-baselines3-zoo's hyperparameters (100k steps, MLP 256-256)."""
    return _one_line("DQN", "Acrobot-v1", p, seed)


@rk.experiment
def DQN_MountainCar(seed: int = 0, p: DQNParams = MOUNTAIN_CAR) -> rk.Experiment:
    """DQN on MountainCar-v0 with rl-baselines3-zoo's hyperparameters (120k steps)."""
    return _one_line("DQN", "MountainCar-v0", p, seed)


def _one_line(algorithm: str, env_id: str, p: DQNParams, seed: int, **extra: Any) -> rk.Experiment:
    """``rk.<algorithm>.agent(env, seed=seed, **p's hyperparameters, **extra)`` trained on
    ``env_id`` (seeded from the seed's first child) as :func:`zoo_experiment`."""
    s = RecipeSeeds.of(seed)
    env = gym_env(env_id, s.env, p.n_envs)
    one_liner = getattr(rk, algorithm)
    agent = one_liner.agent(env, seed=seed, **agent_hyperparameters(p), **extra)
    return zoo_experiment(p, s, env, agent)


def many_seeds_dqn(env_id: str, p: DQNParams, seeds: list[int], fn: Any) -> rk.Experiment:
    """The DQN recipe ``fn`` for every seed of ``seeds`` in one process (``rk.ManySeedsDQN``):
    each seed's env and agent (``rk.DQN.agent``: network, sampler, controller, explorer and
    replay) built as its single run builds them (``_one_line``; a single ``rk.GymEnv`` becomes
    a block through ``rk.OneEnvVector``), ``total_steps`` per seed, every seed's episode returns in
    ``rk.TotalRewardPerSeed``. No model selection: each seed keeps its final parameters."""
    owner = fn.__name__
    if p.compile:
        raise ValueError(
            f"{owner}: compile=True and seeds=[...] together are not supported; give one"
        )
    blocks, policies, replays = [], [], []
    for seed in seeds:
        s = RecipeSeeds.of(seed)
        env = gym_env(env_id, s.env, p.n_envs)
        agent = rk.DQN.agent(env, seed=seed, **agent_hyperparameters(p))  # as _one_line
        policies.append(agent.policy)
        replays.append(agent.trajectory)
        blocks.append(env if isinstance(env, rk.VectorGymEnv) else rk.OneEnvVector(env))
    env = rk.SeedBlocksEnv(blocks, seeds)
    return rk.Experiment(
        policy=rk.ManySeedsDQN.agent(env, policies, replays),
        env=env,
        stop_condition=rk.StopAfterNSteps(p.total_steps * len(seeds)),
        hook=rk.TotalRewardPerSeed(),
        description=(fn.__doc__ or "").strip(),
        threads=1,
    )


@rk.experiment
def PrioritizedDQN_CartPole(seed: int = 0, p: DQNParams = CARTPOLE) -> rk.Experiment:
    """Double DQN on prioritized replay (alpha 0.6, beta 0.4 -> 1) on CartPole-v1, zoo settings."""
    return _one_line(
        "PrioritizedDQN", "CartPole-v1", p, seed, double=True, alpha=0.6, beta=0.4, beta_end=1.0
    )


@rk.experiment
def QRDQN_CartPole(seed: int = 0, p: DQNParams = QRDQN_CARTPOLE) -> rk.Experiment:
    """QR-DQN (10 quantiles) on CartPole-v1 with rl-baselines3-zoo's (sb3-contrib) settings."""
    return _one_line("QRDQN", "CartPole-v1", p, seed, n_quantiles=10)


@rk.experiment
def BasicDQN_CartPole(seed: int = 0, p: DQNParams = BASIC_CARTPOLE) -> rk.Experiment:
    """Deep Q-learning without a target network on CartPole-v1 (10k steps, MLP 128-128)."""
    s = RecipeSeeds.of(seed)
    env = gym_env("CartPole-v1", s.env, p.n_envs)
    return zoo_experiment(
        p,
        s,
        env,
        rk.Agent(
            rk.QBasedPolicy(
                rk.BasicDQNLearner(
                    q_approximator(env, p, s.network),
                    sampler=replay_sampler(p, s.sampler),
                    controller=zoo_controller(p),
                    gamma=p.gamma,
                    compile=p.compile,
                ),
                # ReinforcementLearning.jl's schedule: epsilon-greedy from step 1, exponential
                zoo_explorer(p, s.explorer, schedule="exp", random_warmup=False),
            ),
            rk.CircularArraySARTTrajectory(p.buffer_size, env.state_space, env.action_space),
        ),
    )


def greedy_mean(experiment: rk.Experiment, n_episodes: int = 20, seed: int = 10_000) -> float:
    """Greedy evaluation of a trained experiment's policy on a fresh environment."""
    env = rk.GymEnv(experiment.env.name)
    return rk.evaluate(experiment.policy, env, n_episodes, seed=np.random.SeedSequence(seed)).mean
