"""Rainbow against DQN on MinAtar Breakout at the same budget (issue 24).

``run``: one recipe (``DQN_MinAtarBreakout`` or ``Rainbow_MinAtarBreakout``, ``experiments/
images.py``) stopped after ``--steps`` environment steps on one seed, the recipe's settings
kept: DQN's epsilon still decays over 250k steps (the run is built for
``max(steps, 250k)`` steps with ``exploration_fraction`` rescaled so, then stopped at the
budget: a budget under 250k stops DQN while it still explores, epsilon ``1 - 0.99 steps /
250k``); Rainbow's epsilon is 0 (its noisy layers explore) and its ``beta`` is held, so
nothing else depends on the run's length. ``--epsilon-steps N`` decays DQN's epsilon over
``N`` steps instead (e.g. the budget: a variant that gives a short run DQN's whole schedule;
name its files apart, e.g. ``DQN-eps150k_s0.txt``). Every ``--every`` steps one line
with the mean return of the training episodes finished in that window is appended to
``--out`` as it goes (a stopped run keeps its curve); at the end, the greedy return (noise
off for Rainbow) over ``--eval-episodes`` episodes on a fresh environment, and the run's
steps per second.

``report``: reads every ``<Algo>_s<seed>.txt`` in ``--dir`` and writes the table (per seed and
the mean over seeds, per window) to ``--results`` and the curves (mean training return per
window, each seed thin, the mean over seeds thick) to ``--plot``.

Usage::

    nice python benchmarks/minatar_rainbow.py run --algo Rainbow --seed 0 --steps 500000 \\
        --out benchmarks/minatar_curves/Rainbow_s0.txt
    python benchmarks/minatar_rainbow.py report --dir benchmarks/minatar_curves \\
        --results benchmarks/results_minatar.txt --plot benchmarks/minatar_breakout.png
"""

from __future__ import annotations

import argparse
import os
import re
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

RECIPES = {"DQN": "DQN_MinAtarBreakout", "Rainbow": "Rainbow_MinAtarBreakout"}
EPSILON_STEPS = 250_000  # DQN_MinAtarBreakout's epsilon schedule, in steps
EVAL_SEED = 10_000
MAX_EPISODE_STEPS = 10_000  # a cap on greedy episodes (a policy that never loses the ball)
_WINDOW = re.compile(r"step\s+(\d+)\s+episodes\s+(\d+)\s+mean return\s+(\S+)")
_GREEDY = re.compile(r"greedy\s+(\S+)")
_SPEED = re.compile(r"steps/s\s+(\S+)")


def _write(out: Path, line: str) -> None:
    print(line, flush=True)
    with out.open("a") as f:
        f.write(line + "\n")


def greedy_return(exp, episodes: int) -> float:
    """The trained policy's greedy mean return on a fresh MinAtar Breakout (``EVAL_SEED``)."""
    import gymnasium as gym

    import rlkit as rk

    env = rk.GymEnv(
        gym.wrappers.TimeLimit(rk.make_minatar_env("MinAtar/Breakout-v1"), MAX_EPISODE_STEPS)
    )
    seed = np.random.SeedSequence(EVAL_SEED)
    return rk.evaluate(exp.policy, env, episodes, seed=seed).mean


def experiment(algo: str, seed: int, steps: int, epsilon_steps: int = EPSILON_STEPS):
    """``algo``'s recipe stopped after ``steps`` steps, its epsilon decaying over
    ``epsilon_steps`` (the recipe's 250k by default), whatever the budget."""
    import rlkit as rk

    length = max(steps, epsilon_steps)
    exp = rk.make_experiment(
        RECIPES[algo], seed=seed, total_steps=length, exploration_fraction=epsilon_steps / length
    )
    exp.stop_condition = rk.StopAfterNSteps(steps)
    return exp


def run(args: argparse.Namespace) -> None:
    """One recipe, one seed, ``args.steps`` steps; the curve appended to ``args.out``."""
    import torch

    import rlkit as rk

    torch.set_num_threads(1)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    exp = experiment(args.algo, args.seed, args.steps, args.epsilon_steps)
    episodes = exp.hook
    seen = 0
    start = time.perf_counter()
    _write(out, f"# {RECIPES[args.algo]} seed {args.seed} budget {args.steps} steps, "
                f"epsilon schedule {args.epsilon_steps} steps")  # fmt: skip

    def report(t: int, policy, env) -> None:
        nonlocal seen
        new = episodes.rewards[seen:]
        seen = len(episodes.rewards)
        mean = float(np.mean(new)) if new else float("nan")
        elapsed = time.perf_counter() - start
        _write(out, f"step {t:>9d}  episodes {len(new):5d}  mean return {mean:7.3f}  "
                    f"{elapsed:8.0f} s")  # fmt: skip

    exp.hook = exp.hook + rk.DoEveryNSteps(report, args.every)
    rk.run(exp)
    speed = args.steps / (time.perf_counter() - start)
    greedy = greedy_return(exp, args.eval_episodes)
    _write(out, f"greedy {greedy:.3f} over {args.eval_episodes} episodes  steps/s {speed:.0f}")


