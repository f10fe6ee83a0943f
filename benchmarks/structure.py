"""Structured observations, goals, masks and memory (issue 30): rlkit against Stable-Baselines3
and sb3-contrib in the same process on the same settings, one torch thread.

Parts (``--part``; the others of the issue, ``recurrent`` and ``dict``, are added here as they
land):

* ``masks``: ``PPO_InvalidActionGrid`` (experiments/masks.py: ``rlkit/InvalidActionGrid-v0``,
  4 envs, n_steps 128, batch 64, 4 epochs, Adam 3e-4, gamma 0.99, gae_lambda 0.95, ent_coef
  0.01, MLP 64-64 tanh, ``--steps`` steps, default 50k) for each seed: rlkit's masked PPO, the
  same run unmasked (``masked=False``), and sb3-contrib's ``MaskablePPO`` with the same
  hyperparameters on the same env (``make_vec_env``, its own seeding; masks through the env's
  ``action_masks()``). Reported: environment steps until the mean return of the last 20
  training episodes first reaches 0.8 (the best return is 0.86), the mean of the last 20
  training episodes, the greedy (masked) mean over 20 episodes on a separate env, training wall
  time, and rlkit / MaskablePPO ratios of greedy return, of wall time and of CPU time (the
  process's, less sensitive than wall time to other work on a shared machine).

* ``her``: ``HER_DQN_BitFlipping`` (experiments/her.py: DQN with ``rk.HER("future", 4)`` on
  ``rlkit/BitFlipping-v0`` with 15 bits, MLP 256, Adam 1e-3, batch 256, replay 100k, learning
  from 1,000 steps, train_freq 1, gradient_steps 1, gamma 0.98, target synced every 1,000
  steps, epsilon 1 -> 0.05 over 10% of the run, max_grad_norm 10, ``--steps`` steps, default
  20k) for each seed, the same DQN without HER (``her=False``), and Stable-Baselines3's
  ``DQN`` with ``HerReplayBuffer`` (``n_sampled_goal=4``, ``"future"``) with the same settings
  on the same env (``gym.make("rlkit/BitFlipping-v0", n_bits=15)``, its own seeding). Reported:
  the greedy success rate over 100 episodes on a separate env, training wall and CPU time, and
  the rlkit / SB3 ratios.

* ``her_random_goal``: the contrast of the HER paper's task: the same two rlkit runs (DQN with
  and without HER, same budget, same seed) on ``rlkit/BitFlipping-v0`` with
  ``random_goal=True`` (a random goal each episode, ``HER_DQN_BitFlipping --set
  random_goal=true``), greedy success over 100 episodes with random goals on a separate env,
  and CPU time. With the fixed all-ones goal of the ``her`` part, plain DQN can learn from the
  starts random flips solve (one seed of three does); with random goals it has no such
  shortcut.

Usage::

    python benchmarks/structure.py --part masks [--seeds 3] [--steps 50000] [--no-sb3]
    python benchmarks/structure.py --part her [--seeds 3] [--steps 20000] [--no-sb3]
    python benchmarks/structure.py --part her_random_goal [--seeds 3] [--steps 20000]

``--first-seed N`` starts the seeds at N (one seed per process: ``--seeds 1 --first-seed 2``).
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

import rlkit as rk  # noqa: E402

GRID = "rlkit/InvalidActionGrid-v0"
WINDOW = 20


def _threshold() -> float:
    from rlkit.experiments.masks import INVALID_ACTION_GRID_THRESHOLD

    return INVALID_ACTION_GRID_THRESHOLD


def _steps_to(rewards: list[float], ends: list[int]) -> int | None:
    from rlkit.experiments.masks import steps_to_threshold

    return steps_to_threshold(rewards, ends, _threshold(), WINDOW)


def rlkit_ppo(seed: int, steps: int, masked: bool) -> dict[str, Any]:
    """rlkit's PPO_InvalidActionGrid run (masked or not): steps to threshold, returns, time."""
    experiment = rk.make_experiment(
        "PPO_InvalidActionGrid", seed, total_steps=steps, masked=masked
    )
    start, cpu = time.perf_counter(), time.process_time()
    hook = rk.run(experiment)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    experiment.env.close()
    greedy = rk.evaluate(experiment.policy, rk.GymEnv(GRID), 20, seed=123).mean
    return {
        "steps_to": _steps_to(hook.rewards, hook.ends),
        "last": float(np.mean(hook.rewards[-WINDOW:])),
        "greedy": float(greedy),
        "seconds": seconds,
        "cpu": cpu,
    }


