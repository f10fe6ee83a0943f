"""Tabular recipes: Sutton & Barto problems solved with rlkit's tabular stack.

Every recipe is a function of ``seed`` and its own keyword parameters
(``rk.make_experiment(name, seed, episodes=100)``, ``rlkit run NAME --set episodes=100``) returning
an :class:`rlkit.Experiment`; all generators (environment, explorer, policy) are derived from that
one seed. None needs torch.
"""

from __future__ import annotations

import numpy as np

import rlkit as rk
from rlkit.core.checks import positive_int
from rlkit.core.seeding import int_seed, spawn_seeds

CLIFF_EPISODES = 500


def stop_after_episodes(recipe: str, episodes: int) -> rk.StopAfterNEpisodes:
    """The recipes' budget, refused with the recipe's name when it is not a positive integer."""
    return rk.StopAfterNEpisodes(positive_int(recipe, "episodes", episodes))


def cliff_walking(seed: int) -> tuple[rk.GymEnv, np.random.SeedSequence]:
    """CliffWalking-v1 and its explorer's seed, the first two children of ``seed``."""
    env_seed, explorer_seed = spawn_seeds(seed, 2)
    return rk.GymEnv("CliffWalking-v1", seed=int_seed(env_seed)), explorer_seed


@rk.experiment
def TabularQLearning_CliffWalking(
    seed: int = 0, episodes: int = CLIFF_EPISODES, step_size: float = 0.5, epsilon: float = 0.1
) -> rk.Experiment:
    """Q-learning on CliffWalking-v1 (alpha 0.5, epsilon 0.1; Sutton & Barto Example 6.6)."""
    env, explorer_seed = cliff_walking(seed)
    q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=step_size)
    return rk.Experiment(
        rk.Agent(
            rk.QBasedPolicy(
                rk.TDLearner(q, method="qlearning", gamma=1.0),
                rk.EpsilonGreedyExplorer(epsilon, seed=explorer_seed),
            ),
            rk.VectorSARTTrajectory(),
        ),
        env,
        stop_after_episodes("TabularQLearning_CliffWalking", episodes),
        rk.TotalRewardPerEpisode(),
    )


@rk.experiment
def SARSA_CliffWalking(
    seed: int = 0, episodes: int = CLIFF_EPISODES, step_size: float = 0.5, epsilon: float = 0.1
) -> rk.Experiment:
    """SARSA on CliffWalking-v1 (alpha 0.5, epsilon 0.1): the safe path of Example 6.6."""
    env, explorer_seed = cliff_walking(seed)
    q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=step_size)
    return rk.Experiment(
        rk.Agent(
            rk.QBasedPolicy(
                rk.TDLearner(q, method="sarsa", gamma=1.0),
                rk.EpsilonGreedyExplorer(epsilon, seed=explorer_seed),
            ),
            rk.VectorSARTTrajectory(),
        ),
        env,
        stop_after_episodes("SARSA_CliffWalking", episodes),
        rk.TotalRewardPerEpisode(),
    )


@rk.experiment
def ExpectedSARSA_CliffWalking(
    seed: int = 0, episodes: int = CLIFF_EPISODES, step_size: float = 0.5, epsilon: float = 0.1
) -> rk.Experiment:
    """Expected SARSA on CliffWalking-v1 (alpha 0.5, epsilon 0.1; Sutton & Barto Figure 6.3)."""
    env, explorer_seed = cliff_walking(seed)
    q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=step_size)
    return rk.Experiment(
        rk.Agent(
            rk.QBasedPolicy(
                rk.TDLearner(q, method="expected_sarsa", gamma=1.0),
                rk.EpsilonGreedyExplorer(epsilon, seed=explorer_seed),
            ),
            rk.VectorSARTTrajectory(),
        ),
        env,
        stop_after_episodes("ExpectedSARSA_CliffWalking", episodes),
        rk.TotalRewardPerEpisode(),
    )


@rk.experiment
def TD0_RandomWalk1D(seed: int = 0, episodes: int = 100, step_size: float = 0.1) -> rk.Experiment:
    """TD(0) prediction of the random policy on the 5-state random walk (Example 6.2)."""
    env_seed, policy_seed = spawn_seeds(seed, 2)
    env = rk.GymEnv("rlkit/RandomWalk1D-v0", seed=int_seed(env_seed))
    v = rk.TabularVApproximator(env.state_space, init=0.5, step_size=step_size)
    return rk.Experiment(
        rk.Agent(
            rk.VBasedPolicy(
                rk.TDLearner(v, method="td0", gamma=1.0), rk.RandomPolicy(seed=policy_seed)
            ),
            rk.VectorSARTTrajectory(),
        ),
        env,
        stop_after_episodes("TD0_RandomWalk1D", episodes),
        rk.TotalRewardPerEpisode(),
    )


def stick_on_20(env: rk.AbstractEnv, learner: rk.AbstractLearner) -> int:
    """Sutton & Barto's Blackjack policy of Figure 5.1: stick (0) on 20 or 21, else hit (1)."""
    return 0 if env.state[0] >= 20 else 1


@rk.experiment
def MonteCarlo_Blackjack(seed: int = 0, episodes: int = 10_000) -> rk.Experiment:
    """First-visit Monte Carlo prediction of 'stick on 20 or 21' in Blackjack (Figure 5.1)."""
    env = rk.GymEnv("Blackjack-v1", seed=int_seed(spawn_seeds(seed, 1)[0]))
    v = rk.TabularVApproximator(env.state_space, step_size=None)
    return rk.Experiment(
        rk.Agent(
            rk.VBasedPolicy(rk.MonteCarloLearner(v, kind="first_visit", gamma=1.0), stick_on_20),
            rk.VectorSARTTrajectory(),
        ),
        env,
        stop_after_episodes("MonteCarlo_Blackjack", episodes),
        rk.TotalRewardPerEpisode(),
    )


@rk.experiment
def TabularQLearning_FrozenLake(
    seed: int = 0,
    episodes: int = 20_000,
    step_size: float = 0.1,
    gamma: float = 0.99,
    epsilon_end: float = 0.01,
    decay_steps: int = 100_000,
) -> rk.Experiment:
    """Q-learning on the slippery 4x4 FrozenLake-v1 (alpha 0.1, gamma 0.99, decaying epsilon)."""
    env_seed, explorer_seed = spawn_seeds(seed, 2)
    env = rk.GymEnv("FrozenLake-v1", seed=int_seed(env_seed))
    q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=step_size)
    return rk.Experiment(
        rk.Agent(
            rk.QBasedPolicy(
                rk.TDLearner(q, method="qlearning", gamma=gamma),
                rk.EpsilonGreedyExplorer(
                    kind="exp",
                    epsilon_start=1.0,
                    epsilon_end=epsilon_end,
                    decay_steps=decay_steps,
                    seed=explorer_seed,
                ),
            ),
            rk.VectorSARTTrajectory(),
        ),
        env,
        stop_after_episodes("TabularQLearning_FrozenLake", episodes),
        rk.TotalRewardPerEpisode(),
    )
