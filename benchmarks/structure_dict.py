"""PPO on Dict observations: rlkit's encoders against Stable-Baselines3's ``MultiInputPolicy``,
in one process with one torch thread (issue 30, "MultiInputPolicy PPO on the Dict env").

The env is a Dict CartPole: CartPole-v1 with observations ``{"cart": [x, x_dot], "pole":
[theta, theta_dot]}`` (gymnasium's Dict sorts the keys, so both libraries concatenate them to
CartPole's own vector). Both learners use rl-baselines3-zoo's PPO CartPole settings (the
``PPO_CartPole`` recipe: 8 envs, n_steps 32, batch 256, gae_lambda 0.8, gamma 0.98, 20 epochs,
learning rate and clip range decaying linearly from 1e-3 and 0.2), 100k steps by default. For
each seed: the training wall time, the training CPU time of this process (less sensitive than
wall time to other work on a shared machine) and the deterministic (greedy) mean return over
20 episodes on a separate env. Targets: return at least SB3's on 3 seeds; time <= 0.7 x
SB3's.

This file is ``benchmarks/structure_dict.py`` (not ``structure.py --part dict``: another
change creates ``benchmarks/structure.py``). Usage::

    python benchmarks/structure_dict.py [--seeds 3] [--first-seed 0] [--steps 100000] [--no-sb3]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

import rlkit as rk  # noqa: E402
from rlkit.core.seeding import spawn_seeds  # noqa: E402

SETTINGS = dict(n_steps=32, batch_size=256, gae_lambda=0.8, gamma=0.98, n_epochs=20,
                ent_coef=0.0)  # fmt: skip
N_ENVS, LR, CLIP = 8, 1e-3, 0.2


class DictCartPole(gym.ObservationWrapper):
    """CartPole-v1 with observations ``{"cart": [x, x_dot], "pole": [theta, theta_dot]}``."""

    def __init__(self) -> None:
        super().__init__(gym.make("CartPole-v1"))
        low, high = self.env.observation_space.low, self.env.observation_space.high
        self.observation_space = gym.spaces.Dict({
            "pole": gym.spaces.Box(low[2:], high[2:], dtype=np.float32),
            "cart": gym.spaces.Box(low[:2], high[:2], dtype=np.float32),
        })  # fmt: skip

    def observation(self, observation: np.ndarray) -> dict[str, np.ndarray]:
        return {"cart": observation[:2], "pole": observation[2:]}


def greedy_mean(act, seed: int = 123, episodes: int = 20) -> float:
    env = DictCartPole()
    returns = []
    for i in range(episodes):
        obs, _ = env.reset(seed=seed + i)
        done, total = False, 0.0
        while not done:
            obs, reward, terminated, truncated, _ = env.step(act(obs))
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
    return float(np.mean(returns))


def train_rlkit(seed: int, steps: int) -> tuple[float, float, float]:
    env_seed, policy_seed = spawn_seeds(seed, 2)
    env = rk.VectorGymEnv([DictCartPole] * N_ENVS, seed=env_seed)
    lr, clip = rk.LinearSchedule(LR, 0.0, steps), rk.LinearSchedule(CLIP, 0.0, steps)
    agent = rk.PPO.agent(env, seed=policy_seed, lr=lr, clip_range=clip, **SETTINGS)
    start, cpu = time.perf_counter(), time.process_time()
    rk.run(agent, env, rk.StopAfterNSteps(steps))
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    env.close()
    return seconds, cpu, greedy_mean(lambda obs: int(agent.policy.predict(obs)))


def train_sb3(seed: int, steps: int) -> tuple[float, float, float]:
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    env = make_vec_env(DictCartPole, n_envs=N_ENVS, seed=seed)
    model = PPO("MultiInputPolicy", env, learning_rate=lambda f: LR * f,
                clip_range=lambda f: CLIP * f, seed=seed, device="cpu", verbose=0,
                **SETTINGS)  # fmt: skip
    start, cpu = time.perf_counter(), time.process_time()
    model.learn(steps)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return seconds, cpu, greedy_mean(lambda obs: int(model.predict(obs, deterministic=True)[0]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--no-sb3", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"PPO on a Dict CartPole, {args.steps} steps, {N_ENVS} envs; torch {torch.__version__}, "
          f"{platform.processor() or platform.machine()}")  # fmt: skip
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        seconds, cpu, mean = train_rlkit(seed, args.steps)
        line = f"seed {seed}: rlkit {seconds:6.1f} s (CPU {cpu:6.1f} s), greedy mean {mean:6.1f}"
        if not args.no_sb3:
            sb3_seconds, sb3_cpu, sb3_mean = train_sb3(seed, args.steps)
            line += (f" | SB3 MultiInputPolicy {sb3_seconds:6.1f} s (CPU {sb3_cpu:6.1f} s), "
                     f"greedy mean {sb3_mean:6.1f} | time ratio {seconds / sb3_seconds:.2f}, "
                     f"CPU time ratio {cpu / sb3_cpu:.2f}")  # fmt: skip
        print(line, flush=True)


if __name__ == "__main__":
    main()
