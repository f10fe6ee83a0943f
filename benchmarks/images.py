"""Image inputs: Atari speed and replay memory, and DQN's learning curve on MinAtar Breakout.

``--part atari`` (default), measured in one process with the same torch thread count:

* the bare loop: ``rk.make_atari_env("ALE/Pong-v5")`` (``AtariPreprocessing``, frame skip 4,
  episodic life, fire reset, clipped rewards, 4 stacked frames) stepped with random actions,
  no policy: env steps per second;
* the full DQN loop: ``DQN_Pong`` (Nature CNN, ``rk.FrameStackReplay``) for the same number of
  steps, learning from step ``learning_starts`` on (shortened so that training happens):
  env steps per second and the ratio to the bare loop;
* the compute floor: the same network's gradient steps (as many as training took, on random
  uint8 batches of 32: Huber loss, target-network forward, Adam, clipping) and one forward pass
  per env step for acting, with no env, no replay and no run loop; the ratio
  ``full / (bare + floor)`` is what rlkit adds (replay, stack rebuilding, the run loop);
* replay memory per million transitions: ``rk.FrameStackReplay`` (bytes of all its arrays, per
  stored transition, times 1e6) against storing both stacks per transition in a ``uint8``
  ``CircularArraySARTTrajectory``, and the ratio to one 84x84 frame.

``--part minatar``: ``DQN_MinAtarBreakout`` for ``--steps`` steps (its 250k-step epsilon
schedule kept), one line per ``--every`` steps with the mean training return of the episodes
finished in that window, appended to ``--out`` as it goes (a stopped run keeps its curve).

Usage::

    python benchmarks/images.py --part atari [--steps 3000] [--threads 1]
    nice python benchmarks/images.py --part minatar --steps 1000000 --seed 0 --out curve.txt
"""

from __future__ import annotations

import argparse
import os
import platform
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

import rlkit as rk  # noqa: E402


def bare_atari(steps: int, seed: int = 0) -> float:
    """Env steps per second of the wrapped Atari env with random actions."""
    env = rk.make_atari_env("ALE/Pong-v5", repeat_action_probability=0.0)
    env.reset(seed=seed)
    env.action_space.seed(seed)
    actions = [env.action_space.sample() for _ in range(steps)]
    start = time.perf_counter()
    for a in actions:
        _, _, terminated, truncated, _ = env.step(a)
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - start)


def full_dqn(steps: int, learning_starts: int, seed: int = 0) -> tuple[float, int]:
    """Env steps per second of ``DQN_Pong`` (learning from ``learning_starts`` on), and the
    gradient steps it took."""
    exp = rk.make_experiment(
        "DQN_Pong", seed=seed, total_steps=steps, learning_starts=learning_starts
    )
    start = time.perf_counter()
    rk.run(exp)
    elapsed = time.perf_counter() - start
    return steps / elapsed, exp.policy.policy.learner.gradient_steps


def compute_floor(steps: int, gradient_steps: int, seed: int = 0) -> float:
    """Seconds for ``gradient_steps`` DQN gradient steps of ``DQN_Pong``'s network on random
    uint8 batches plus ``steps`` single-observation forward passes (acting)."""
    import torch.nn.functional as F

    exp = rk.make_experiment("DQN_Pong", seed=seed, total_steps=steps)
    learner = exp.policy.policy.learner
    net = learner.approximator.model
    target = learner.target.model
    optimizer = learner.approximator.optimizer
    g = torch.Generator().manual_seed(seed)
    shape = (32, *exp.env.state_space.shape)
    states = torch.randint(0, 256, shape, dtype=torch.uint8, generator=g)
    actions = torch.randint(0, 6, (32,), generator=g)
    obs = states[:1]
    start = time.perf_counter()
    with torch.inference_mode():
        for _ in range(steps):
            net(obs[0]).argmax()
    for _ in range(gradient_steps):
        with torch.no_grad():
            y = target(states).max(-1).values * 0.99
        q = net(states).gather(1, actions[:, None]).squeeze(1)
        loss = F.smooth_l1_loss(q, y)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 10.0)
        optimizer.step()
    return time.perf_counter() - start


def replay_memory(steps: int = 2000, capacity: int = 1000) -> tuple[float, float]:
    """Bytes per stored transition: ``FrameStackReplay`` and a uint8 replay of whole stacks."""
    env = rk.GymEnv(rk.make_atari_env("ALE/Pong-v5"), seed=0)
    replay = rk.FrameStackReplay(capacity, env.state_space, env.action_space)
    rk.run(rk.Agent(rk.RandomPolicy(seed=0), replay), env, rk.StopAfterNSteps(steps))
    plain = rk.CircularArraySARTTrajectory(
        capacity, env.state_space, env.action_space, state_dtype=np.uint8
    )
    plain_bytes = sum(
        getattr(plain, n).nbytes
        for n in ("state", "action", "reward", "terminal", "truncated", "next_state")
    )
    return replay.nbytes / capacity, plain_bytes / capacity


def atari(args: argparse.Namespace) -> None:
    print(f"# Atari (ALE/Pong-v5), torch threads {torch.get_num_threads()}, {platform.processor()}")
    bare = bare_atari(args.steps)
    full, grads = full_dqn(args.steps, args.steps // 3)
    floor = compute_floor(args.steps, grads)
    print(f"bare wrapped env loop:  {bare:8.1f} env steps/s")
    print(
        f"full DQN_Pong loop:     {full:8.1f} env steps/s ({grads} gradient steps in "
        f"{args.steps} steps, learning from step {args.steps // 3})  ratio bare/full "
        f"{bare / full:.2f}"
    )
    floor_time = args.steps / bare + floor
    print(
        f"compute floor:          {floor:8.1f} s (the gradient steps and acting forwards alone); "
        f"full loop / (bare env + floor) = {(args.steps / full) / floor_time:.2f}"
    )
    compact, plain = replay_memory()
    frame = 84 * 84
    print(
        f"replay per 1M transitions: FrameStackReplay {compact * 1e6 / 2**30:.2f} GiB "
        f"({compact / frame:.3f} frames per transition), both stacks in uint8 "
        f"{plain * 1e6 / 2**30:.2f} GiB ({plain / frame:.2f} frames)"
    )


def minatar(args: argparse.Namespace) -> None:
    p_steps = args.steps
    exp = rk.make_experiment(
        "DQN_MinAtarBreakout",
        seed=args.seed,
        total_steps=p_steps,
        exploration_fraction=min(250_000 / p_steps, 1.0),
    )
    returns: list[float] = []
    window: list[float] = []
    episodes = exp.hook
    start = time.perf_counter()
    out = open(args.out, "a") if args.out else None  # noqa: SIM115 - appended as it goes

    def report(t: int, policy, env) -> None:
        nonlocal window
        new = episodes.rewards[len(returns) :]
        returns.extend(new)
        mean = float(np.mean(new)) if new else float("nan")
        line = (
            f"seed {args.seed} step {t:>9d}  episodes {len(new):5d}  mean return {mean:7.2f}  "
            f"{time.perf_counter() - start:8.0f} s"
        )
        print(line, flush=True)
        if out is not None:
            out.write(line + "\n")
            out.flush()

    exp.hook = exp.hook + rk.DoEveryNSteps(report, args.every)
    rk.run(exp)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("atari", "minatar"), default="atari")
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--every", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    (atari if args.part == "atari" else minatar)(args)


if __name__ == "__main__":
    main()
