"""``rlkit plot RUN_DIR``: the learning curve of a run (episode returns over environment steps,
their moving mean, and the greedy evaluations), saved as a PNG beside the data."""

from __future__ import annotations

import csv
import json
from pathlib import Path

__all__ = ["MATPLOTLIB_HINT", "moving_mean", "plot_run"]

MATPLOTLIB_HINT = "plotting needs matplotlib: pip install matplotlib"


def _read(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _title(run_dir: Path) -> str:
    try:
        config = json.loads((run_dir / "config.json").read_text())
        return f"{config['experiment']} (seed {config['seed']}): {run_dir.name}"
    except (OSError, ValueError, KeyError, TypeError):
        return run_dir.name


def moving_mean(returns: list[float], window: int = 100) -> list[float]:
    """The mean of each return and the ``window - 1`` before it (fewer at the start): the same
    window as the terminal's "mean return (last N)", so the curve ends at the number it printed.

    Example:
        >>> moving_mean([1.0, 2.0, 3.0, 4.0], window=2)
        [1.0, 1.5, 2.5, 3.5]
    """
    return [
        sum(returns[max(0, i + 1 - window) : i + 1]) / min(window, i + 1)
        for i in range(len(returns))
    ]


def plot_run(run_dir: Path, output: Path | None = None, window: int = 100) -> Path:
    """Draw ``run_dir``'s ``episodes.csv`` (and ``evaluations.csv`` when there is one) into
    ``output`` (default ``run_dir/learning_curve.png``); return its path.

    Raises ``FileNotFoundError`` when the folder has no episodes and ``ModuleNotFoundError``
    (saying what to install) without matplotlib.
    """
    episodes = _read(run_dir / "episodes.csv")
    evaluations = _read(run_dir / "evaluations.csv")
    if not episodes and not evaluations:
        raise FileNotFoundError(
            f"{run_dir} holds no episodes.csv or evaluations.csv of 'rlkit run' to plot"
        )
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(MATPLOTLIB_HINT, name="matplotlib") from error
    figure, axes = plt.subplots(figsize=(8, 4.5))
    if episodes:
        steps = [int(row["total_steps"]) for row in episodes]
        returns = [float(row["return"]) for row in episodes]
        axes.plot(steps, returns, color="tab:blue", alpha=0.25, lw=0.8, label="episode return")
        means = moving_mean(returns, window)
        label = f"mean of the last {min(window, len(returns))} (as the terminal's)"
        axes.plot(steps, means, color="tab:blue", lw=1.8, label=label)
    if evaluations:
        axes.errorbar(
            [int(row["step"]) for row in evaluations],
            [float(row["mean_return"]) for row in evaluations],
            yerr=[float(row["std_return"]) for row in evaluations],
            color="tab:orange",
            marker="o",
            capsize=3,
            label="greedy evaluation (mean ± std)",
        )
    axes.set_xlabel("environment steps")
    axes.set_ylabel("return")
    axes.set_title(_title(run_dir))
    axes.grid(alpha=0.3)
    axes.legend(loc="best")
    figure.tight_layout()
    output = output if output is not None else run_dir / "learning_curve.png"
    figure.savefig(output, dpi=120)
    plt.close(figure)
    return output
