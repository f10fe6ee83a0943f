"""The hand-built example of docs/how-to/distributional.md runs and prints what the page says
(its one-line example: tests/learners/value_based/test_dqn_agent.py)."""

from __future__ import annotations

import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[3] / "docs" / "how-to" / "distributional.md"


def test_the_rainbow_example_runs_and_prints_the_gradient_steps_shown(capsys):
    text = PAGE.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    (example,) = [block for block in blocks if "rk.RainbowLearner(" in block]
    exec(compile(example, str(PAGE), "exec"), {})
    shown = re.search(r"print\(learner.gradient_steps\)  # (\d+)", example).group(1)
    assert capsys.readouterr().out.strip() == shown
