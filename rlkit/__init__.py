"""rlkit: reinforcement learning with a tiny run loop, stages and multiple dispatch.

Everything public is re-exported flat::

    import rlkit as rk
    agent = rk.Agent(rk.QBasedPolicy(rk.TDLearner(...), rk.EpsilonGreedyExplorer(0.1)),
                     rk.VectorSARTTrajectory())
    hook = rk.run(agent, rk.GymEnv("CliffWalking-v1", seed=0), rk.StopAfterNEpisodes(500),
                  rk.TotalRewardPerEpisode())

Names are imported on first use, so ``import rlkit`` stays light (it never imports torch).
"""

from __future__ import annotations

import importlib
from typing import Any

from . import _source_tree
from . import envs as _envs  # noqa: F401 - registers the bundled gymnasium environments
from . import hooks as _hooks  # noqa: F401 - registers hook composition and resume_from
from .core import multiagent_run as _multiagent_run  # noqa: F401 - the multi-agent run loops
from .core import offline_run as _offline_run  # noqa: F401 - registers the offline run loop
from .core import vector_run as _vector_run  # noqa: F401 - registers the vector run loop
from .core.dispatch import DispatchError, greedy, statistics, update
from .core.interfaces import (
    AbstractApproximator,
    AbstractEnv,
    AbstractHook,
    AbstractLearner,
    AbstractOfflineEnv,
    AbstractPolicy,
    AbstractStopCondition,
    AbstractTrajectory,
    AbstractVectorEnv,
    InvalidActionError,
)
from .core.stages import (
    POST_ACT_STAGE,
    POST_EPISODE_STAGE,
    POST_EXPERIMENT_STAGE,
    PRE_ACT_STAGE,
    PRE_EPISODE_STAGE,
    PRE_EXPERIMENT_STAGE,
    AbstractStage,
    PostActStage,
    PostEpisodeStage,
    PostExperimentStage,
    PreActStage,
    PreEpisodeStage,
    PreExperimentStage,
)
from .core.version import __version__

# a source tree (a clone imported without its install): experiments/ beside rlkit/ is
# rlkit.experiments, as pyproject.toml maps it, so the recipes' entry points load from it
_source_tree.install(__file__)

