"""``predict`` latency: rlkit's (the trained policy's and the loaded artifact's) against
Stable-Baselines3's ``predict`` for the same network and onnxruntime on ``rk.export``'s file,
for one observation and a batch of 256, measured in one process.

Networks (SB3's defaults, built with the same ``net_arch`` on both sides): PPO on CartPole-v1
(separate 64-64 tanh policy and value MLPs), DQN on CartPole-v1 (256-256 ReLU, the
``DQN_CartPole`` recipe's) and SAC on Pendulum-v1 (256-256 ReLU actor). Each call is timed
``--repeat`` times after a warm-up; the median per call is printed, in microseconds, with the
ratios rlkit / SB3 and onnxruntime / rlkit. Weights are untrained: latency does not depend on
them. Usage::

    python benchmarks/predict.py [--repeat 2000] [--threads 1]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time

import gymnasium as gym
import numpy as np
import torch

import rlkit as rk


def median_us(fn, obs, repeat: int) -> float:
    for _ in range(max(10, repeat // 20)):
        fn(obs)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(obs)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def rlkit_policies() -> dict:
    cartpole = rk.GymEnv("CartPole-v1", seed=0)
    dqn = rk.make_experiment("DQN_CartPole", seed=0, total_steps=64, learning_starts=32)
    rk.run(dqn)  # a run records the spaces a DQN learner acts on
    return {
        "PPO CartPole (64-64 tanh)": rk.PPO(cartpole, seed=0),
        "DQN CartPole (256-256)": dqn.policy.policy,
        "SAC Pendulum (256-256)": rk.SAC(rk.GymEnv("Pendulum-v1", seed=0), seed=0),
    }


def sb3_models() -> dict:
    from stable_baselines3 import DQN, PPO, SAC

    return {
        "PPO CartPole (64-64 tanh)": PPO(
            "MlpPolicy", gym.make("CartPole-v1"), device="cpu",
            policy_kwargs={"net_arch": {"pi": [64, 64], "vf": [64, 64]}},
        ),
        "DQN CartPole (256-256)": DQN(
            "MlpPolicy", gym.make("CartPole-v1"), device="cpu",
            policy_kwargs={"net_arch": [256, 256]},
        ),
        "SAC Pendulum (256-256)": SAC(
            "MlpPolicy", gym.make("Pendulum-v1"), device="cpu",
            policy_kwargs={"net_arch": [256, 256]},
        ),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = args.threads
    print(f"python {platform.python_version()}, torch {torch.__version__}, onnxruntime "
          f"{onnxruntime.__version__}, {args.threads} thread(s), median of {args.repeat} calls, "
          f"microseconds per call")  # fmt: skip
    ours, theirs = rlkit_policies(), sb3_models()
    folder = tempfile.mkdtemp()
    header = (f"{'policy':28s} {'batch':>5s} {'rlkit':>8s} {'loaded':>8s} {'SB3':>8s} "
              f"{'ORT':>8s} {'rlkit/SB3':>9s} {'ORT/rlkit':>9s}")  # fmt: skip
    print(header)
    for name, policy in ours.items():
        path = os.path.join(folder, "policy.rlkit")
        rk.save(policy, path)
        loaded = rk.load(path)
        rk.export(policy, os.path.join(folder, "policy.onnx"))
        session = onnxruntime.InferenceSession(os.path.join(folder, "policy.onnx"), options)
        sb3 = theirs[name]
        space = loaded.state_space
        space.seed(0)
        for batch in (1, 256):
            obs = np.stack([space.sample() for _ in range(batch)]).astype(np.float32)
            one = obs[0] if batch == 1 else obs

            def ort(x, session=session):
                return session.run(None, {"obs": x if x.ndim == 2 else x[None]})[0]

            def sb3_predict(x, sb3=sb3):
                return sb3.predict(x, deterministic=True)

            t_rk = median_us(policy.predict, one, args.repeat)
            t_loaded = median_us(loaded.predict, one, args.repeat)
            t_sb3 = median_us(sb3_predict, one, args.repeat)
            t_ort = median_us(ort, one, args.repeat)
            print(f"{name:28s} {batch:5d} {t_rk:8.1f} {t_loaded:8.1f} {t_sb3:8.1f} "
                  f"{t_ort:8.1f} {t_rk / t_sb3:9.2f} {t_ort / t_rk:9.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
