"""FetchReach with hindsight experience replay (issue 30): rlkit's ``HER_SAC_FetchReach``
against Stable-Baselines3's SAC with ``HerReplayBuffer`` in the same process on the same
settings, one torch thread.

For each seed: rlkit's recipe (experiments/her.py: SAC with ``rk.HER("future", 4)`` on
gymnasium-robotics' ``FetchReach-v4``, rl-baselines3-zoo's FetchReach settings: 20k steps,
MLPs 64-64, Adam 1e-3, batch 256, replay 1M, learning from 1,000 steps, gamma 0.95, tau 0.005,
the entropy coefficient learned, and the zoo's ``normalize: True``: ``rk.VecNormalize`` with
gamma 0.95), then SB3's ``SAC("MultiInputPolicy", ...)`` with
``HerReplayBuffer(n_sampled_goal=4, "future")`` and the same hyperparameters as the zoo runs
it: ``make_vec_env`` of ``FetchReach-v4`` (one env, seeded) in SB3's
``VecNormalize(gamma=0.95)`` (its own seeding: the runs are not update-for-update equal).
``--no-normalize`` runs both sides without normalisation (the recipe's ``normalize=False``).

Reported: the greedy success rate over 100 episodes on a separate raw env (episode ``i``
reset with ``123 + i``; success: ``info["is_success"]`` at the last step, gymnasium-robotics'
own), each side's observations normalised with its training statistics, frozen (rlkit: the
policy's ``observation_normalizer`` in ``predict``; SB3: the training ``VecNormalize`` with
``training=False``, ``norm_reward=False``, its ``normalize_obs`` before ``predict``), the mean
raw return of the last 20 training episodes, training wall and CPU time (the process's, less
sensitive to other work on a shared machine) and the rlkit / SB3 ratios. Needs the
``robotics`` extra (``pip install 'gymnasium-robotics>=1.4'``) and stable-baselines3.

Usage::

    python benchmarks/structure_fetch.py [--seeds 3] [--first-seed 0] [--steps 20000]
        [--no-sb3] [--no-normalize]
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
from rlkit.envs.robotics import require_robotics  # noqa: E402

RECIPE = "HER_SAC_FetchReach"
EPISODES = 100
EVAL_SEED = 123
WINDOW = 20


class _Predictor:
    """``predict(obs)`` -> action, as ``fetch_success_rate`` (experiments/her.py) calls it."""

    def __init__(self, predict: Any) -> None:
        self.predict = predict


def greedy_success(predict: Any, env_id: str) -> float:
    """The fraction of ``EPISODES`` greedy episodes (``predict(obs)`` -> action) on a fresh
    ``env_id`` (episode ``i`` reset with ``EVAL_SEED + i``) whose last step has
    ``info["is_success"]``: the recipe's ``fetch_success_rate``."""
    from rlkit.experiments.her import fetch_success_rate

    return fetch_success_rate(_Predictor(predict), env_id, EPISODES, EVAL_SEED)


def rlkit_her_sac(seed: int, steps: int, normalize: bool) -> dict[str, Any]:
    """rlkit's recipe run: greedy success, last training returns, time."""
    experiment = rk.make_experiment(RECIPE, seed, total_steps=steps, normalize=normalize)
    start, cpu = time.perf_counter(), time.process_time()
    hook = rk.run(experiment)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    from rlkit.experiments.her import HERSAC_FETCHREACH as p

    if normalize:  # frozen (predict never updates them; the eval env is a separate raw one)
        experiment.env.training = False
    success = greedy_success(experiment.policy.predict, p.env)
    last = float(np.mean(hook.rewards[-WINDOW:]))
    return {"success": success, "last": last, "seconds": seconds, "cpu": cpu}


