"""rlkit's ``IMPALA_CartPole`` against RLlib's IMPALA and APPO on CartPole-v1, equal actors: env
steps and wall time until the training return reaches 450 (the stop of RLlib's tuned examples,
rllib/tuned_examples/impala/cartpole_impala.py and appo/cartpole_appo.py, within 2M env steps).

The criterion is RLlib's for both: the mean return of the last 100 finished training episodes
(RLlib's ``env_runners/episode_return_mean``; rlkit's episodes are its actors', as a
``rk.TotalRewardPerEpisode`` hook sees them), checked as each episode ends (rlkit) or after each
training iteration (RLlib). rlkit runs here, on the Ray backend; RLlib runs in a virtualenv of its
own (``ray[rllib]`` pins its own gymnasium), made with ``--venv`` (default
``.venv-rllib``) on first use: ``pip install "ray[rllib]==<this ray's version>" torch``.

    python benchmarks/distributed_rllib.py [--actors 2] [--seeds 0] [--max-seconds 900]

Appends a section to ``benchmarks/results_distributed.txt`` (``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import rlkit as rk

HERE = Path(__file__).resolve().parent


class SmoothedReturnAtLeast(rk.AbstractStopCondition):
    """Stop when the mean of the last ``window`` finished episodes of ``hook`` (an
    ``rk.TotalRewardPerEpisode``) is at least ``target``; records the step and wall time."""

    def __init__(self, hook: rk.TotalRewardPerEpisode, target: float, window: int = 100):
        self.hook, self.target, self.window = hook, target, window
        self.start, self.reached = time.perf_counter(), None

    def episode(self, policy: Any, env: Any) -> bool:
        rewards = self.hook.rewards[-self.window :]
        if rewards and float(np.mean(rewards)) >= self.target:
            steps = policy.policy.transitions
            self.reached = (steps, round(time.perf_counter() - self.start, 1))
            return True
        return False


def rlkit_run(actors: int, seed: int, target: float, max_steps: int, seconds: float) -> dict:
    exp = rk.make_experiment(
        "IMPALA_CartPole", seed=seed, n_actors=actors, backend="ray", total_steps=max_steps
    )
    returns = rk.TotalRewardPerEpisode()
    reached = SmoothedReturnAtLeast(returns, target)
    stop = rk.StopAfterNSteps(max_steps) | rk.StopAfterNSeconds(seconds) | reached
    start = time.perf_counter()
    rk.run(exp.policy, exp.env, stop, returns)
    exp.env.close()
    return {"reached": reached.reached, "steps": exp.policy.policy.transitions,
            "seconds": round(time.perf_counter() - start, 1)}  # fmt: skip


def ensure_venv(venv: Path) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        import ray
        import torch

        print(f"making {venv} (ray[rllib]=={ray.__version__})", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        version = torch.__version__.split("+")[0]
        subprocess.run([str(python), "-m", "pip", "install", "-q", f"torch=={version}",
                        f"ray[rllib]=={ray.__version__}"], check=True)  # fmt: skip
    return python


def rllib_run(python: Path, algo: str, actors: int, seed: int, target: float, max_steps: int,
              seconds: float) -> dict:  # fmt: skip
    out = subprocess.run(
        [str(python), str(HERE / "distributed_rllib_worker.py"), "--algo", algo,
         "--actors", str(actors), "--seed", str(seed), "--target", str(target),
         "--max-steps", str(max_steps), "--max-seconds", str(seconds)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    result = json.loads(out.stdout.strip().splitlines()[-1])
    last = result["curve"][-1] if result["curve"] else (0, 0.0, None)
    return {"reached": result["reached"], "steps": last[0], "seconds": last[1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--actors", type=int, default=2)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--target", type=float, default=450.0)
    parser.add_argument("--max-steps", type=int, default=2_000_000)
    parser.add_argument("--max-seconds", type=float, default=900.0)
    parser.add_argument("--venv", type=Path, default=Path(".venv-rllib"))
    parser.add_argument("--out", type=Path, default=HERE / "results_distributed.txt")
    args = parser.parse_args()
    import ray
    import torch

    torch.set_num_threads(1)
    python = ensure_venv(args.venv)
    lines = [
        "",
        f"## rlkit IMPALA vs RLlib IMPALA/APPO, {args.actors} actors each, CartPole-v1 "
        f"({platform.node()}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M')})",
        "",
        f"`python benchmarks/distributed_rllib.py --actors {args.actors} --seeds "
        f"{' '.join(map(str, args.seeds))} --max-seconds {args.max_seconds:.0f}`: env steps "
        f"and wall s until the mean of the last 100 training episodes >= {args.target:.0f}",
        "",
        "| run | seed | reached at (env steps, s) | ran (env steps, s) |",
        "|---|---|---|---|",
    ]
    budget = (args.target, args.max_steps, args.max_seconds)
    for seed in args.seeds:
        ray.init(num_cpus=args.actors + 1, include_dashboard=False, log_to_driver=False)
        try:
            runs = {"rlkit IMPALA_CartPole (ray)": rlkit_run(args.actors, seed, *budget)}
        finally:
            ray.shutdown()
        for algo in ("IMPALA", "APPO"):
            runs[f"RLlib {algo}"] = rllib_run(python, algo, args.actors, seed, *budget)
        for name, r in runs.items():
            reached = f"{r['reached'][0]:,}, {r['reached'][1]:.0f}" if r["reached"] else "never"
            lines.append(f"| {name} | {seed} | {reached} | {r['steps']:,}, {r['seconds']:.0f} |")
            print(lines[-1], flush=True)
    with args.out.open("a") as out:
        out.write("\n".join(lines) + "\n")
    print(f"appended to {args.out}")


if __name__ == "__main__":
    main()