def sb3_maskable_ppo(seed: int, steps: int) -> dict[str, Any] | None:
    """sb3-contrib's MaskablePPO with the recipe's hyperparameters (None: not installed)."""
    try:
        from sb3_contrib import MaskablePPO
        from sb3_contrib.common.maskable.evaluation import evaluate_policy
        from stable_baselines3.common.callbacks import BaseCallback
        from stable_baselines3.common.env_util import make_vec_env
    except ImportError:
        return None

    class Episodes(BaseCallback):
        """Each finished episode's return and the environment steps taken then."""

        def __init__(self) -> None:
            super().__init__()
            self.rewards: list[float] = []
            self.ends: list[int] = []

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "episode" in info:
                    self.rewards.append(float(info["episode"]["r"]))
                    self.ends.append(int(self.num_timesteps))
            return True

    env = make_vec_env(lambda: gym.make(GRID), n_envs=4, seed=seed)
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=4, learning_rate=3e-4,
        gamma=0.99, gae_lambda=0.95, ent_coef=0.01, clip_range=0.2, vf_coef=0.5,
        max_grad_norm=0.5, seed=seed, device="cpu",
    )  # fmt: skip
    episodes = Episodes()
    start, cpu = time.perf_counter(), time.process_time()
    model.learn(steps, callback=episodes)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    eval_env = make_vec_env(lambda: gym.make(GRID), n_envs=1, seed=123)
    greedy, _ = evaluate_policy(model, eval_env, n_eval_episodes=20, deterministic=True)
    return {
        "steps_to": _steps_to(episodes.rewards, episodes.ends),
        "last": float(np.mean(episodes.rewards[-WINDOW:])),
        "greedy": float(greedy),
        "seconds": seconds,
        "cpu": cpu,
    }


def _steps(value: int | None) -> str:
    return "not reached" if value is None else f"{value:,}"


def masks(seeds: range, steps: int | None, sb3: bool) -> None:
    """The ``masks`` part (module docstring)."""
    steps = 50_000 if steps is None else steps
    print(f"masks: PPO_InvalidActionGrid, {steps:,} steps, threshold {_threshold()} (mean of "
          f"the last {WINDOW} training episodes), torch {torch.__version__}, "
          f"{platform.machine()}, 1 torch thread")  # fmt: skip
    print("| seed | masked: steps to threshold | last 20 | greedy | time (s) | unmasked: steps "
          "to threshold | last 20 | MaskablePPO: steps to threshold | last 20 | greedy | "
          "time (s) | greedy rlkit / MaskablePPO | time rlkit / MaskablePPO | CPU time rlkit / "
          "MaskablePPO |")
    print("|---:" * 14 + "|")
    rows = []
    for seed in seeds:
        masked = rlkit_ppo(seed, steps, True)
        unmasked = rlkit_ppo(seed, steps, False)
        peer = sb3_maskable_ppo(seed, steps) if sb3 else None
        rows.append((masked, unmasked, peer))
        peer_text = (
            " n/a | n/a | n/a | n/a | n/a | n/a | n/a"
            if peer is None
            else f" {_steps(peer['steps_to'])} | {peer['last']:.3f} | {peer['greedy']:.3f} | "
            f"{peer['seconds']:.1f} | {masked['greedy'] / peer['greedy']:.2f} | "
            f"{masked['seconds'] / peer['seconds']:.2f} | {masked['cpu'] / peer['cpu']:.2f}"
        )
        print(
            f"| {seed} | {_steps(masked['steps_to'])} | {masked['last']:.3f} | "
            f"{masked['greedy']:.3f} | {masked['seconds']:.1f} | {_steps(unmasked['steps_to'])} "
            f"| {unmasked['last']:.3f} |{peer_text} |",
            flush=True,
        )
    faster = sum(
        m["steps_to"] is not None and (u["steps_to"] is None or m["steps_to"] < u["steps_to"])
        for m, u, _ in rows
    )
    print(f"masked PPO reached the threshold in fewer steps than unmasked PPO on {faster} of "
          f"{len(seeds)} seeds")  # fmt: skip
    if all(p is not None for *_, p in rows):
        at_least = sum(m["greedy"] >= p["greedy"] - 1e-9 for m, _, p in rows)
        ratios = [m["seconds"] / p["seconds"] for m, _, p in rows]
        cpu = [m["cpu"] / p["cpu"] for m, _, p in rows]
        print(f"greedy return >= MaskablePPO's on {at_least} of {len(seeds)} seeds; rlkit / "
              f"MaskablePPO: wall time {np.mean(ratios):.2f}, CPU time {np.mean(cpu):.2f} "
              f"(mean of the seeds; target <= 0.7)")  # fmt: skip


