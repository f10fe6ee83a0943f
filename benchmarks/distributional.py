"""Distributional learners: learning within a budget, speed against DQN, QR-DQN against
sb3-contrib, and CleanRL's C51 budget. Each part runs in one process with torch on one thread.

* ``solve``: each recipe (``C51_CartPole``, ``IQN_CartPole``, ``Rainbow_CartPole``) on seeds
  0..n-1 with its 80k-step budget; the run stops at the first of the recipe's evaluations
  (every 10% of the run, 5 greedy episodes) whose mean reaches 195 (Tianshou's CI anchor),
  reporting that step, or runs the whole budget and reports a miss. Then the greedy mean over
  20 fresh episodes of the policy the run ended with.
* ``speed``: environment steps per CPU second (the process's CPU time, which a busy shared
  machine inflates less than wall time) of ``C51_CartPole``, ``IQN_CartPole`` (and
  ``Rainbow_CartPole``) against ``DQN_CartPole`` with the same settings and budget (the cost of
  the distribution), measured one after the other in this process.
* ``qrdqn``: rlkit's ``QRDQN_CartPole`` against sb3-contrib's ``QRDQN`` with the same
  rl-baselines3-zoo hyperparameters (50k steps, 10 quantiles, train_freq 256,
  gradient_steps 128, batch 64, target every 10 steps, lr 2.3e-3, MLP 256-256, Adam eps
  0.01/32, no clipping), the same seeds: training time and the greedy mean over 20 episodes of
  the final policy (sb3-contrib without an evaluation callback: both keep their final
  parameters here; rlkit's recipe's ``restore_best`` is switched off for the comparison).
  It needs ``sb3_contrib`` importable (results_distributional.txt: stable-baselines3 and
  sb3-contrib 2.7.1 installed with ``pip install --no-deps --target DIR`` and put on
  ``PYTHONPATH``, leaving the environment's own packages unchanged).
* ``cleanrl``: ``C51_CartPole`` with CleanRL's ``c51.py`` hyperparameters (500k steps, 101
  atoms on [-100, 100], lr 2.5e-4, Adam eps 0.01 / 128, buffer 10k, batch 128, gamma 0.99,
  target every 500 steps, learning from step 10k every 10 steps, epsilon 1 -> 0.05 over half
  the run counted from step 0, MLP 120-84, no clipping, one environment, time limits
  bootstrapped) on ``--env``, keeping the final parameters (no model selection). CleanRL
  reports the mean over seeds of the mean episodic return of the last 100 training episodes
  (its ``docs/rl-algorithms/c51.md`` table, made with openrlbenchmark's report over 3 seeds:
  481.2 +/- 20.5 on CartPole-v1, -87.7 +/- 5.5 on Acrobot-v1), so this prints, per seed, the
  mean return of the last 100 training episodes (epsilon-greedy at 0.05, as CleanRL's), the
  CPU time and the greedy mean of the final policy over 20 fresh episodes; then the mean and
  std over seeds; every ``--progress`` steps a progress line. Known differences from
  ``c51.py``: the first 10k actions are uniformly random (CleanRL's are epsilon-greedy with
  epsilon from 1 down to 0.962 there); the loss is the cross-entropy on ``log_softmax``
  (CleanRL clamps the probabilities to [1e-5, 1 - 1e-5] before the log); the target network
  is synced before the gradient step of a step that is a multiple of 500 (CleanRL's after it);
  the projection and the rest are the same.

Usage::

    python benchmarks/distributional.py solve [--seeds 5] [--recipes C51_CartPole ...]
    python benchmarks/distributional.py speed [--steps 20000]
    python benchmarks/distributional.py qrdqn [--seeds 3]
    python benchmarks/distributional.py cleanrl [--seeds 5] [--first-seed 0] [--env CartPole-v1]
        [--progress 50000]
"""

from __future__ import annotations

import argparse
import platform
import time
from typing import Any

import numpy as np
import torch

import rlkit as rk

THRESHOLD = 195.0
RECIPES = ("C51_CartPole", "IQN_CartPole", "Rainbow_CartPole")
EVAL_EPISODES = 20


