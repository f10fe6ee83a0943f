"""DQN-family training speed and quality against their floors, measured in one process.

For each seed: train a recipe (default ``DQN_CartPole``: rl-baselines3-zoo's hyperparameters),
report the wall time of training, environment steps per second and the greedy evaluation mean
over 20 episodes on a separate environment. In the same process, with the same torch thread
count:

* the compute floor: the same number of gradient steps as training took, on random batches,
  with the same network, optimizer (fused Adam), loss (Huber), gradient clipping and a target
  network forward pass, and no environment, no replay, no acting;
* the bare environment time: the same number of steps of the gymnasium environment with random
  actions and no policy.

The ratio ``training / (floor + bare env)`` is what rlkit adds on top (acting with one forward
pass per step, replay, sampling, the run loop, and the recipe's periodic greedy evaluations,
whose time is also printed on its own); the target is at most 1.2. The floor is measured right
before each seed's training (so both see the same load on a shared machine) and each seed's
ratio uses its own floor.

The recipes end with the policy that evaluated best during training (``restore_best``: the
greedy policy plays 5 episodes every 10% of the run). Each seed prints the greedy mean over 20
fresh episodes of that policy ("greedy mean") and of the final parameters ("final policy"),
so both are visible. Usage::

    python benchmarks/dqn.py [--seeds 5] [--threads 1] [--recipe DQN_CartPole]
"""

from __future__ import annotations

import argparse
import copy
import platform
import time

import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F

import rlkit as rk
from rlkit.core.seeding import int_seed, spawn_seeds

# greedy mean that counts as solved, per environment
SOLVED = {"CartPole-v1": 475.0, "Acrobot-v1": -100.0, "MountainCar-v0": -110.0}