def sb3_her_sac(seed: int, steps: int, normalize: bool) -> dict[str, Any] | None:
    """Stable-Baselines3's SAC with HerReplayBuffer, the recipe's settings, the env made as
    rl-baselines3-zoo makes it (``make_vec_env``, then ``VecNormalize`` with the algorithm's
    gamma when ``normalize``) (None: not installed)."""
    try:
        from stable_baselines3 import SAC, HerReplayBuffer
        from stable_baselines3.common.env_util import make_vec_env
        from stable_baselines3.common.vec_env import VecNormalize
    except ImportError:
        return None
    from rlkit.experiments.her import HERSAC_FETCHREACH as p

    env = make_vec_env(lambda: gym.make(p.env), n_envs=1, seed=seed)  # Monitor inside
    monitor = env.envs[0]
    if normalize:  # the zoo's normalize: True (rl_zoo3 ExperimentManager._maybe_normalize)
        env = VecNormalize(env, gamma=p.gamma)
    model = SAC(
        "MultiInputPolicy", env, learning_rate=p.lr, buffer_size=p.buffer_size,
        learning_starts=p.learning_starts, batch_size=p.batch_size, tau=p.tau, gamma=p.gamma,
        train_freq=p.train_freq, gradient_steps=p.gradient_steps, ent_coef=p.ent_coef,
        target_update_interval=p.target_update_interval, target_entropy=p.target_entropy,
        replay_buffer_class=HerReplayBuffer,
        replay_buffer_kwargs={"n_sampled_goal": p.n_sampled_goal,
                              "goal_selection_strategy": p.strategy},
        policy_kwargs={"net_arch": list(p.hidden), "n_critics": p.n_critics},
        seed=seed, device="cpu",
    )  # fmt: skip
    start, cpu = time.perf_counter(), time.process_time()
    model.learn(steps)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    normalized = (lambda obs: obs) if not normalize else env.normalize_obs
    if normalize:  # the zoo's evaluation env: frozen statistics, raw rewards
        env.training, env.norm_reward = False, False
    success = greedy_success(
        lambda obs: model.predict(normalized(obs), deterministic=True)[0], p.env
    )
    last = float(np.mean(monitor.get_episode_rewards()[-WINDOW:]))
    return {"success": success, "last": last, "seconds": seconds, "cpu": cpu}


def fetch(seeds: range, steps: int | None, sb3: bool, normalize: bool = True) -> None:
    """Run and print the table (module docstring)."""
    import stable_baselines3

    robotics = require_robotics("benchmarks/structure_fetch.py")
    steps = 20_000 if steps is None else steps
    norm = "VecNormalize (the zoo's normalize: True)" if normalize else "no VecNormalize"
    print(f"fetch: {RECIPE} (FetchReach-v4), {steps:,} steps, greedy success over {EPISODES} "
          f"episodes, torch {torch.__version__}, stable-baselines3 "
          f"{stable_baselines3.__version__}, gymnasium-robotics {robotics.__version__}, "
          f"{platform.machine()}, 1 torch thread, {norm} on both sides")  # fmt: skip
    print(f"| seed | rlkit: success | last {WINDOW} | time (s) | CPU (s) | SB3: success | "
          f"last {WINDOW} | time (s) | CPU (s) | time rlkit / SB3 | CPU time rlkit / SB3 |")
    print("|---:" * 11 + "|")
    rows = []
    for seed in seeds:
        ours = rlkit_her_sac(seed, steps, normalize)
        peer = sb3_her_sac(seed, steps, normalize) if sb3 else None
        rows.append((ours, peer))
        peer_text = (
            " n/a | n/a | n/a | n/a | n/a | n/a"
            if peer is None
            else f" {peer['success']:.2f} | {peer['last']:.1f} | {peer['seconds']:.1f} | "
            f"{peer['cpu']:.1f} | {ours['seconds'] / peer['seconds']:.2f} | "
            f"{ours['cpu'] / peer['cpu']:.2f}"
        )
        print(
            f"| {seed} | {ours['success']:.2f} | {ours['last']:.1f} | {ours['seconds']:.1f} | "
            f"{ours['cpu']:.1f} |{peer_text} |",
            flush=True,
        )
    if all(p is not None for _, p in rows):
        at_least = sum(o["success"] >= p["success"] for o, p in rows)
        cpu = [o["cpu"] / p["cpu"] for o, p in rows]
        print(f"success >= SB3's on {at_least} of {len(seeds)} seeds; rlkit / SB3 CPU time: "
              f"{', '.join(f'{c:.2f}' for c in cpu)} (mean {np.mean(cpu):.2f}; target "
              f"<= 0.7)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=None, help="default: 20k")
    parser.add_argument("--no-sb3", action="store_true")
    parser.add_argument("--no-normalize", action="store_true", help="no VecNormalize (both)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    fetch(seeds, args.steps, not args.no_sb3, not args.no_normalize)


if __name__ == "__main__":
    main()