class ReachedThreshold(rk.AbstractStopCondition):
    """Stops the run after the step at which ``hook`` (an ``rk.EvaluationHook``) recorded an
    evaluation whose mean reaches ``threshold``."""

    def __init__(self, hook: rk.EvaluationHook, threshold: float) -> None:
        self.hook, self.threshold = hook, threshold

    def step(self, policy: Any, env: Any) -> bool:
        results = self.hook.results
        return bool(results) and results[-1].mean >= self.threshold


def evaluation_hook(experiment: rk.Experiment) -> rk.EvaluationHook:
    return experiment.hook[rk.EvaluationHook]


def greedy_mean(experiment: rk.Experiment, env_id: str, seed: int = 10_000) -> float:
    env = rk.GymEnv(env_id)
    result = rk.evaluate(experiment.policy, env, EVAL_EPISODES,
                         seed=np.random.SeedSequence(seed))  # fmt: skip
    return float(result.mean)


def solve(args: argparse.Namespace) -> None:
    for name in args.recipes:
        reached = []
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            experiment = rk.make_experiment(name, seed=seed)
            budget = experiment.stop_condition
            hook = evaluation_hook(experiment)
            start, cpu = time.perf_counter(), time.process_time()
            rk.run(experiment.policy, experiment.env,
                   budget | ReachedThreshold(hook, THRESHOLD), experiment.hook)  # fmt: skip
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
            hit = next((r.step for r in hook.results if r.mean >= THRESHOLD), None)
            reached.append(hit is not None)
            curve = ", ".join(f"{r.step // 1000}k:{r.mean:.0f}" for r in hook.results)
            final = greedy_mean(experiment, "CartPole-v1")
            print(
                f"{name} seed {seed}: "
                + (f"reached {THRESHOLD:g} at step {hit}" if hit else "MISSED within budget")
                + f" ({seconds:.0f} s, {cpu:.0f} s of CPU); greedy mean {final:.1f}"
                f" over {EVAL_EPISODES} episodes; evaluations {curve}",
                flush=True,
            )
        print(f"{name}: >= {THRESHOLD:g} within 80k steps on {sum(reached)} of {len(reached)} "
              f"seeds", flush=True)  # fmt: skip


def speed(args: argparse.Namespace) -> None:
    overrides = {"total_steps": args.steps}
    for name in ("DQN_CartPole", *args.recipes):
        experiment = rk.make_experiment(name, seed=0, **overrides)
        start, cpu = time.perf_counter(), time.process_time()
        rk.run(experiment.policy, experiment.env, experiment.stop_condition)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        learner = experiment.policy.policy.learner
        print(f"{name}: {args.steps} env steps, {learner.gradient_steps} gradient steps in "
              f"{seconds:.1f} s ({cpu:.1f} s of CPU): {args.steps / cpu:.0f} env steps per CPU "
              f"second", flush=True)  # fmt: skip


ZOO_QRDQN = {
    "learning_rate": 2.3e-3, "batch_size": 64, "buffer_size": 100_000, "learning_starts": 1000,
    "gamma": 0.99, "target_update_interval": 10, "train_freq": 256, "gradient_steps": 128,
    "exploration_fraction": 0.16, "exploration_final_eps": 0.04,
}  # fmt: skip


def qrdqn(args: argparse.Namespace) -> None:
    from sb3_contrib import QRDQN

    steps = args.steps or 50_000
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        experiment = rk.make_experiment("QRDQN_CartPole", seed=seed, total_steps=steps)
        start, cpu = time.perf_counter(), time.process_time()
        rk.run(experiment.policy, experiment.env, experiment.stop_condition)  # no restore_best
        ours, ours_cpu = time.perf_counter() - start, time.process_time() - cpu
        ours_mean = greedy_mean(experiment, "CartPole-v1")

        torch.manual_seed(seed)
        model = QRDQN(
            "MlpPolicy", "CartPole-v1", seed=seed, device="cpu", verbose=0,
            policy_kwargs={"net_arch": [256, 256], "n_quantiles": 10}, **ZOO_QRDQN,
        )  # fmt: skip
        start, cpu = time.perf_counter(), time.process_time()
        model.learn(steps)
        theirs, theirs_cpu = time.perf_counter() - start, time.process_time() - cpu
        env = rk.GymEnv("CartPole-v1")
        returns = []
        for episode in range(EVAL_EPISODES):
            env.reset(seed=10_000 + episode)
            total, done = 0.0, False
            while not done:
                action, _ = model.predict(np.asarray(env.state), deterministic=True)
                env(int(action))
                total += env.reward
                done = env.done
            returns.append(total)
        print(
            f"seed {seed}: rlkit {ours:.1f} s ({ours_cpu:.1f} s CPU), greedy mean "
            f"{ours_mean:.1f}; sb3-contrib {theirs:.1f} s ({theirs_cpu:.1f} s CPU), greedy mean "
            f"{np.mean(returns):.1f}; rlkit / sb3-contrib: wall {ours / theirs:.2f}, CPU "
            f"{ours_cpu / theirs_cpu:.2f}",
            flush=True,
        )