# ---- her ----
BITS = 15


def _success(returns: Any) -> float:
    return float(np.mean(np.asarray(returns) > -BITS))


def rlkit_her_dqn(seed: int, steps: int, her: bool, random_goal: bool = False) -> dict[str, Any]:
    """rlkit's HER_DQN_BitFlipping run (with or without HER, fixed or random goals): greedy
    success, time."""
    from rlkit.experiments.her import success_rate

    overrides = {"random_goal": True} if random_goal else {}
    experiment = rk.make_experiment(
        "HER_DQN_BitFlipping", seed, total_steps=steps, her=her, **overrides
    )
    start, cpu = time.perf_counter(), time.process_time()
    rk.run(experiment)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    success = success_rate(
        experiment.policy, BITS, n_episodes=100, seed=123, random_goal=random_goal
    )
    return {"success": success, "seconds": seconds, "cpu": cpu}


def sb3_her_dqn(seed: int, steps: int) -> dict[str, Any] | None:
    """Stable-Baselines3's DQN with HerReplayBuffer, the recipe's settings (None: not
    installed)."""
    try:
        from stable_baselines3 import DQN, HerReplayBuffer
    except ImportError:
        return None
    from rlkit.experiments.her import HERDQN_BITFLIPPING as p

    env = gym.make("rlkit/BitFlipping-v0", n_bits=BITS)
    model = DQN(
        "MultiInputPolicy", env, learning_rate=p.lr, buffer_size=p.buffer_size,
        learning_starts=p.learning_starts, batch_size=p.batch_size, tau=1.0, gamma=p.gamma,
        train_freq=p.train_freq, gradient_steps=p.gradient_steps,
        target_update_interval=p.target_update_interval,
        exploration_fraction=p.exploration_fraction,
        exploration_initial_eps=p.exploration_initial_eps,
        exploration_final_eps=p.exploration_final_eps, max_grad_norm=p.max_grad_norm,
        replay_buffer_class=HerReplayBuffer,
        replay_buffer_kwargs={"n_sampled_goal": p.n_sampled_goal,
                              "goal_selection_strategy": p.strategy},
        policy_kwargs={"net_arch": list(p.hidden)}, seed=seed, device="cpu",
    )  # fmt: skip
    start, cpu = time.perf_counter(), time.process_time()
    model.learn(steps)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    eval_env = gym.make("rlkit/BitFlipping-v0", n_bits=BITS)
    returns = []
    for episode in range(100):
        obs, _ = eval_env.reset(seed=123 + episode)
        total, done = 0.0, False
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, reward, terminated, truncated, _ = eval_env.step(int(action))
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
    return {"success": _success(returns), "seconds": seconds, "cpu": cpu}


