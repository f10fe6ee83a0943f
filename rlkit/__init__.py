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

from . import envs as _envs  # noqa: F401 - registers the bundled gymnasium environments
from .core.dispatch import (
    DispatchError,
    PlanStep,
    collect_statistics,
    forward,
    noop,
    run_loop,
    statistics,
    update,
)
from .core.stages import (
    POST_ACT_STAGE,
    POST_EPISODE_STAGE,
    POST_EXPERIMENT_STAGE,
    PRE_ACT_STAGE,
    PRE_EPISODE_STAGE,
    PRE_EXPERIMENT_STAGE,
    STAGES,
    AbstractStage,
    PostActStage,
    PostEpisodeStage,
    PostExperimentStage,
    PreActStage,
    PreEpisodeStage,
    PreExperimentStage,
)

__version__ = "0.1.0"

# public name -> module that defines it (imported lazily by __getattr__)
_LAZY: dict[str, str] = {
    # core
    "run": "rlkit.core.run",
    "explain": "rlkit.core.plan",
    "build_plan": "rlkit.core.plan",
    "CallPlan": "rlkit.core.plan",
    "Experiment": "rlkit.core.experiment",
    "experiment": "rlkit.core.experiment",
    "list_experiments": "rlkit.core.experiment",
    "make_experiment": "rlkit.core.experiment",
    "UnknownExperimentError": "rlkit.core.experiment",
    "spawn_seeds": "rlkit.core.seeding",
    "spawn_generators": "rlkit.core.seeding",
    **dict.fromkeys(
        ["AbstractLogger", "TensorBoardLogger", "CSVLogger", "JSONLinesLogger"],
        "rlkit.core.logging",
    ),
    "ProgressBar": "rlkit.core.progress",
    **dict.fromkeys(
        [
            "CheckpointHook",
            "CheckpointError",
            "save_checkpoint",
            "load_checkpoint",
            "latest_checkpoint",
        ],
        "rlkit.core.checkpoint",
    ),
    "get_state": "rlkit.core.state",
    "set_state": "rlkit.core.state",
    "EvaluationHook": "rlkit.core.evaluation_hook",
    "EvaluationRecord": "rlkit.core.evaluation_hook",
    "evaluate": "rlkit.core.evaluation",
    "EvaluationResult": "rlkit.core.evaluation",
    "greedy": "rlkit.core.evaluation",
    **dict.fromkeys(
        [
            "AbstractHook",
            "EmptyHook",
            "ComposedHook",
            "find_hook",
            "TotalRewardPerEpisode",
            "RewardsPerEpisode",
            "StepsPerEpisode",
            "TimePerStep",
            "DoEveryNSteps",
            "DoEveryNEpisodes",
            "DoOnExit",
        ],
        "rlkit.core.hooks",
    ),
    **dict.fromkeys(
        [
            "AbstractStopCondition",
            "StopAfterNSteps",
            "StopAfterNEpisodes",
            "StopWhenDone",
            "StopAfterNoImprovement",
            "StopAfterNSeconds",
            "StopSignal",
            "StopAny",
            "StopAll",
        ],
        "rlkit.core.stop_conditions",
    ),
    # environments
    "AbstractEnv": "rlkit.envs.base",
    "InvalidActionError": "rlkit.envs.base",
    "GymEnv": "rlkit.envs.gym",
    "RandomWalk1DEnv": "rlkit.envs.toy.random_walk",
    "MultiArmBanditsEnv": "rlkit.envs.toy.bandits",
    "WindyGridWorldEnv": "rlkit.envs.toy.windy_grid_world",
    "MaximizationBiasEnv": "rlkit.envs.toy.maximization_bias",
    "GridWorldEnv": "rlkit.envs.toy.grid_world",
    "GamblersProblemEnv": "rlkit.envs.toy.gamblers_problem",
    # policies and explorers
    "AbstractPolicy": "rlkit.policies.base",
    "Agent": "rlkit.policies.agent",
    "RandomPolicy": "rlkit.policies.random",
    "QBasedPolicy": "rlkit.policies.q_based",
    "VBasedPolicy": "rlkit.policies.v_based",
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
    "AbstractApproximator": "rlkit.approximators.base",
    "TabularVApproximator": "rlkit.approximators.tabular",
    "TabularQApproximator": "rlkit.approximators.tabular",
    "NeuralNetworkApproximator": "rlkit.approximators.neural",
    "TargetNetwork": "rlkit.approximators.neural",
    "q_network": "rlkit.approximators.neural",
    "DuelingHead": "rlkit.approximators.neural",
    # learners
    "AbstractLearner": "rlkit.learners.base",
    "TDLearner": "rlkit.learners.td",
    "MonteCarloLearner": "rlkit.learners.monte_carlo",
    "BasicDQNLearner": "rlkit.learners.basic_dqn",
    "DQNLearner": "rlkit.learners.dqn",
    "PrioritizedDQNLearner": "rlkit.learners.prioritized_dqn",
    "QRDQNLearner": "rlkit.learners.qr_dqn",
    "policy_evaluation": "rlkit.learners.dynamic_programming",
    "policy_iteration": "rlkit.learners.dynamic_programming",
    "value_iteration": "rlkit.learners.dynamic_programming",
    # trajectories
    "AbstractTrajectory": "rlkit.trajectories.base",
    "VectorSARTTrajectory": "rlkit.trajectories.episodic",
    "CircularArraySARTTrajectory": "rlkit.trajectories.circular",
    "BatchSampler": "rlkit.trajectories.samplers",
    "NStepBatchSampler": "rlkit.trajectories.samplers",
    "PrioritizedCircularArraySARTTrajectory": "rlkit.trajectories.prioritized",
    "SumTree": "rlkit.trajectories.sum_tree",
    "InsertSampleRatioController": "rlkit.trajectories.controller",
}

__all__ = sorted(
    [
        "update",
        "run_loop",
        "statistics",
        "collect_statistics",
        "noop",
        "forward",
        "DispatchError",
        "PlanStep",
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
        *_LAZY,
    ]
)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'rlkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
