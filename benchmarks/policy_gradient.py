"""Policy-gradient training speed and quality against their floors and Stable-Baselines3,
measured in one process with one torch thread.

For each seed: train a recipe (default ``PPO_CartPole``: rl-baselines3-zoo's hyperparameters,
8 envs, 100k steps), report the wall time of training, environment steps per second and the
deterministic (greedy) mean over 20 episodes on a separate environment. In the same process:

* the compute floor: the same number of gradient steps as training took (updates x epochs x
  minibatches), on random batches of the same size, with the same actor-critic network, loss,
  Adam (fused, as rlkit's) and gradient clipping, and no environment, no acting, no rollout;
* the bare vector environment time: the same number of steps of the same ``VectorGymEnv`` with
  random actions and no policy;
* when stable-baselines3 is installed, SB3's PPO (or A2C) with the same hyperparameters on the
  same seed (its own seeding), its training time and deterministic mean.

Targets (issue 12): 5 of 5 seeds >= 475; training <= 1.3 x (floor + bare env); <= 0.5 x SB3's
time. Usage::

    python benchmarks/policy_gradient.py [--seeds 5] [--recipe PPO_CartPole] [--no-sb3]
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
import torch

import rlkit as rk
from rlkit.learners.policy_gradient.functions import clipped_surrogate, normalize, value_loss


def train_rlkit(recipe: str, seed: int) -> tuple[float, float, float, object]:
    """(wall seconds, CPU seconds, greedy mean, the trained policy)."""
    experiment = rk.make_experiment(recipe, seed)
    start, cpu = time.perf_counter(), time.process_time()
    rk.run(experiment)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    mean = rk.evaluate(experiment.policy, rk.GymEnv("CartPole-v1"), 20, seed=123).mean
    experiment.env.close()
    return seconds, cpu, mean, experiment.policy.policy


def compute_floor(policy) -> float:
    """The same gradient steps on random batches with a fresh copy of the policy's network."""
    config = policy.config
    n = config["n_steps"] * 8
    batch_size = config["batch_size"] or n
    fresh = type(policy)(
        state_space=policy.state_space, action_space=policy.action_space, seed=99,
        **{k: v for k, v in config.items() if k in ("hidden", "activation")},
    )
    model = fresh.model
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-5, fused=True)
    g = torch.Generator().manual_seed(0)
    obs = torch.randn(batch_size, 4, generator=g)
    actions = torch.randint(0, 2, (batch_size,), generator=g)
    old_logp, adv, ret = (torch.randn(batch_size, generator=g) for _ in range(3))
    old_values = torch.randn(batch_size, generator=g)
    start = time.perf_counter()
    for _ in range(policy.gradient_steps):
        dist = fresh.dist_class.from_inputs(model(obs), policy.action_space)
        logp = dist.log_prob(actions)
        loss = (
            clipped_surrogate(logp, old_logp, normalize(adv), 0.2)
            + 0.5 * value_loss(model.value(obs), ret, old_values, None)
            - 0.0 * dist.entropy().mean()
        )
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
    return time.perf_counter() - start


def bare_env(total_steps: int, n_envs: int = 8) -> float:
    env = rk.VectorGymEnv("CartPole-v1", n_envs, seed=0)
    rng = np.random.default_rng(0)
    env.reset()
    start = time.perf_counter()
    for _ in range(total_steps // n_envs):
        env.act(rng.integers(0, 2, n_envs))
    seconds = time.perf_counter() - start
    env.close()
    return seconds


def train_sb3(recipe: str, seed: int) -> tuple[float, float, float] | None:
    """(wall seconds, CPU seconds, greedy mean) of SB3, or None when it is not installed."""
    try:
        from stable_baselines3 import A2C, PPO
        from stable_baselines3.common.env_util import make_vec_env
        from stable_baselines3.common.evaluation import evaluate_policy
    except ImportError:
        return None
    env = make_vec_env("CartPole-v1", n_envs=8, seed=seed)
    if recipe == "PPO_CartPole":
        model = PPO(
            "MlpPolicy", env, n_steps=32, batch_size=256, gae_lambda=0.8, gamma=0.98,
            n_epochs=20, ent_coef=0.0, learning_rate=lambda p: p * 1e-3,
            clip_range=lambda p: p * 0.2, seed=seed, device="cpu",
        )
        total = 100_000
    else:
        model = A2C("MlpPolicy", env, ent_coef=0.0, seed=seed, device="cpu")
        total = 500_000
    start, cpu = time.perf_counter(), time.process_time()
    model.learn(total)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    eval_env = make_vec_env("CartPole-v1", n_envs=1, seed=123)
    mean, _ = evaluate_policy(model, eval_env, n_eval_episodes=20, deterministic=True)
    return seconds, cpu, float(mean)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--recipe", default="PPO_CartPole", choices=["PPO_CartPole",
                                                                     "A2C_CartPole"])
    parser.add_argument("--no-sb3", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"{args.recipe}, torch {torch.__version__}, {platform.processor() or platform.machine()}"
          f", 1 torch thread")
    print("| seed | training (s) | env steps/s | greedy mean | floor (s) | bare env (s) | ratio |"
          " SB3 (s) | SB3 greedy mean | rlkit / SB3 | rlkit / SB3 (CPU time) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    solved = 0
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        seconds, cpu, mean, policy = train_rlkit(args.recipe, seed)
        floor = compute_floor(policy)
        env_s = bare_env(policy.transitions)
        sb3 = None if args.no_sb3 else train_sb3(args.recipe, seed)
        solved += mean >= 475
        sb3_text = (
            " | | | "
            if sb3 is None
            else f" {sb3[0]:.1f} | {sb3[2]:.1f} | {seconds / sb3[0]:.2f} | {cpu / sb3[1]:.2f}"
        )
        print(
            f"| {seed} | {seconds:.1f} | {policy.transitions / seconds:,.0f} | {mean:.1f} | "
            f"{floor:.1f} | {env_s:.1f} | {seconds / (floor + env_s):.2f} |{sb3_text} |",
            flush=True,
        )
    print(f"{solved} of {args.seeds} seeds >= 475")


if __name__ == "__main__":
    main()