def read_curve(path: Path) -> tuple[list[int], list[float], float | None, float | None]:
    """The windows' end steps and mean returns, the greedy return and the speed (None: the
    run has not finished)."""
    steps, means, greedy, speed = [], [], None, None
    for line in path.read_text().splitlines():
        if m := _WINDOW.search(line):
            steps.append(int(m.group(1)))
            means.append(float(m.group(3)))
        elif m := _GREEDY.search(line):  # a later evaluation (a rerun's) replaces the greedy
            greedy = float(m.group(1))  # return; the speed stays the first run's
            speed = speed if speed is not None else float(_SPEED.search(line).group(1))
    return steps, means, greedy, speed


def report(args: argparse.Namespace) -> None:
    """The table and the plot of every curve in ``args.dir``."""
    curves: dict[str, dict[int, tuple]] = {}
    for path in sorted(Path(args.dir).glob("*_s*.txt")):
        algo, seed = path.stem.rsplit("_s", 1)
        curves.setdefault(algo, {})[int(seed)] = read_curve(path)
    title = "MinAtar Breakout: mean training return per window (benchmarks/minatar_rainbow.py)"
    lines = [title, ""]
    for algo, seeds in sorted(curves.items()):
        for seed, (steps, means, greedy, speed) in sorted(seeds.items()):
            last = steps[-1] if steps else 0
            tail = np.nanmean(means[-5:]) if means else float("nan")
            end = "running" if greedy is None else f"greedy {greedy:.2f}, {speed:.0f} steps/s"
            lines.append(f"{algo:8s} seed {seed}: {last:>7d} steps, last 5 windows "
                         f"{tail:6.2f}, {end}")  # fmt: skip
    lines += ["", "mean over the seeds that reached the step (n seeds):"]
    all_steps = sorted({s for seeds in curves.values() for c in seeds.values() for s in c[0]})
    header = "step     " + "".join(f"{algo:>16s}" for algo in sorted(curves))
    lines.append(header)
    for step in all_steps:
        row = f"{step:<9d}"
        for algo in sorted(curves):
            values = [c[1][c[0].index(step)] for c in curves[algo].values() if step in c[0]]
            row += f"{np.nanmean(values):12.2f} ({len(values)})" if values else " " * 16
        lines.append(row)
    Path(args.results).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    _plot(curves, args.plot)


def _plot(curves: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    colors = {"DQN": "C0", "Rainbow": "C3"}
    for i, (algo, seeds) in enumerate(sorted(curves.items())):
        color = colors.get(algo, f"C{i + 4}" if algo != "DQN-eps150k" else "C1")
        for steps, means, _, _ in seeds.values():
            ax.plot(steps, means, color=color, alpha=0.3, linewidth=0.8)
        common = sorted(set.intersection(*(set(c[0]) for c in seeds.values())))
        mean = [np.nanmean([c[1][c[0].index(s)] for c in seeds.values()]) for s in common]
        n = f"{len(seeds)} seed{'s' if len(seeds) > 1 else ''}"
        ax.plot(common, mean, color=color, linewidth=2, label=f"{algo} ({n})")
    ax.set_xlabel("environment steps")
    ax.set_ylabel("mean training return per 10k steps")
    ax.set_title("MinAtar Breakout: Rainbow vs DQN (Revisiting Rainbow settings)")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--algo", choices=sorted(RECIPES), required=True)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--steps", type=int, default=500_000)
    r.add_argument("--every", type=int, default=10_000)
    r.add_argument("--eval-episodes", type=int, default=10)
    r.add_argument("--epsilon-steps", type=int, default=EPSILON_STEPS)
    r.add_argument("--out", required=True)
    p = sub.add_parser("report")
    p.add_argument("--dir", default="benchmarks/minatar_curves")
    p.add_argument("--results", default="benchmarks/results_minatar.txt")
    p.add_argument("--plot", default="benchmarks/minatar_breakout.png")
    args = parser.parse_args()
    (run if args.command == "run" else report)(args)


if __name__ == "__main__":
    main()