def compute_floor(experiment: rk.Experiment, gradient_steps: int, seed: int = 0) -> float:
    """Seconds for ``gradient_steps`` DQN gradient steps on random batches (no environment)."""
    learner = experiment.policy.policy.learner
    approx = learner.approximator
    net = copy.deepcopy(approx.model)
    target = copy.deepcopy(net).requires_grad_(False)
    group = approx.optimizer.param_groups[0]
    optimizer = type(approx.optimizer)(
        net.parameters(),
        lr=group["lr"],
        eps=group["eps"],
        fused=group.get("fused") or None,
    )
    params = list(net.parameters())
    max_norm = approx.max_grad_norm
    batch_size = learner.sampler.batch_size
    space = experiment.env.state_space
    n_actions = int(experiment.env.action_space.n)
    g = torch.Generator().manual_seed(seed)
    pool = 64
    states = torch.randn(pool, batch_size, *space.shape, generator=g)
    next_states = torch.randn(pool, batch_size, *space.shape, generator=g)
    actions = torch.randint(0, n_actions, (pool, batch_size), generator=g)
    rewards = torch.randn(pool, batch_size, generator=g)
    terminals = (torch.rand(pool, batch_size, generator=g) < 0.05).float()
    gamma = learner.gamma
    start = time.perf_counter()
    for i in range(gradient_steps):
        k = i % pool
        q = net(states[k]).gather(1, actions[k].unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            y = rewards[k] + (1.0 - terminals[k]) * gamma * target(next_states[k]).max(1).values
        loss = F.smooth_l1_loss(q, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if max_norm is not None:
            torch.nn.utils.clip_grad_norm_(params, max_norm)
        optimizer.step()
        if i % 128 == 127:
            target.load_state_dict(net.state_dict())
    return time.perf_counter() - start


def bare_env_time(env_id: str, steps: int, seed: int = 0) -> float:
    """Seconds for ``steps`` steps of the gymnasium env with random actions (resets included)."""
    env = gym.make(env_id)
    rng = np.random.default_rng(seed)
    actions = rng.integers(env.action_space.n, size=steps).tolist()
    env.reset(seed=seed)
    step, reset = env.step, env.reset
    start = time.perf_counter()
    for a in actions:
        _, _, terminated, truncated, _ = step(a)
        if terminated or truncated:
            reset()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", default="DQN_CartPole")
    parser.add_argument("--seeds", type=int, default=5, help="seeds first-seed .. +N-1")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    parser.add_argument("--eval-episodes", type=int, default=20)
    parser.add_argument("--total-steps", type=int, default=None, help="shorter runs")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    print(f"rlkit {rk.__version__}, torch {torch.__version__}, python {platform.python_version()}")
    print(
        f"recipe {args.recipe}, torch threads {torch.get_num_threads()}, seeds "
        f"{args.first_seed}..{args.first_seed + args.seeds - 1}",
        flush=True,
    )
    kwargs = {} if args.total_steps is None else {"total_steps": args.total_steps}
    probe = rk.make_experiment(args.recipe, seed=0, **kwargs)
    env_id, total = probe.env.name, probe.stop_condition.n
    steps = _gradient_steps(probe.policy.policy.learner.controller, total)
    env_time = bare_env_time(env_id, total)
    print(f"bare env: {total} steps of {env_id} with random actions: {env_time:.1f} s")

    rows = []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        floor = compute_floor(probe, steps, seed=seed)
        exp = rk.make_experiment(args.recipe, seed=seed, **kwargs)
        final = FinalState()
        evaluation = rk.find_hook(exp.hook, rk.EvaluationHook)
        timer = _time_calls(evaluation, "evaluate") if evaluation is not None else None
        start = time.perf_counter()
        rk.run(exp.policy, exp.env, exp.stop_condition, final + exp.hook)
        train = time.perf_counter() - start
        assert final.gradient_steps == steps, (final.gradient_steps, steps)
        eval_seed = int_seed(spawn_seeds(10_000 + seed, 1)[0])
        eval_env = rk.GymEnv(env_id)
        result = rk.evaluate(exp.policy, eval_env, args.eval_episodes, seed=eval_seed)
        exp.policy.policy.load_state_dict(final.state)
        last = rk.evaluate(exp.policy, eval_env, args.eval_episodes, seed=eval_seed)
        ratio = train / (floor + env_time)
        rows.append((seed, train, floor, ratio, result.mean, last.mean))
        kept = (
            f" (kept from step {evaluation.restored_step}; final policy {last.mean:.1f}), "
            f"evaluations during training {timer[0]:.1f} s"
            if evaluation is not None
            else ""
        )
        print(
            f"seed {seed}: training {train:6.1f} s, {total / train:7.0f} env steps/s, greedy "
            f"mean {result.mean:7.1f} +/- {result.std:5.1f} ({args.eval_episodes} episodes)"
            f"{kept}; floor ({steps} gradient steps, no env) {floor:5.1f} s; "
            f"ratio training / (floor + bare env) {ratio:.2f}",
            flush=True,
        )

    train_mean = float(np.mean([r[1] for r in rows]))
    floor_mean = float(np.mean([r[2] for r in rows]))
    ratio_mean = float(np.mean([r[3] for r in rows]))
    print(
        f"mean: training {train_mean:.1f} s, floor {floor_mean:.1f} s, bare env {env_time:.1f} s;"
        f" ratio training / (floor + bare env) {ratio_mean:.2f} (target <= 1.2)"
    )
    threshold = SOLVED.get(env_id)
    if threshold is not None:
        for label, column in (("greedy mean", 4), ("final policy", 5)):
            solved = sum(r[column] >= threshold for r in rows)
            print(
                f"{label} >= {threshold:g} on {solved} of {len(rows)} seeds "
                f"(means: {', '.join(f'{r[column]:.1f}' for r in rows)})"
            )


class FinalState(rk.AbstractHook):
    """Keeps a copy of the policy's state when the run ends, before the recipe's evaluation
    hook restores the best one (this hook comes first in the chain)."""

    state: dict | None = None
    gradient_steps = 0

    def post_experiment(self, policy, env) -> None:
        self.state = copy.deepcopy(policy.policy.state_dict())
        self.gradient_steps = policy.policy.learner.gradient_steps


def _time_calls(obj, name: str) -> list[float]:
    """Wrap ``obj.name`` to add the seconds of each call to the returned one-element list."""
    total = [0.0]
    method = getattr(obj, name)

    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            total[0] += time.perf_counter() - start

    setattr(obj, name, timed)
    return total


def _gradient_steps(controller: rk.InsertSampleRatioController, total: int) -> int:
    """How many gradient steps a run of ``total`` environment steps takes."""
    c = copy.deepcopy(controller)
    return sum(c.step() for _ in range(total))


if __name__ == "__main__":
    main()
