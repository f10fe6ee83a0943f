"""Vector-env run loop speed against the bare gymnasium vector loop, measured in one process.

CartPole-v1 with 8 sub-envs. For the ``sync`` (``gymnasium.vector.SyncVectorEnv``) and
``subprocess`` (``gymnasium.vector.AsyncVectorEnv``) backends: transitions per second of
``rk.run(rk.RandomPolicy(seed=0), rk.VectorGymEnv("CartPole-v1", 8, backend=...),
rk.StopAfterNSteps(n))`` divided by those of the bare gymnasium vector loop doing the same work
(the same vector env class and autoreset mode, SAME_STEP, random actions from
``envs.action_space.sample()``, no learning); targets >= 0.9. The Ray backend's throughput is
printed beside them with its actor count (Ray started here with ``--ray-cpus`` CPUs).

Each measurement is repeated ``--repeats`` times, alternating floor and rlkit, and the best of
each is kept (the least disturbed by other load). Usage::

    python benchmarks/vector.py [--steps 20000] [--repeats 3] [--ray-cpus 2]

``--steps`` counts batch steps (transitions = steps x 8).
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import gymnasium as gym

import rlkit as rk

N_ENVS = 8
MODE = gym.vector.AutoresetMode.SAME_STEP


def bare_vector_loop(backend: str, steps: int) -> float:
    fns = [lambda: gym.make("CartPole-v1")] * N_ENVS
    if backend == "sync":
        envs = gym.vector.SyncVectorEnv(fns, autoreset_mode=MODE)
    else:
        envs = gym.vector.AsyncVectorEnv(fns, autoreset_mode=MODE)
    envs.reset(seed=0)
    envs.action_space.seed(0)
    start = time.perf_counter()
    for _ in range(steps):
        envs.step(envs.action_space.sample())
    seconds = time.perf_counter() - start
    envs.close()
    return steps * N_ENVS / seconds


def rlkit_vector_loop(backend: str, steps: int, **kwargs) -> tuple[float, rk.VectorGymEnv]:
    env = rk.VectorGymEnv("CartPole-v1", N_ENVS, backend=backend, seed=0, **kwargs)
    env.reset()
    start = time.perf_counter()
    rk.run(rk.RandomPolicy(seed=0), env, rk.StopAfterNSteps(steps * N_ENVS))
    seconds = time.perf_counter() - start
    env.close()
    return steps * N_ENVS / seconds, env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000, help="batch steps per measurement")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ray-cpus", type=int, default=2)
    parser.add_argument("--no-ray", action="store_true")
    args = parser.parse_args()
    print(
        f"python {platform.python_version()}, gymnasium {gym.__version__}, rlkit "
        f"{rk.__version__}, {os.cpu_count()} CPUs; CartPole-v1 x {N_ENVS}, "
        f"{args.steps} batch steps, best of {args.repeats}"
    )
    print(f"{'backend':<12}{'gymnasium (tr/s)':>18}{'rlkit (tr/s)':>15}{'ratio':>8}")
    for backend in ("sync", "subprocess"):
        floor = ours = 0.0
        for _ in range(args.repeats):
            floor = max(floor, bare_vector_loop(backend, args.steps))
            ours = max(ours, rlkit_vector_loop(backend, args.steps)[0])
        print(f"{backend:<12}{floor:>18,.0f}{ours:>15,.0f}{ours / floor:>8.2f}")
    if args.no_ray:
        return
    import ray

    ray.init(num_cpus=args.ray_cpus, include_dashboard=False, log_to_driver=False)
    best, actors = 0.0, 0
    for _ in range(args.repeats):
        rate, env = rlkit_vector_loop("ray", args.steps // 4)
        best, actors = max(best, rate), env._group.n_actors
    print(f"{'ray':<12}{'':>18}{best:>15,.0f}{'':>8}  ({actors} actors, {args.ray_cpus} CPUs)")
    ray.shutdown()


if __name__ == "__main__":
    main()
