"""Run-loop speed against its floors, measured in one process.

(a) rlkit ``RandomPolicy`` run loop vs the bare gymnasium loop on CartPole-v1 (same wrappers);
(b) the full tabular stack (Agent + QBasedPolicy + TDLearner Q-learning + TabularQApproximator +
    EpsilonGreedyExplorer + VectorSARTTrajectory) vs a hand-written numpy Q-learning loop on
    CliffWalking-v1 (same algorithm: epsilon-greedy with random tie-breaking, alpha 0.5, gamma 1).

Each measurement is repeated ``--repeats`` times, alternating floor and rlkit, and the best of each
is kept (the least disturbed by other load). Usage::

    python benchmarks/run_loop.py [--steps 100000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import platform
import time

import gymnasium as gym
import numpy as np

import rlkit as rk

ALPHA, GAMMA, EPSILON = 0.5, 1.0, 0.1


def bare_random_loop(steps: int) -> float:
    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    env.action_space.seed(0)
    start = time.perf_counter()
    done = False
    for _ in range(steps):
        if done:
            env.reset()
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        done = terminated or truncated
    return steps / (time.perf_counter() - start)


def rlkit_random_loop(steps: int) -> float:
    env = rk.GymEnv("CartPole-v1", seed=0)
    policy = rk.RandomPolicy(seed=0)
    start = time.perf_counter()
    rk.run(policy, env, rk.StopAfterNSteps(steps))
    return steps / (time.perf_counter() - start)


def hand_written_q_learning(steps: int) -> float:
    env = gym.make("CliffWalking-v1")
    rng = np.random.default_rng(0)
    q = np.zeros((env.observation_space.n, env.action_space.n))
    n_actions = env.action_space.n
    state, _ = env.reset(seed=0)
    start = time.perf_counter()
    for _ in range(steps):
        row = q[state]
        if rng.random() < EPSILON:
            action = int(rng.integers(n_actions))
        else:
            best = np.flatnonzero(row == row.max())
            action = int(best[0]) if len(best) == 1 else int(rng.choice(best))
        next_state, reward, terminated, truncated, _ = env.step(action)
        target = reward if terminated else reward + GAMMA * q[next_state].max()
        row[action] += ALPHA * (target - row[action])
        state = next_state
        if terminated or truncated:
            state, _ = env.reset()
    return steps / (time.perf_counter() - start)


def rlkit_q_learning(steps: int) -> float:
    env = rk.GymEnv("CliffWalking-v1", seed=0)
    q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=ALPHA)
    learner = rk.TDLearner(q, method="qlearning", gamma=GAMMA)
    explorer = rk.EpsilonGreedyExplorer(EPSILON, seed=0)
    agent = rk.Agent(rk.QBasedPolicy(learner, explorer), rk.VectorSARTTrajectory())
    start = time.perf_counter()
    rk.run(agent, env, rk.StopAfterNSteps(steps))
    return steps / (time.perf_counter() - start)


def best_ratio(floor, ours, steps: int, repeats: int) -> tuple[float, float]:
    floors, mine = [], []
    for _ in range(repeats):
        floors.append(floor(steps))
        mine.append(ours(steps))
    return max(floors), max(mine)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, gymnasium {gym.__version__}, "
        f"rlkit {rk.__version__}; {args.steps:,} steps, best of {args.repeats}"
    )
    rows = [
        (
            "(a) RandomPolicy run loop / bare gymnasium loop, CartPole-v1",
            0.9,
            best_ratio(bare_random_loop, rlkit_random_loop, args.steps, args.repeats),
        ),
        (
            "(b) tabular Q-learning stack / hand-written numpy, CliffWalking-v1",
            0.8,
            best_ratio(hand_written_q_learning, rlkit_q_learning, args.steps, args.repeats),
        ),
    ]
    print(f"{'benchmark':<70} {'floor/s':>9} {'rlkit/s':>9} {'ratio':>6} {'target':>7}")
    for name, target, (floor, ours) in rows:
        ratio = ours / floor
        verdict = "ok" if ratio >= target else "BELOW"
        print(
            f"{name:<70} {floor:>9,.0f} {ours:>9,.0f} {ratio:>6.3f} {'>=' + str(target):>7} "
            f"{verdict}"
        )


if __name__ == "__main__":
    main()