CLEANRL = {
    "lr": 2.5e-4, "buffer_size": 10_000, "batch_size": 128, "gamma": 0.99,
    "target_update_interval": 500, "learning_starts": 10_000, "train_freq": 10,
    "gradient_steps": 1, "exploration_fraction": 0.5, "exploration_final_eps": 0.05,
    "hidden": (120, 84), "max_grad_norm": None, "adam_eps": 0.01 / 128, "n_atoms": 101,
    "v_min": -100.0, "v_max": 100.0,
}  # fmt: skip


class Progress(rk.AbstractHook):
    """Prints, every ``every`` environment steps, the step, the CPU seconds so far and the mean
    of the last 100 returns ``returns`` (an ``rk.TotalRewardPerEpisode``) recorded, so that a
    run stopped before its end shows how far it got."""

    def __init__(self, returns: rk.TotalRewardPerEpisode, every: int, label: str) -> None:
        self.returns, self.every, self.label = returns, every, label
        self.steps, self.cpu = 0, time.process_time()

    def post_act(self, policy: Any, env: Any) -> None:
        self.steps += 1
        if self.steps % self.every == 0:
            rewards = self.returns.rewards
            last = f"{np.mean(rewards[-100:]):.1f}" if rewards else "-"
            print(f"  {self.label}: step {self.steps}, {time.process_time() - self.cpu:.0f} s of "
                  f"CPU, {len(rewards)} episodes, mean of the last 100 {last}",
                  flush=True)  # fmt: skip


def cleanrl(args: argparse.Namespace) -> None:
    steps = args.steps or 500_000
    finals = []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        experiment = rk.make_experiment(
            "C51_CartPole", seed=seed, total_steps=steps, env=args.env, **CLEANRL
        )
        returns = experiment.hook[rk.TotalRewardPerEpisode]  # no model selection: final policy
        start, cpu = time.perf_counter(), time.process_time()
        progress = Progress(returns, args.progress, f"{args.env} seed {seed}")
        rk.run(experiment.policy, experiment.env, experiment.stop_condition, returns + progress)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        last = float(np.mean(returns.rewards[-100:]))
        finals.append(last)
        learner = experiment.policy.policy.learner
        print(f"{args.env} seed {seed}: {steps} env steps, {learner.gradient_steps} gradient "
              f"steps in {seconds:.0f} s ({cpu:.0f} s of CPU), {len(returns.rewards)} training "
              f"episodes; mean return of the last 100 training episodes {last:.1f}; greedy mean "
              f"{greedy_mean(experiment, args.env):.1f} over {EVAL_EPISODES} episodes",
              flush=True)  # fmt: skip
    print(f"{args.env}: {len(finals)}-seed mean of the last-100-episode means "
          f"{np.mean(finals):.1f} +/- {np.std(finals):.1f} (std over seeds, ddof 0; ddof 1: "
          f"{np.std(finals, ddof=1) if len(finals) > 1 else float('nan'):.1f})",
          flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("part", choices=("solve", "speed", "qrdqn", "cleanrl"))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--recipes", nargs="+", default=list(RECIPES))
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--env", default="CartPole-v1")
    parser.add_argument("--progress", type=int, default=50_000,
                        help="cleanrl: print progress every this many steps")  # fmt: skip
    args = parser.parse_args()
    for name in ("seeds", "steps", "progress"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name} must be a positive integer, got {value}")
    torch.set_num_threads(1)
    print(f"rlkit {rk.__version__}, torch {torch.__version__}, python "
          f"{platform.python_version()}; {args.part}", flush=True)  # fmt: skip
    if args.part == "speed":
        args.steps = args.steps or 20_000
    {"solve": solve, "speed": speed, "qrdqn": qrdqn, "cleanrl": cleanrl}[args.part](args)


if __name__ == "__main__":
    main()