def her(seeds: range, steps: int, sb3: bool) -> None:
    """The ``her`` part (module docstring)."""
    import stable_baselines3

    steps = 20_000 if steps is None else steps
    print(f"her: HER_DQN_BitFlipping, {BITS} bits, {steps:,} steps, greedy success over 100 "
          f"episodes, torch {torch.__version__}, stable-baselines3 "
          f"{stable_baselines3.__version__}, {platform.machine()}, 1 torch thread")  # fmt: skip
    print("| seed | rlkit HER: success | time (s) | CPU (s) | rlkit no HER: success | SB3 HER: "
          "success | time (s) | CPU (s) | time rlkit / SB3 | CPU time rlkit / SB3 |")
    print("|---:" * 10 + "|")
    rows = []
    for seed in seeds:
        ours = rlkit_her_dqn(seed, steps, True)
        plain = rlkit_her_dqn(seed, steps, False)
        peer = sb3_her_dqn(seed, steps) if sb3 else None
        rows.append((ours, plain, peer))
        peer_text = (
            " n/a | n/a | n/a | n/a | n/a"
            if peer is None
            else f" {peer['success']:.2f} | {peer['seconds']:.1f} | {peer['cpu']:.1f} | "
            f"{ours['seconds'] / peer['seconds']:.2f} | {ours['cpu'] / peer['cpu']:.2f}"
        )
        print(
            f"| {seed} | {ours['success']:.2f} | {ours['seconds']:.1f} | {ours['cpu']:.1f} | "
            f"{plain['success']:.2f} |{peer_text} |",
            flush=True,
        )
    if all(p is not None for *_, p in rows):
        at_least = sum(o["success"] >= p["success"] for o, _, p in rows)
        cpu = [o["cpu"] / p["cpu"] for o, _, p in rows]
        wall = [o["seconds"] / p["seconds"] for o, _, p in rows]
        print(f"success >= SB3's on {at_least} of {len(seeds)} seeds; rlkit / SB3: wall time "
              f"{np.mean(wall):.2f}, CPU time {np.mean(cpu):.2f} (mean of the seeds; target "
              f"<= 0.7)")  # fmt: skip


def her_random_goal(seeds: range, steps: int | None, sb3: bool) -> None:
    """The ``her_random_goal`` part (module docstring; rlkit only: ``sb3`` is not read)."""
    steps = 20_000 if steps is None else steps
    print(f"her_random_goal: HER_DQN_BitFlipping random_goal=True, {BITS} bits, {steps:,} "
          f"steps, greedy success over 100 episodes with random goals, torch "
          f"{torch.__version__}, {platform.machine()}, 1 torch thread")  # fmt: skip
    print("| seed | HER: success | CPU (s) | no HER: success | CPU (s) |")
    print("|---:" * 5 + "|")
    rows = []
    for seed in seeds:
        ours = rlkit_her_dqn(seed, steps, True, random_goal=True)
        plain = rlkit_her_dqn(seed, steps, False, random_goal=True)
        rows.append((ours["success"], plain["success"]))
        print(f"| {seed} | {ours['success']:.2f} | {ours['cpu']:.1f} | {plain['success']:.2f} | "
              f"{plain['cpu']:.1f} |", flush=True)  # fmt: skip
    solved = sum(o >= 0.9 for o, _ in rows)
    near_zero = sum(p <= 0.1 for _, p in rows)
    print(f"HER success >= 0.9 on {solved} of {len(seeds)} seeds; without HER <= 0.1 on "
          f"{near_zero} of {len(seeds)} seeds")  # fmt: skip


PARTS = {"masks": masks, "her": her, "her_random_goal": her_random_goal}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=sorted(PARTS), required=True)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=None, help="default: 50k masks, 20k her")
    parser.add_argument("--no-sb3", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    PARTS[args.part](seeds, args.steps, not args.no_sb3)


if __name__ == "__main__":
    main()
