"""Tabular recipes: Sutton & Barto problems solved with rlkit's tabular stack.

Every recipe is a function of ``seed`` returning an :class:`rlkit.Experiment`; all generators
(environment, explorer, policy) are derived from that one seed.
"""

from __future__ import annotations

import rlkit as rk
from rlkit.core.seeding import int_seed, spawn_seeds

CLIFF_EPISODES = 500


def _cliff_walking(method: str, seed: int, episodes: int) -> rk.Experiment:
    env_seed, explorer_seed = spawn_seeds(seed, 2)
    env = rk.GymEnv("CliffWalking-v1", seed=int_seed(env_seed))
    q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.5)
    learner = rk.TDLearner(q, method=method, gamma=1.0)
    explorer = rk.EpsilonGreedyExplorer(0.1, seed=explorer_seed)
    agent = rk.Agent(rk.QBasedPolicy(learner, explorer), rk.VectorSARTTrajectory())
    return rk.Experiment(agent, env, rk.StopAfterNEpisodes(episodes), rk.TotalRewardPerEpisode())


@rk.experiment
def TabularQLearning_CliffWalking(seed: int = 0, episodes: int = CLIFF_EPISODES) -> rk.Experiment:
    """Q-learning on CliffWalking-v1 (alpha 0.5, epsilon 0.1; Sutton & Barto Example 6.6)."""
    return _cliff_walking("qlearning", seed, episodes)


@rk.experiment
def SARSA_CliffWalking(seed: int = 0, episodes: int = CLIFF_EPISODES) -> rk.Experiment:
    """SARSA on CliffWalking-v1 (alpha 0.5, epsilon 0.1): the safe path of Example 6.6."""
    return _cliff_walking("sarsa", seed, episodes)


@rk.experiment
def ExpectedSARSA_CliffWalking(seed: int = 0, episodes: int = CLIFF_EPISODES) -> rk.Experiment:
    """Expected SARSA on CliffWalking-v1 (alpha 0.5, epsilon 0.1; Sutton & Barto Figure 6.3)."""
    return _cliff_walking("expected_sarsa", seed, episodes)


@rk.experiment
def TD0_RandomWalk1D(seed: int = 0, episodes: int = 100) -> rk.Experiment:
    """TD(0) prediction of the random policy on the 5-state random walk (Example 6.2)."""
    env_seed, policy_seed = spawn_seeds(seed, 2)
    env = rk.GymEnv("rlkit/RandomWalk1D-v0", seed=int_seed(env_seed))
    v = rk.TabularVApproximator(env.state_space, init=0.5, step_size=0.1)
    learner = rk.TDLearner(v, method="td0", gamma=1.0)
    policy = rk.VBasedPolicy(learner, rk.RandomPolicy(seed=policy_seed))
    agent = rk.Agent(policy, rk.VectorSARTTrajectory())
    return rk.Experiment(agent, env, rk.StopAfterNEpisodes(episodes), rk.TotalRewardPerEpisode())


def stick_on_20(env: rk.AbstractEnv, learner: rk.AbstractLearner) -> int:
    """Sutton & Barto's Blackjack policy of Figure 5.1: stick (0) on 20 or 21, else hit (1)."""
    return 0 if env.state[0] >= 20 else 1


@rk.experiment
def MonteCarlo_Blackjack(seed: int = 0, episodes: int = 10_000) -> rk.Experiment:
    """First-visit Monte Carlo prediction of 'stick on 20 or 21' in Blackjack (Figure 5.1)."""
    env = rk.GymEnv("Blackjack-v1", seed=int_seed(spawn_seeds(seed, 1)[0]))
    v = rk.TabularVApproximator(env.state_space, step_size=None)
    learner = rk.MonteCarloLearner(v, kind="first_visit", gamma=1.0)
    agent = rk.Agent(rk.VBasedPolicy(learner, stick_on_20), rk.VectorSARTTrajectory())
    return rk.Experiment(agent, env, rk.StopAfterNEpisodes(episodes), rk.TotalRewardPerEpisode())


@rk.experiment
def TabularQLearning_FrozenLake(seed: int = 0, episodes: int = 20_000) -> rk.Experiment:
    """Q-learning on the slippery 4x4 FrozenLake-v1 (alpha 0.1, gamma 0.99, decaying epsilon)."""
    env_seed, explorer_seed = spawn_seeds(seed, 2)
    env = rk.GymEnv("FrozenLake-v1", seed=int_seed(env_seed))
    q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.1)
    learner = rk.TDLearner(q, method="qlearning", gamma=0.99)
    explorer = rk.EpsilonGreedyExplorer(
        kind="exp", epsilon_start=1.0, epsilon_end=0.01, decay_steps=100_000, seed=explorer_seed
    )
    agent = rk.Agent(rk.QBasedPolicy(learner, explorer), rk.VectorSARTTrajectory())
    return rk.Experiment(agent, env, rk.StopAfterNEpisodes(episodes), rk.TotalRewardPerEpisode())
