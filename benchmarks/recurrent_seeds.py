"""Two learners' per-seed returns compared: how many seeds reach a target, mean and median, a
two-sided exact permutation test on the difference of the means (every way of splitting the
pooled returns into two groups of the same sizes, so no p-value below ``1 / C(n_a + n_b, n_a)``
exists) and, when scipy is installed, the two-sided Mann-Whitney U test.

Used for RecurrentPPO against sb3-contrib on CartPoleNoVel over seeds 0-7 (greedy means of
benchmarks/recurrent.py's runs, benchmarks/results_recurrent.txt).

Usage::

    python benchmarks/recurrent_seeds.py --a 500 500 197.2 ... --b 500 212.9 500 ...
        [--names rlkit sb3-contrib] [--target 500]
"""

from __future__ import annotations

import argparse
from itertools import combinations

import numpy as np


def permutation_p_value(a: list[float], b: list[float]) -> float:
    """Two-sided exact permutation test of ``mean(a) - mean(b)``: the share of the splits of
    the pooled values into groups of ``len(a)`` and ``len(b)`` whose difference of means is at
    least as far from 0 as the observed one.

    Example:
        >>> permutation_p_value([1.0, 2.0], [3.0, 4.0])  # 2 of the 6 splits are as extreme
        0.3333333333333333
    """
    pooled = np.asarray([*a, *b], dtype=np.float64)
    n, k = len(pooled), len(a)
    total = pooled.sum()
    observed = abs(np.mean(a) - np.mean(b))
    extreme = count = 0
    for group in combinations(range(n), k):
        s = pooled[list(group)].sum()
        diff = abs(s / k - (total - s) / (n - k))
        extreme += diff >= observed - 1e-9
        count += 1
    return float(extreme / count)


def describe(name: str, values: list[float], target: float) -> str:
    v = np.asarray(values)
    listed = [float(x) for x in v]
    return (f"{name}: {int((v >= target).sum())}/{len(v)} seeds at {target:g}, mean "
            f"{v.mean():.1f}, median {np.median(v):.1f}, values {listed}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", type=float, nargs="+", required=True)
    parser.add_argument("--b", type=float, nargs="+", required=True)
    parser.add_argument("--names", nargs=2, default=["a", "b"])
    parser.add_argument("--target", type=float, default=500.0)
    args = parser.parse_args()
    print(describe(args.names[0], args.a, args.target))
    print(describe(args.names[1], args.b, args.target))
    print(f"exact permutation test (two-sided, difference of means "
          f"{np.mean(args.a) - np.mean(args.b):+.1f}): p = "
          f"{permutation_p_value(args.a, args.b):.3f}")  # fmt: skip
    try:
        from scipy.stats import mannwhitneyu
    except ImportError:
        print("Mann-Whitney U: scipy not installed")
        return
    test = mannwhitneyu(args.a, args.b, alternative="two-sided")
    print(f"Mann-Whitney U (two-sided, scipy): U = {test.statistic:.1f}, p = {test.pvalue:.3f}")


if __name__ == "__main__":
    main()