# public name -> module that defines it (imported lazily by __getattr__). This is the API that
# the documentation site's API reference shows (generated from __all__ by docs/gen_api.py);
# plumbing (plan steps, state helpers, sum trees, ...) stays importable from its own module only.
_LAZY: dict[str, str] = {
    # the run loop and experiments
    "run": "rlkit.core.run",
    "explain": "rlkit.core.plan",
    **dict.fromkeys(
        ["Experiment", "experiment", "list_experiments", "make_experiment"],
        "rlkit.core.experiment",
    ),
    "UnknownExperimentError": "rlkit.core.experiment",
    **dict.fromkeys(
        [
            "StopAfterNSteps",
            "StopAfterNEpisodes",
            "StopWhenDone",
            "StopAfterNoImprovement",
            "StopAfterNSeconds",
            "StopSignal",
        ],
        "rlkit.core.stop_conditions",
    ),
    # hooks
    **dict.fromkeys(
        [
            "EmptyHook",
            "find_hook",
            "TotalRewardPerEpisode",
            "RewardsPerEpisode",
            "StepsPerEpisode",
            "TimePerStep",
        ],
        "rlkit.hooks.basic",
    ),
    **dict.fromkeys(["DoEveryNSteps", "DoEveryNEpisodes", "DoOnExit"], "rlkit.hooks.every_n"),
    **dict.fromkeys(
        ["AbstractLogger", "TensorBoardLogger", "CSVLogger", "JSONLinesLogger"],
        "rlkit.hooks.logging",
    ),
    "ProgressBar": "rlkit.hooks.progress",
    "EvaluationHook": "rlkit.hooks.evaluation",
    "evaluate": "rlkit.hooks.evaluate",
    "CheckpointHook": "rlkit.hooks.checkpoint",
    "CheckpointError": "rlkit.hooks.checkpoint",
    "DatasetRecorder": "rlkit.hooks.dataset_recorder",
    "TotalRewardPerSeed": "rlkit.hooks.per_seed",
    # environments
    "GymEnv": "rlkit.envs.gym",
    "OfflineEnv": "rlkit.envs.offline",
    "VectorGymEnv": "rlkit.envs.vector",
    "SeedBlocksEnv": "rlkit.envs.seed_blocks",
    "VecNormalize": "rlkit.envs.vec_normalize",
    "RunningMeanStd": "rlkit.envs.running_mean_std",
    # multi-agent (docs/how-to/multi-agent.md)
    **dict.fromkeys(
        ["AbstractMultiAgentEnv", "AbstractParallelEnv", "AbstractMultiAgentPolicy"],
        "rlkit.core.multiagent",
    ),
    "PettingZooEnv": "rlkit.envs.pettingzoo",
    "PettingZooParallelEnv": "rlkit.envs.pettingzoo_parallel",
    "PettingZooVectorEnv": "rlkit.envs.pettingzoo_vector",
    "RandomOpening": "rlkit.envs.pettingzoo_opening",
    "AgentView": "rlkit.envs.agent_view",
    **dict.fromkeys(["MultiAgentPolicy", "UnknownAgentError"], "rlkit.policies.multi_agent"),
    "SelfPlay": "rlkit.policies.self_play",
    **dict.fromkeys(["make_atari_env", "make_minatar_env"], "rlkit.envs.images"),
    **dict.fromkeys(["check_env", "EnvCheckError", "EnvReport"], "rlkit.envs.check"),
    "RandomWalk1DEnv": "rlkit.envs.toy.random_walk",
    "MultiArmBanditsEnv": "rlkit.envs.toy.bandits",
    "WindyGridWorldEnv": "rlkit.envs.toy.windy_grid_world",
    "MaximizationBiasEnv": "rlkit.envs.toy.maximization_bias",
    "GridWorldEnv": "rlkit.envs.toy.grid_world",
    "GamblersProblemEnv": "rlkit.envs.toy.gamblers_problem",
    "MazeEnv": "rlkit.envs.toy.maze",
    "RandomWalk1000Env": "rlkit.envs.toy.random_walk_1000",
    "ShortCorridorEnv": "rlkit.envs.toy.short_corridor",
    "BitFlippingEnv": "rlkit.envs.toy.bit_flipping",
    # small two-player games (PettingZoo AEC) and their exact solvers (docs/how-to/game-solvers.md)
    "KuhnPokerEnv": "rlkit.envs.games.kuhn_poker",
    "LeducPokerEnv": "rlkit.envs.games.leduc_poker",
    "make_game": "rlkit.envs.games",
    "GameTree": "rlkit.envs.games.tree",
    "GameTreeEnv": "rlkit.envs.games.solver_env",
    "TabularPolicy": "rlkit.policies.tabular_game",
    "CFR": "rlkit.solvers.cfr",
    **dict.fromkeys(["exploitability", "nash_conv", "game_value"], "rlkit.solvers.exploitability"),
    "Minimax": "rlkit.solvers.minimax",
    "ExploitabilityCurve": "rlkit.solvers.curve",
    # policies and explorers
    "Agent": "rlkit.policies.agent",
    "RandomPolicy": "rlkit.policies.random",
    "QBasedPolicy": "rlkit.policies.q_based",
    "VBasedPolicy": "rlkit.policies.v_based",
    "LinearSoftmaxPolicy": "rlkit.policies.softmax",
    **dict.fromkeys(
        [
            "AbstractExplorer",
            "EpsilonGreedyExplorer",
            "GreedyExplorer",
            "UCBExplorer",
            "SoftmaxExplorer",
        ],
        "rlkit.policies.explorers",
    ),
    # approximators
    "TabularVApproximator": "rlkit.approximators.tabular",
    "TabularQApproximator": "rlkit.approximators.tabular",
    "NeuralNetworkApproximator": "rlkit.approximators.neural",
    "EnsembleDynamicsModel": "rlkit.approximators.dynamics",
    **dict.fromkeys(
        ["LinearVApproximator", "LinearQApproximator", "StateAggregation"],
        "rlkit.approximators.linear",
    ),
    "TileCoder": "rlkit.approximators.tile_coding",
    "TargetNetwork": "rlkit.approximators.neural",
    # encoders by observation space (docs/how-to/observations.md)
    **dict.fromkeys(
        [
            "encoder_for",
            "FlattenEncoder",
            "OneHotEncoder",
            "MultiBinaryEncoder",
            "MultiDiscreteEncoder",
            "ImageKeyEncoder",
            "CombinedEncoder",
        ],
        "rlkit.approximators.encoders",
    ),
    # using trained policies (docs/how-to/trained-policies.md)
    **dict.fromkeys(["save", "load"], "rlkit.deploy.save_load"),
    "export": "rlkit.deploy.export",
    "ArtifactError": "rlkit.deploy.errors",
    # learners
    "TDLearner": "rlkit.learners.tabular.td",
    "NegamaxQLearner": "rlkit.learners.tabular.negamax",
    "MonteCarloLearner": "rlkit.learners.tabular.monte_carlo",
    "DynaLearner": "rlkit.learners.tabular.dyna",
    **dict.fromkeys(
        ["ReinforceLearner", "ActorCriticLearner"], "rlkit.learners.tabular.policy_gradient"
    ),
    **dict.fromkeys(
        ["TDLambdaLearner", "SARSALambdaLearner", "LambdaReturnLearner"],
        "rlkit.learners.tabular.traces",
    ),
    **dict.fromkeys(
        ["policy_evaluation", "policy_iteration", "value_iteration"],
        "rlkit.learners.tabular.dynamic_programming",
    ),
    "BasicDQNLearner": "rlkit.learners.value_based.basic_dqn",
    "DQNLearner": "rlkit.learners.value_based.dqn",
    "NegamaxDQNLearner": "rlkit.learners.value_based.negamax_dqn",
    "DiscreteCQL": "rlkit.learners.offline.discrete_cql",
    "BC": "rlkit.learners.offline.bc",
    "PrioritizedDQNLearner": "rlkit.learners.value_based.prioritized",
    "QRDQNLearner": "rlkit.learners.value_based.qr_dqn",
    "C51Learner": "rlkit.learners.value_based.c51",
    "IQNLearner": "rlkit.learners.value_based.iqn",
    "RainbowLearner": "rlkit.learners.value_based.rainbow",
    # the DQN family in one line: rk.DQN.agent(env, seed=0, **hyperparameters)
    **dict.fromkeys(["DQN", "QRDQN", "PrioritizedDQN"], "rlkit.learners.value_based.agents"),
    **dict.fromkeys(["C51", "IQN", "Rainbow"], "rlkit.learners.value_based.distributional_agents"),
    "RandomWarmupEpsilonGreedy": "rlkit.learners.value_based.warmup_explorer",
    # trajectories
    "VectorSARTTrajectory": "rlkit.trajectories.episodic",
    "CircularArraySARTTrajectory": "rlkit.trajectories.circular",
    "FrameStackReplay": "rlkit.trajectories.frame_stack",
    "PrioritizedCircularArraySARTTrajectory": "rlkit.trajectories.prioritized",
    "BatchSampler": "rlkit.trajectories.samplers",
    "HER": "rlkit.trajectories.her",
    "NStepBatchSampler": "rlkit.trajectories.samplers",
    "InsertSampleRatioController": "rlkit.trajectories.controller",
    "RolloutTrajectory": "rlkit.trajectories.rollout",
    **dict.fromkeys(["Dataset", "DatasetError"], "rlkit.trajectories.dataset"),
    # policy gradient: distributions, stochastic policies, schedules, the builder, algorithms
    **dict.fromkeys(
        [
            "Categorical",
            "DiagGaussian",
            "SquashedDiagGaussian",
            "MultiCategorical",
            "Bernoulli",
            "distribution_for",
        ],
        "rlkit.policies.distributions",
    ),
    "StochasticPolicy": "rlkit.policies.stochastic",
    **dict.fromkeys(
        [
            "Schedule",
            "ConstantSchedule",
            "LinearSchedule",
            "PiecewiseSchedule",
            "ExponentialSchedule",
        ],
        "rlkit.schedules",
    ),
    **dict.fromkeys(["build_policy", "BuiltPolicy"], "rlkit.learners.builder"),
    "Batch": "rlkit.learners.batch",
    "VPG": "rlkit.learners.policy_gradient.vpg",
    "A2C": "rlkit.learners.policy_gradient.a2c",
    "PPO": "rlkit.learners.policy_gradient.ppo",
    "RecurrentPPO": "rlkit.learners.policy_gradient.recurrent",
    "IMPALA": "rlkit.learners.policy_gradient.impala",
    "TRPO": "rlkit.learners.policy_gradient.trpo",
    "ES": "rlkit.learners.policy_gradient.es",
    "ManySeedsPPO": "rlkit.learners.many_seeds.ppo",
    "ManySeedsDQN": "rlkit.learners.many_seeds.dqn",
    "SeedBlocksReplay": "rlkit.learners.many_seeds.replay",
    "OneEnvVector": "rlkit.learners.many_seeds.one_env",
    # continuous control: off-policy actor-critics and action noise
    "SAC": "rlkit.learners.actor_critic.sac",
    "TD3": "rlkit.learners.actor_critic.td3",
    "DDPG": "rlkit.learners.actor_critic.ddpg",
    # model-based RL (docs/how-to/model-based.md)
    "MBPO": "rlkit.learners.model_based.mbpo",
    "PETS": "rlkit.learners.model_based.pets",
    # offline RL: continuous actions
    "CQL": "rlkit.learners.offline.cql",
    "IQL": "rlkit.learners.offline.iql",
    "TD3BC": "rlkit.learners.offline.td3bc",
    **dict.fromkeys(
        ["ActionNoise", "GaussianActionNoise", "OrnsteinUhlenbeckActionNoise"],
        "rlkit.policies.action_noise",
    ),
    # optimizer modules (a subpackage: rk.optimizers.GradientDescent, rk.optimizers.make, ...)
    "optimizers": "rlkit.optimizers",
    # scale-out: the actor-learner split (a subpackage: rk.distributed.ActorLearner)
    "distributed": "rlkit.distributed",
}

__all__ = sorted(
    [
        "__version__",
        "update",
        "statistics",
        "greedy",
        "DispatchError",
        "AbstractEnv",
        "AbstractVectorEnv",
        "AbstractOfflineEnv",
        "AbstractPolicy",
        "AbstractLearner",
        "AbstractTrajectory",
        "AbstractApproximator",
        "AbstractHook",
        "AbstractStopCondition",
        "InvalidActionError",
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
        *_LAZY,
    ]
)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'rlkit' has no attribute {name!r}")
    try:
        if module == f"{__name__}.{name}":  # a lazily imported subpackage (rk.optimizers)
            value = importlib.import_module(module)
        else:
            value = getattr(importlib.import_module(module), name)
    except ModuleNotFoundError as error:
        if error.name != "torch":
            raise
        from .core.optional import TORCH_HINT

        raise ModuleNotFoundError(f"rlkit.{name}: {TORCH_HINT}", name="torch") from error
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
